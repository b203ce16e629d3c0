"""What changed between two runs of one job, rank by rank: `trace-tui diff DIR_A DIR_B`.

Each side is a rank report (rank_compare.py); a rank's numbers are those of its row there: its
median step (CPU time), GPU busy, communication and exposed communication. Ranks that only one
side has are named, and the others still compared. The regression gate judges the slowest
rank's median step: a job runs at the pace of its slowest rank.
"""

from __future__ import annotations

import msgspec

from .rank_compare import RankReport, RankRow


class RankChange(msgspec.Struct, frozen=True):
    """One rank both sides have."""

    rank: int
    base: RankRow
    new: RankRow

    @property
    def step_change(self) -> float | None:
        """The median step's change, as a fraction of BASE's (None: a side has no steps)."""
        return _change(self.base.step_median_ns, self.new.step_median_ns)


class RankSetDiff(msgspec.Struct, frozen=True):
    base: RankReport
    new: RankReport
    rows: list[RankChange]  # by rank
    only_base: list[int]
    only_new: list[int]
    notes: list[str] = msgspec.field(default_factory=list)

    def regressed_most(self) -> list[RankChange]:
        """The ranks whose median step grew, most first (then by rank)."""
        grew = [r for r in self.rows if (r.step_change or 0.0) > 0]
        return sorted(grew, key=lambda r: (-(r.step_change or 0.0), r.rank))

    def slowest_step_ns(self, side: RankReport) -> int | None:
        """The slowest of the compared ranks' median steps on `side`: the job's pace."""
        ranks = {r.rank for r in self.rows}
        steps = [r.step_median_ns for r in side.rows if r.rank in ranks]
        known = [s for s in steps if s is not None]
        return max(known) if known else None

    def slowest_change(self) -> float | None:
        return _change(self.slowest_step_ns(self.base), self.slowest_step_ns(self.new))


def rank_set_diff(base: RankReport, new: RankReport) -> RankSetDiff:
    before = {r.rank: r for r in base.rows}
    after = {r.rank: r for r in new.rows}
    rows = [RankChange(k, before[k], after[k]) for k in sorted(before.keys() & after.keys())]
    only_base = sorted(before.keys() - after.keys())
    only_new = sorted(after.keys() - before.keys())
    # Each side's own notes (older traces left out, truncated or skipped ranks), named.
    notes = [
        f"{side}: {note}"
        for side, report in (("BASE", base), ("NEW", new))
        for note in report.notes
    ]
    if only_base or only_new:
        notes.append(
            f"the sets differ: {len(before)} ranks in BASE, {len(after)} in NEW"
            f"{_named(' (BASE only: ', only_base)}{_named(' (NEW only: ', only_new)}; "
            f"the {len(rows)} ranks both have are compared"
        )
    return RankSetDiff(base, new, rows, only_base, only_new, notes)


def regressed(result: RankSetDiff, percent: float) -> float | None:
    """The slowest rank's median step's growth in percent when it is over `percent`."""
    change = result.slowest_change()
    if change is None or change * 100 <= percent:
        return None
    return change * 100


def _change(before: int | None, after: int | None) -> float | None:
    if before is None or after is None or before == 0:
        return None
    return (after - before) / before


def _named(lead: str, ranks: list[int]) -> str:
    if not ranks:
        return ""
    shown = ", ".join(str(r) for r in ranks[:8]) + (", ..." if len(ranks) > 8 else "")
    return f"{lead}{shown})"
