"""A folder of rank traces: one trace per rank of a distributed job, told from other folders.

A trace's rank is its `distributedInfo.rank` (Kineto writes it before the events, so the file's
start holds it), else a `rank3` / `worker3` in its name. A folder whose traces name two ranks or
more of one job is a rank set; a folder of one rank's traces, or of several jobs' (world sizes
that differ, traces naming no rank), opens as before: its newest trace.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import msgspec

from ..errors import TraceError
from .formats import MEMBER_HEAD_BYTES, Member, folder_members, read_head

_DISTRIBUTED = re.compile(rb'"distributedInfo"\s*:\s*(\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\})')
_RANK_IN_NAME = re.compile(r"(?:rank|worker)[-_]?(\d+)", re.IGNORECASE)


def rank_from_name(path: str | os.PathLike[str]) -> int | None:
    match = _RANK_IN_NAME.search(Path(path).name)
    return int(match.group(1)) if match else None


def head_rank(member: Member) -> tuple[int | None, int | None]:
    """(rank, world size) from the `distributedInfo` at the trace's start, else the rank in its
    name (and no world size)."""
    match = _DISTRIBUTED.search(member.head)
    info = None
    if match:
        try:
            info = msgspec.json.decode(match.group(1))
        except msgspec.DecodeError:
            info = None
    if isinstance(info, dict):
        rank, size = info.get("rank"), info.get("world_size")
        if isinstance(rank, int) and not isinstance(rank, bool):
            return rank, size if isinstance(size, int) and not isinstance(size, bool) else None
    return rank_from_name(member.path), None


def rank_of(path: Path) -> int | None:
    """The rank of one trace file, as a rank folder reads it (None: it names none)."""
    try:
        head = read_head(path, str(path))
    except (OSError, TraceError):
        return None
    return head_rank(Member(path, head[:MEMBER_HEAD_BYTES]))[0]


class RankFiles(msgspec.Struct, frozen=True):
    """The newest trace of each rank, by rank, and what was left out."""

    folder: str
    files: dict[int, Path]
    unranked: list[Path] = msgspec.field(default_factory=list)  # traces with no rank to go by
    older: int = 0  # older traces of a rank already in `files`
    world_sizes: tuple[int, ...] = ()

    @property
    def mixed(self) -> str | None:
        """Why the folder holds more than one job's ranks (None: it holds one)."""
        if len(self.world_sizes) > 1:
            return f"traces of several jobs (world sizes {', '.join(map(str, self.world_sizes))})"
        if self.unranked:
            return f"{len(self.unranked)} of its traces name no rank"
        return None

    def notes(self) -> list[str]:
        out = []
        if self.older:
            out.append(f"{self.older} older traces of the same ranks left out (newest kept)")
        if self.unranked:
            names = ", ".join(p.name for p in self.unranked[:3])
            more = ", ..." if len(self.unranked) > 3 else ""
            out.append(f"{len(self.unranked)} traces name no rank and are left out: {names}{more}")
        return out


def rank_files(folder: str | os.PathLike[str]) -> RankFiles | None:
    """The folder's rank traces, or None when it is not a rank set (fewer than two ranks)."""
    traces, others = folder_members(folder)  # newest first
    files: dict[int, Path] = {}
    unranked: list[Path] = []
    older = 0
    sizes: set[int] = set()
    for member in traces:
        path = member.path
        rank, size = head_rank(member)
        if size is not None:
            sizes.add(size)
        if rank is None:
            unranked.append(path)
        elif rank in files:
            older += 1
        else:
            files[rank] = path
    # A file named for a rank that is not a trace is that rank's (failing, and said so), not a
    # missing rank.
    for path in others:
        rank = rank_from_name(path)
        if rank is not None and rank not in files and files:
            files[rank] = path
    if len(files) < 2:
        return None
    return RankFiles(
        str(folder), dict(sorted(files.items())), unranked, older, tuple(sorted(sizes))
    )
