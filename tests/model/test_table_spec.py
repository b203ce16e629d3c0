"""The one table spec: every table of the product is declared with it (a registry the tests
walk), one header vocabulary, and text, Markdown, JSON and csv of each table agree cell for cell
(csv read with the stdlib csv module, against the JSON)."""

from __future__ import annotations

import csv
import importlib
import io
import json
import pkgutil
import re
from pathlib import Path

import pytest

import tui.model.present as present
from tests.bench.make_rank_set import write_rank_set
from tests.conftest import DATA
from tests.model.test_diff import step_trace
from tests.model.test_graphs import _events as graph_events
from tests.tui.helpers import run
from tui.model.present import vocabulary as v
from tui.model.present.registry import TABLES
from tui.model.present.table_spec import Table
from tui.model.timescale import format_duration

# Words that drifted before the one vocabulary: no header may be one of them.
DRIFTED = {"Calls", "calls", "GPU time", "Kernel", "%", "min", "max", "kernels"}


def _declared() -> list[Table[object]]:
    """Every Table a module of present/ holds at its top level (in a dict too)."""
    found = []
    for info in pkgutil.walk_packages(present.__path__, present.__name__ + "."):
        for value in vars(importlib.import_module(info.name)).values():
            items = value.values() if isinstance(value, dict) else [value]
            found += [t for t in items if isinstance(t, Table)]
    return found


def test_every_table_of_the_product_is_in_the_registry():
    declared = _declared()
    assert len(declared) >= len(TABLES)
    assert all(any(t is r for r in TABLES) for t in declared)
    assert len({t.name for t in TABLES}) == len(TABLES)


def test_no_report_keeps_a_header_list_of_its_own():
    root = Path(present.__file__).parent
    for path in root.rglob("*.py"):
        assert not re.search(r"^\w*HEADERS\s*=", path.read_text(), re.M), path


def test_one_header_vocabulary():
    for table in TABLES:
        headers = [c.header for c in table.text_columns]
        assert len(headers) == len(set(headers)), table.name
        assert not DRIFTED & set(headers), table.name
        for c in table.text_columns:
            if c.key == "calls" or c.key.startswith("calls."):
                assert v.CALLS in c.header, (table.name, c.header)
            if c.key == "name" and table.name != "steps":
                assert c.header == v.NAME, (table.name, c.header)
        for key in table.sort_keys:
            assert table.column(key).sortable


# Text and Markdown tables parsed back into cells.


def markdown_tables(text: str) -> list[list[list[str]]]:
    tables, rows = [], []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            if not line.startswith("|---"):
                cells = re.split(r"(?<!\\) \| ", line[2:-2])
                rows.append([c.replace("\\|", "|").replace("&lt;", "<").replace("&gt;", ">")
                             for c in cells])  # fmt: skip
        elif rows:
            tables.append(rows)
            rows = []
    return tables


def filled(tables: list[list[list[str]]]) -> list[list[list[str]]]:
    """Each row's cells that are not blank (text leaves a blank cell as spaces)."""
    return [[[c for c in row if c] for row in table] for table in tables]


def ruled_tables(text: str) -> list[list[list[str]]]:
    """Tables between rules: the header, then the rows."""
    lines = text.splitlines()
    rules = [i for i, line in enumerate(lines) if line and re.fullmatch(r"[- ]+", line)]
    return [
        [re.split(r"\s{2,}", line.strip()) for line in [lines[a + 1], *lines[a + 3 : b]]]
        for a, _, b in zip(rules[::3], rules[1::3], rules[2::3], strict=True)
    ]


def csv_tables(text: str) -> dict[str, list[dict[str, str]]]:
    """The csv stream's tables by name (each starts with a header row whose first cell is
    `table`)."""
    out: dict[str, list[dict[str, str]]] = {}
    header: list[str] = []
    for row in csv.reader(io.StringIO(text)):
        if row[0] == "table":
            header = row
            continue
        out.setdefault(row[0], []).append(dict(zip(header[1:], row[1:], strict=True)))
    return out


