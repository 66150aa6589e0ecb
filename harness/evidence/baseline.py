"""What changed between two evidence bundles (``harness report NEW --baseline OLD``).

Records are matched by id. Order of the listing (new failures first):
  1. regressions: not passing now (failed, error, not scored, unconverged), passing or
     absent before;
  2. still failing;
  3. fixed: passing now, not passing before;
  4. other status changes (e.g. not provided ↔ scored);
  5. error growth: passing in both, max_rel grown by more than GROWTH× (and above the
     round-off level FLOOR) — an early warning, not a verdict;
  6. records added / removed.
Provenance changes (engine versions, tolerance-table version, harness version, commit)
are listed too. Nothing here changes a verdict: each record keeps the one its own
comparison computed.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from harness.core.records import Record

GROWTH = 10.0  # × max_rel
FLOOR = 1e-13  # below this, max_rel changes are round-off noise

BAD = ("failed", "error", "not_scored", "unconverged")


@dataclass
class Change:
    id: str
    old: str
    new: str
    old_rel: float | None = None
    new_rel: float | None = None
    reason: str = ""


@dataclass
class Diff:
    baseline: str
    regressions: list[Change] = field(default_factory=list)
    still_failing: list[Change] = field(default_factory=list)
    fixed: list[Change] = field(default_factory=list)
    other: list[Change] = field(default_factory=list)
    grown: list[Change] = field(default_factory=list)
    added: list[Change] = field(default_factory=list)
    removed: list[Change] = field(default_factory=list)
    provenance: list[str] = field(default_factory=list)

    @property
    def n_regressions(self) -> int:
        return len(self.regressions)


class Evidence(Protocol):
    """What ``diff`` reads of a bundle (harness.evidence.bundle.Bundle): its records and
    its manifest (``harness_version``, ``git_commit``, ``tolerance_table_version``,
    ``engines`` {engine: version})."""

    @property
    def records(self) -> Sequence[Record]: ...

    @property
    def manifest(self) -> Mapping[str, Any]: ...


def diff(new: Evidence, old: Evidence, baseline_name: str) -> Diff:
    """new, old: evidence.Bundle. Returns the Diff (lists sorted by id)."""
    d = Diff(baseline_name)
    before = {r.id: r for r in old.records}
    now = {r.id: r for r in new.records}
    for rid in sorted(now):
        r = now[rid]
        o = before.get(rid)
        ch = Change(rid, o.status if o else "absent", r.status, o.max_rel if o else None,
                    r.max_rel, r.reason)
        if r.status in BAD:
            (d.still_failing if o is not None and o.status in BAD else d.regressions).append(ch)
        elif o is None:
            d.added.append(ch)
        elif o.status in BAD:
            d.fixed.append(ch)
        elif o.status != r.status:
            d.other.append(ch)
        elif (r.max_rel is not None and o.max_rel is not None and r.max_rel > FLOOR
              and r.max_rel > GROWTH * max(o.max_rel, FLOOR / GROWTH)):
            d.grown.append(ch)
    d.removed = [Change(rid, before[rid].status, "absent")
                 for rid in sorted(set(before) - set(now))]
    mo, mn = old.manifest, new.manifest
    for key in ("harness_version", "git_commit", "tolerance_table_version"):
        if mo[key] != mn[key]:
            d.provenance.append(f"{key}: {mo[key]} → {mn[key]}")
    for e in sorted(set(mo["engines"]) | set(mn["engines"])):
        a, b = mo["engines"].get(e, "absent"), mn["engines"].get(e, "absent")
        if a != b:
            d.provenance.append(f"engine {e}: {a} → {b}")
    return d
