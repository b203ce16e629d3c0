"""Two traces compared: BASE against NEW, row by row, and region by region.

Ops and kernels are matched by name: each row's numbers are those of that trace's own table (its
`summary`), so every delta is NEW minus BASE of the two single-trace summaries. Regions
(`record_function` annotations, `ProfilerStep*`, `nn.Module` frames) are matched by name too, and
carry the GPU time of the kernels launched under them, wherever those ran: when `torch.compile`
fuses a region's eager kernels into one Triton kernel, the region still lines up, and its kernels
are listed as replaced. Step time is compared as the median step, so traces with different step
counts compare fairly.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import msgspec
import numpy as np
from msgspec.structs import replace

from ..patterns import MODULE_PREFIX, OBJECT_ADDRESS, PROFILER_STEP, PROFILER_STEP_ROW
from ..trace import Trace
from .attribution import attribute, op_tree
from .kernels import KernelStat, kernel_stats
from .ops import OpStat, op_stats
from .scope import Scope
from .steps import step_windows
from .summary import Summary, summarize

# The op columns compared, as the op table names its values (ns, or a count).
OP_COLUMNS = ("calls", "self_cpu_ns", "cpu_total_ns", "self_cuda_ns", "cuda_total_ns")
KERNEL_COLUMNS = ("calls", "total_ns", "min_ns", "max_ns")
REGION_COLUMNS = ("calls", "cpu_total_ns", "gpu_ns", "kernels")
MATCHED, ADDED, REMOVED = "matched", "added", "removed"
_REGION_CATEGORIES = {"user_annotation", "gpu_user_annotation"}


class Side(msgspec.Struct, frozen=True):
    """One trace's headline numbers."""

    path: str
    steps: int
    step_median_ns: int | None  # the median ProfilerStep (CPU time), None without steps
    window_ns: int
    busy_ns: int
    computation_ns: int
    communication_ns: int
    exposed_comm_ns: int
    idle_ns: dict[str, int]
    verdict: str

    def metric(self, name: str) -> int | None:
        """A headline number by name ("step", "busy", ...: see HEADLINE)."""
        return self.step_median_ns if name == "step" else getattr(self, HEADLINE[name])


# --fail-on-regression metrics: name -> Side attribute.
HEADLINE = {
    "step": "step_median_ns",
    "window": "window_ns",
    "busy": "busy_ns",
    "computation": "computation_ns",
    "communication": "communication_ns",
    "exposed_comm": "exposed_comm_ns",
}


class DiffRow(msgspec.Struct, frozen=True):
    """One name on either side: its numbers in BASE and in NEW (None where it is absent)."""

    name: str
    base: dict[str, int] | None
    new: dict[str, int] | None
    replaced: tuple[list[str], list[str]] = ([], [])  # regions: kernels only in BASE, only NEW
    python: bool = False  # an op row that is a Python frame (with_stack=True) on either side

    @property
    def status(self) -> str:
        return MATCHED if self.base and self.new else (ADDED if self.new else REMOVED)

    def value(self, side: str, column: str) -> int:
        values = self.base if side == "base" else self.new
        return values.get(column, 0) if values else 0

    def delta(self, column: str) -> int:
        return self.value("new", column) - self.value("base", column)

    def percent(self, column: str) -> float | None:
        """The change as a share of BASE; None where BASE is 0."""
        base = self.value("base", column)
        return 100.0 * self.delta(column) / base if base else None


class TraceDiff(msgspec.Struct, frozen=True):
    base: Side
    new: Side
    ops: list[DiffRow]
    kernels: list[DiffRow]
    regions: list[DiffRow]
    # Of the time on both sides (Self CPU and GPU), the share in rows found on both sides.
    matched_share: float
    notes: list[str] = msgspec.field(default_factory=list)


