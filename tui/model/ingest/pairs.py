"""Turning begin/end event pairs (B/E on threads, b/e and S/F async) into slices."""

from __future__ import annotations

from collections import Counter

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]


def match_pairs(
    group: I64,
    ts: I64,
    event: I64,
    begin: npt.NDArray[np.bool_],
    trace_end: int,
    words: tuple[str, str],
    skipped: Counter[str],
    adjusted: Counter[str],
) -> tuple[I64, I64]:
    """Match ends to begins: an end closes the latest open begin of its group.

    Unmatched ends are skipped and counted; begins still open are closed at `trace_end` and
    counted. Returns, for each slice, the position of its begin point and its end time.

    Args:
        group: the stack each point belongs to (a thread, or an async id).
        ts: point times (ns); event: file order, which breaks ties.
        begin: whether each point begins (else ends) a slice.
        words: how to name the two kinds in the counts, e.g. ("B", "E").
    """
    begin_word, end_word = words
    order = np.lexsort((event, ts, group)).tolist()
    groups, times, begins = group.tolist(), ts.tolist(), begin.tolist()
    stacks: dict[int, list[int]] = {}
    opened: list[int] = []
    ends: list[int] = []
    for k in order:
        stack = stacks.setdefault(groups[k], [])
        if begins[k]:
            stack.append(k)
        elif stack:
            opened.append(stack.pop())
            ends.append(times[k])
        else:
            skipped[f"{end_word} without a matching {begin_word}"] += 1
    for stack in stacks.values():
        for k in stack:
            opened.append(k)
            ends.append(max(trace_end, times[k]))
            adjusted[f"{begin_word} without {end_word}, closed at the trace end"] += 1
    return np.asarray(opened, np.int64), np.asarray(ends, np.int64)
