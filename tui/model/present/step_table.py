"""The per-step strip: each ProfilerStep's CPU time, the GPU work it launched, how busy the GPU
was with that work over its own GPU span (JSON: where the span starts, how long it shares with
the next step's), and its verdict."""

from __future__ import annotations

from ..analysis.summary import StepRow
from ..timescale import format_duration
from . import vocabulary as v
from .table_spec import Column, Table

STEPS: Table[StepRow] = Table(
    "steps",
    (
        Column("name", "Step", lambda s: s.name, lambda s, _: s.name, "name", numeric=False),
        Column("start", "Start", lambda s: s.start_ns, lambda s, _: "", "start_ns", needs="json"),
        Column(
            "cpu", "CPU time", lambda s: s.dur_ns, lambda s, _: format_duration(s.dur_ns), "dur_ns"
        ),
        Column(
            "gpu",
            "GPU launched",
            lambda s: s.verdict.evidence.launched_gpu_ns,
            lambda s, _: format_duration(s.verdict.evidence.launched_gpu_ns),
            "gpu_ns",
        ),
        Column(
            "gpu_wall",
            "GPU wall",
            lambda s: s.verdict.evidence.wall_ns,
            lambda s, _: "",
            "gpu_wall_ns",
            needs="json",
        ),
        Column(
            "busy",
            v.GPU_BUSY,
            lambda s: s.verdict.evidence.gpu_busy,
            lambda s, _: f"{s.verdict.evidence.gpu_busy:.1%}",
            "gpu_busy_fraction",
            json_value=lambda s: round(s.verdict.evidence.gpu_busy, 6),
        ),
        Column(
            "gpu_start",
            "GPU start",
            lambda s: s.verdict.window[0],
            lambda s, _: "",
            "gpu_start_ns",
            needs="json",
        ),
        Column(
            "overlap",
            "Overlap",
            lambda s: s.overlap_ns,
            lambda s, _: "",
            "overlap_next_ns",
            needs="json",
        ),
        Column(
            "exposed_comm",
            "Exposed comm",
            lambda s: s.verdict.evidence.exposed_comm_ns,
            lambda s, _: "",
            "exposed_comm_ns",
            needs="json",
        ),
        Column(
            "verdict",
            v.VERDICT,
            lambda s: s.verdict.label,
            lambda s, _: s.verdict.label,
            "verdict",
            numeric=False,
        ),
    ),
    "name",
)
