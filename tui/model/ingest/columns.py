"""Columns grown a chunk at a time, and interning of repeated values into dense ids.

Every importer fills its intermediate with these: numpy columns instead of one object per event,
and each distinct name, category and lane stored once.
"""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt


def lane_ident(v: int | str) -> int | str:
    """pid/tid as the model keys them: "1234" and 1234 are one thread (2021 Kineto mixes them)."""
    if type(v) is str and v.isdigit():
        return int(v)
    return v


class Interner(msgspec.Struct):
    """Values to dense ids, so columns hold int32 and each distinct string is stored once."""

    ids: dict[Any, int] = msgspec.field(default_factory=dict)
    values: list[Any] = msgspec.field(default_factory=list)

    def __call__(self, value: Any) -> int:
        i = self.ids.get(value)
        if i is None:
            i = self.ids[value] = len(self.values)
            self.values.append(value)
        return i

    def many(self, values: list[Any]) -> npt.NDArray[np.int64]:
        """Ids of many values at once (the dict lookups run in C when all are known)."""
        ids: list[int | None] = list(map(self.ids.get, values))
        if None in ids:
            for k, i in enumerate(ids):
                if i is None:
                    ids[k] = self(values[k])
        return np.asarray(ids, np.int64)


class LaneInterner(Interner):
    """(pid, tid) keys; a string "1234" and the number 1234 name the same lane."""

    def __call__(self, value: Any) -> int:
        i = self.ids.get(value)
        if i is None:
            pid, tid = value
            key = (lane_ident(pid), lane_ident(tid))
            i = self.ids.get(key)
            if i is None:
                i = self.ids[key] = len(self.values)
                self.values.append(key)
            self.ids[value] = i
        return i


class Columns(msgspec.Struct):
    """Named columns, grown one chunk at a time as numpy arrays."""

    parts: dict[str, list[npt.NDArray[Any]]] = msgspec.field(default_factory=dict)

    def add(self, **columns: npt.ArrayLike) -> None:
        for name, values in columns.items():
            self.parts.setdefault(name, []).append(np.asarray(values))

    def get(self, name: str, dtype: npt.DTypeLike) -> npt.NDArray[Any]:
        """The whole column; its chunk parts are merged once and then freed."""
        parts = self.parts.get(name)
        if not parts:
            return np.zeros(0, dtype)
        if len(parts) > 1:
            parts[:] = [np.concatenate(parts)]
        return parts[0].astype(dtype, copy=False)

    def __len__(self) -> int:
        first = next(iter(self.parts.values()), [])
        return sum(len(p) for p in first)


class Rows(msgspec.Struct):
    """Rows of one chunk's rarer events, added to their Columns in one go."""

    columns: Columns
    values: dict[str, list[Any]] = msgspec.field(default_factory=dict)

    def append(self, **row: Any) -> None:
        for name, value in row.items():
            self.values.setdefault(name, []).append(value)

    def flush(self) -> None:
        if self.values:
            self.columns.add(**self.values)
