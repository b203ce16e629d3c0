"""`trace-tui diff BASE NEW` as a user runs it: three formats, the CI gate, bad input."""

from __future__ import annotations

import json

import pytest

from tests.model.test_diff import step_trace
from tests.tui.helpers import run


@pytest.fixture
def pair(tmp_path):
    step_trace(tmp_path / "eager.json", [("k_softmax", 10.0), ("k_mul", 10.0), ("k_add", 10.0)])
    step_trace(tmp_path / "slow.json", [("triton_fused_attn", 12.0)], step_us=130.0)
    return str(tmp_path / "eager.json"), str(tmp_path / "slow.json")


def test_text_shows_both_sides_the_headline_and_the_three_tables(pair):
    done = run("diff", *pair, "--no-cache")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith(f"BASE: {pair[0]} (2 steps,") and f"NEW: {pair[1]} (2 steps," in out
    step = next(line for line in out.splitlines() if line.startswith("Step (median)"))
    assert step.split()[2:] == ["99", "us", "129", "us", "+30", "us", "+30.3%"]
    assert "Ops by change in Self CUDA" in out
    assert "Kernels by change in Total (5 of 5: 1 matched, 1 added, 3 removed)" in out
    regions = out[out.index("Regions by change in GPU total") :]
    region = next(line for line in regions.splitlines() if line.startswith("attn "))
    assert "matched" in region and "3 / 1" in region and "-60.0%" in region
    assert "\x1b" not in out


def test_markdown_and_json(pair):
    md = run("diff", *pair, "--format", "markdown", "--top", "2", "--no-cache")
    assert md.returncode == 0, md.stderr
    assert md.stdout.startswith("- **BASE:") and "| Name | Status |" in md.stdout
    done = run("diff", *pair, "--format", "json", "--sort", "calls", "--top", "0", "--no-cache")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["base"]["step_median_ns"] == 99_000 and doc["new"]["step_median_ns"] == 129_000
    assert doc["sort"]["ops"] == "calls"
    assert doc["counts"]["kernels"] == {"matched": 1, "added": 1, "removed": 3}
    attn = next(r for r in doc["regions"] if r["name"] == "attn")
    assert attn["replaced"] == {
        "gone": ["k_add", "k_mul", "k_softmax"],
        "new": ["triton_fused_attn"],
    }
    assert attn["delta"]["gpu_ns"] == -36_000 and attn["percent"]["gpu_ns"] == pytest.approx(-60)
    added = next(r for r in doc["kernels"] if r["status"] == "added")
    assert added["base"] is None and added["percent"]["total_ns"] is None


def test_the_ci_gate_exits_3_and_names_the_ops_that_grew(pair):
    done = run("diff", *pair, "--fail-on-regression", "10", "--no-cache")
    assert done.returncode == 3
    assert "Step (median) regressed 30.3% (over 10%)" in done.stderr
    # The steps grew by their own CPU time (their children did not change).
    assert "most grown: ProfilerStep* (+60 us Self CPU)" in done.stderr
    assert run("diff", *pair, "--fail-on-regression", "50", "--no-cache").returncode == 0
    better = run("diff", pair[1], pair[0], "--fail-on-regression", "0", "--no-cache")
    assert better.returncode == 0, better.stderr


def test_bad_input_is_one_line_naming_the_file(pair, tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text("not json")
    done = run("diff", pair[0], str(broken), "--no-cache")
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and str(broken) in done.stderr
    assert "Traceback" not in done.stderr
    missing = run("diff", str(tmp_path / "nope.json"), pair[0], "--no-cache")
    assert missing.returncode == 1 and "nope.json" in missing.stderr
    bad_sort = run("diff", *pair, "--sort", "nonsense")
    assert bad_sort.returncode == 2 and "--sort nonsense" in bad_sort.stderr


def test_the_gate_names_ops_not_the_python_frames_that_grew_most(tmp_path):
    """NEW runs 10% slower throughout, and its innermost outer Python frame gains 300 us of its
    own: the gate names the ops that grew, never a frame."""
    import json

    from tests.deep_stack import deep_stack_events

    base, new = deep_stack_events(depth=5), deep_stack_events(depth=5)
    for e in new:
        if e["ph"] == "X":
            e["ts"], e["dur"] = e["ts"] * 1.1, e["dur"] * 1.1
            if e["name"].startswith("frames.py("):
                e["dur"] += 300  # each level ends 300 us later: only the innermost gains
    paths = [tmp_path / "base.json", tmp_path / "new.json"]
    for path, events in zip(paths, (base, new), strict=True):
        path.write_text(json.dumps({"traceEvents": events}))
    listed = run("summary", str(paths[1]), "--python-frames", "--sort", "self_cpu", "--top", "1")
    assert "frames.py(4): level_4" in listed.stdout.split("\n\n")[-1]  # the most Self CPU
    done = run("diff", *map(str, paths), "--fail-on-regression", "1")
    assert done.returncode == 3, done.stderr
    grown = done.stderr.split("most grown: ", 1)[1]
    assert ".py(" not in grown and "aten::addmm" in grown