def diff(base: Trace, new: Trace) -> TraceDiff:
    """Compare NEW with BASE: headline numbers, the op, kernel and region tables."""
    sides = [_side(t, summarize(t, scope=Scope())) for t in (base, new)]
    frames = _python_frames(base) | _python_frames(new)
    ops = [replace(r, python=r.name in frames) for r in _rows([_op_values(t) for t in (base, new)])]
    kernels = _rows([_kernel_values(t) for t in (base, new)])
    region_values = [_regions(t) for t in (base, new)]
    regions = [
        DiffRow(
            row.name,
            row.base,
            row.new,
            _replaced(region_values[0][1].get(row.name), region_values[1][1].get(row.name)),
        )
        for row in _rows([values for values, _ in region_values])
    ]
    share = _matched_share(ops, kernels)
    notes = []
    if share < 0.5:
        notes.append(
            f"only {share:.0%} of the time is in ops and kernels found in both traces: "
            "they may be from unrelated runs"
        )
    if sides[0].steps != sides[1].steps and sides[0].steps and sides[1].steps:
        notes.append(
            f"BASE has {sides[0].steps} steps and NEW {sides[1].steps}: op and kernel totals "
            "are over all of them; step time is the median step"
        )
    for side, trace in zip(("BASE", "NEW"), (base, new), strict=True):
        if trace.format.truncated:
            notes.append(
                f"{side}'s trace is truncated: its numbers and verdict cover what was read"
            )
    return TraceDiff(sides[0], sides[1], ops, kernels, regions, share, notes)


def _side(trace: Trace, summary: Summary) -> Side:
    steps = [row.dur_ns for row in summary.steps]
    t = summary.gpu_time
    return Side(
        trace.path,
        len(steps),
        int(np.median(steps)) if steps else None,
        t.window_ns,
        t.busy_ns,
        t.computation_ns,
        t.communication_ns,
        t.exposed_comm_ns,
        dict(summary.idle_ns),
        summary.verdict.label,
    )


def _op_values(trace: Trace) -> dict[str, dict[str, int]]:
    """Per op name, its totals; Python frames named with an object's address (`<built-in
    method copy_ of Tensor object at 0x7f...>`) are matched without it, as the address differs
    in every run."""
    out: dict[str, dict[str, int]] = {}
    for o in op_stats(trace, Scope()):
        values = _values(o, OP_COLUMNS)
        seen = out.setdefault(OBJECT_ADDRESS.sub("", o.name), dict.fromkeys(values, 0))
        for column, value in values.items():
            seen[column] += value
    return out


def _python_frames(trace: Trace) -> set[str]:
    """The op names that are Python frames, as `_op_values` names them."""
    return {OBJECT_ADDRESS.sub("", o.name) for o in op_stats(trace, Scope()) if o.python}


def _kernel_values(trace: Trace) -> dict[str, dict[str, int]]:
    return {k.name: _values(k, KERNEL_COLUMNS) for k in kernel_stats(trace, Scope())}


def _values(row: OpStat | KernelStat, columns: tuple[str, ...]) -> dict[str, int]:
    return {c: int(getattr(row, c)) for c in columns}


def _rows(sides: list[dict[str, dict[str, int]]]) -> list[DiffRow]:
    """Every name of either side, BASE's order first, then the names only NEW has."""
    base, new = sides
    names = list(base) + [n for n in new if n not in base]
    return [DiffRow(n, base.get(n), new.get(n)) for n in names]


