"""What `trace-tui info` reports: the loaded trace summarised for people or scripts.

What it says of the content (all but the path) is kept with the cached model, in slot `KEY`, so
that `info` on a cached trace reads it back without loading the model (passes/kept_info.py);
hence the analyses are imported only to derive it, and `report` needs nothing but text.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any, Literal, TypedDict

import msgspec

from ..text import printable
from ..timescale import format_duration
from .render.json import exact

if TYPE_CHECKING:
    from ..analysis.health import Finding
    from ..trace import Trace

KEY = "info"


# The summary's shape, which a kept one must have to be shown (`read_kept`): a facts file is
# only data, and one edited by hand must not make every later `info` fail.
class _Format(TypedDict):
    form: str
    gzip: bool
    truncated: bool


class _Flows(TypedDict):
    events: int
    launch_links: int
    other_links: int


class _Example(TypedDict):
    name: str
    ts_ns: int
    lane: str


class _Finding(TypedDict):
    rule: str
    what: str
    count: int
    unchecked: int
    examples: list[_Example]


class _Health(TypedDict):
    line: str
    checks: list[_Finding]
    repairs: list[_Finding]


class _Lane(TypedDict):
    process: str
    pid: int | str
    tid: int | str
    name: str
    kind: str
    slices: int
    max_depth: int
    rows: int


_Rule = Literal["external_id", "enclosing_op", "launch_call", "none"]  # attribution.RULES


class _Content(TypedDict):
    format: _Format
    events_by_phase: dict[str, int]
    slices: int
    span_ns: int
    base_time_ns: int | None
    display_time_unit: str | None
    devices: list[dict[str, Any]]
    flows: _Flows
    gpu_work_placed_by: dict[_Rule, int]
    skipped: dict[str, int]
    adjusted: dict[str, int]
    health: _Health
    lanes: list[_Lane]


# The summary's fields after the path and the folder it was chosen from, in order.
FIELDS = tuple(_Content.__annotations__)

# How `info` says which rule charged GPU work to an op, by attribution.RULES key.
_PLACED_BY: dict[_Rule, str] = {
    "external_id": "by External id",
    "enclosing_op": "to the enclosing op",
    "launch_call": "to the launch call",
    "none": "to no op (launch not in the trace)",
}
# deviceProperties fields worth showing; the rest stay in the file.
_DEVICE_FIELDS = ("id", "name", "totalGlobalMem", "computeMajor", "computeMinor", "numSms")


def summary(trace: Trace) -> dict[str, Any]:
    """A JSON-ready summary; its keys are documented in the README."""
    content = trace.derived.get(KEY)
    if content is None:
        content = trace.derived[KEY] = _content(trace)
    return named(content, trace.path, trace.format.chosen_from)


def named(content: dict[str, Any], path: str, chosen_from: str | None) -> dict[str, Any]:
    """The summary of a trace's `content` read from `path`."""
    return {"path": path, "chosen_from": chosen_from, **content}


def read_kept(kept: Any) -> dict[str, Any]:
    """The content as kept in the cache; KeyError or TypeError for data not of its shape."""
    if not isinstance(kept, dict) or tuple(kept) != FIELDS:
        raise KeyError("not an info summary's fields")
    try:
        msgspec.convert(kept, _Content)
    except msgspec.ValidationError as e:
        raise TypeError(f"an info summary's value: {e}") from None
    return kept


