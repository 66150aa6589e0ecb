"""The swing's checks table (harness/swing/checks.py) over fit.json's typed view
(harness/swing/summary.py), built here by hand: each threshold read from the tolerance
table, a figure at its threshold met and one just over it not met, the rows a summary
without the impact, the feet or the replay does not hold left out, and the exit code
from the rows."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from harness.core.tolerances import lookup
from harness.swing import checks
from harness.swing.summary import (
    BallLaw,
    FitFigures,
    GroundFigures,
    Headline,
    ImpactFigures,
    JointRange,
    Reintegration,
    ReplayFigures,
    SwingSummary,
    Window,
)


def _summary(**over) -> SwingSummary:
    """A plausible swing's summary, every scored figure inside its threshold."""
    rmse = 0.5 * lookup("swing", "marker_rmse").atol
    fit = FitFigures(iterations=10, wall_s=1.0, marker_rmse_m=rmse,
                     marker_rmse_top_to_impact_m=rmse,
                     marker_max_top_to_impact_m=0.5 * lookup("swing", "marker_max").atol,
                     closure_max_m=1e-3, defects_max_rel=0.0, defects_worst_joint="l_elbow",
                     club_head_speed_fitted_mps=40.0, club_head_speed_measured_mps=40.0,
                     pelvis_residual_force_N=1.0, pelvis_residual_vertical_force_N=1.0,
                     pelvis_residual_moment_Nm=1.0,
                     joint_range=JointRange(0.0, None, {}, 100),
                     impact=ImpactFigures(1.0, 1.0, 1e-3, 1 / 360, 40.0, 40.0, 30.0, 30.0,
                                          60.0, (0.0, 2.8, 0.0), 2.8, 1.45, (1.40, 1.52),
                                          "driver", 1e-3, 1e-3),
                     marker_rmse_by_label_m={}, marker_rmse_top_to_impact_by_label_m={})
    s = SwingSummary(
        window=Window(0, 110, 110, 0.0, 110 / 360, 18, 99), fit=fit,
        reintegration=Reintegration(0.5 * rmse, None, 0.3, 10, rmse),
        headline=Headline(12.0, 40.0, 1.0, 0.5, 1.0, 0.5, "lift", 2.0, 0.5, 10.0, 5.0),
        calibration_wall_s=1.0, ik_wall_s=1.0, ik_rmse_m=rmse, club="driver",
        club_how="given (--club)", post_impact_s=0.03, body_mass_kg=80.0, wall_s=5.0,
        ground=GroundFigures("lift", "", 0.8, "", 0.0, 2.0, 0.5, 10.0, "", (), (), (), (),
                             None), shaft=(),
        replay=ReplayFigures({"a": (0.5 * rmse, rmse)}, {"a": 5e-3}, {"a": (1e-12, 300.0)}),
        rejected={}, gaps={}, events_s={}, study=None, dimension=None, activation=None)
    return dataclasses.replace(s, **over)


def _row(rows, start):
    return next(r for r in rows if r["name"].startswith(start))


def test_every_threshold_is_an_entry_of_the_table():
    for c in checks.CHECKS:
        if c.threshold is not None:
            key, which = c.threshold
            assert getattr(lookup("swing", key), which) > 0, key


def test_a_figure_at_its_threshold_is_met_and_just_over_it_is_not():
    lim = lookup("swing", "marker_rmse").atol
    f = _summary()
    for x, ok in ((lim, True), (lim * (1 + 1e-6), False)):
        fit = dataclasses.replace(f.fit, marker_rmse_top_to_impact_m=x)
        verdict = checks.assess(checks.Facts(dataclasses.replace(f, fit=fit), replayed=True))
        assert _row(verdict.rows, "marker RMSE, top → impact")["ok"] is ok
        assert verdict.exit_code == (0 if ok else 1)
    peak = lookup("swing", "residual_force_peak").atol
    head = dataclasses.replace(f.headline, residual_force_peak_N=2 * peak)
    row = _row(checks.assess(checks.Facts(dataclasses.replace(f, headline=head))).rows,
               "pelvis residual force")
    assert row["ok"] is False and row["target"] == f"peak ≤ {peak:g} N"


def test_the_smash_factor_is_scored_against_its_clubs_band():
    f = _summary()
    for sf, ok in ((1.45, True), (1.60, False), (1.30, False)):
        im = dataclasses.replace(f.fit.impact, smash_factor=sf)
        s = dataclasses.replace(f, fit=dataclasses.replace(f.fit, impact=im))
        assert _row(checks.assess(checks.Facts(s)).rows, "smash factor")["ok"] is ok


