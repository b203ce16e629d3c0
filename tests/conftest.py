"""Shared fixtures: the scenario traces in tests/data and the real ones in ../shared/traces."""

from __future__ import annotations

import functools
import gc
import gzip
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import pytest

if TYPE_CHECKING:
    from tui.model.trace import Trace

# The collector's passes come less often, from the start: at Python's own thresholds, its passes
# over what collection makes (every module, test and fixture object) were 0.4 s of each
# process's 2.8 s of collection.
gc.set_threshold(10_000, 10, 10)

# Tests and the programs they start never touch the user's model cache, and hypothesis keeps
# nothing in the source tree: both live in one temporary folder, removed at the end.
# (Once: test modules import this file again as `tests.conftest`.)
_SCRATCH = os.environ.get("TRACE_TUI_TESTS_SCRATCH") or tempfile.mkdtemp(prefix="trace-tui-tests-")
os.environ["TRACE_TUI_TESTS_SCRATCH"] = _SCRATCH
os.environ["TRACE_TUI_CACHE_DIR"] = os.path.join(_SCRATCH, "cache")
os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = os.path.join(_SCRATCH, "hypothesis")
# For the programs tests start with an environment of their own: whether to write byte code
# (where this environment asks for none, they wrote it into the checkout).
BYTECODE_SETTING = {k: v for k, v in os.environ.items() if k == "PYTHONDONTWRITEBYTECODE"}
# As the command sets it for itself (cli.main): numpy's OpenBLAS threads spin a while after
# numpy is imported, in every test process and every program the tests start.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# Pilot waits after each key until the app looks idle: it sleeps in windows of 20 ms until one
# passes with under 1 ms of CPU, so a key took at least 60 ms of waiting even when the app was
# done in 2, and waiting was a third of the Pilot tests' time. Windows of 2 ms end the wait as
# soon; frames every 2 ms (Textual's 60 a second are 17 ms apart) keep a window from ending
# before a change that waits for the next frame has been drawn. (With 5 ms windows the cores
# were still idle a tenth of the run, all three workers waiting at once: 2 ms, 3 s less wall
# time for the same CPU. Five workers on the two cores, and a CPU hog beside, still pass.)
os.environ.setdefault("TEXTUAL_FPS", "500")
import textual._wait  # noqa: E402 (after TEXTUAL_FPS: Textual reads it on import)

textual._wait.SLEEP_GRANULARITY = 0.002
textual._wait.SLEEP_IDLE = textual._wait.SLEEP_GRANULARITY / 20

from textual.css.stylesheet import Stylesheet  # noqa: E402

# Each app parses the same CSS again (its stylesheet's cache is its own): a fifth of an app
# start's CPU, and the suite starts some 250 apps. Parsed once per process here; the parse is a
# pure function of the text, where it was read from and the theme's variables, which the key
# holds, and the rule sets it makes are only read after.
_parsed: dict[tuple[object, ...], list[Any]] = {}
_parse_rules = Stylesheet._parse_rules


def _parse_rules_once(
    self: Stylesheet,
    css: str,
    read_from: Any,
    is_default_rules: bool = False,
    tie_breaker: int = 0,
    scope: str = "",
) -> list[Any]:
    key = (css, read_from, is_default_rules, tie_breaker, scope, *sorted(self._variables.items()))
    if key not in _parsed:
        _parsed[key] = _parse_rules(self, css, read_from, is_default_rules, tie_breaker, scope)
    return _parsed[key]


Stylesheet._parse_rules = _parse_rules_once  # type: ignore[method-assign]

from hypothesis import settings  # noqa: E402 (reads its storage folder on import)

settings.register_profile("trace-tui", database=None)
settings.load_profile("trace-tui")

