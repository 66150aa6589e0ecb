"""The report's engine matrix: one column per engine (six engines fit where the 21 columns of
every pair did not), each engine against a stated reference, and every cell showing the
verdict its record already carries (never judged again from the numbers)."""
from __future__ import annotations

import itertools
from html.parser import HTMLParser

from harness.core.records import Record
from harness.report.matrix import engine_matrix, ladder
from harness.report.render import matrix_table

SIX = ["mujoco", "pinocchio", "crocoddyl", "drake", "opensim", "mujoco_warp"]


def _rec(stage: str, fixture: str, quantity: str, a: str, b: str, status: str = "passed",
         rel: float | None = 1e-15, abs_: float | None = 1e-15) -> Record:
    return Record(id=f"{fixture}/{stage}/{quantity}/{a}~{b}", stage=stage, fixture=fixture,
                  quantity=quantity, engine_a=a, engine_b=b, status=status,
                  passed={"passed": True, "failed": False}.get(status),
                  max_abs=abs_, max_rel=rel, atol=1e-12, rtol=1e-9, n_samples=3,
                  worst_sample=0, worst_label="sample 0", key_a=f"{a}.x", key_b=f"{b}.x")


def _six_engine_records() -> list[Record]:
    recs = []
    for fx in ("pendulum", "chain7"):
        recs += [_rec("model_identity", fx, "total_mass", "declared", e) for e in SIX]
        recs += [_rec("dynamics", fx, "mass_matrix", a, b)
                 for a, b in itertools.combinations(SIX, 2)]
    return recs


class _Cells(HTMLParser):
    """Header and body cell counts per row of the first table."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[tuple[str, dict[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self.rows[-1].append((tag, dict(attrs)))


def _parse(html: str) -> list[list[tuple[str, dict[str, str | None]]]]:
    p = _Cells()
    p.feed(html)
    return p.rows


def test_six_engines_make_six_columns_not_twenty_one():
    recs = _six_engine_records()
    pair_cols, _ = ladder(recs, ["pendulum", "chain7"], SIX, ["model_identity", "dynamics"])
    assert len(pair_cols) == 6 + 15  # the pairwise ladder this matrix replaces on screen
    html = matrix_table(recs, SIX, lambda r: (r.fixture, r.stage), ("fixture", "stage"),
                        "quantity", "ladder")
    rows = _parse(html)
    head = [a.get("class") for t, a in rows[0]]
    assert len(rows[0]) == 2 + 1 + 6 + 1  # fixture, stage, compared with, engines, all
    assert head.count("engine") == 6
    assert len(rows) == 1 + 4  # one row per (fixture, stage)
    assert all(len(r) == len(rows[0]) for r in rows[1:])


def test_each_engine_is_compared_with_a_stated_reference():
    recs = _six_engine_records()
    cols, rows = engine_matrix(recs, SIX, lambda r: (r.stage,))
    assert cols == SIX
    ident, dyn = rows
    assert ident["reference"] == ["declared"] and ident["consensus"] is None
    assert all(c["verdict"] == "passed" for c in ident["cells"])
    # every pair agrees: the consensus is the first engine, the others are each compared
    # with it (their cells name no other pair)
    assert dyn["reference"] == ["consensus: mujoco"] and dyn["consensus"] == "mujoco"
    assert dyn["cells"][0] == {"verdict": "consensus"}
    for e, c in zip(SIX[1:], dyn["cells"][1:]):
        assert c["anchor"].endswith(f"mujoco_{e}"), (e, c["anchor"])


def test_cells_show_the_records_own_verdicts_and_no_failure_hides():
    recs = _six_engine_records()
    # drake fails against every engine: the consensus moves away from it, its cell fails
    recs = [_rec(r.stage, r.fixture, r.quantity, r.engine_a, r.engine_b, "failed", 1e-16,
                 1e-16) if "drake" in (r.engine_a, r.engine_b) and r.stage == "dynamics"
            else r for r in recs]
    # a record passed by its own tolerance though its number is large: it stays a pass
    recs.append(_rec("dynamics", "pendulum", "bias_forces", "mujoco", "opensim", "passed",
                     0.5, 0.5))
    # a failure between two engines neither of which is the consensus engine
    recs.append(_rec("dynamics", "pendulum", "bias_forces", "opensim", "crocoddyl",
                     "failed", 1e-16, 1e-16))
    recs.append(_rec("dynamics", "pendulum", "bias_forces", "mujoco", "crocoddyl"))
    cols, rows = engine_matrix(recs, SIX, lambda r: (r.quantity,))
    mass, bias = rows[1], rows[2]
    assert mass["consensus"] == "mujoco" and mass["status"] == "failed"
    verdicts = {e: c["verdict"] for e, c in zip(cols, mass["cells"])}
    assert verdicts["drake"] == "failed"  # a 1e-16 error, failed by its record: shown failed
    assert {verdicts[e] for e in SIX if e not in ("drake", "mujoco")} == {"passed"}
    assert bias["consensus"] == "mujoco"
    opensim = bias["cells"][cols.index("opensim")]
    assert opensim["verdict"] == "passed" and opensim["error"] == "5.00e-01"
    assert bias["status"] == "failed" and bias["attention"]  # the pair without mujoco
    html = matrix_table(recs, SIX, lambda r: (r.quantity,), ("quantity",), "fixture")
    body = _parse(html)[1:]
    marked = [[a.get("data-verdict") for t, a in row if a.get("data-verdict")] for row in body]
    assert marked[1].count("failed") == 1 and "✗ FAIL" in html
    assert 'class="row-attention"' in html


def test_compact_records_keep_every_record_and_no_markup():
    """The folded passing records travel as compact JSON the page draws when opened: every
    record comes back (quantity, fixture, engines, status, numbers to 3 digits), and a
    hostile name cannot close the script element that holds it."""
    import json

    from harness.report.render import compact_records

    recs = _six_engine_records()
    recs.append(_rec("dynamics", "</script><b>x", "mass_matrix", "mujoco", "drake",
                     rel=None, abs_=4.2e-15))
    text = compact_records(recs)
    assert "<" not in text
    doc = json.loads(text)
    assert len(doc["rows"]) == len(recs)
    for r, row in zip(recs, doc["rows"]):
        assert doc["q"][row[0]] == r.quantity and doc["f"][row[1]] == r.fixture
        assert doc["e"][row[2]] == f"{r.engine_a} ~ {r.engine_b}"
        assert doc["s"][row[3]] == r.status
        assert row[4] == float(f"{r.max_abs:.3g}")
        assert row[5] == ("z" if r.max_rel is None else float(f"{r.max_rel:.3g}"))
        assert doc["t"][row[6]] == [r.atol, r.rtol]


def test_the_consensus_is_an_engine_that_was_compared():
    """A diagnose-like row: one pair compared (and failed), the others not scored. The
    consensus is an engine of the compared pair, so the failure is in a cell, not hidden
    behind a not-scored pair with an engine that compared nothing."""
    names = ["mujoco", "pinocchio", "crocoddyl", "drake"]
    recs = [_rec("dynamics", "panda", "forward_dynamics", a, b, "not_scored", None, None)
            for a, b in itertools.combinations(names, 2) if (a, b) != ("mujoco", "drake")]
    recs.append(_rec("dynamics", "panda", "forward_dynamics", "mujoco", "drake", "failed",
                     0.8, 0.8))
    cols, (row,) = engine_matrix(recs, names, lambda r: (r.quantity,))
    assert row["consensus"] == "mujoco"
    assert row["cells"][cols.index("drake")]["verdict"] == "failed"
