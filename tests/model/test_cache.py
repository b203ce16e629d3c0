"""The model cache: hits, misses, damage, concurrency, its size bound; and every load path
giving exactly the same model."""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import DATA
from tui.model.ingest import cache as cache_module
from tui.model.ingest import load as load_module
from tui.model.ingest import load_trace
from tui.model.ingest.cache import ModelCache

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def trace_file(tmp_path):
    p = tmp_path / "t.json"
    shutil.copy(DATA / "gpu_streams.json", p)
    return p


def _same(a, b):
    assert a.names == b.names and a.categories == b.categories
    assert a.lanes == b.lanes and a.processes == b.processes
    for group in ("slices", "launches", "flows", "instants"):
        columns = getattr(a, group)
        for name in columns.__struct_fields__:
            value = getattr(columns, name)
            assert np.array_equal(value, getattr(getattr(b, group), name)), (group, name)
    assert (a.span_ns, a.origin_us, a.base_time_ns) == (b.span_ns, b.origin_us, b.base_time_ns)
    assert a.events_by_phase == b.events_by_phase and a.skipped == b.skipped
    assert [(c.name, c.ts.tolist(), c.values.tolist()) for c in a.counters] == [
        (c.name, c.ts.tolist(), c.values.tolist()) for c in b.counters
    ]


def test_a_hit_needs_no_parsing(tmp_path, trace_file, monkeypatch):
    cache = ModelCache(tmp_path / "cache")
    first = load_trace(trace_file, cache=cache)
    assert len(list((tmp_path / "cache").glob("*.model"))) == 1

    def no_parsing(*args, **kwargs):
        raise AssertionError("parsed again")

    monkeypatch.setattr(load_module, "format_for", no_parsing)
    again = load_trace(trace_file, cache=cache)
    _same(first, again)
    assert again.args(0) == first.args(0)  # args still come from the file, on demand


def test_a_hit_through_another_path_reads_args_from_that_file(tmp_path, monkeypatch):
    """The entry was written through `t.json` in one folder; a hit through `d1/t.json` from
    another folder (beside a different `t.json`) must read the args of the file it named."""
    (tmp_path / "d1").mkdir()
    shutil.copy(DATA / "gpu_streams.json", tmp_path / "d1" / "t.json")
    (tmp_path / "t.json").write_text((DATA / "nested_cpu.json").read_text())
    cache = ModelCache(tmp_path / "cache")
    monkeypatch.chdir(tmp_path / "d1")
    first = load_trace("t.json", cache=cache)
    monkeypatch.chdir(tmp_path)
    again = load_trace("d1/t.json", cache=cache)
    assert again.path == "d1/t.json"
    assert [again.args(r) for r in range(len(again.slices))] == [
        first.args(r) for r in range(len(first.slices))
    ]


def test_a_changed_file_is_a_miss(tmp_path, trace_file):
    cache = ModelCache(tmp_path / "cache")
    load_trace(trace_file, cache=cache)
    text = trace_file.read_text().replace('"aten::mm"', '"aten::MM"')
    trace_file.write_text(text)
    os.utime(trace_file, (1, 1))
    changed = load_trace(trace_file, cache=cache)
    assert "aten::MM" in changed.names
    assert len(list((tmp_path / "cache").glob("*.model"))) == 2


def test_a_damaged_entry_is_rebuilt_silently(tmp_path, trace_file):
    cache = ModelCache(tmp_path / "cache")
    good = load_trace(trace_file, cache=cache)
    (entry,) = (tmp_path / "cache").glob("*.model")
    entry.write_bytes(entry.read_bytes()[:100])
    _same(good, load_trace(trace_file, cache=cache))
    assert cache_module._load(entry)["slices.start"].size == len(good.slices)  # rewritten whole


def test_the_cache_stays_under_its_bound(tmp_path):
    cache = ModelCache(tmp_path / "cache", max_bytes=1)
    for name in ("nested_cpu.json", "gpu_streams.json", "begin_end.json"):
        load_trace(DATA / name, cache=cache)
    assert len(list((tmp_path / "cache").glob("*.model"))) == 1  # only the newest survives


def test_concurrent_opens_share_one_good_entry(tmp_path, trace_file):
    env = {**os.environ, "TRACE_TUI_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    code = (
        "import sys; from tui.model.ingest import load_trace; from tui.model.ingest.cache import "
        "ModelCache; t = load_trace(sys.argv[1], cache=ModelCache()); print(len(t.slices))"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(trace_file)],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    outputs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert outputs == ["10"] * 4 and all(p.returncode == 0 for p in procs)
    assert len(list((tmp_path / "cache").glob("*.model"))) == 1
    assert not list((tmp_path / "cache").glob(".write-*"))
    assert len(load_trace(trace_file, cache=ModelCache(tmp_path / "cache")).slices) == 10


def test_no_cache_flag_leaves_no_entry(tmp_path, trace_file):
    env = {**os.environ, "TRACE_TUI_CACHE_DIR": str(tmp_path / "cache")}
    for flags in (["--no-cache"], []):
        done = subprocess.run(
            [sys.executable, "-m", "tui", "info", *flags, str(trace_file)],
            env=env,
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        count = len(list((tmp_path / "cache").glob("*.model")))
        assert count == (0 if flags else 1)


def test_every_path_gives_the_same_model(tmp_path):
    gen = ROOT / "tests" / "bench" / "gen_trace.py"
    plain = tmp_path / "big.json"
    subprocess.run([sys.executable, str(gen), "30000", str(plain)], check=True, capture_output=True)
    packed = tmp_path / "big.json.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    folder = tmp_path / "run"
    folder.mkdir()
    shutil.copy(packed, folder / "w0.1.pt.trace.json.gz")
    reference = load_trace(plain)
    assert len(reference.slices) > 19_000 and len(reference.launches) > 4_000
    cache = ModelCache(tmp_path / "cache")
    for other in (
        load_trace(packed),
        load_trace(folder),
        load_trace(plain, cache=cache),
        load_trace(plain, cache=cache),
    ):
        _same(reference, other)


def test_an_entry_cut_short_or_of_the_format_before_is_rebuilt(tmp_path, trace_file):
    cache = ModelCache(tmp_path / "cache")
    good = load_trace(trace_file, cache=cache)
    (entry,) = (tmp_path / "cache").glob("*.model")
    entry.write_bytes(entry.read_bytes()[:-64])  # the header whole, the last array cut
    _same(good, load_trace(trace_file, cache=cache))
    old = tmp_path / "cache" / "0123.npz"  # the format before: removed as the cache is kept
    old.write_bytes(b"PK")
    load_trace(DATA / "gpu_streams.json", cache=cache)
    assert not old.exists()
