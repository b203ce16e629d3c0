"""CUDA and HIP graph replays: each `cudaGraphLaunch` / `hipGraphLaunch` with the GPU work it
started (one launch, one correlation id, hundreds of kernels), the graphs they replay, and each
graph's nodes across its replays.

A graph is known by the `graph id` newer Kineto writes on the kernels it replays; without one,
replays that ran the same kernels in the same order are one graph. A node is a kernel of the
graph: Kineto's `graph node id` where written (shown), and told apart across replays by its name
and which of that name's kernels in the replay it is (the k-th `gemm` of each replay is one
node), so replays whose streams interleave differently still line up.
"""

from __future__ import annotations

import msgspec
import numpy as np

from tui.model.arrays import I64

from ..patterns import GRAPH_LAUNCH
from ..trace import Trace
from .attribution import attribute


class Replay(msgspec.Struct, frozen=True):
    launch: int  # the launch call's slice row
    work: I64  # the GPU work it started, by start
    graph: int  # index into Graphs.graphs


class Graph(msgspec.Struct, frozen=True):
    label: str  # "graph 3" (Kineto's graph id) or "graph #1" (the first seen, without ids)
    replays: list[int]  # indices into Graphs.replays
    kernels: int  # kernels a replay runs, the most any replay ran (memsets and copies aside)
    gpu_ns: int  # their time over every replay
    launch_cpu_ns: int  # the launch calls' time

    @property
    def calls(self) -> int:
        return len(self.replays)


class Node(msgspec.Struct, frozen=True):
    """One kernel of a graph across its replays."""

    name: str
    index: int  # its place in the graph's first replay, from 0
    node_id: str  # Kineto's `graph node id` of its first instance ("" where not written)
    calls: int
    total_ns: int
    min_ns: int
    max_ns: int

    @property
    def avg_ns(self) -> float:
        return self.total_ns / self.calls if self.calls else 0.0


class Graphs(msgspec.Struct, frozen=True):
    replays: list[Replay]  # by launch start
    graphs: list[Graph]  # most GPU time first
    gpu_ns: int  # all GPU work in the trace, graphed or not
    graph_of: I64  # per slice row: the graph its GPU work or launch belongs to (-1: none)
    replay_at: I64  # per slice row: its replay (an index into replays; -1: none)
    place: I64  # per slice row: the work's place in its replay (-1: the launch, or none)

    def share(self, graph: Graph) -> float:
        return graph.gpu_ns / self.gpu_ns if self.gpu_ns else 0.0


def graphs(trace: Trace) -> Graphs:
    """Computed once per trace."""
    return trace.derive("graphs", lambda: _graphs(trace))


def _graphs(trace: Trace) -> Graphs:
    s = trace.slices
    att = attribute(trace)
    launch_name = trace.name_test(GRAPH_LAUNCH.match)
    known = att.launch >= 0
    graphed = known & launch_name[s.name[np.maximum(att.launch, 0)]]
    work, launch = att.work[graphed], att.launch[graphed]
    total = int(s.dur[att.work].sum())
    if not len(work):
        none = np.full(len(s), -1, np.int64)
        return Graphs([], [], total, none, none, none)
    order = np.lexsort((s.start[work], launch))
    work, launch = work[order], launch[order]
    cut = np.flatnonzero(np.r_[True, launch[1:] != launch[:-1]])
    ends = np.r_[cut[1:], len(work)]
    keys: dict[object, int] = {}
    labels: list[str] = []
    members: list[list[int]] = []
    replays: list[Replay] = []
    ids = graph_ids(trace, work[cut].tolist())
    for i in np.argsort(s.start[launch[cut]], kind="stable").tolist():
        rows = work[cut[i] : ends[i]]
        gid = ids.get(int(rows[0]))
        key: object = ("id", gid) if gid is not None else tuple(s.name[rows].tolist())
        g = keys.get(key)
        if g is None:
            g = keys[key] = len(labels)
            labels.append(f"graph {gid}" if gid is not None else f"graph #{g + 1}")
            members.append([])
        members[g].append(len(replays))
        replays.append(Replay(int(launch[cut[i]]), rows, g))
    kernel = trace.category_test(lambda c: c.lower() == "kernel")
    found = []
    for g, label in enumerate(labels):
        mine = [replays[r] for r in members[g]]
        found.append(
            Graph(
                label,
                members[g],
                max(int(kernel[s.cat[r.work]].sum()) for r in mine),
                int(sum(int(s.dur[r.work].sum()) for r in mine)),
                int(sum(int(s.dur[r.launch]) for r in mine)),
            )
        )
    rank = sorted(range(len(found)), key=lambda g: (-found[g].gpu_ns, g))
    new_index = {old: new for new, old in enumerate(rank)}
    replays = [Replay(r.launch, r.work, new_index[r.graph]) for r in replays]
    graph_of = np.full(len(s), -1, np.int64)
    replay_at = np.full(len(s), -1, np.int64)
    place = np.full(len(s), -1, np.int64)
    for k, r in enumerate(replays):
        graph_of[r.work] = graph_of[r.launch] = r.graph
        replay_at[r.work] = replay_at[r.launch] = k
        place[r.work] = np.arange(len(r.work))
    return Graphs(replays, [found[g] for g in rank], total, graph_of, replay_at, place)


GRAPH_IDS_KEY = "graph ids"  # its slot in `trace.derived` (a model cache may fill it)


def graph_ids(trace: Trace, firsts: list[int]) -> dict[int, int | None]:
    """The `graph id` Kineto writes on a replay's kernels, by the row of each replay's first
    kernel: read from their args once per trace (those are decoded from the file)."""
    return trace.derive(GRAPH_IDS_KEY, lambda: {row: _graph_id(trace, row) for row in firsts})


def _graph_id(trace: Trace, row: int) -> int | None:
    args = trace.args(row)
    value = args.get("graph id") if isinstance(args, dict) else None
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    return value if -(2**63) <= value < 2**63 else None  # an int64, as Kineto writes it


def nodes(trace: Trace, found: Graphs, graph: int) -> list[Node]:
    """The graph's kernels across its replays, in the order of its first replay."""
    s = trace.slices
    grouped: dict[tuple[int, int], list[int]] = {}
    for r in found.graphs[graph].replays:
        seen: dict[int, int] = {}
        for row in found.replays[r].work.tolist():
            name = int(s.name[row])
            k = seen.get(name, 0)
            seen[name] = k + 1
            grouped.setdefault((name, k), []).append(row)
    out: list[Node] = []
    for (name, _), rows in grouped.items():
        durations = s.dur[rows]
        args = trace.args(rows[0])
        node = args.get("graph node id", "") if isinstance(args, dict) else ""
        out.append(
            Node(
                trace.names[name],
                len(out),
                str(node),
                len(rows),
                int(durations.sum()),
                int(durations.min()),
                int(durations.max()),
            )
        )
    return out


def replay_of(found: Graphs, row: int) -> tuple[int, int, int] | None:
    """For a slice of a replay (its launch or its GPU work): (replay index, which replay of its
    graph it is, counted from 0, the work's place in it or -1 for the launch); None otherwise."""
    r = int(found.replay_at[row]) if 0 <= row < len(found.replay_at) else -1
    if r < 0:
        return None
    nth = found.graphs[found.replays[r].graph].replays.index(r)
    return r, nth, int(found.place[row])
