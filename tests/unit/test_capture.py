"""Capture ingestion against closed forms: synthetic captures written as real C3D files
(ezc3d), with known units, axes, gaps, jumps, frequencies and event times."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from conftest import assert_bad_input

from harness.capture import events
from harness.capture.ingest import _TO_Z_UP, ingest
from harness.capture.synthetic import kinematic_swing, write_c3d
from harness.core.tolerances import lookup

BUNDLED = Path(__file__).resolve().parents[2] / "data" / "swing" / "driver.c3d"
RATE = 360.0


@pytest.fixture(scope="module")
def swing():
    return kinematic_swing(rate_hz=RATE)


def _roundtrip_ok(a, b):
    tol = lookup("capture", "float32_roundtrip")
    scale = np.nanmax(np.abs(b))
    err = np.nanmax(np.abs(a - b))
    assert err <= tol.atol + tol.rtol * scale, err
    assert np.array_equal(np.isnan(a), np.isnan(b))


def test_rotations_are_proper_and_map_up_onto_z():
    for axis, R in _TO_Z_UP.items():
        assert np.array_equal(R @ R.T, np.eye(3)) and round(np.linalg.det(R)) == 1
        u = np.zeros(3)
        u["xyz".index(axis[1])] = 1.0 if axis[0] == "+" else -1.0
        assert np.array_equal(R @ u, [0, 0, 1]), axis


@pytest.mark.parametrize("units,up", [("m", "+y"), ("mm", "+y"), ("mm", "+z"), ("m", "-x")])
def test_units_and_axes_round_trip(tmp_path, swing, units, up):
    labels, X, _ = swing
    path = write_c3d(tmp_path / "s.c3d", labels, X, RATE, units, up)
    cap = ingest(path)              # up inferred from head and toes
    assert cap.up_axis == up and cap.up_source.startswith("inferred")
    assert cap.rate_hz == RATE and cap.labels == tuple(labels)
    _roundtrip_ok(cap.X, X)
    cap2 = ingest(path, up=up)
    assert cap2.up_source == "option"
    _roundtrip_ok(cap2.X, X)


def test_wrong_up_option_changes_the_world(tmp_path, swing):
    labels, X, _ = swing
    path = write_c3d(tmp_path / "s.c3d", labels, X, RATE, "m", "+y")
    cap = ingest(path, up="+z")     # the user insists: head is then not above the toes
    dz = cap.marker("HeadTop")[0, 2] - cap.marker("LToeIn")[0, 2]
    true_dz = X[0, labels.index("HeadTop"), 2] - X[0, labels.index("LToeIn"), 2]
    assert true_dz > 1.5 and abs(dz) < 0.5


def test_gap_report_and_jump_rejection(tmp_path, swing):
    labels, X, _ = swing
    X = X.copy()
    k = labels.index("LElbowOut")
    X[100:110, k] = np.nan          # one gap of 10 frames
    X[300:302, k] = np.nan          # and one of 2
    j = labels.index("HeadSide")
    X[200:, j] += np.array([0.0, 0.0, 3.0])  # a 3 m jump in one frame: 1080 m/s
    path = write_c3d(tmp_path / "g.c3d", labels, X, RATE, "m")
    cap = ingest(path)
    g = cap.gaps["LElbowOut"]
    assert g.n_gaps == 2 and math.isclose(g.longest_gap_s, 10 / RATE)
    assert math.isclose(g.missing_fraction, 12 / X.shape[0])
    assert "HeadSide" in cap.rejected and "into frame 200" in cap.rejected["HeadSide"]
    speed = float(cap.rejected["HeadSide"].split("moves at ")[1].split(" m/s")[0])
    assert abs(speed - 3.0 * RATE) <= 1.0   # printed to 1 m/s
    assert "LElbowOut" not in cap.rejected
    with pytest.raises(Exception, match="rejected"):
        cap.marker("HeadSide")


def test_bad_inputs(tmp_path, swing):
    labels, X, _ = swing
    p = tmp_path / "x.c3d"
    p.write_text("not a c3d\n")
    assert_bad_input(ingest, str(p), "not a C3D file")
    assert_bad_input(ingest, str(tmp_path / "missing.c3d"), "no such file")
    short = [l for l in labels if l != "Marker_2:2:2"]
    keep = [labels.index(l) for l in short]
    q = write_c3d(tmp_path / "m.c3d", short, X[:, keep], RATE, "m")
    assert_bad_input(ingest, str(q),
                     "lacks needed markers of marker set driver-swing-38: Marker_2:2:2")
    # a club-head marker that jumps makes the capture unusable
    Xj = X.copy()
    Xj[50:, labels.index("Marker_2:2:1")] += 5.0
    r = write_c3d(tmp_path / "j.c3d", labels, Xj, RATE, "m")
    assert_bad_input(ingest, str(r), "needed markers rejected as impossible: Marker_2:2:1")
    # head and toes along a diagonal: no axis can be inferred
    Xd = X.copy()
    R = np.array([[1, 0, 0], [0, math.cos(0.8), -math.sin(0.8)], [0, math.sin(0.8), math.cos(0.8)]])
    s = write_c3d(tmp_path / "d.c3d", labels, Xd @ R.T, RATE, "m", "+z")
    assert_bad_input(ingest, str(s), "cannot infer the up axis")
    ok = write_c3d(tmp_path / "ok.c3d", labels, X, RATE, "m")
    assert_bad_input(lambda _: ingest(ok, cutoff_hz=500.0), "--cutoff", "must lie in (0, 180) Hz")


def test_lowpass_gain_matches_butterworth_closed_form(tmp_path, swing):
    labels, X, _ = swing
    F = int(3 * RATE)
    t = np.arange(F) / RATE
    X = np.repeat(X[:1], F, axis=0)
    fc, n = 20.0, 4
    freqs = (5.0, 20.0, 40.0)
    for i, f in enumerate(freqs):
        X[:, labels.index("BackTop"), i] += 0.01 * np.sin(2 * np.pi * f * t)
    path = write_c3d(tmp_path / "f.c3d", labels, X, RATE, "m")
    cap = ingest(path, cutoff_hz=fc)
    assert cap.filter["cutoff_hz"] == fc
    mid = slice(F // 4, 3 * F // 4)
    tol = lookup("capture", "filter_gain")
    for i, f in enumerate(freqs):
        y = cap.X[mid, labels.index("BackTop"), i] - X[0, labels.index("BackTop"), i]
        s = np.sin(2 * np.pi * f * t[mid])
        gain = float(y @ s / (s @ s)) / 0.01
        w = math.tan(math.pi * f / RATE) / math.tan(math.pi * fc / RATE)
        expect = 1.0 / (1.0 + w ** (2 * n))
        assert abs(gain - expect) <= tol.atol, (f, gain, expect)


def test_events_of_a_synthetic_swing(tmp_path, swing):
    labels, X, truth = swing
    path = write_c3d(tmp_path / "e.c3d", labels, X, RATE, "mm")
    ev = events.detect(ingest(path))
    frames = lookup("capture", "event_frames").atol
    assert abs(ev.top_s - truth["top_s"]) <= frames / RATE
    assert abs(ev.impact_s - truth["impact_s"]) <= frames / RATE
    assert ev.address_s < truth["t0_s"] + frames / RATE < ev.top_s
    # takeaway: last still frame; the closed-form speed R·A·π/(2Tb)·sin(π(t−t0)/Tb)
    # reaches capture/still_speed at t0 + Tb/π · asin(v Tb 2 / (R A π))
    v = lookup("capture", "still_speed").atol
    t_go = truth["t0_s"] + truth["Tb_s"] / math.pi * math.asin(
        2 * v * truth["Tb_s"] / (truth["R_m"] * truth["A_rad"] * math.pi))
    assert abs(ev.takeaway_s - t_go) <= 2 * frames / RATE   # speeds are chords: ± a frame
    tol = lookup("capture", "impact_speed")
    assert abs(ev.clubhead_speed_pre_impact_mps - truth["speed_pre_impact_mps"]) <= tol.atol
    assert abs(ev.clubhead_speed_post_impact_mps - truth["speed_post_impact_mps"]) <= tol.atol


def test_bundled_capture_as_its_notes_describe_it():
    """data/swing/README.md: 654 frames at 360 Hz, Y up, Marker_0 jumps metres
    between frames (≈ 1360 m/s), RShoulderTop in ≈ 20 % of frames, club head peak ≈ 50 m/s."""
    cap = ingest(BUNDLED)
    assert cap.n_frames == 654 and cap.rate_hz == 360.0 and cap.up_axis == "+y"
    assert list(cap.rejected) == ["Marker_0:0:0"]
    doc = lookup("capture", "documented_figures").atol
    assert abs(cap.gaps["RShoulderTop"].missing_fraction - 0.8) < doc * 0.1   # 0.01
    ev = events.detect(cap)
    assert abs(ev.peak_speed_mps - 50.0) < doc * 50.0
    assert ev.address_s < ev.takeaway_s < ev.top_s < ev.impact_s
    # at impact the club head is back at its address height (a ball on the ground)
    p = events.club_head_point(cap)
    assert abs(p[ev.impact_frame, 2] - p[ev.address_frame, 2]) < doc * 0.5  # 5 cm


def test_sole_clearance_is_the_club_heads_height_through_contact_over_address():
    """The bundled driver, struck off a tee, stays above the height its head rested at
    during address (no turf). Raised by d over every frame up to halfway from the
    takeaway to the top (the address's still frames among them), the head's clearance
    through contact falls by d exactly; raised far enough, the head meets the ground
    after the ball (swing/turf_clearance_m), and the events are otherwise the same."""
    import dataclasses

    cap = ingest(BUNDLED)
    ev = events.detect(cap)
    lim = lookup("swing", "turf_clearance_m").atol
    assert ev.sole_clearance_m > -lim
    cols = [cap.index(lab) for lab in cap.markerset.club_head]
    d = ev.sole_clearance_m + lim + 0.010
    X = cap.X.copy()
    X[:(ev.takeaway_frame + ev.top_frame) // 2, cols, 2] += d
    ev2 = events.detect(dataclasses.replace(cap, X=X))
    assert (ev2.address_frame, ev2.takeaway_frame, ev2.top_frame, ev2.impact_frame) == (
        ev.address_frame, ev.takeaway_frame, ev.top_frame, ev.impact_frame)
    st = lookup("swing", "stated_figure")       # the same arithmetic, shifted by d
    assert ev2.sole_clearance_m == pytest.approx(ev.sole_clearance_m - d, rel=st.rtol,
                                                 abs=st.atol)
    assert ev2.sole_clearance_m <= -lim