def _regions(trace: Trace) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, int]]]:
    """Per region name: calls, CPU total, the GPU time and count of the kernels launched under
    it; and per region, the GPU time of each kernel name launched under it."""
    s = trace.slices
    is_region = _region_rows(trace)
    rows = np.flatnonzero(is_region)
    names = [_region_name(trace.slice_name(int(r))) for r in rows.tolist()]
    values: dict[str, dict[str, int]] = {}
    for r, name in zip(rows.tolist(), names, strict=True):
        v = values.setdefault(name, dict.fromkeys(REGION_COLUMNS, 0))
        v["calls"] += 1
        v["cpu_total_ns"] += int(s.dur[r])
    # Each piece of GPU work, walked up through the ops that enclose its launch: (work, region
    # name) pairs, counted once where a region holds another of its name (a recursive module).
    att = attribute(trace)
    up = op_tree(trace).up
    work = att.work[att.op >= 0]
    at = att.op[att.op >= 0]
    ids = {name: k for k, name in enumerate(values)}
    name_id = np.full(len(s), -1, np.int64)
    name_id[rows] = [ids[n] for n in names]
    pairs_work, pairs_name = [], []
    while len(at):
        hit = is_region[at]
        pairs_work.append(work[hit])
        pairs_name.append(name_id[at[hit]])
        at = up[at]
        keep = at >= 0
        at, work = at[keep], work[keep]
    kernels: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    if pairs_work:
        w = np.concatenate(pairs_work)
        g = np.concatenate(pairs_name)
        w, g = np.unique(np.stack((w, g)), axis=1)
        by_name = list(values)
        dur = s.dur[w]
        gpu = np.bincount(g, weights=dur, minlength=len(by_name))
        count = np.bincount(g, minlength=len(by_name))
        for k, name in enumerate(by_name):
            values[name]["gpu_ns"] = int(gpu[k])
            values[name]["kernels"] = int(count[k])
        # Per region and kernel name: one sum per pair, not one Python step per kernel.
        names_n = len(trace.names) + 1
        pair, at_pair = np.unique(g * names_n + s.name[w], return_inverse=True)
        sums = np.bincount(at_pair, weights=dur)
        for key, total in zip(pair.tolist(), sums.tolist(), strict=True):
            kernels[by_name[key // names_n]][trace.names[key % names_n]] += int(total)
    return values, {k: dict(v) for k, v in kernels.items()}


def _region_rows(trace: Trace) -> Any:
    cats = trace.category_test(lambda c: c.lower() in _REGION_CATEGORIES)
    modules = trace.name_test(lambda n: n.startswith(MODULE_PREFIX))
    return trace.kind_mask("cpu") & (cats[trace.slices.cat] | modules[trace.slices.name])


def _region_name(name: str) -> str:
    return PROFILER_STEP_ROW if PROFILER_STEP.match(name) else name


def _replaced(
    base: dict[str, int] | None, new: dict[str, int] | None
) -> tuple[list[str], list[str]]:
    """Kernels launched under a region on one side only (fused away, or new), most time first."""
    base, new = base or {}, new or {}
    gone = sorted((k for k in base if k not in new), key=lambda k: (-base[k], k))
    came = sorted((k for k in new if k not in base), key=lambda k: (-new[k], k))
    return gone, came


def _matched_share(ops: list[DiffRow], kernels: list[DiffRow]) -> float:
    both = total = 0
    for rows, column in ((ops, "self_cpu_ns"), (kernels, "total_ns")):
        for row in rows:
            amount = row.value("base", column) + row.value("new", column)
            total += amount
            both += amount if row.status == MATCHED else 0
    return both / total if total else 1.0


def ranked(rows: list[DiffRow], column: str) -> list[DiffRow]:
    """Largest absolute change of `column` first; ties by name."""
    return sorted(rows, key=lambda r: (-abs(r.delta(column)), r.name))


def regressed(d: TraceDiff, metric: str, percent: float) -> float | None:
    """How far NEW regressed on `metric` (percent over BASE) when beyond `percent`, else None."""
    before, after = d.base.metric(metric), d.new.metric(metric)
    if not before or after is None:
        return None
    change = 100.0 * (after - before) / before
    # Step time, busy time... all grow when worse.
    return change if change > percent else None


def aligned_window(src: Trace, dst: Trace, window: tuple[int, int]) -> tuple[int, int]:
    """`window` of `src` moved to `dst` at the same place in the same step: the step holding
    its start (or the last one before it), counted from the first; without steps on both, the
    same offset from the trace start."""
    t0, t1 = window
    a, b = step_windows(src), step_windows(dst)
    if not a or not b:
        return window
    k = max((i for i, (_, start, _) in enumerate(a) if start <= t0), default=0)
    offset = t0 - a[k][1]
    start = b[min(k, len(b) - 1)][1] + offset
    return start, start + (t1 - t0)