def _content(trace: Trace) -> dict[str, Any]:
    # Deriving it needs the analyses; a cached `info` does not: imported here, not at start-up.
    from ..analysis.attribution import placed_by

    fmt = trace.format
    return {
        "format": {"form": fmt.form, "gzip": fmt.gzip, "truncated": fmt.truncated},
        "events_by_phase": dict(sorted(trace.events_by_phase.items())),
        "slices": len(trace.slices),
        "span_ns": trace.span_ns,
        "base_time_ns": trace.base_time_ns,
        "display_time_unit": trace.display_time_unit,
        "devices": [{k: exact(d[k]) for k in _DEVICE_FIELDS if k in d} for d in trace.devices],
        "flows": {
            "events": sum(trace.events_by_phase.get(ph, 0) for ph in "stf"),
            "launch_links": len(trace.launches),
            "other_links": len(trace.flows),
        },
        # Which rule charged each kernel, memcpy and memset to an op (analysis/attribution.py).
        "gpu_work_placed_by": placed_by(trace),
        "skipped": dict(trace.skipped.most_common()),
        "adjusted": dict(trace.adjusted.most_common()),
        "health": _health_json(trace),
        "lanes": [
            {
                "process": trace.processes[lane.process].name,
                "pid": exact(lane.pid),
                "tid": exact(lane.tid),
                "name": lane.name,
                "kind": lane.kind,
                "slices": lane.slice_count,
                "max_depth": lane.levels,
                "rows": lane.rows,
            }
            for lane in trace.lanes
        ],
    }


def _health_json(trace: Trace) -> dict[str, Any]:
    from ..analysis.health import health

    found = health(trace)

    def finding(f: Finding) -> dict[str, Any]:
        return {
            "rule": f.rule,
            "what": f.what,
            "count": f.count,
            "unchecked": f.unchecked,
            "examples": [
                {
                    "name": trace.slice_name(r),
                    "ts_ns": int(trace.slices.start[r]),
                    "lane": trace.lane_of(r).name,
                }
                for r in f.examples
            ],
        }

    return {
        "line": found.line,
        "checks": [finding(f) for f in found.checks],
        "repairs": [finding(f) for f in found.repairs],
    }


def report(info: dict[str, Any]) -> str:
    """The summary as text for a terminal."""
    fmt = info["format"]
    form = f"{fmt['form']} form" + (", gzip" if fmt["gzip"] else "")
    form += ", TRUNCATED (the writer stopped early)" if fmt["truncated"] else ""
    lines = [
        f"{info['path']}" + (f"  (newest in {info['chosen_from']})" if info["chosen_from"] else ""),
        f"format     {form}",
        f"span       {format_duration(info['span_ns'])}, {info['slices']} slices",
        "events     "
        + ", ".join(f"{ph or '(none)'}: {n}" for ph, n in info["events_by_phase"].items()),
    ]
    if info["devices"]:
        counts = Counter(str(d.get("name", d.get("id", "?"))) for d in info["devices"])
        names = ", ".join(name + (f" x{n}" if n > 1 else "") for name, n in counts.items())
        lines.append(f"devices    {names}")
    flows = info["flows"]
    lines.append(
        f"flows      {flows['events']} flow events: {flows['launch_links']} launch links,"
        f" {flows['other_links']} other links"
    )
    placed = info["gpu_work_placed_by"]
    if sum(placed.values()):
        lines.append(
            f"gpu work   {sum(placed.values())} kernels and copies charged "
            + ", ".join(f"{n} {_PLACED_BY[rule]}" for rule, n in placed.items())
        )
    for title, counts in (("skipped", info["skipped"]), ("adjusted", info["adjusted"])):
        if counts:
            total = sum(counts.values())
            detail = "; ".join(f"{n} {reason}" for reason, n in counts.items())
            lines.append(f"{title:<10} {total} events: {detail}")
    found = info["health"]
    lines.append(f"health     {found['line'].removeprefix('health: ').removesuffix(' (H)')}")
    for f in found["checks"] + found["repairs"]:
        rule = "" if f["rule"] == "repair" else f" [{f['rule']}]"
        first = f["examples"][0] if f["examples"] else None
        at = f", first: {first['name']} at +{format_duration(first['ts_ns'])}" if first else ""
        lines.append(f"  {f['count']:>8,}  {f['what']}{rule}{at}")
    lines.append("lanes")
    width = max((len(lane["process"]) for lane in info["lanes"]), default=0)
    for lane in info["lanes"]:
        lines.append(
            f"  {lane['process']:<{width}}  {lane['kind']:<5}  {lane['name']:<32}  "
            f"{lane['slices']:>8} slices  depth {lane['max_depth']}"
        )
    return "\n".join(printable(line) for line in lines)
