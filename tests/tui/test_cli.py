"""The CLI as a user runs it: its output and its exit status (in this process through `main`,
and end to end as a subprocess where only a real process shows the difference)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import DATA
from tests.tui.helpers import run
from tui.commands.trace_args import SAMPLE_CHOICES, SAMPLES

ROOT = Path(__file__).resolve().parents[2]


def test_info_prints_lanes_and_counts():
    done = run("info", str(DATA / "gpu_streams.json"))
    assert done.returncode == 0, done.stderr
    assert "Test GPU" in done.stdout
    assert "stream 20" in done.stdout and "process 7 (python3)" in done.stdout
    assert "4 launch links" in done.stdout


def test_info_json_has_the_documented_keys():
    done = run("info", "--json", str(DATA / "begin_end.json"))
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    for key in ("format", "events_by_phase", "span_ns", "devices", "flows", "skipped", "lanes"):
        assert key in info
    assert info["format"] == {"form": "array", "gzip": False, "truncated": False}
    assert info["skipped"] == {"E without a matching B": 1, "unsupported phase 'P'": 1}
    lane = info["lanes"][0]
    assert set(lane) >= {"process", "name", "kind", "slices", "max_depth"}
    assert {entry["kind"] for entry in info["lanes"]} == {"cpu", "async"}


def test_info_on_a_folder_names_the_trace_it_chose(tmp_path):
    (tmp_path / "w.1.pt.trace.json.gz").write_bytes(
        gzip.compress((DATA / "nested_cpu.json").read_bytes())
    )
    done = run("info", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert f"newest in {tmp_path}" in done.stdout
    listing = run("--list", str(tmp_path))
    assert listing.returncode == 0 and "w.1.pt.trace.json.gz" in listing.stdout


BAD = [
    (None, "no such file"),
    (b"", "file is empty"),
    (b"\x00\xff\x00 binary", "binary data"),
    (b"not json", "not JSON"),
    (b"\x1f\x8b\x08\x00junk", "corrupt gzip"),
]


@pytest.mark.parametrize(("content", "message"), [*BAD, (b'{"spans": []}', "not a trace")])
@pytest.mark.parametrize("command", [["info"], []])
def test_bad_input_is_one_line_exit_1_no_traceback(tmp_path, content, message, command):
    if command == [] and message == "not a trace":
        pytest.skip("found while loading, inside the viewer: see test_app")
    path = tmp_path / "bad.json"
    if content is not None:
        path.write_bytes(content)
    # End to end for one kind of damage: what reaches a real process's stderr.
    done = run(*command, str(path), process=message == "binary data")
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and message in done.stderr
    assert done.stderr.startswith("trace-tui: ") and "Traceback" not in done.stderr
    assert done.stdout == ""


def test_the_viewer_without_a_terminal_says_so():
    done = run(str(DATA / "nested_cpu.json"))
    assert done.returncode == 2
    assert "needs a terminal" in done.stderr and "trace-tui info" in done.stderr
    assert done.stdout == ""


def test_usage_errors_exit_2():
    done = run("--no-such-flag")  # one line: the usage stays with --help
    assert done.returncode == 2
    assert done.stderr == "trace-tui view: error: unrecognized arguments: --no-such-flag\n"
    done = run("--list", str(DATA / "nested_cpu.json"))
    assert done.returncode == 2 and "needs a folder" in done.stderr


def test_control_characters_from_the_trace_never_reach_the_terminal(tmp_path):
    p = tmp_path / "evil.json"
    p.write_text(
        json.dumps(
            [{"ph": "X", "name": "x", "pid": 1, "tid": "\x1b]52;c;AAAA\x07", "ts": 0, "dur": 1}]
        )
    )
    done = run("info", str(p))
    assert done.returncode == 0
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout
    assert "\\x1b]52;c;AAAA\\x07" in done.stdout


@pytest.mark.parametrize(
    "command", [["info", "--json"], ["summary", "--format", "json"], ["diff", "--format", "json"]]
)
def test_a_file_name_that_is_not_utf8_is_written_to_json_escaped(tmp_path, command):
    """JSON text cannot hold the name's odd bytes: they are written as the text outputs show
    them (it failed with a traceback)."""
    p = tmp_path / os.fsdecode(b"n\xffme.json")
    p.write_text(json.dumps([{"ph": "X", "name": "x", "pid": 1, "tid": 1, "ts": 0, "dur": 1}]))
    paths = [str(p)] * (2 if command[0] == "diff" else 1)
    done = run(*command, *paths, process=True)
    assert (done.returncode, done.stderr) == (0, "")
    assert '"n\\\\xffme.json"' in done.stdout.replace(str(tmp_path) + "/", "")


def test_console_script_and_module_agree():
    script = shutil.which(
        "trace-tui",
        path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
    )
    assert script, "trace-tui is not installed (pip install -e .)"
    a = subprocess.run(
        [script, "info", "--json", str(DATA / "nested_cpu.json")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    b = run("info", "--json", str(DATA / "nested_cpu.json"), process=True)
    assert a.returncode == b.returncode == 0
    assert json.loads(a.stdout) == json.loads(b.stdout)


@pytest.mark.parametrize(("flags", "kinds"), [([], {"cpu", "gpu"}), (["--sample", "cpu"], {"cpu"})])
def test_with_no_path_info_reads_a_bundled_example_and_says_so_on_stderr(flags, kinds):
    """The default is the GPU example; --sample cpu is ours. The JSON is the trace's own, and
    the one line naming the example goes to stderr."""
    done = run("info", "--json", *flags)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("trace-tui: no trace named: reading the bundled example: ")
    info = json.loads(done.stdout)
    sample = SAMPLE_CHOICES[flags[-1] if flags else "gpu"]
    assert sample.path.is_file() and info["path"] == str(sample.path)
    assert {lane["kind"] for lane in info["lanes"]} == kinds
    assert (sum(info["gpu_work_placed_by"].values()) > 0) == ("gpu" in kinds)


def test_a_path_and_a_sample_conflict():
    done = run("summary", "--sample", "gpu", str(DATA / "nested_cpu.json"))
    assert done.returncode == 2 and done.stdout == ""
    assert "argument path: not allowed with argument --sample" in done.stderr


def test_the_bundled_examples_licence_and_provenance_are_beside_it():
    readme = (SAMPLES / "README.md").read_text()
    assert "AMD-AGI/TraceLens" in readme and "171dd74721ca1ec45709e5805b68ae1f65e27811" in readme
    assert "MIT License" in (SAMPLES / "LICENSE-TraceLens").read_text()


def test_a_closed_pipe_ends_quietly_with_status_0():
    """`trace-tui info FILE | head`: when the reader has gone, writing raises BrokenPipeError;
    the command ends with status 0 and nothing on stderr, as `cat` does. (Raised by hand in a
    child process: whether a real pipe raises it depends on timing and buffering.)"""
    import subprocess
    import sys

    code = (
        "import sys, tui.cli as cli\n"
        "from tui.commands.info import InfoCommand\n"
        "def gone(self, args):\n"
        "    raise BrokenPipeError(32, 'Broken pipe')\n"
        "InfoCommand.run = gone\n"
        "sys.exit(cli.main(['info', 'x']))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, "")


@pytest.mark.parametrize("users", [None, "2"])
def test_numpys_blas_gets_one_thread_unless_the_user_says(users):
    """numpy's OpenBLAS starts a thread per core at import, each spinning a while on its core:
    a command runs with one, so a summary on a many-core box costs the CPU of a small one. A
    user's own OPENBLAS_NUM_THREADS stands. (The thread count is read where there are cores to
    have more than one.)"""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if users is not None:
        env["OPENBLAS_NUM_THREADS"] = users
    code = (
        "import os, sys, tui.cli as cli\n"
        f"status = cli.main(['summary', {str(DATA / 'gpu_streams.json')!r}])\n"
        "tasks = len(os.listdir('/proc/self/task')) if os.path.isdir('/proc/self/task') else 0\n"
        "print(os.environ['OPENBLAS_NUM_THREADS'], tasks, 'numpy' in sys.modules, status)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env, cwd=ROOT
    )
    setting, tasks, numpy_loaded, status = done.stdout.split()[-4:]
    assert (setting, numpy_loaded, status) == (users or "1", "True", "0"), done.stderr
    if users is None and tasks != "0":
        assert tasks == "1"  # only the main thread: no BLAS worker spun up


def test_a_folder_lists_every_trace_and_skips_other_json_saying_so(tmp_path):
    """Traces under any of the names tools give them; a config file and an execution trace
    beside them are not opened as "newest"."""
    trace = (DATA / "nested_cpu.json").read_bytes()
    names = ["rank0.json.gz", "rank1.json", "plain.gz", "w.1.pt.trace.json.gz"]
    for i, name in enumerate(names):
        body = gzip.compress(trace) if name.endswith(".gz") else trace
        (tmp_path / name).write_bytes(body)
        os.utime(tmp_path / name, (1_000 + i, 1_000 + i))
    (tmp_path / "config.json").write_text('{"lr": 0.1}')
    (tmp_path / "et.json.gz").write_bytes(gzip.compress(b'{"schema": "1.0.1", "nodes": []}'))
    os.utime(tmp_path / "config.json", (5_000, 5_000))  # the newest file is not a trace
    listing = run("--list", str(tmp_path))
    assert listing.returncode == 0
    listed = [line.split()[0].rsplit("/", 1)[-1] for line in listing.stdout.splitlines()]
    assert listed == names[::-1]  # newest first
    assert (
        listing.stderr.strip()
        == "trace-tui: skipped 2 that are not traces: config.json, et.json.gz"
    )
    done = run("info", str(tmp_path))
    assert done.returncode == 0 and "w.1.pt.trace.json.gz" in done.stdout


def test_a_folder_without_traces_says_what_it_holds(tmp_path):
    (tmp_path / "config.json").write_text('{"lr": 0.1}')
    done = run("info", str(tmp_path))
    assert done.returncode == 1
    assert (
        "folder holds no trace (1 JSON or gzip files that are not traces: config.json)"
        in done.stderr
    )
