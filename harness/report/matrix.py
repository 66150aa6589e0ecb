"""Report tables of records: the engine matrix (a row × engine table, each engine against a
stated reference) and the pairwise ladder (a row × engine-pair table), built from the
records as they are — nothing is recomputed or judged again here.

Records are pairwise (``engine_a``, ``engine_b``). An engine's cell in a row of the matrix
holds the records that compare that engine with the row's reference:

* a named reference: a record whose ``engine_a`` is not an engine (the declared model, an
  analytic solution, finite differences) against the engine (``engine_b``);
* its own checks: a single-engine record (``engine_b`` empty; ``engine_a`` the engine or
  ``engine:solver``), e.g. a replay's refinement or a native solver against the exact
  answer, and the engine's "not provided" / "error" rows;
* the consensus engine, for the engine pairs: per row, the engine whose records against
  the others are the cleanest (among the engines with a pair that was compared: fewest
  failed or error records, then the most fixtures
  covered, then the first in the engines' order, so that it stays the same from row to
  row while every pair agrees); each other engine's cell holds its
  records against it (on a fixture where they have no record together, the engine's
  records against every other engine there). The consensus engine's own cell holds its
  named-reference and own checks, else says "consensus".

A cell shows its deciding record's own error (relative, or |Δ| with its unit for a check
against zero) and that record's own verdict, worst status first (``VERDICT_ORDER``); the
row's last cell is the worst status of every record of the row (a pair that involves
neither the consensus engine included), so no failure hides in the matrix.
"""
from __future__ import annotations

import itertools
import re
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

from harness.core.records import Record, error_text

VERDICT_ORDER = ("error", "failed", "unconverged", "not_scored", "passed", "informational",
                 "not_provided")
CONSENSUS = "consensus"


# the characters a record id keeps in its anchor (compiled once: a page makes thousands)
_NOT_IN_ANCHOR = re.compile(r"[^A-Za-z0-9_.:-]")


def record_anchor(record_id: str) -> str:
    """The HTML id of a record's row in the report's record tables (a ladder cell links to
    the row that decided it)."""
    return "rec-" + _NOT_IN_ANCHOR.sub("_", record_id)


def _rank(r: Record) -> tuple[int, float]:
    """How bad a record's own error is: non-finite > relative error > |Δ| / atol."""
    if r.max_abs is None:  # non-finite (a compared row) or no numbers at all
        return (2, 0.0) if r.key_a and r.status == "failed" else (-1, 0.0)
    if r.max_rel is not None:
        return (1, r.max_rel)
    return (0, r.max_abs / r.atol if r.atol else r.max_abs)


def cell(records: Sequence[Record]) -> dict[str, Any]:
    """Verdict of one cell, the row that decides it and that row's own error.

    The verdict is the worst status among the cell's records (VERDICT_ORDER). The cell
    names the quantity (and, for a single-engine row, the engine) of the row that decided
    it and shows that row's own error (``error_text``: relative, or |Δ| with its unit for a
    check against zero), never a number taken from other rows: a pair whose trajectories
    agree to 1e-13 but whose energy-balance row failed shows the energy balance and its
    error. Among the rows with the cell's verdict the deciding row is: one with non-finite
    values, else the largest relative error, else the largest |Δ| / atol; a passing cell
    looks at the pair's own comparisons first (single-engine rows, such as a replay's
    refinement and energy balance, decide only a cell they fail)."""
    statuses = {r.status for r in records}
    verdict = next(s for s in VERDICT_ORDER if s in statuses)
    mine = [r for r in records if r.status == verdict]
    pool = ([r for r in mine if r.engine_b != ""] or mine) if verdict == "passed" else mine
    row = max(pool, key=_rank)
    return {"verdict": verdict, "quantity": row.quantity, "anchor": record_anchor(row.id),
            "who": "" if row.engine_b else row.engine_a, "error": error_text(row),
            "rel": row.max_rel is not None,  # the text is a relative error (else |Δ| or —)
            "fixture": row.fixture, "against": row.engine_a if row.engine_b else "",
            "n": len(records), "n_verdict": len(mine),
            "reasons": sorted({r.reason for r in records if r.reason})[:3]}


def ladder(records: Sequence[Record], fixtures: Iterable[str], engines: Sequence[str],
           stage_order: Sequence[str]) -> tuple[list[str], list[dict[str, Any]]]:
    """The pairwise ladder: its columns (``declared~engine`` and ``a~b`` pairs that have a
    record) and one row per (fixture, stage) with records, a ``cell`` per column."""
    pairs = [f"{a}~{b}" for a, b in itertools.combinations(engines, 2)]
    decl = [f"declared~{e}" for e in engines]
    cols = decl + pairs
    rows = []
    by_place: dict[tuple[str, str], list[Record]] = {}
    for r in records:
        by_place.setdefault((r.fixture, r.stage), []).append(r)
    for fx in fixtures:
        for st in stage_order:
            recs = by_place.get((fx, st), [])
            if not recs:
                continue
            by_pair: dict[tuple[str, str], list[Record]] = {}
            for r in recs:
                by_pair.setdefault((r.engine_a, r.engine_b), []).append(r)
            solo = [r for r in recs if r.engine_b == ""]
            cells = []
            for c in cols:
                a, b = c.split("~")
                mine = list(by_pair.get((a, b), []))
                # an engine-only row (not provided / error) shows in every pair with it
                if a != "declared":
                    mine += [r for r in solo if r.engine_a in (a, b)]
                cells.append(cell(mine) if mine else None)
            rows.append({"fixture": fx, "stage": st, "cells": cells})
    # drop columns that are empty everywhere
    keep = [i for i in range(len(cols)) if any(r["cells"][i] for r in rows)]
    return [cols[i] for i in keep], [{**r, "cells": [r["cells"][i] for i in keep]} for r in rows]


