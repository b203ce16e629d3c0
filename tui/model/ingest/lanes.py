"""Naming lanes and processes as users know them, and ordering them as Perfetto does."""

from __future__ import annotations

from typing import Any

import msgspec

from ..patterns import BOOKKEEPING_NAME, KINETO_THREAD, STREAM_TID
from ..trace import LaneKind

ASYNC_TID = "async"


class LaneKey(msgspec.Struct, frozen=True):
    """What the loader knows of a lane before it is placed."""

    pid: int | str
    tid: int | str
    kind: LaneKind


def _ident_key(v: int | str) -> tuple[int, int, str]:
    return (0, v, "") if isinstance(v, int) else (1, 0, v)


def process_name(pid: int | str, is_device: bool, meta: dict[str, Any]) -> str:
    """`GPU 0` for devices (Kineto's label), `process 1234 (python3)` for hosts."""
    label = meta.get("labels")
    name = meta.get("name")
    if is_device:
        if label and label != "CPU":
            return str(label)
        return f"GPU {pid}" if isinstance(pid, int) else str(pid)
    if isinstance(pid, str):
        return pid if not name or name == pid else f"{pid} ({name})"
    return f"process {pid} ({name})" if name else f"process {pid}"


def lane_name(key: LaneKey, meta: dict[str, Any]) -> str:
    """`python3 1234` (the thread's name first, so that a narrow gutter keeps what tells threads
    apart), `thread 1234` without a name, `stream 7`, or the writer's own name for string tids."""
    name = str(meta["name"]).strip() if meta.get("name") else None
    if key.kind == "async":
        return "async"
    if key.kind == "gpu":
        if isinstance(key.tid, str):
            return key.tid
        return name if name else f"stream {key.tid}"
    if isinstance(key.tid, str):
        return key.tid if not name or name == key.tid else f"{name} {key.tid}"
    if name and (kineto := KINETO_THREAD.match(name)) and kineto.group(1) == str(key.tid):
        name = kineto.group(2)  # Kineto writes "thread 1234 (python3)"
    if name == str(key.tid) or name == f"thread {key.tid}":
        name = None
    return f"{name} {key.tid}" if name else f"thread {key.tid}"


def process_order(
    pid: int | str, is_device: bool, meta: dict[str, Any]
) -> tuple[bool, int, float, int, tuple[int, int, str]]:
    """As chrome://tracing orders them: by the writer's sort index, then pid; processes without
    one after those with one, hosts before devices; Kineto's bookkeeping last."""
    sort_index = meta.get("sort_index")
    bookkeeping = bool(BOOKKEEPING_NAME.search(str(pid)))
    given = 0 if sort_index is not None else 1
    return (bookkeeping, given, float(sort_index or 0), int(is_device), _ident_key(pid))


def lane_order(
    key: LaneKey, meta: dict[str, Any]
) -> tuple[int, bool, int, float, tuple[int, int, str]]:
    """CPU threads, then GPU streams, then async rows; Kineto's bookkeeping threads last; then
    the writer's sort index (those without one after), then the id."""
    kind_rank = {"cpu": 0, "gpu": 1, "async": 2}[key.kind]
    sort_index = meta.get("sort_index")
    tid = key.tid
    stream = STREAM_TID.match(tid) if isinstance(tid, str) else None
    tid_key = _ident_key(int(stream.group(1))) if stream else _ident_key(tid)
    names = (str(tid), str(meta.get("name") or ""))
    bookkeeping = any(BOOKKEEPING_NAME.search(n) for n in names)
    given = 0 if sort_index is not None else 1
    return (kind_rank, bookkeeping, given, float(sort_index or 0), tid_key)
