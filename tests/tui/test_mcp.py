"""`trace-tui mcp` as a coding agent meets it: started as a process, spoken to with the MCP SDK's
own client; every tool answers what the matching command prints as JSON."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from tests.conftest import BYTECODE_SETTING, DATA, SHARED
from tests.tui.helpers import ROOT, run
from tui.commands import mcp as server

# The SDK is imported by the one test that speaks to the server (0.4 s that every test process
# would otherwise pay as it collects).
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("mcp") is None, reason="the mcp extra is not installed"
)

TRACE = SHARED / "hta" / "a100_simple_add.json.gz"
BASE = SHARED / "hta" / "trace_compare_base_rank1.json.gz"
NEW = SHARED / "hta" / "trace_compare_test_rank1.json.gz"
RANKS = SHARED / "param" / "dlrm_kineto_ws8"


def _cli(*args: str) -> object:
    done = run(*args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


async def test_every_tool_answers_what_the_command_prints(tmp_path, monkeypatch):
    if not TRACE.exists():
        pytest.skip(f"{TRACE} is not here (the shared traces are not checked out)")
    cache = str(tmp_path / "cache")
    monkeypatch.setenv("TRACE_TUI_CACHE_DIR", cache)
    trace, base, new, ranks = str(TRACE), str(BASE), str(NEW), str(RANKS)
    calls = {
        "info": ({"path": trace}, ["info", trace, "--json"]),
        "summary": ({"path": trace}, ["summary", trace, "--format", "json", "--top", "10"]),
        "ops": (
            {"path": trace, "sort": "calls", "top": 5},
            ["summary", trace, "--format", "json", "--top", "5", "--sort", "calls"],
        ),
        "kernels": (
            {"path": trace, "top": 3},
            ["summary", trace, "--kernels", "--format", "json", "--top", "3"],
        ),
        "tree": (
            {"path": trace, "depth": 3},
            ["summary", trace, "--tree", "--format", "json", "--depth", "3"],
        ),
        "roofline": ({"path": trace}, ["summary", trace, "--roofline", "--format", "json"]),
        "graphs": ({"path": trace}, ["summary", trace, "--graphs", "--format", "json"]),
        "diff": ({"base": base, "new": new}, ["diff", base, new, "--format", "json"]),
        "ranks": (
            {"path": ranks, "top": 3},
            ["summary", ranks, "--format", "json", "--top", "3"],
        ),
    }
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tui", "mcp"],
        cwd=str(ROOT),
        env={"TRACE_TUI_CACHE_DIR": cache, "PATH": "/usr/bin:/bin", **BYTECODE_SETTING},
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = {t.name for t in (await session.list_tools()).tools}
        assert listed == {*calls, "slice_at", "gaps"}
        for name, (arguments, argv) in calls.items():
            answer = await session.call_tool(name, arguments)
            assert not answer.isError, (name, answer.content)
            printed = _cli(*argv)
            if name in ("ops", "kernels"):  # the table, without the verdict around it
                printed = {key: printed[key] for key in server.TABLE_KEYS}
            if name == "diff":  # a region's replaced kernels: the first few, and how many
                printed = server._replaced_cut(printed)
            assert json.loads(answer.content[0].text) == printed, name
        # A slice's details: the lane and time of the trace's first kernel.
        lanes = _cli("info", trace, "--json")["lanes"]
        stream = next(lane["name"] for lane in lanes if lane["kind"] == "gpu" and lane["slices"])
        shown = await session.call_tool("slice_at", {"path": trace, "lane": stream, "time_ns": 0})
        assert shown.isError  # nothing runs on the GPU at the trace's first nanosecond
        idle = await session.call_tool("gaps", {"path": trace, "top": 3})
        found = json.loads(idle.content[0].text)["gaps"]
        assert 0 < len(found) <= 3 and found[0]["whole_device"]
        assert found[0]["dur_ns"] >= found[-1]["dur_ns"] and found[0]["details"]["cause"]
        bad = await session.call_tool("summary", {"path": str(DATA / "not_there.json")})
        assert bad.isError and bad.content[0].text.endswith(
            "not_there.json: no such file or folder"
        )
        for top in (100_000, 0):  # 0: all, as the command's --top 0, yet capped
            limited = await session.call_tool("ops", {"path": trace, "top": top})
            assert 1 < len(json.loads(limited.content[0].text)["rows"]) <= server.MAX_ROWS
        wrong = await session.call_tool("ops", {"path": trace, "top": -1})
        assert wrong.isError and "top -1: a number of rows, 0 (all, at most 200) or more" in (
            wrong.content[0].text
        )
        one = await session.call_tool("ranks", {"path": trace})
        assert one.isError and one.content[0].text.endswith(
            "a100_simple_add.json.gz: not a folder of rank traces"
        )


def test_slice_at_gives_the_innermost_slice_and_its_details():
    from tui.commands import mcp as server

    found = server.slice_at(str(DATA / "gpu_streams.json"), "stream 7", 30_000)
    assert found["lane"] == "stream 7" and found["details"]["name"] == "gemm_kernel<float, 128>"
    assert found["details"]["issuing op"] == "aten::mm"
    inner = server.slice_at(str(DATA / "gpu_streams.json"), "thread 7", 8_000)
    assert inner["details"]["name"] == "cudaLaunchKernel"  # under aten::mm, the deepest
    with pytest.raises(ValueError, match="no lane named 'stream 99'; the lanes: thread 7"):
        server.slice_at(str(DATA / "gpu_streams.json"), "stream 99", 0)


def test_gaps_are_the_longest_first_with_what_the_cpu_did():
    from tui.commands import mcp as server

    found = server.gaps(str(DATA / "gpu_streams.json"), top=2)["gaps"]
    assert [g["dur_ns"] for g in found] == [23_000, 22_000]
    assert found[0]["cause"] == "host wait" and found[0]["whole_device"]
    assert found[0]["details"]["its launch"] == "cudaGraphLaunch, 13 us after the GPU went idle"


def test_replies_stay_small_and_bad_arguments_are_one_line(shared, tmp_path):
    from tui.commands import mcp as tools

    tracelens = shared / "tracelens"
    base, new = tracelens / "h100_bert_small.json.gz", tracelens / "h100_qwen1.5_0.5b_chat.json.gz"
    regions = tools.diff(str(base), str(new))["regions"]
    cut = [r["replaced"] for r in regions if r.get("replaced")]
    assert cut and all(len(r["new"]) <= tools.REPLACED_SHOWN <= r["new_count"] for r in cut[:1])
    assert all(len(r[side]) <= tools.REPLACED_SHOWN for r in cut for side in ("new", "gone"))
    assert len(tools.gaps(str(base), top=0)["gaps"]) <= tools.MAX_GAPS
    with pytest.raises(ValueError, match=r"^depth -1: levels of the tree, 1 or more$"):
        tools.tree(str(base), depth=-1)
    for call in (
        lambda: tools.summary(""),
        lambda: tools.gaps(""),
        lambda: tools.slice_at("", "stream 7", 0),
        lambda: tools.diff(str(base), ""),
        lambda: tools.ranks("-"),  # standard input is the protocol's stream
    ):
        with pytest.raises(ValueError, match=r"^path '-?': the trace or folder to read$"):
            call()
    for rank in (0, 1):  # two ranks of one job, and a trace naming no rank: not one job's
        (tmp_path / f"rank{rank}.json").write_bytes((DATA / "gpu_streams.json").read_bytes())
    (tmp_path / "other.json").write_bytes((DATA / "gpu_streams.json").read_bytes())
    with pytest.raises(ValueError, match=r"name no rank: not one job's ranks$"):
        tools.ranks(str(tmp_path))