def engine_of(name: str, engines: Sequence[str]) -> str | None:
    """The engine a record's ``engine_a``/``engine_b`` names (``engine:solver`` → engine),
    or None (a reference such as ``declared``, or empty)."""
    if name in engines:
        return name
    base = name.split(":", 1)[0]
    return base if base in engines else None


def _consensus(pairs: list[tuple[str, str, Record]], engines: Sequence[str]) -> str | None:
    """The row's consensus engine among the engines of its pair records (module doc)."""
    involved = [e for e in engines if any(e in (a, b) for a, b, _ in pairs)]
    # an engine none of whose pairs was compared (not scored, not provided) is no reference
    compared = [e for e in involved if any(e in (a, b) and r.max_abs is not None
                                           for a, b, r in pairs)]
    involved = compared or involved
    if not involved:
        return None

    def score(e: str) -> tuple[int, int, int]:
        mine = [r for a, b, r in pairs if e in (a, b)]
        bad = sum(r.status in ("failed", "error") for r in mine)
        return (bad, -len({r.fixture for r in mine}), engines.index(e))

    return min(involved, key=score)


def against_reference(recs: Sequence[Record], engines: Sequence[str]
                      ) -> tuple[dict[str, list[Record]], list[str], str | None]:
    """({engine: the records that compare it with its reference}, the references named
    (named references, "own checks"), the consensus engine or None) of a row's records
    (module doc)."""
    named: dict[str, list[Record]] = {e: [] for e in engines}
    refs: list[str] = []
    pairs: list[tuple[str, str, Record]] = []
    for r in recs:
        a, b = engine_of(r.engine_a, engines), engine_of(r.engine_b, engines)
        if b is not None and a is None:  # a named reference (declared, analytic, ...)
            named[b].append(r)
            if r.engine_a not in refs:
                refs.append(r.engine_a)
        elif a is not None and r.engine_b == "":  # the engine's own check or its n/a
            named[a].append(r)
            if "own checks" not in refs:
                refs.append("own checks")
        elif a is not None and b is not None:
            pairs.append((a, b, r))
    ref = _consensus(pairs, engines)
    for e in engines:
        if ref is not None and e != ref:
            mine = [(a, b, r) for a, b, r in pairs if e in (a, b)]
            # (e ≠ ref: a pair of e's is the pair {e, ref} when ref is in it)
            with_ref = {r.fixture for a, b, r in mine if ref in (a, b)}
            named[e] += [r for a, b, r in mine if ref in (a, b) or r.fixture not in with_ref]
    return named, refs, ref


def _row(recs: list[Record], engines: Sequence[str]) -> dict[str, Any]:
    """One matrix row: its references, a cell (or None) per engine and the row's status."""
    selected, refs, ref = against_reference(recs, engines)
    cells: list[dict[str, Any] | None] = []
    for e in engines:
        mine = selected[e]
        c = cell(mine) if mine else None
        if e == ref and c is None:
            c = {"verdict": CONSENSUS}
        elif c is not None and e == ref:
            c["consensus"] = True
        cells.append(c)
    if ref is not None:
        refs.append(f"{CONSENSUS}: {ref}")
    status = next(s for s in VERDICT_ORDER if s in {r.status for r in recs})
    return {"reference": refs, "consensus": ref, "cells": cells, "status": status,
            "n": len(recs), "attention": status in ("failed", "error", "unconverged",
                                                    "not_scored")}


def engine_matrix(records: Sequence[Record], engines: Sequence[str],
                  key: Callable[[Record], Hashable]) -> tuple[list[str], list[dict[str, Any]]]:
    """The engine matrix: its columns (the engines with a record, in ``engines`` order) and
    one row per distinct ``key(record)`` (in order of first appearance) with ``label``
    (the key), ``reference`` (what the engines are compared with: named references, "own
    checks", "consensus: ENGINE"), a ``cell`` (or None) per column, and ``status``, the
    worst status of every record of the row."""
    groups: OrderedDict[Hashable, list[Record]] = OrderedDict()
    for r in records:
        groups.setdefault(key(r), []).append(r)
    used = [e for e in engines if any(engine_of(r.engine_a, engines) == e
                                      or engine_of(r.engine_b, engines) == e
                                      for r in records)]
    rows = [{"label": k, **_row(rs, used)} for k, rs in groups.items()]
    return used, rows