def flat(record: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in record.items():
        if isinstance(value, dict) and value:
            out |= flat(value, f"{prefix}{key}.")
        else:
            out[prefix + key] = None if isinstance(value, dict) else value
    return out


def same(csv_cell: str, value: object) -> bool:
    """A csv cell read back is the JSON value."""
    if value is None:
        return csv_cell == ""
    if isinstance(value, bool | list):
        return json.loads(csv_cell) == value
    if isinstance(value, int | float):
        return float(csv_cell) == value
    return csv_cell == value


def assert_csv_is_json(csv_rows: list[dict[str, str]], json_rows: list[dict]) -> None:
    assert len(csv_rows) == len(json_rows) > 0
    for got, want in zip(csv_rows, json_rows, strict=True):
        want = flat(want)
        for key, value in want.items():
            if key not in got:  # an object null (or empty) here: its columns empty
                group = [k for k in got if k.startswith(key + ".")]
                assert value is None and group and all(got[k] == "" for k in group), key
                continue
            assert same(got[key], value), (key, got[key], value)
        assert all(got[k] == "" for k in got if k not in want and k.split(".")[0] not in want)


def outputs(*args: str) -> dict[str, str]:
    out = {}
    for form in ("text", "markdown", "json", "csv"):
        done = run(*args, "--format", form, "--no-cache")
        assert done.returncode == 0, done.stderr
        out[form] = done.stdout
    return out


def test_the_op_table_agrees_in_every_format():
    got = outputs("summary", str(DATA / "pipelined_steps.json"), "--top", "0")
    doc = json.loads(got["json"])
    text, markdown = ruled_tables(got["text"]), markdown_tables(got["markdown"])
    assert filled(text) == filled(markdown) and len(text) == 2  # the steps, then the ops
    ops = text[-1]
    header = ops[0]
    assert header[:3] == [v.NAME, v.SELF_CPU_PCT, v.SELF_CPU] and header[-1] == v.CALLS
    for cells, row in zip(ops[1:], doc["rows"], strict=True):
        cell = dict(zip(header, cells, strict=True))
        assert cell[v.NAME] == row["name"] and cell[v.CALLS] == f"{row['calls']:,}"
        assert cell[v.SELF_CPU] == format_duration(row["self_cpu_ns"])
        assert cell[v.CUDA_TOTAL] == format_duration(row["cuda_total_ns"])
        share = row["self_cpu_ns"] / doc["summary"]["self_cpu_total_ns"]
        assert cell[v.SELF_CPU_PCT] == f"{share:.2%}"
    tables = csv_tables(got["csv"])
    assert list(tables) == ["steps", "ops"]
    assert_csv_is_json(tables["ops"], doc["rows"])
    assert_csv_is_json(tables["steps"], doc["steps"])


def test_the_kernel_table_agrees_in_every_format():
    got = outputs("summary", str(DATA / "attribution.json"), "--kernels")
    doc = json.loads(got["json"])
    assert filled(ruled_tables(got["text"])) == filled(markdown_tables(got["markdown"]))
    kernels = ruled_tables(got["text"])[-1]
    assert kernels[0][:3] == [v.NAME, v.TOTAL, v.GPU_PCT]
    assert [r[0] for r in kernels[1:]] == [r["name"] for r in doc["rows"]]
    rows = csv_tables(got["csv"])["kernels"]
    assert_csv_is_json(rows, doc["rows"])
    assert next(r for r in rows if r["name"] == "K1")["geometry.grid"] == "4x1x1"


def test_the_graph_tables_agree_in_every_format(tmp_path):
    path = tmp_path / "graphs.json"
    path.write_text(json.dumps({"traceEvents": graph_events(graph_ids=True)}))
    got = outputs("summary", str(path), "--graphs")
    doc = json.loads(got["json"])
    assert filled(ruled_tables(got["text"])) == filled(markdown_tables(got["markdown"]))
    assert ruled_tables(got["text"])[0][0] == [v.NAME, "Node", "Node id", v.CALLS, v.TOTAL,
                                               v.AVG, v.MIN, v.MAX]  # fmt: skip
    tables = csv_tables(got["csv"])
    assert list(tables) == [g["label"] for g in doc["graphs"]]
    for g in doc["graphs"]:
        assert_csv_is_json(tables[g["label"]], g["nodes"])


def test_the_diff_tables_agree_in_every_format(tmp_path):
    step_trace(tmp_path / "a.json", [("k_softmax", 10.0), ("k_mul", 10.0)])
    step_trace(tmp_path / "b.json", [("triton_fused", 12.0)], step_us=130.0)
    got = outputs("diff", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--top", "0")
    doc = json.loads(got["json"])
    tables = csv_tables(got["csv"])
    assert list(tables) == ["headline", "ops", "kernels", "regions"]
    for name in ("ops", "kernels", "regions"):
        assert_csv_is_json(tables[name], doc[name])
    headline = {row["metric"]: row for row in tables["headline"]}
    for side in ("base", "new"):
        assert headline["Verdict"][side] == doc[side]["verdict"]
        assert int(headline["Profiled window"][side]) == doc[side]["window_ns"]
        assert int(headline["Step (median)"][side]) == doc[side]["step_median_ns"]
    window = headline["Profiled window"]
    assert int(window["delta"]) == doc["new"]["window_ns"] - doc["base"]["window_ns"]
    text, markdown = ruled_tables(got["text"]), markdown_tables(got["markdown"])
    assert filled(text[:1]) == filled(markdown[:1])
    assert [r[0] for r in text[0][1:]] == list(headline)
    text, markdown = text[1:], markdown[1:]  # after the headline
    for short, full, name in zip(text, markdown, ("ops", "kernels", "regions"), strict=True):
        assert short[0][:3] == full[0][:3] == [v.NAME, v.STATUS, v.CALLS]
        # Text has the ranked column in full and the others' deltas; Markdown all in full.
        assert [r[:7] for r in short[1:]] == [r[:7] for r in full[1:]]
        assert [r[0] for r in short[1:]] == [r["name"] for r in doc[name]]
    assert text[1][0][3] == f"{v.TOTAL} BASE" and text[2][0][3] == f"{v.GPU_TOTAL} BASE"


def test_the_tree_agrees_in_text_markdown_and_csv():
    got = outputs("summary", str(DATA / "attribution.json"), "--tree", "--weight", "cpu")
    (markdown,) = markdown_tables(got["markdown"])
    text = got["text"].splitlines()[1:]
    headers = [v.TOTAL, v.TOTAL_PCT, v.SELF, v.CALLS, v.NAME]
    assert re.split(r"\s{2,}", text[0].strip()) == markdown[0] == headers
    rows = csv_tables(got["csv"])["tree"]
    assert len(rows) == len(markdown) - 1 == len(text) - 1
    for row, cells in zip(rows, markdown[1:], strict=True):
        assert format_duration(int(row["total_ns"])) == cells[0]
        assert cells[4].endswith(row["name"]) and cells[4].startswith("· " * int(row["level"]))
    assert json.loads(got["json"])["root"]["total_ns"] == int(rows[0]["total_ns"])


def test_the_rank_tables_agree_in_every_format(tmp_path):
    write_rank_set(tmp_path, ranks=3, steps=2, slow_rank=1, slow_step=0)
    got = outputs("summary", str(tmp_path))
    doc = json.loads(got["json"])
    markdown = markdown_tables(got["markdown"])
    lines = got["text"].splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("Rank  "))
    text = [re.split(r"\s{2,}", line) for line in lines[at : at + 4]]
    assert text == markdown[0]
    tables = csv_tables(got["csv"])
    assert list(tables) == ["ranks", "matrix", "collectives"]
    assert_csv_is_json(tables["ranks"], doc["ranks"])
    assert_csv_is_json(tables["collectives"], doc["collectives"])
    for row, rank in zip(tables["matrix"], doc["ranks"], strict=True):
        assert [float(row[s["name"]]) for s in rank["steps"]] == [
            s["own_work_ns"] for s in rank["steps"]
        ]


@pytest.mark.parametrize("view", [[], ["--kernels"], ["--tree"]])
def test_csv_on_a_shared_trace_is_its_json(shared, view):
    path = str(shared / "tracelens" / "h100_bert_small.json.gz")
    done = run("summary", path, *view, "--format", "csv")
    assert done.returncode == 0, done.stderr
    tables = csv_tables(done.stdout)
    if view == ["--tree"]:
        assert tables["tree"][0]["name"] == "(all)"
        return
    doc = json.loads(run("summary", path, *view, "--format", "json").stdout)
    assert_csv_is_json(tables[doc["table"]], doc["rows"])


@pytest.mark.parametrize(("flags", "key"), [(["--kernels"], "total_ns"), (["--graphs"], "node")])
def test_a_table_without_rows_still_has_its_csv_header(flags, key):
    done = run("summary", str(DATA / "nested_cpu.json"), *flags, "--format", "csv", "--no-cache")
    last = list(csv.reader(io.StringIO(done.stdout)))[-1]
    assert done.returncode == 0 and last[0] == "table" and key in last
