"""A normal install (a wheel, as pip or pipx makes it) works: it holds the bundled examples with
their licence, the stylesheet and every package, and its `trace-tui` opens the GPU example with
no path."""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _source_tree(dest: Path) -> Path:
    """The files git would ship (tracked and new), copied, so the build leaves nothing here."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        src = ROOT / name.decode()
        if src.is_file():
            (dest / name.decode()).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dest / name.decode())
    return dest


def _see_these_packages(python: Path) -> None:
    """The viewer's dependencies come from the site-packages this interpreter sees, the package
    itself only from the wheel. `venv --system-site-packages` would give the base interpreter's
    instead, which inside a virtualenv are not these (and lack textual on a fresh machine)."""
    ours = [*site.getsitepackages()]
    if site.ENABLE_USER_SITE:
        ours.append(site.getusersitepackages())
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # Plain path lines: their own .pth files (this checkout's editable install) are not run.
    Path(purelib, "parent-site-packages.pth").write_text("\n".join(ours) + "\n")


# The installed package alone: a PYTHONPATH naming this checkout would shadow it.
CLEAN = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def test_the_wheel_installs_and_opens_its_gpu_example(tmp_path):
    tree = _source_tree(tmp_path / "src")
    wheels = tmp_path / "wheels"
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    subprocess.run([*build, "-w", str(wheels), str(tree)], check=True, capture_output=True)
    (wheel,) = wheels.glob("trace_tui-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    _see_these_packages(python)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            *[str(wheel)],
        ],
        check=True,
        capture_output=True,
        env=CLEAN,  # else pip finds this checkout's metadata on the path and installs nothing
    )
    where = subprocess.run(
        [str(python), "-c", "import tui, tui.model.ingest.chrome_json; print(tui.__file__)"],
        cwd=tmp_path,
        env=CLEAN,
        capture_output=True,
        text=True,
        check=True,
    )
    assert where.stdout.startswith(str(venv)), "the installed package, not the source tree"
    done = subprocess.run(
        [str(venv / "bin" / "trace-tui"), "info", "--json"],
        cwd=tmp_path,
        env=CLEAN,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    # The default example is a GPU trace: a GPU lane, and kernels charged to ops.
    assert info["path"].startswith(str(venv)) and info["path"].endswith("h100_bert_small.json.gz")
    assert "gpu" in {lane["kind"] for lane in info["lanes"]}
    assert sum(info["gpu_work_placed_by"].values()) > 0
    samples = Path(info["path"]).parent
    assert {"README.md", "LICENSE-TraceLens", "transformer_128_cpu.pt.trace.json.gz"} <= {
        p.name for p in samples.iterdir()
    }
