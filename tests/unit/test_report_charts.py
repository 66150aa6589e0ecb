"""Charts a reader can trust: each row drawn against the threshold that judged it (a row
judged by its atol on a |Δ| chart with that atol, linear from 0; a check against zero too),
no fixture axis with a single fixture (the engines instead), a log axis whose 0 tick never
crowds the lowest decade's label, sweep cells outside the qualified domain grey, and the
swing's impact chart opening on the contact."""
from __future__ import annotations

import html
import json
import math
import re

import numpy as np

from harness.core import figures
from harness.core.records import Record
from harness.report.stage_charts import stage_plot
from harness.sweep.executor import SweepResult, _row
from harness.sweep.report import build_document, heatmap_figure
from harness.swing.report import impact_window

ENGINES = ("mujoco", "pinocchio", "drake")


def _rec(fx: str, q: str, a: str, b: str, *, rel: float | None, abs_: float, atol: float,
         rtol: float, status: str = "passed") -> Record:
    return Record(id=f"{fx}/contact/{q}/{a}~{b}", stage="contact", fixture=fx, quantity=q,
                  engine_a=a, engine_b=b, status=status, passed=status == "passed",
                  max_abs=abs_, max_rel=rel, atol=atol, rtol=rtol, n_samples=1)


def _charts(page: str) -> dict[str, dict]:
    out = {}
    for blob in re.findall(r'data-spec="([^"]*)"', page):
        spec = json.loads(html.unescape(blob))
        out[spec["layout"]["title"]["text"]] = spec
    return out


def _lines(spec: dict) -> dict[str, float]:
    """{name: y} of a chart's threshold lines."""
    return {t["name"]: t["y"][0] for t in spec["data"] if t.get("xaxis") == "x2"}


def test_a_row_judged_by_its_atol_is_drawn_against_that_atol():
    # a sample index off by one, within its atol of 1 sample (rtol 0), beside a quantity
    # judged by an rtol of 1e-12 in the same case
    recs = [_rec("box", "block_ramp.stick_to_slip_samples", "analytic", e, rel=0.004,
                 abs_=1.0, atol=1.0, rtol=0.0) for e in ENGINES]
    recs += [_rec("box", "block_ramp.slip_acceleration_mps2", "analytic", e, rel=3e-15,
                  abs_=1e-14, atol=1e-12, rtol=1e-12) for e in ENGINES]
    charts = _charts(stage_plot(recs, "contact", ["box"], ENGINES))
    (samples,) = [s for t, s in charts.items() if "stick_to_slip_samples" in t]
    assert samples["layout"]["yaxis"].get("type") != "log"  # linear, from 0
    assert samples["layout"]["yaxis"]["range"][0] == 0
    assert _lines(samples) == {"atol 1": 1.0}
    pts = [y for t in samples["data"] if t.get("mode") == "markers" for y in t["y"]]
    assert pts and max(pts) <= 1.0 <= samples["layout"]["yaxis"]["range"][1]
    (acc,) = [s for t, s in charts.items() if "slip_acceleration" in t]
    assert _lines(acc) == {"rtol 1e-12": 1e-12}


def test_a_check_against_zero_is_drawn_with_its_absolute_bound():
    recs = [_rec(fx, "constraint_velocity", "declared", e, rel=None, abs_=4e-15,
                 atol=1e-11, rtol=0.0) for fx in ("four_bar", "grip_loop") for e in ENGINES]
    charts = _charts(stage_plot(recs, "contact", ["four_bar", "grip_loop"], ENGINES))
    (spec,) = charts.values()
    assert spec["layout"]["yaxis"]["title"]["text"].startswith("max |Δ| [")
    assert _lines(spec) == {"atol 1e-11": 1e-11}
    assert spec["layout"]["xaxis"]["categoryarray"] == ["four_bar", "grip_loop"]


def test_a_single_fixture_puts_the_engines_on_the_x_axis():
    recs = [_rec("rod", "rod_tilted.first_contact_index", "analytic", e, rel=0.0, abs_=0.0,
                 atol=0.0, rtol=0.0) for e in ENGINES]
    (spec,) = _charts(stage_plot(recs, "contact", ["rod"], ENGINES)).values()
    assert spec["layout"]["xaxis"]["title"]["text"] == "engine"
    assert spec["layout"]["xaxis"]["categoryarray"] == list(ENGINES)
    assert "first_contact_index" in spec["layout"]["title"]["text"]
    assert _lines(spec) == {"atol 0 (exact)": 0.0}  # the bound of an exact count, drawn


def test_the_zero_tick_stays_clear_of_the_lowest_decade_over_many_decades():
    fig = figures.Figure("t", "fixture", None, "error", figures.DIMENSIONLESS, ylog=True,
                         categories=["a", "b", "c"])
    fig.points(["a", "b", "c"], [0.0, 3.8e-49, 1e-14], "p")
    y = fig.spec()["layout"]["yaxis"]
    ticks = [math.log10(v) for v in y["tickvals"]]
    assert y["ticktext"][:2] == ["0", "1e-49"]
    spacing = ticks[2] - ticks[1]
    assert ticks[1] - ticks[0] >= 2 * spacing  # the 0 label two label spacings down
    assert y["range"][0] < ticks[0] and y["range"][1] > -14


def test_sweep_cells_outside_the_qualified_domain_are_grey():
    cases = [{"case_id": i, "speed_mps": s, "angle_deg": 0.0}
             for i, s in enumerate((0.01, 0.02, 0.57))]
    rows = [_row(c, "ok", {"slip_mps": c["speed_mps"]}) for c in cases]
    doc = build_document("grey", cases, SweepResult(rows, {"name": "local"}, 1.0), {},
                         x="speed_mps", y="angle_deg")
    verdict_of = {0: "passed", 1: "passed", 2: "outside"}
    spec = heatmap_figure(doc, "slip_mps", verdict_of).spec()
    main, grey = [t for t in spec["data"] if t["type"] == "heatmap"]
    assert main["z"] == [[0.01, 0.02, None]]  # no colour of the scale for 0.57 m/s
    assert grey["z"] == [[None, None, 1]] and grey["text"] == [["", "", "outside"]]
    assert "0.57" in grey["customdata"][0][2]


def test_the_impact_window_holds_both_impacts_and_is_narrow():
    t = np.arange(0.0, 2.0, 1 / 240)
    lo, hi = impact_window(t, 1.2010, 1.2032, 0.0008)
    assert lo < 1.2010 < 1.2032 < hi
    assert hi - lo < 0.1 * (t[-1] - t[0])


def test_a_failed_pair_is_drawn_even_beside_the_consensus():
    """Three engines; drake~pinocchio failed while both agree with mujoco (the consensus):
    its point is on the chart."""
    recs = [_rec("box", "contact_force", "mujoco", e, rel=1e-15, abs_=1e-15, atol=1e-12,
                 rtol=1e-10) for e in ("pinocchio", "drake")]
    recs.append(_rec("box", "contact_force", "pinocchio", "drake", rel=2e-10, abs_=2e-10,
                     atol=1e-12, rtol=1e-10, status="failed"))
    (spec,) = _charts(stage_plot(recs, "contact", ["box"], ENGINES)).values()
    ys = [y for t in spec["data"] if t.get("mode") == "markers" for y in t["y"]]
    assert 2e-10 in ys