DATA = Path(__file__).parent / "data"
# torch's key_averages().table() columns, in its order (torch/autograd/profiler_util.py).
TORCH_ORDER = [
    "Name",
    "Self CPU %",
    "Self CPU",
    "CPU total %",
    "CPU total",
    "CPU time avg",
    "Self CUDA",
    "Self CUDA %",
    "CUDA total",
    "CUDA time avg",
    "CPU Mem",
    "Self CPU Mem",
    "CUDA Mem",
    "Self CUDA Mem",
    "# of Calls",
]
# After torch's: the roofline's columns of the modelled calls (shown once it is known).
WORK_HEADERS = ["GFLOPs", "TFLOP/s", "% of roof"]
WORK_JSON_KEYS = {"flops", "tflops", "percent_of_roof", "above_roof", "bound"}
# The JSON keys of an op row (`summary --format json`), as documented in present/report.py.
OP_JSON_KEYS = {
    "name",
    "calls",
    "self_cpu_ns",
    "cpu_total_ns",
    "cpu_avg_ns",
    "self_cuda_ns",
    "cuda_total_ns",
    "cuda_avg_ns",
    "self_cpu_mem_bytes",
    "cpu_mem_bytes",
    "self_cuda_mem_bytes",
    "cuda_mem_bytes",
} | WORK_JSON_KEYS
SHARED = Path(__file__).resolve().parents[2] / "shared" / "traces"


def row_named(trace, name: str) -> int:
    """The first slice called `name`."""
    return next(r for r in range(len(trace.slices)) if trace.slice_name(r) == name)


def raw_events(path: Path) -> list[dict]:
    """A trace file's events as the oracles read them: parsed by orjson, a parser the model
    does not use (it reads with msgspec), three times as fast as the stdlib's on big traces."""
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    doc = orjson.loads(raw)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def shared_traces() -> list[Path]:
    """Every trace file in ../shared/traces (empty when the folder is absent)."""
    if not SHARED.is_dir():
        return []
    return sorted(
        p
        for p in SHARED.rglob("*")
        if p.is_file()
        and not p.name.endswith((".md", ".csv"))
        and not p.name.startswith(".")
        and "reports" not in p.relative_to(SHARED).parts
    )


@functools.cache
def shared_model(path: Path) -> Trace:
    """The model of a trace in ../shared/traces, loaded once per test process for the tests that
    read it: a dozen modules check the same real traces, and loading them again was 4 s of the
    suite's CPU (all 82 together hold 175 MB).

    The workers share a model cache of their own, in the session's scratch folder: the tests of
    one trace run on two or three of them, and each parsed it again (3.5 s more). The first to
    ask parses it (two asking at once both do); the others read back the model it wrote."""
    from tui.model.ingest import load_trace
    from tui.model.ingest.cache import ModelCache

    return load_trace(path, cache=ModelCache(Path(_SCRATCH) / "shared-models"))


@pytest.fixture
def shared() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"real traces not present: {SHARED} is missing")
    return SHARED


# Set in the processes pytest-xdist starts: the tests are spread over them (Pilot tests spend
# most of their time waiting for frames, so more workers than cores still pays).
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # The backend's tests first: they import torch (0.9 s of CPU in each process that does).
    # pytest-xdist's worksteal hands each worker a run of the tests in order and steals from
    # the ends of runs, so the first tests all stay with the first worker.
    items.sort(key=lambda item: item.path.parent.name != "profiling")


def pytest_collection_finish(session: pytest.Session) -> None:
    from tests import tools

    # The collector's full passes walked every module, test and fixture object at each of the
    # app starts' collections (a fifth of the Pilot tests' CPU): what collection made is set
    # aside for the session.
    gc.collect()
    gc.freeze()

    # Alone, mypy is started at once, on the other core (tests/tools.py); among workers, each
    # collects every test, so it starts in the one that runs it.
    mypy = any(item.nodeid.endswith("test_tool_passes[mypy]") for item in session.items)
    if mypy and _WORKER is None:
        tools.start("mypy")


def pytest_unconfigure(config: pytest.Config) -> None:
    # The very last hook: hypothesis may still write its caches at the end of the session. The
    # workers share the folder with the main process, which removes it once they are done.
    if _WORKER is None:
        shutil.rmtree(_SCRATCH, ignore_errors=True)
    # What is left is the session's garbage, mostly the closed apps' cycles: pytest collects it
    # five times after this hook, to warn of errors in finalizers (a warning: no filterwarnings
    # here makes it an error), and freeing up to 3M objects was 2-3 s at the end of each worker,
    # the last one's on the suite's wall time. During the run, such an error is still a warning
    # on the test running when its cycle is collected.
    gc.freeze()