def _ball(dE: float, T0: float = 400.0) -> BallLaw:
    return BallLaw("driver", 0.805, 0.014, 0.4, True, 0.25, (0.0, -3.0, 0.0), (0.0, 0.2, 0.0),
                   0.2, 70.0, 0.6, dE, -15.0, dE + 20.0, T0, 1.0, 0.1)


def test_energy_created_at_the_impact_fails_the_check():
    """The impact's energy change (golfer + club + ball) scored against
    swing/impact_energy_created: a loss is met, a gain above round-off of the kinetic
    energy before contact is a failed check and exit 1, never a pass."""
    f = _summary()
    rt = lookup("swing", "impact_energy_created").rtol
    for dE, ok in ((-20.0, True), (0.0, True), (0.5 * rt * 400.0, True), (5.0, False),
                   (3 * rt * 400.0, False)):
        im = dataclasses.replace(f.fit.impact, ball=_ball(dE))
        s = dataclasses.replace(f, fit=dataclasses.replace(f.fit, impact=im))
        verdict = checks.assess(checks.Facts(s))
        assert _row(verdict.rows, "energy change across the impact")["ok"] is ok
        assert verdict.exit_code == (0 if ok else 1)
    assert not any(r["name"].startswith("energy change across the impact")
                   for r in checks.assess(checks.Facts(f)).rows)   # no law: no row


@pytest.mark.parametrize("what, gone", [
    ("impact", ("impact time", "club-head speed before", "smash factor",
                "fitted window after ball contact")),
    ("ground", ("pelvis residual force", "foot contact")),
    ("replay", ("each engine's open-loop replay", "replay records"))])
def test_rows_follow_what_the_summary_holds(what, gone):
    f = _summary()
    full = checks.assess(checks.Facts(f, replayed=True)).rows
    if what == "impact":
        less = checks.assess(checks.Facts(
            dataclasses.replace(f, fit=dataclasses.replace(f.fit, impact=None)), True)).rows
    elif what == "ground":
        less = checks.assess(checks.Facts(dataclasses.replace(f, ground=None), True)).rows
        assert _row(less, "feet: no ground contact")["ok"] is None
    else:
        less = checks.assess(checks.Facts(f, replayed=False)).rows
    for start in gone:
        assert any(r["name"].startswith(start) for r in full)
        assert not any(r["name"].startswith(start) for r in less)
    assert checks.exit_code(full) == 0


def test_each_segment_is_a_row_naming_its_window_and_a_failing_one_fails_the_run():
    f = _summary()
    rmse = f.fit.marker_rmse_top_to_impact_m
    eng = ["a", "b"]
    seg = {"engines": eng, "horizon_s": 0.05, "list": [
        {"index": i, "case": f"seg{i + 1}of2", "t_s": [1.0 + 0.04 * i, 1.04 + 0.04 * i],
         "knots": [16 * i, 16 * (i + 1)], "holds_impact": i == 1, "limit_m": rmse,
         "frames": 14, "fit_markers_rmse_m": 0.01 if i == 0 else None,
         "records": {"passed": 3, "total": 3, "not_passed": []},
         "engines": {e: {"fit_rms_m": 1e-4, "fit_max_m": 1e-3,
                         "markers_rmse_m": 0.01 if i == 0 else None} for e in eng}}
        for i in range(2)]}
    rep = dataclasses.replace(f.replay, segments=seg)
    rows = checks.assess(checks.Facts(dataclasses.replace(f, replay=rep), replayed=True)).rows
    mine = [r for r in rows if r["name"].startswith("segmented replay")]
    assert [r["name"].split(":")[0] for r in mine] == [
        "segmented replay 1 of 2, scored over t = 1.0000–1.0400 s",
        "segmented replay 2 of 2, scored over t = 1.0400–1.0800 s (holds the ball contact)"]
    assert [r["ok"] for r in mine] == [True, True]
    assert "no measured marker inside it" in mine[1]["value"]
    seg["list"][1]["records"]["passed"] = 2   # one record of the impact's segment failed
    rows = checks.assess(checks.Facts(dataclasses.replace(f, replay=rep), replayed=True)).rows
    assert [r["ok"] for r in rows if r["name"].startswith("segmented replay")] == [True, False]
    assert checks.exit_code(rows) == 1


