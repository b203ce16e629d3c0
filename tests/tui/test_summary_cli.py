"""`trace-tui summary` in its three formats, as a user runs it."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import DATA, OP_JSON_KEYS, TORCH_ORDER
from tests.tui.helpers import interruptible, run


def test_text_has_the_verdict_the_strip_and_the_table():
    done = run("summary", str(DATA / "attribution.json"))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "Verdict" in out and "mixed" in out
    assert re.search(r"Self CUDA time total\s+51 us", out)
    assert re.search(r"GPU busy\s+52.6% of 78 us", out)  # the GPU's span: no steps
    assert "outer" in out and "\x1b" not in out
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("Name"))
    # The same columns, in the same order, as the stats pane and key_averages().table().
    assert re.split(r"\s{2,}", header.strip()) == [h for h in TORCH_ORDER if "Mem" not in h]


def test_markdown_is_ready_to_paste():
    done = run(
        "summary", str(DATA / "attribution.json"), "--format", "markdown", "--kernels", "--top", "2"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("### trace-tui summary:")
    assert "- **Verdict**: mixed" in done.stdout
    rows = [line for line in done.stdout.splitlines() if line.startswith("| K")]
    assert [r.split(" | ")[0] for r in rows] == ["| K2", "| K1"]


def test_json_schema_sort_top_and_step(tmp_path):
    done = run(
        "summary",
        str(DATA / "attribution.json"),
        "--format",
        "json",
        "--sort",
        "self_cuda",
        "--top",
        "3",
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["verdict"]["label"] == "mixed"
    assert doc["summary"]["gpu_busy_ns"] == 41_000 and doc["summary"]["wall_ns"] == 78_000
    assert doc["summary"]["self_cuda_total_ns"] == 51_000
    assert doc["table"] == "ops" and [r["name"] for r in doc["rows"]] == ["outer", "inner", "graph"]
    assert set(doc["rows"][0]) == OP_JSON_KEYS
    step = run("summary", str(DATA / "nested_cpu.json"), "--format", "json", "--step", "2")
    doc = json.loads(step.stdout)
    assert doc["window_ns"] == [100_000, 160_000]
    assert doc["verdict"]["label"] == "no GPU activity"


def test_errors_are_one_line():
    done = run("summary", str(DATA / "nested_cpu.json"), "--step", "9")
    assert done.returncode == 1
    assert "no ProfilerStep#9 (steps: ProfilerStep#1, ProfilerStep#2)" in done.stderr
    done = run("summary", str(DATA / "nested_cpu.json"), "--sort", "nope")
    assert done.returncode == 2 and "--sort nope" in done.stderr
    done = run("summary", "/nonexistent.json")
    assert done.returncode == 1 and done.stderr.count("\n") == 1


def test_memory_and_sync_in_every_format():
    text = run("summary", str(DATA / "memory_sync.json")).stdout
    assert re.search(r"CPU sync calls\s+1, waiting 35 us", text)
    assert re.search(
        r"Peak memory cuda:0\s+1000 B allocated, 2 KiB reserved, at \+15 us in "
        r"ProfilerStep#1 during alloc",
        text,
    )
    assert "Top self allocations    alloc 1.04 KiB" in text
    doc = json.loads(run("summary", str(DATA / "memory_sync.json"), "--format", "json").stdout)
    assert doc["summary"]["sync_calls"] == 1 and doc["summary"]["sync_ns"] == 35_000
    cuda = next(p for p in doc["memory"]["peaks"] if p["device"] == "cuda:0")
    assert cuda == {
        "device": "cuda:0",
        "allocated_bytes": 1000,
        "reserved_bytes": 2048,
        "ts_ns": 15_000,
        "step": "ProfilerStep#1",
        "op": "alloc",
    }
    alloc = next(r for r in doc["rows"] if r["name"] == "alloc")
    assert (alloc["self_cuda_mem_bytes"], alloc["self_cpu_mem_bytes"]) == (1000, 64)
    markdown = run("summary", str(DATA / "memory_sync.json"), "--format", "markdown").stdout
    assert "- **Peak memory cuda:0**: 1000 B allocated" in markdown


def test_a_step_report_names_its_step_in_the_title():
    done = run("summary", str(DATA / "nested_cpu.json"), "--step", "2", "--format", "markdown")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].endswith("nested_cpu.json` (ProfilerStep#2)")
    text = run("summary", str(DATA / "nested_cpu.json"), "--step", "2")
    assert text.stdout.splitlines()[0].endswith("nested_cpu.json (ProfilerStep#2)")


def test_step_takes_its_number_or_its_name():
    by_name = run("summary", str(DATA / "nested_cpu.json"), "--step", "ProfilerStep#2")
    assert by_name.returncode == 0 and by_name.stdout.splitlines()[0].endswith("(ProfilerStep#2)")
    bad = run("summary", str(DATA / "nested_cpu.json"), "--step", "two")
    assert bad.returncode == 2 and "not a step number: 'two'" in bad.stderr


def test_a_folder_of_rank_traces_gives_the_rank_table(tmp_path):
    from tests.bench.make_rank_set import write_rank_set

    write_rank_set(tmp_path, ranks=4, steps=3, slow_rank=2, slow_step=1)
    done = run("summary", str(tmp_path))
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert out[2].startswith("straggler: rank 2 (last to arrive at 1 of 3 collectives")
    rows = [line.split() for line in out if line[:1].isdigit()][:4]
    assert [r[0] for r in rows] == ["0", "1", "2", "3"] and rows[2][1:3] == [
        "slowest,",
        "straggler",
    ]
    assert "11.2 ms*" in done.stdout  # rank 2's own work in its slow step
    doc = json.loads(run("summary", str(tmp_path), "--format", "json", "--top", "1").stdout)
    assert (doc["straggler_rank"], len(doc["ranks"]), len(doc["collectives"])) == (2, 4, 1)
    assert doc["collectives"][0]["waits_ns"] == {
        "0": 4_000_000,
        "1": 4_000_000,
        "2": 0,
        "3": 4_000_000,
    }
    assert [s["slow"] for s in doc["ranks"][2]["steps"]] == [False, True, False]
    markdown = run("summary", str(tmp_path), "--format", "markdown").stdout
    assert markdown.startswith("# Ranks of ") and "| 2 | " in markdown


def test_a_folder_of_several_jobs_is_said_and_its_newest_trace_summarised(tmp_path):
    from tests.bench.make_rank_set import write_rank_set

    write_rank_set(tmp_path / "a", ranks=2, steps=1)
    write_rank_set(tmp_path / "b", ranks=3, steps=1)
    (tmp_path / "a" / "rank0.pt.trace.json").rename(tmp_path / "b" / "job_a_rank0.json")
    done = run("summary", str(tmp_path / "b"))
    assert done.returncode == 0
    assert "traces of several jobs (world sizes 2, 3): not compared as ranks" in done.stderr
    assert "Verdict" in done.stdout


def test_an_empty_kernel_table_says_so():
    done = run("summary", str(DATA / "nested_cpu.json"), "--kernels")
    assert done.returncode == 0 and done.stdout.rstrip().endswith("No GPU work in this trace.")


def test_roofline_text_json_and_what_it_cannot_show(shared):
    bert = str(shared / "tracelens" / "h100_bert_small.json.gz")
    done = run("summary", bert, "--roofline", "--no-cache")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].endswith(": H100 SXM")
    big = next(line for line in done.stdout.splitlines() if "[[30522]" in line)
    assert "4.411" in big and "106.86" in big and "29.0% memory" in big
    doc = json.loads(run("summary", bert, "--roofline", "--format", "json", "--no-cache").stdout)
    assert doc["peaks"]["bf16"] == 989.4 and doc["note"] is None
    sdpa = next(r for r in doc["rows"] if "attention" in r["name"])
    assert sdpa["flops_per_call"] == 40_716_288 and sdpa["bound"] == "memory"
    mine = run("summary", bert, "--roofline", "--peaks", "bf16=100,hbm=100", "--no-cache")
    assert "compute" in mine.stdout  # with fast memory, the GEMMs are on the compute side
    qwen = run(
        "summary", str(shared / "tracelens" / "h100_qwen1.5_0.5b_chat.json.gz"), "--roofline"
    )
    gemm = next(line for line in qwen.stdout.splitlines() if line.startswith("  GEMM:"))
    assert gemm.endswith("61.9% of the roof (by kernel time; mostly compute-bound)")
    # 5,765.9 GFLOPs of bf16 at 989.4 TFLOP/s and 1.8 GFLOPs of fp32 (elementwise) at 66.9,
    # over the 49.65 ms step: each precision at its own peak (11.74% if all were bf16).
    mfu = "MFU 11.79% of bf16+fp32 peak"
    assert f"1 step (49.7 ms): 5,767.7 GFLOPs, 116.16 TFLOP/s, {mfu}" in qwen.stdout
    assert "Modelled ops' kernels: 65% of GPU work time" in qwen.stdout
    doc = json.loads(
        run("summary", str(shared / "tracelens" / "h100_qwen1.5_0.5b_chat.json.gz"), "--roofline",
            "--format", "json").stdout
    )  # fmt: skip
    assert doc["dtype"] == "bf16" and doc["window"]["mfu"] == pytest.approx(0.1179, abs=5e-5)
    assert doc["steps"][0]["flops"] == doc["window"]["flops"] == doc["totals"]["flops"]
    plain = run(
        "summary", str(shared / "tracelens" / "h100_qwen1.5_0.5b_chat.json.gz"), "--top", "1"
    )
    verdict = next(line for line in plain.stdout.splitlines() if line.startswith("Verdict"))
    assert verdict.endswith(
        "compute-bound: elementwise 17.4 ms at 57.8% of its roof (memory side), "
        "GEMM 9 ms at 61.9% of its roof (compute side)"
    )
    bert_verdict = run("summary", bert, "--top", "1").stdout.splitlines()[1]
    assert bert_verdict.endswith("overhead-bound")  # the roof is no part of that verdict
    roof = next(line for line in plain.stdout.splitlines() if line.startswith("Roofline"))
    assert "GEMM at 61.9% of its roof (compute-bound)" in roof and mfu in roof
    doc = json.loads(
        run("summary", str(shared / "tracelens" / "h100_qwen1.5_0.5b_chat.json.gz"), "--format",
            "json", "--top", "1").stdout
    )  # fmt: skip
    assert doc["roofline"]["window"]["mfu"] == pytest.approx(0.1179, abs=5e-5)
    gpu_no_shapes = run("summary", str(shared / "hta" / "a100_alexnet.json.gz"), "--top", "1")
    assert "Roofline" in gpu_no_shapes.stdout and "record_shapes=True" in gpu_no_shapes.stdout
    assert "Roofline" not in run("summary", "--sample", "cpu", "--top", "1").stdout
    no_shapes = run("summary", str(DATA / "attribution.json"), "--roofline")
    assert no_shapes.returncode == 0 and "record_shapes=True" in no_shapes.stdout
    for extra in (["--roofline"], []):  # the summary's own Roofline line reads them too
        bad = run("summary", bert, *extra, "--peaks", "bf16=fast")
        assert bad.returncode == 2 and "--peaks" in bad.stderr and not bad.stdout


def test_by_shape_splits_an_op_by_its_input_shapes(shared):
    bert = str(shared / "tracelens" / "h100_bert_small.json.gz")
    doc = json.loads(run("summary", bert, "--by-shape", "--format", "json", "--top", "0").stdout)
    addmm = [r for r in doc["rows"] if r["name"] == "aten::addmm"]
    plain = json.loads(run("summary", bert, "--format", "json", "--top", "0").stdout)
    whole = next(r for r in plain["rows"] if r["name"] == "aten::addmm")
    assert len(addmm) == 4 and len({r["input_shapes"] for r in addmm}) == 4
    for key in ("calls", "self_cpu_ns", "cuda_total_ns", "flops"):
        assert sum(r[key] for r in addmm) == whole[key], key
    big = next(r for r in addmm if r["input_shapes"].startswith("[[30522]"))
    assert big["calls"] == 1 and big["cuda_min_ns"] == big["cuda_max_ns"] == big["cuda_total_ns"]
    text = run("summary", bert, "--by-shape", "--sort", "shapes", "--top", "3").stdout
    assert "Input Shapes" in text and "CPU min" in text and "CUDA max" in text
    both = run("summary", bert, "--by-shape", "--kernels")
    assert both.returncode == 2 and "--by-shape" in both.stderr


def test_flags_a_view_does_not_take_are_refused(shared):
    bert = str(shared / "tracelens" / "h100_bert_small.json.gz")
    for flags in (["--roofline", "--step", "6"], ["--roofline", "--sort", "tflops"],
                  ["--roofline", "--step", "20"], ["--graphs", "--step", "0"],
                  ["--tree", "--top", "5"]):  # fmt: skip
        done = run("summary", bert, *flags)
        assert done.returncode == 2 and "lists its own rows" in done.stderr and not done.stdout
    # A view and a table are one choice (argparse's group says so, before anything loads).
    for flags in (["--roofline", "--kernels"], ["--graphs", "--by-shape"]):
        done = run("summary", bert, *flags)
        assert done.returncode == 2 and "not allowed with" in done.stderr and not done.stdout
    no_shapes = run("summary", str(shared / "hta" / "a100_alexnet.json.gz"), "--sort", "tflops")
    assert no_shapes.returncode == 2 and "record_shapes=True" in no_shapes.stderr


def test_python_frames_are_counted_under_the_table_and_listed_with_a_flag(tmp_path):
    from tests.deep_stack import write_deep_stack

    path = str(write_deep_stack(tmp_path / "deep.json", depth=5))  # 11 Python frames
    done = run("summary", path, "--top", "0")
    assert done.returncode == 0, done.stderr
    said = "11 Python-frame rows (with_stack=True) not listed, their time in the totals: "
    assert done.stdout.endswith(said + "--python-frames lists them\n")
    table = done.stdout.split("\n\n")[-2]  # the op table, above the line
    assert "model.py(" not in table and "aten::addmm" in table
    listed = run("summary", path, "--top", "0", "--python-frames")
    assert "model.py(0): forward" in listed.stdout.split("\n\n")[-1]
    assert "not listed" not in listed.stdout
    # The totals above the table are the same either way.
    assert done.stdout.split("\n\n")[0] == listed.stdout.split("\n\n")[0]
    doc = json.loads(run("summary", path, "--format", "json", "--top", "0").stdout)
    assert doc["python_frames_hidden"] == 11
    assert not any(".py(" in row["name"] for row in doc["rows"])
    doc = json.loads(run("summary", path, "--format", "json", "--python-frames").stdout)
    assert doc["python_frames_hidden"] == 0


@pytest.mark.parametrize("other", ["--kernels", "--tree", "--roofline"])
def test_python_frames_is_a_flag_of_the_op_table_only(other):
    done = run("summary", str(DATA / "attribution.json"), "--python-frames", other)
    assert done.returncode == 2 and done.stdout == ""
    assert "--python-frames" in done.stderr


def test_text_lists_the_longest_steps_json_lists_them_all(tmp_path):
    from tests.model.test_diff import step_trace
    from tui.model.present.report import STRIP_STEPS

    path = tmp_path / "steps.json"
    step_trace(path, [("k_add", 10.0)], steps=STRIP_STEPS + 6)
    doc = json.loads(path.read_text())
    for event in doc["traceEvents"]:  # step k lasts 60 + k us: the last 24 are the longest
        if event["name"].startswith("ProfilerStep#"):
            event["dur"] = 60 + int(event["name"].split("#")[1])
    path.write_text(json.dumps(doc))
    text = run("summary", str(path))
    assert text.returncode == 0
    listed = [int(n) for n in re.findall(r"^ProfilerStep#(\d+) ", text.stdout, re.MULTILINE)]
    assert listed == list(range(6, STRIP_STEPS + 6))
    assert f"Steps (30; the {STRIP_STEPS} longest by CPU time" in text.stdout
    both = run("summary", "--format", "json", str(path))
    assert len(json.loads(both.stdout)["steps"]) == STRIP_STEPS + 6


def test_follow_logs_each_trace_as_it_completes_and_stops_on_ctrl_c(tmp_path):
    import gzip
    import signal
    import subprocess
    import time

    whole = (DATA / "gpu_streams.json").read_bytes()
    (tmp_path / "first.json").write_bytes(whole)
    argv = ["summary", "--follow", str(tmp_path), "--interval", "0.1"]
    proc = interruptible(*argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith(f"following {tmp_path}")
        assert " first.json: 0 steps, median step -, GPU busy " in proc.stdout.readline()
        cut = tmp_path / "second.json.gz"
        packed = gzip.compress(whole)
        cut.write_bytes(packed[: len(packed) // 2])  # being written
        time.sleep(1.0)
        cut.write_bytes(packed)
        line = proc.stdout.readline()
        assert " second.json.gz: " in line and "ended early" not in line
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "Traceback" not in err and out == ""


@pytest.mark.parametrize("command", ["summary", "view"])
@pytest.mark.parametrize("interval", ["-1", "0", "nan", "inf", "soon", "100000"])
def test_an_interval_that_would_crash_or_spin_is_refused(tmp_path, command, interval):
    done = run(command, "--follow", str(tmp_path), "--interval", interval)
    assert done.returncode == 2
    assert f"--interval: not a number of seconds from 0.1 to 86400: '{interval}'" in done.stderr


def test_follow_writes_json_lines_and_refuses_what_a_line_has_no_room_for(tmp_path):
    import signal
    import subprocess

    (tmp_path / "first.json").write_bytes((DATA / "gpu_streams.json").read_bytes())
    argv = ("--kernels", "--peaks", "bf16=989", "--format", "csv")
    refused = run("summary", "--follow", str(tmp_path), *argv)
    assert refused.returncode == 2
    assert refused.stderr.strip().endswith("not with --kernels, --peaks, --format csv")
    argv = ["summary", "--follow", str(tmp_path), "--interval", "0.1", "--format", "json"]
    proc = interruptible(*argv, stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        line = json.loads(proc.stdout.readline())  # no "following" line: JSON lines only
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    assert line["file"] == str(tmp_path / "first.json") and line["steps"] == 0
    assert line["verdict"] == "mixed" and line["gpu_busy"] == pytest.approx(25 / 72)
    assert proc.returncode == 0
