"""The trace as data: loading, lanes, nesting, links. Knows nothing of the terminal."""

from . import decode
from .errors import TraceError
from .load import load_trace
from .source import list_traces
from .trace import Lane, Links, Process, Slices, Trace

__all__ = [
    "Lane",
    "Links",
    "Process",
    "Slices",
    "Trace",
    "TraceError",
    "decode",
    "list_traces",
    "load_trace",
]
