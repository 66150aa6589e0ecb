"""The verdict of a set of records, computed once: counts per status, whether the run is
qualified, the headline worst relative error, and the exit code.

A run is *qualified* when no row failed, raised, went unscored or unconverged, and at
least one row was scored (passed or failed). The exit code is 0 for a qualified run and 1
otherwise, so an exit code never contradicts its bundle. The headline worst relative error
is the largest ``max_rel`` among scored rows that ``in_headline`` admits (each stage's rule:
rows against a closed form or against zero, and stages with a summary line of their own,
are left out).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable

from harness.core.records import STATUSES, Record

BAD = ("failed", "error", "not_scored", "unconverged")


@dataclass(frozen=True)
class Verdict:
    """counts: records per status (every status present, 0 if none); worst: the headline
    row (None when no scored row counts in the headline)."""

    counts: dict
    n_scored: int
    worst: Record | None

    @property
    def qualified(self) -> bool:
        return not any(self.counts[s] for s in BAD) and self.n_scored > 0

    @property
    def exit_code(self) -> int:
        return 0 if self.qualified else 1

    @property
    def worst_rel(self) -> float | None:
        return None if self.worst is None else self.worst.max_rel


def judge(records: Iterable[Record], in_headline: Callable[[Record], bool]) -> Verdict:
    """The verdict of ``records`` (explanatory diagnosis rows excluded by the caller)."""
    records = list(records)
    c = Counter(r.status for r in records)
    counts = {s: c.get(s, 0) for s in STATUSES}
    scored = [r for r in records if r.status in ("passed", "failed")]
    worst = max((r for r in scored if r.max_rel is not None and in_headline(r)),
                key=lambda r: r.max_rel, default=None)
    return Verdict(counts, len(scored), worst)
