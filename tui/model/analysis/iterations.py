"""A serving engine's iterations, from the annotation that names each one (vLLM's detailed form,
patterns.SERVING_ITERATION): the KV lengths its attention calls ran over, which their shapes do
not hold (the KV cache is one big paged tensor, whatever the requests' lengths)."""

from __future__ import annotations

import msgspec
import numpy as np

from ..patterns import SERVING_ITERATION
from ..trace import Trace


class Iteration(msgspec.Struct, frozen=True):
    """Sums over an iteration's prefill (`c_`, context) and decode (`g_`, generation) requests:
    query tokens (sq), KV length with the cache (sk), sq squared and sq times sk."""

    c_sq: int
    c_sk: int
    c_sqsq: int
    c_sqsk: int
    g_sq: int
    g_sk: int
    g_sqsq: int
    g_sqsk: int

    @property
    def label(self) -> str:
        """What the by-shape row says besides the shapes."""
        return f"KV {self.c_sk + self.g_sk:,} for {self.c_sq + self.g_sq:,} queries"


def parse(name: str) -> Iteration | None:
    found = SERVING_ITERATION.match(name)
    return Iteration(*(int(g) for g in found.groups())) if found else None


class Iterations(msgspec.Struct, frozen=True):
    """The iterations named on the CPU, in start order, each with its span (ns)."""

    start: np.ndarray
    end: np.ndarray
    found: tuple[Iteration, ...]

    def at(self, t: int) -> Iteration | None:
        """The iteration whose span holds `t`: the last begun by then, when it still runs
        (iterations follow one another); else the earliest begun that does (TraceLens's pick)."""
        last = int(np.searchsorted(self.start, t, side="right")) - 1
        if last >= 0 and t < self.end[last]:
            return self.found[last]
        covering = np.flatnonzero((self.start <= t) & (t < self.end))
        return self.found[int(covering[0])] if len(covering) else None


def iterations(trace: Trace) -> Iterations:
    return trace.derive("serving iterations", lambda: _iterations(trace))


def _iterations(trace: Trace) -> Iterations:
    # The CPU's: the GPU lane's copy of the annotation (gpu_user_annotation) spans the GPU
    # work, which may lag into the next iteration's calls.
    rows = trace.rows_named(lambda name: parse(name) is not None)
    rows = rows[trace.kind_mask("cpu")[rows]]
    s = trace.slices
    rows = rows[np.argsort(s.start[rows], kind="stable")]
    found = [parse(trace.slice_name(int(r))) for r in rows]
    return Iterations(
        s.start[rows], s.start[rows] + s.dur[rows], tuple(f for f in found if f is not None)
    )
