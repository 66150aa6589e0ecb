"""The verdict of a set of records, computed once: counts per status, whether the run is
qualified, the headline worst relative error, and the exit code.

A run is *qualified* when no row failed, raised, went unscored or unconverged, and at
least one row was scored (passed or failed). The exit code is 0 for a qualified run and 1
otherwise, so an exit code never contradicts its bundle. The headline worst relative error
is the largest ``max_rel`` among scored rows that ``in_headline`` admits (each stage's rule:
rows against a closed form or against zero, and stages with a summary line of their own,
are left out). ``Verdict.headline`` is its one sentence, printed by the CLI and shown in the
report: it claims no worst error when a headline row failed on non-finite values, and says
so when the worst row passed only through its absolute floor (atol).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable, cast

from harness.core.records import STATUSES, Record, unit_of

BAD = ("failed", "error", "not_scored", "unconverged")


@dataclass(frozen=True)
class Verdict:
    """counts: records per status (every status present, 0 if none); worst: the headline
    row (None when no scored row counts in the headline); non_finite: the headline rows
    that failed on non-finite values (no number can stand for them)."""

    counts: dict[str, int]
    n_scored: int
    worst: Record | None
    non_finite: tuple[Record, ...] = ()

    @property
    def qualified(self) -> bool:
        return not any(self.counts[s] for s in BAD) and self.n_scored > 0

    @property
    def exit_code(self) -> int:
        return 0 if self.qualified else 1

    @property
    def worst_rel(self) -> float | None:
        """The worst relative error, or None when none is claimed (no headline row, or a
        headline row failed on non-finite values)."""
        if self.worst is None or self.non_finite:
            return None
        return self.worst.max_rel

    @property
    def headline(self) -> str:
        """One sentence: the worst relative error, what it means, or why none is claimed."""
        w = self.worst
        if self.non_finite:
            n = len(self.non_finite)
            first = self.non_finite[0].id
            s = (f"worst relative error: none claimed: {n} row{'s' if n > 1 else ''} failed "
                 f"with non-finite values ({first}{', …' if n > 1 else ''})")
            if w is not None:
                s += f"; among the finite rows {w.max_rel:.3e} ({w.id})"
            return s
        if w is None:
            if self.n_scored == 0:
                return "worst relative error: none (no comparison was scored)"
            return ("worst relative error: none (no scored row with a defined relative error "
                    "counts in the headline)")
        s = f"worst relative error: {w.max_rel:.3e} ({w.id})"
        if w.status == "failed":
            return s + ", failed"
        if w.rtol is not None and w.max_rel is not None and w.max_rel > w.rtol:
            unit = unit_of(w.stage, w.quantity)
            u = f" [{unit}]" if unit else ""
            if w.max_abs is not None and w.atol is not None and w.max_abs <= w.atol:
                return (s + f", above its rtol {w.rtol:.1e}; passed through its atol: "
                        f"|Δ| = {w.max_abs:.2e} ≤ atol {w.atol:.1e}{u}")
            if w.reason:  # a row scored against its own bound says so (e.g. cond(M)·eps)
                return s + f", above its rtol {w.rtol:.1e}; passed its row's bound: {w.reason}"
            return (s + f", above its rtol {w.rtol:.1e}; passed through its atol: "
                    f"|Δ| ≤ atol {w.atol:.1e} + rtol·|x| where |x| is small{u}")
        return s


def judge(records: Iterable[Record], in_headline: Callable[[Record], bool]) -> Verdict:
    """The verdict of ``records`` (explanatory diagnosis rows excluded by the caller)."""
    rows = list(records)
    c = Counter(r.status for r in rows)
    counts = {s: c.get(s, 0) for s in STATUSES}
    scored = [r for r in rows if r.status in ("passed", "failed")]
    worst = max((r for r in scored if r.max_rel is not None and in_headline(r)),
                key=lambda r: cast(float, r.max_rel), default=None)  # None filtered out
    non_finite = tuple(r for r in scored if r.status == "failed" and r.max_abs is None
                       and r.key_a and in_headline(r))
    return Verdict(counts, len(scored), worst, non_finite)


# ----- gating: a later stage of a pair is scored only where its earlier stages agree ------
DECLARED = "declared"  # engine_a of a row compared with the model as declared


def block_on(rows: Iterable[Record], blocked_engine: dict[str, str],
             blocked_pair: dict[tuple[str, str], str]) -> None:
    """Record in ``blocked_engine`` {engine: why} and ``blocked_pair`` {(a, b): why} what
    ``rows`` of one stage block in every later stage: a failed or raising row against the
    declared model, or of one engine, blocks that engine; one of a pair blocks the pair.
    The first reason is kept. Used by the stage runner and, identically, by ``verify``."""
    for r in rows:
        if r.status in ("failed", "error"):
            msg = (f"stage {r.stage} {r.quantity} "
                   + (f"failed (max_rel {r.max_rel:.3g})" if r.max_rel is not None
                      else r.status))
            if r.engine_a == DECLARED:
                blocked_engine.setdefault(r.engine_b, f"disagrees with the declared "
                                                      f"model: {msg}")
            elif r.engine_b == "":
                blocked_engine.setdefault(r.engine_a, msg)
            else:
                blocked_pair.setdefault((r.engine_a, r.engine_b), msg)


def blocked_why(a: str, b: str, blocked_engine: dict[str, str],
                blocked_pair: dict[tuple[str, str], str]) -> str:
    """Why the pair (a, b) is not scored ("" if it is)."""
    return ((blocked_engine.get(a) and f"{a} {blocked_engine[a]}") or
            (blocked_engine.get(b) and f"{b} {blocked_engine[b]}") or
            blocked_pair.get((a, b)) or "")
