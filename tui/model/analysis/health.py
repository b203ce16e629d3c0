"""Trace health: torch's own checks of a trace (`torch/profiler/_trace_validator.py`), run on the
loaded model, and what loading had to repair.

Checks, as torch words them:
- a kernel starts before its launch (torch pairs them by `External id`; here by the launch links,
  flows or `correlation`, which is what every number here is built on);
- ours: GPU work starts far after its launch even on an idle GPU, so the clocks disagree
  (clock.py);
- a `Stream Wait Event` / `Event Sync` (`cuda_sync`) names no event record
  (`wait_on_cuda_event_record_corr_id` missing or negative);
- a `Stream Sync` starts while a kernel of its stream still runs;
- a stream wait names an event record that is not in the trace, or comes after the wait;
- a `record_param_comms` lacks NCCL metadata (Collective name, dtype, In/Out msg nelems, Group
  size);
- one backward `Sequence number` is shared by two different backward ops.
Repairs: slices that partly overlap a neighbour on their row (Perfetto drops or misdraws them),
slices drawn on extra rows, begin/end pairs closed at the trace end and other adjustments, and
events skipped.

The checks that read args read those of the few events they concern, at most ARGS_CHECKED.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt

from ..timescale import format_duration
from ..trace import Trace
from .clock import clock_offset

EXAMPLES = 20  # slices kept per finding, to jump to
ARGS_CHECKED = 200_000  # events whose args a check reads, at most
SYNC_CATEGORY = "cuda_sync"
EVENT_RECORD = re.compile(r"^cudaEventRecord(WithFlags)?(_ptsz)?$")
NCCL_FIELDS = ("Collective name", "dtype", "In msg nelems", "Out msg nelems", "Group size")
BACKWARD = "autograd::engine::evaluate_function:"


class Finding(msgspec.Struct, frozen=True):
    """One rule that failed, or one kind of repair, with examples to jump to."""

    rule: str  # torch's rule name, or "repair"
    what: str  # what it means, for a person
    count: int
    examples: list[int] = msgspec.field(default_factory=list)  # slice rows, by start
    unchecked: int = 0  # events the check could not read (over ARGS_CHECKED)


class Health(msgspec.Struct, frozen=True):
    checks: list[Finding]  # the rules that failed
    repairs: list[Finding]  # what loading changed to show the trace
    skipped: list[Finding]  # events left out, by reason

    @property
    def line(self) -> str:
        """The header's words: "health: 2 checks fail, 126 repaired (H)" (skipped events have
        a line of their own there)."""
        fails = sum(1 for f in self.checks if f.count)
        repaired = sum(f.count for f in self.repairs)
        if not fails and not repaired:
            return "health: ok" + (" (H)" if self.skipped else "")
        parts = []
        if fails:
            parts.append(f"{fails} check{'s' * (fails != 1)} fail{'s' * (fails == 1)}")
        if repaired:
            parts.append(f"{repaired:,} repaired")
        return "health: " + ", ".join(parts) + " (H)"


KEY = "health"  # its slot in `trace.derived`, which a model cache may fill (passes/facts.py)


def health(trace: Trace) -> Health:
    """Computed once per trace (the args of the events a check concerns are read)."""
    return trace.derive(KEY, lambda: _health(trace))


def _health(trace: Trace) -> Health:
    checks = [
        f
        for f in (
            _kernel_before_launch(trace),
            _clock_offset(trace),
            *_stream_waits(trace),
            _sync_overlap(trace),
            _nccl_metadata(trace),
            _backward_sequence(trace),
        )
        if f.count or f.unchecked
    ]
    skipped = [Finding("skipped", reason, n) for reason, n in trace.skipped.most_common()]
    return Health(checks, _repairs(trace), skipped)


def _examples(trace: Trace, rows: npt.NDArray[np.int64] | list[int]) -> list[int]:
    found = np.asarray(rows, np.int64)
    first = found[np.argsort(trace.slices.start[found], kind="stable")][:EXAMPLES]
    return [int(r) for r in first]


def _kernel_before_launch(trace: Trace) -> Finding:
    s, links = trace.slices, trace.launches
    early = links.dst[s.start[links.dst] < s.start[links.src]].astype(np.int64)
    return Finding(
        "_check_gpu_kernel_causality",
        "GPU work that starts before its launch call (clock skew between CPU and GPU)",
        len(early),
        _examples(trace, early),
    )


def _clock_offset(trace: Trace) -> Finding:
    found = clock_offset(trace)
    if found is None:
        return Finding("clock_offset", "", 0)
    return Finding(
        "clock_offset",
        f"GPU work starts at least {format_duration(found.lag_ns)} after its launch even on an "
        "idle GPU: the CPU and GPU clocks disagree (the verdict judges the GPU over its own "
        "span)",
        found.launches,
        found.examples,
    )


def _rows_named(trace: Trace, test: re.Pattern[str] | str) -> npt.NDArray[np.int64]:
    if isinstance(test, str):
        ids = [i for i, n in enumerate(trace.names) if n == test]
    else:
        ids = [i for i, n in enumerate(trace.names) if test.search(n)]
    return np.flatnonzero(np.isin(trace.slices.name, ids)).astype(np.int64)


def _category_rows(trace: Trace, category: str) -> npt.NDArray[np.int64]:
    ids = [i for i, c in enumerate(trace.categories) if c.lower() == category]
    return np.flatnonzero(np.isin(trace.slices.cat, ids)).astype(np.int64)


def _args(trace: Trace, rows: npt.NDArray[np.int64]) -> list[tuple[int, dict[str, Any]]]:
    out = []
    for row in rows[:ARGS_CHECKED].tolist():
        args = trace.args(row)
        if isinstance(args, dict):
            out.append((row, args))
    return out


def _sync_args(trace: Trace) -> list[tuple[int, dict[str, Any]]]:
    """The args of the `cuda_sync` slices, read once for the checks that need them."""
    return trace.derive(
        "health sync args", lambda: _args(trace, _category_rows(trace, SYNC_CATEGORY))
    )


def _stream_waits(trace: Trace) -> tuple[Finding, Finding]:
    syncs = _category_rows(trace, SYNC_CATEGORY)
    unnamed: list[int] = []
    later: list[int] = []
    waits: list[tuple[int, int]] = []
    for row, args in _sync_args(trace):
        kind = args.get("cuda_sync_kind")
        if kind not in ("Stream Wait Event", "Event Sync"):
            continue
        ref = args.get("wait_on_cuda_event_record_corr_id")
        if not isinstance(ref, int) or ref < 0:
            unnamed.append(row)
        elif kind == "Stream Wait Event":
            waits.append((row, ref))
    records_over = 0
    if waits:
        recorded: dict[int, int] = {}
        records = _rows_named(trace, EVENT_RECORD)
        records_over = max(0, len(records) - ARGS_CHECKED)
        for row, args in _args(trace, records):
            for key in ("External id", "correlation"):
                ref = args.get(key)
                if isinstance(ref, int):
                    start = int(trace.slices.start[row])
                    recorded[ref] = min(recorded.get(ref, start), start)
        for row, ref in waits:
            at = recorded.get(ref)
            if at is None or at > int(trace.slices.start[row]):
                later.append(row)
    over = max(0, len(syncs) - ARGS_CHECKED)
    return (
        Finding(
            "_check_stream_wait_corr_id_populated",
            "stream waits and event syncs that name no event record",
            len(unnamed),
            _examples(trace, unnamed),
            over,
        ),
        Finding(
            "_check_stream_wait_corr_id_in_past",
            "stream waits whose event record is missing from the trace or comes after them",
            len(later),
            _examples(trace, later),
            records_over,  # records not read: a wait on one of them may be counted wrongly
        ),
    )


def _sync_overlap(trace: Trace) -> Finding:
    """A Stream Sync (written on its stream's lane) that starts inside a kernel of that lane."""
    s = trace.slices
    kernel = np.asarray([c.lower() == "kernel" for c in trace.categories] + [False])
    syncs = [row for row, args in _sync_args(trace) if args.get("cuda_sync_kind") == "Stream Sync"]
    by_lane: dict[int, list[int]] = {}
    for row in syncs:
        by_lane.setdefault(trace.lane_of(row).lo, []).append(row)
    lanes = {lane.lo: lane for lane in trace.lanes}
    bad: list[int] = []
    for lo, rows in by_lane.items():
        lane = lanes[lo]
        here = np.arange(lane.lo, lane.hi, dtype=np.int64)
        kernels = here[kernel[s.cat[here]]]  # by start
        if not len(kernels):
            continue
        reach = np.maximum.accumulate(s.start[kernels] + s.dur[kernels])
        t = s.start[np.asarray(rows)]
        before = np.searchsorted(s.start[kernels], t, side="left") - 1  # kernels starting < t
        inside = (before >= 0) & (reach[np.maximum(before, 0)] > t)
        bad += np.asarray(rows)[inside].tolist()
    return Finding(
        "_check_stream_sync_overlap",
        "stream syncs that start while a kernel of their stream still runs",
        len(bad),
        _examples(trace, bad),
    )


def _nccl_metadata(trace: Trace) -> Finding:
    rows = _rows_named(trace, "record_param_comms")
    bad = [row for row, args in _args(trace, rows) if any(k not in args for k in NCCL_FIELDS)]
    return Finding(
        "_check_nccl_metadata",
        "record_param_comms without its NCCL metadata (Collective name, dtype, msg sizes, "
        "Group size)",
        len(bad),
        _examples(trace, bad),
        max(0, len(rows) - ARGS_CHECKED),
    )


def _backward_sequence(trace: Trace) -> Finding:
    rows = _rows_named(trace, re.compile("^" + re.escape(BACKWARD)))
    ops: dict[int, dict[str, int]] = {}
    for row, args in _args(trace, rows):
        seq = args.get("Sequence number", args.get("seq_num"))
        if not isinstance(seq, int):
            continue
        op = trace.slice_name(row).split(":", 1)[-1].strip()
        ops.setdefault(seq, {}).setdefault(op, row)
    shared = [row for names in ops.values() if len(names) > 1 for row in names.values()]
    groups = sum(1 for names in ops.values() if len(names) > 1)
    return Finding(
        "_check_backward_seq_id_uniqueness",
        "backward sequence numbers shared by two or more backward ops",
        groups,
        _examples(trace, shared),
        max(0, len(rows) - ARGS_CHECKED),
    )


def _repairs(trace: Trace) -> list[Finding]:
    s = trace.slices
    out = []
    overlapping: list[int] = []
    extra: list[int] = []
    for lane in trace.lanes:
        rows = np.arange(lane.lo, lane.hi, dtype=np.int64)
        if not len(rows):
            continue
        row_of = s.depth[lane.lo : lane.hi]  # the lane's slices are contiguous: a view
        depth = row_of.astype(np.int64)
        extra += rows[depth >= lane.levels].tolist()
        # By row, then start: the lane's slices are in start order already, so a stable sort
        # by row alone is that order (a radix sort of the int16 rows, a third of lexsort's time).
        order = np.argsort(row_of, kind="stable")
        ordered, d = rows[order], depth[order]
        end = s.start[ordered] + s.dur[ordered]
        same_row = d[1:] == d[:-1]
        reach = _running_max_by_group(end, d)
        overlap = same_row & (s.start[ordered][1:] < reach[:-1])
        overlapping += ordered[1:][overlap].tolist()
    if overlapping:
        out.append(
            Finding(
                "repair",
                "slices partly overlapping a neighbour on their row (kept, drawn side by side; "
                "Perfetto would drop or misdraw them)",
                len(overlapping),
                _examples(trace, overlapping),
            )
        )
    if extra:
        out.append(
            Finding(
                "repair",
                "slices held by one on their own row, drawn on extra rows below the lane",
                len(extra),
                _examples(trace, extra),
            )
        )
    for reason, n in trace.adjusted.most_common():
        out.append(Finding("repair", reason, n))
    return out


def _running_max_by_group(
    values: npt.NDArray[np.int64], groups: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """The running maximum of `values`, restarting where `groups` (sorted) changes."""
    out = values.copy()
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    for a, b in zip(starts.tolist(), [*starts[1:].tolist(), len(values)], strict=True):
        out[a:b] = np.maximum.accumulate(values[a:b])
    return out
