"""`trace-profile` as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import BYTECODE_SETTING
from tui.model.analysis.perf_model import work_of
from tui.model.analysis.roofline import roofline
from tui.model.ingest import load_trace

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, cwd: Path = ROOT, pre: str = "") -> subprocess.CompletedProcess[str]:
    """`trace-profile ARGS` in a process of its own, as a user starts it."""
    code = f"{pre}import sys; from profiling.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        # Nothing of the caller's but where the code is and whether to write byte code.
        env={"PYTHONPATH": str(ROOT), "PATH": "", **BYTECODE_SETTING},
    )


def test_list_needs_no_torch():
    done = run(
        "--list", pre="sys_modules = __import__('sys').modules; sys_modules['torch'] = None; "
    )
    assert done.returncode == 0
    assert [line.split()[0] for line in done.stdout.splitlines()] == [
        "matmul",
        "linear",
        "mlp",
        "transformer",
    ]


def test_without_torch_it_says_how_to_install_it(tmp_path):
    done = run(
        "matmul",
        "--out",
        str(tmp_path / "t.json"),
        pre="__import__('sys').modules['torch'] = None; ",
    )
    assert done.returncode == 2
    assert "pip install 'trace-tui[profiling]'" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope"], "unknown workload"),
        (["linear", "--size", "pair"], "--size pair is for matmul"),
        (["matmul", "--out", "/nonexistent/dir/t.json"], "does not exist"),
    ],
)
def test_usage_errors_exit_2_in_one_line(args, message, capsys):
    # In this process: none of these needs torch (the test below checks the one that might).
    from profiling.cli import main

    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_folder_that_does_not_exist_is_said_before_torch_is_imported():
    """Importing torch takes two seconds: a mistyped --out is told at once."""
    code = (
        "import sys; from profiling.cli import main; "
        "code = main(['matmul', '--out', '/nonexistent/dir/t.json']); "
        "print(code, 'torch' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert done.stdout.split() == ["2", "False"] and "does not exist" in done.stderr


def test_profile_writes_a_trace_and_prints_the_table(tmp_path, capsys, torch):
    """In this process, which has imported torch already (a process of its own imports it
    again: 2.5 s of CPU); the tests above run `trace-profile` as a process."""
    from profiling.cli import main

    out = tmp_path / "m.pt.trace.json.gz"
    args = ["matmul", "--size", "8", "--device", "cpu", "--steps", "2", "--table"]
    assert main([*args, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert out.is_file() and f"{out}: matmul size 8 on cpu, 2 active steps" in printed
    assert "Self CPU time total" in printed


def test_key_averages_writes_torchs_rows_beside_the_trace(tmp_path, capsys, torch):
    """In this process (`run` starts one with torch imported again): the rows torch printed,
    which the viewer's tables then match."""
    from profiling.cli import main
    from tests.profiling.reference import differences
    from tui.model.ingest import load_trace

    out = tmp_path / "m.pt.trace.json.gz"
    args = ["mlp", "--size", "16", "--device", "cpu", "--steps", "1", "--key-averages"]
    assert main([*args, "--out", str(out)]) == 0
    rows = tmp_path / "m.pt.trace.key_averages.json"
    assert f"{rows}: torch's key_averages() rows" in capsys.readouterr().out
    doc = json.loads(rows.read_text())
    assert (doc["trace"], doc["device"], doc["device_name"]) == (out.name, "cpu", "")
    assert doc["torch"] == torch.__version__ and {"aten::addmm", "mlp"} <= {
        op["name"] for op in doc["ops"]
    }
    assert differences(load_trace(out), doc["ops"]) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name, rows.name]


def test_cuda_without_a_gpu_exits_2(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    from profiling.cli import main

    assert main(["matmul", "--device", "cuda", "--out", str(tmp_path / "t.json")]) == 2
    assert "no CUDA device" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_view_starts_the_viewer_as_its_own_process(tmp_path, monkeypatch):
    """The backend imports nothing of the viewer: `--view` runs `python -m tui TRACE`."""
    pytest.importorskip("torch")
    from profiling import cli

    started: list[list[str]] = []
    monkeypatch.setattr(cli.subprocess, "call", lambda argv: started.append(argv) or 0)
    out = tmp_path / "m.pt.trace.json"
    argv = ["matmul", "--size", "8", "--device", "cpu", "--steps", "1", "--out", str(out)]
    assert cli.main([*argv, "--view"]) == 0
    assert started == [[sys.executable, "-m", "tui", str(out)]] and out.is_file()


def test_out_may_name_a_folder_for_several_sizes(tmp_path, capsys):
    pytest.importorskip("torch")
    from profiling.cli import main

    folder = tmp_path / "prof"
    sizes = ["matmul", "--size", "4,8", "--device", "cpu", "--steps", "1"]
    assert main([*sizes, "--out", f"{folder}/"]) == 0
    names = sorted(p.name for p in folder.iterdir())
    assert names == ["matmul_4_cpu.pt.trace.json.gz", "matmul_8_cpu.pt.trace.json.gz"]
    capsys.readouterr()
    assert (
        main(["matmul", "--size", "4,8", "--device", "cpu", "--out", str(tmp_path / "o.json")]) == 2
    )
    assert "name a folder (--out prof/)" in capsys.readouterr().err


def test_a_pair_on_the_cpu_says_why_both_show_no_gpu_and_views_as_base_and_new(
    tmp_path, monkeypatch, capsys
):
    """`--size pair` (sizes made small here) on the CPU: one line says both traces have no GPU
    activity and what the pair needs; `--view` opens the two as BASE and NEW."""
    pytest.importorskip("torch")
    from profiling import cli

    monkeypatch.setattr(cli, "PAIR_SIZES", (4, 8))
    started: list[list[str]] = []
    monkeypatch.setattr(cli.subprocess, "call", lambda argv: started.append(argv) or 0)
    argv = ["matmul", "--size", "pair", "--device", "cpu", "--steps", "1", "--out", f"{tmp_path}/"]
    assert cli.main([*argv, "--view"]) == 0
    err = capsys.readouterr().err
    assert "both ran on the CPU (--device cpu), so both traces show no GPU activity" in err
    assert "needs a GPU: --device cuda" in err
    names = ["matmul_4_cpu.pt.trace.json.gz", "matmul_8_cpu.pt.trace.json.gz"]
    assert started == [[sys.executable, "-m", "tui", *(str(tmp_path / n) for n in names)]]


def test_the_backends_matmul_is_exactly_2n_cubed_flops_a_call(tmp_path, torch):
    """The backend's `matmul --record-shapes` trace read by the model: 2N^3 a call. On the CPU
    the run is at N=256 (a 4096 one takes seconds); the shapes it writes are those of any N, and
    N=4096 is checked on the same record."""
    from profiling.cli import main

    out = tmp_path / "m.pt.trace.json.gz"
    # In this process: torch is imported once per test process, not again for this run.
    code = main([
        "matmul", "--size", "256", "--device", "cpu", "--steps", "2", "--warmup", "1",
        "--record-shapes", "--out", str(out),
    ])  # fmt: skip
    assert code == 0
    trace = load_trace(out)
    rows = [r for r in roofline(trace).rows if r.name == "aten::mm"]
    assert (
        rows and all(r.work.flops == 2 * 256**3 for r in rows) and sum(r.calls for r in rows) == 2
    )
    record = trace.args(
        int(np.flatnonzero(np.asarray(trace.names)[trace.slices.name] == "aten::mm")[0])
    )
    record["Input Dims"] = [[4096, 4096], [4096, 4096]]
    assert work_of("aten::mm", record).flops == 2 * 4096**3