def test_turf_after_the_ball_fails_its_check_unless_the_fit_holds_a_turf_impulse():
    """The club head's clearance through contact over its address height, scored against
    swing/turf_clearance_m below it: above met, at or under it (the head met the ground
    after the ball) not met when the fit has no turf impulse, met when it holds one;
    unmeasured (NaN), no row. The turf impulse's own row is met only when it pushes up and
    against the head's path (both parts ≥ 0)."""
    f = _summary()
    lim = lookup("swing", "turf_clearance_m").atol
    for c, ok in ((-lim + 0.001, True), (-lim, False), (-lim - 0.010, False)):
        im = dataclasses.replace(f.fit.impact, sole_clearance_m=c)
        s = dataclasses.replace(f, fit=dataclasses.replace(f.fit, impact=im))
        a = checks.assess(checks.Facts(s))
        assert _row(a.rows, "turf after the ball")["ok"] is ok
        assert (a.exit_code == 0) is ok
        assert not [r for r in a.rows if r["name"].startswith("turf's impulse")]
    for (n, fr), ok in (((0.2, 0.1), True), ((0.0, 0.0), True), ((-0.01, 0.1), False),
                        ((0.2, -0.01), False)):
        turf = dict(turf_impulse_Ns=(0.0, -fr, n), turf_impulse_magnitude_Ns=float(
            np.hypot(n, fr)), turf_normal_Ns=n, turf_against_path_Ns=fr)
        im = dataclasses.replace(f.fit.impact, sole_clearance_m=-lim - 0.010,
                                 ball=dataclasses.replace(_ball(-1.0), **turf))
        s = dataclasses.replace(f, fit=dataclasses.replace(f.fit, impact=im))
        a = checks.assess(checks.Facts(s))
        assert _row(a.rows, "turf after the ball")["ok"] is True
        assert _row(a.rows, "turf's impulse")["ok"] is ok
        assert (a.exit_code == 0) is ok
        assert "not read" in _row(a.rows, "residual impulse")["value"]
    im = dataclasses.replace(f.fit.impact, sole_clearance_m=float("nan"))
    s = dataclasses.replace(f, fit=dataclasses.replace(f.fit, impact=im))
    assert not [r for r in checks.assess(checks.Facts(s)).rows
                if r["name"].startswith("turf after")]


def test_turf_contact_in_the_summary_only_where_the_clearance_was_measured():
    """fit.json summary ``turf_contact`` (pipeline.impact_headline): True at or below
    swing/turf_clearance_m under the address height, False above it, None (not False)
    when the clearance could not be measured (NaN)."""
    import math

    from harness.swing.pipeline import impact_headline

    lim = lookup("swing", "turf_clearance_m").atol
    ball = {"impact_energy_change_J": -1.0, "restitution": 0.8,
            "effective_mass_at_face_kg": 0.2, "residual_impulse_magnitude_Ns": 0.0}
    info = {k: 1.0 for k in ("t_e_s", "sigma_s", "clubhead_speed_pre_impact_measured_mps",
                             "clubhead_speed_pre_impact_fitted_mps",
                             "clubhead_speed_post_impact_measured_mps",
                             "clubhead_speed_post_impact_fitted_mps", "ball_speed_mps",
                             "smash_factor", "smash_factor_se")} | {"ball": ball}
    for c, want in ((-lim + 0.001, False), (-lim, True), (-lim - 0.01, True),
                    (math.nan, None)):
        assert impact_headline(info | {"sole_clearance_m": c})["turf_contact"] is want


@pytest.mark.parametrize("measured, side", [(0.712, "past 100 %"), (0.685, None),
                                            (0.650, "below 0 %")])
def test_the_handed_on_row_says_when_the_capture_lies_beyond_both_models(measured, side):
    """The impact table's hand-on row: the fraction (measured − head alone) / (rigid −
    head alone) of the speed ratios after / before contact, computed here from the
    ratios, and where the measured ratio lies beyond both models' the row says which
    side instead of reading as a share (the bent shaft's quick fit: 0.712 measured
    against 0.699 rigid and 0.672 head alone, 147 %)."""
    import types

    from harness.swing import pipeline, report
    v0 = 48.53
    law = {"face_speed_mps": v0, "face_speed_after_rigid_mps": 0.699 * v0,
           "face_speed_after_head_alone_mps": 0.672 * v0}
    ev = types.SimpleNamespace(clubhead_speed_pre_impact_mps=50.0,
                               clubhead_speed_post_impact_mps=measured * 50.0)
    h = pipeline._handed_on(law, ev)
    frac = (measured - 0.672) / (0.699 - 0.672)
    assert h["fraction"] == pytest.approx(frac, rel=1e-9)
    [(words, value)] = report._handed_on_rows(types.SimpleNamespace(head_handed_on=h))
    assert value.startswith(f"{100 * frac:.0f} % (")
    for clause in ("past 100 %", "below 0 %"):
        assert (clause in value) is (clause == side), value
