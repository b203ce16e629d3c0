"""Timestamps exact to the nanosecond when they are too big for a float64.

Kineto writes microseconds with three decimals. Near an epoch (1.7e15 us) a float64 is spaced
0.25 us apart, so decoding such a timestamp as a float loses its nanoseconds. Chunks holding a
timestamp that large have their timestamps read again from the text, exactly, and kept relative
to a whole microsecond of the trace (`base`): relative values are small enough for a float64 to
hold every nanosecond. Ordinary traces (relative timestamps) never come here.
"""

from __future__ import annotations

import msgspec
import numpy as np
import numpy.typing as npt

from ..source import Buffer
from .events import Chunk

# Above this a float64 of microseconds cannot hold every nanosecond (2^53 ns).
EXACT_LIMIT_US = float(2**53) / 1000.0
F64 = npt.NDArray[np.float64]


class _RawTs(msgspec.Struct, gc=False):
    ts: msgspec.Raw = msgspec.Raw(b"null")


def exact_relative_ts(buf: Buffer, chunk: Chunk, base_us: int, fallback: F64) -> F64:
    """Each event's ts less `base_us`, exact to the nanosecond (as float us).

    `fallback` is each event's ts as decoded (a float, NaN when absent); it stands wherever the
    text is not a plain decimal (exponents, a lenient chunk that cannot be read again).
    """
    relative = fallback - base_us
    payload = b"".join((b"[", memoryview(buf)[chunk.start : chunk.end], b"]"))
    try:
        raws = msgspec.json.decode(payload, type=list[_RawTs])
    except (msgspec.DecodeError, msgspec.ValidationError):
        return relative
    if len(raws) != len(fallback):
        return relative
    text = np.asarray([bytes(r.ts) for r in raws], dtype=np.bytes_)
    plain = np.char.isdigit(np.char.replace(np.char.lstrip(text, b"-"), b".", b"", count=1))
    plain &= ~np.isnan(fallback)
    if not plain.any():
        return relative
    t = text[plain]
    negative = np.char.startswith(t, b"-")
    parts = np.char.partition(np.char.lstrip(t, b"-"), b".")
    whole, frac = np.char.ljust(parts[:, 0], 1, b"0"), np.char.ljust(parts[:, 2], 4, b"0")
    fits = np.char.str_len(whole) <= 16  # beyond, the event is skipped as out of range anyway
    plain[np.flatnonzero(plain)[~fits]] = False
    whole, frac, negative = whole[fits], frac[fits], negative[fits]
    # Four decimals, the fourth rounding the nanosecond (Kineto writes three; others more).
    ns = whole.astype(np.int64) * 1000 + (frac.astype("S4").astype(np.int64) + 5) // 10
    ns = np.where(negative, -ns, ns) - base_us * 1000
    relative[plain] = ns / 1000.0
    return relative
