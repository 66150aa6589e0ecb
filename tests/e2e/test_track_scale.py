"""`harness track --scale`: the harness's own carrying out of OpenSim's ScaleTool setup on
gait2392's generic model and subject01's static trial (data/opensim_models/gait2392_scale)
against OpenSim's ScaleTool run live on the same setup and model, against factors worked
out here by hand from the trial and the marker set, and against the standard pipeline's
stored scaled model; bad setups refused.

Figures of the whole walking trial on the scaled model: docs/track.md ("Scaling")."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from harness.core.tolerances import lookup
from harness.model import registry
from harness.track import osim_scale, scale
from tests.conftest import ROOT, run_cli

DATA = ROOT / "data" / "opensim_models"
SCALE = DATA / "gait2392_scale"
SETUP = SCALE / "subject01_Setup_Scale.xml"
GENERIC = DATA / "gait2392_thelen2003muscle.osim"
STORED = DATA / "gait2392_walk1" / "subject01_simbody.osim"


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """(our scaling, OpenSim's ScaleTool's figures, their comparison) on the same setup."""
    work = tmp_path_factory.mktemp("scale")
    ours = scale.run(str(GENERIC), str(SETUP), str(work))
    theirs = registry.adapter_class("opensim").motion_scale_tool(str(SETUP), str(GENERIC),
                                                                 str(work))
    return ours, theirs, scale.compare(ours, theirs)


def _trc_distance(a, b, t0, t1):
    """The mean over the .trc's frames with t0 ≤ t ≤ t1 of the distance [m] between two
    markers, read straight from the file (mm)."""
    lines = (SCALE / "subject01_static.trc").read_text().splitlines()
    names = [x.strip() for x in lines[3].split("\t")[2::3] if x.strip()]
    ia, ib = names.index(a), names.index(b)
    d = []
    for line in lines[6:]:
        f = line.split("\t")
        if len(f) > 2 and t0 <= float(f[1]) <= t1:
            xyz = np.array([float(x) for x in f[2:2 + 3 * len(names)]]).reshape(-1, 3)
            d.append(np.linalg.norm(xyz[ia] - xyz[ib]) / 1000)
    return float(np.mean(d)), len(d)


def test_scale_factors_masses_inertias_against_opensim(both):
    """Every body's three factors, mass and inertia equal OpenSim's ScaleTool's to
    round-off (track/scale_vs_tool); the factors are not trivially one."""
    ours, theirs, cmp = both
    tol = lookup("track", "scale_vs_tool").rtol
    assert cmp["scale_factor_rel_max"] <= tol, cmp
    assert cmp["mass_rel_max"] <= tol and cmp["inertia_rel_max"] <= tol, cmp
    assert set(theirs["scale_factors"]) == set(ours.factors) - {"ground"}
    spread = [abs(s - 1) for v in theirs["scale_factors"].values() for s in v if s]
    assert min(spread) > 0.01, theirs["scale_factors"]


def test_measured_factor_by_hand_and_manual_scales_replace_measured(both):
    """The pelvis's factor is the mean over the setup's frames (1–2 s, both ends in) of the
    ASIS distance, read here straight from the .trc, over the marker set's ASIS distance
    (both on the pelvis); the femur's is the setup's manual scale (``manualScale`` comes
    after ``measurements``); the patella the setup names is not a body of gait2392."""
    ours, _, _ = both
    root = ET.parse(SETUP).getroot()
    t0, t1 = (float(x) for x in root.find(".//ModelScaler/time_range").text.split())
    exp, n = _trc_distance("R.ASIS", "L.ASIS", t0, t1)
    mset = ET.parse(SCALE / "gait2392_Scale_MarkerSet.xml").getroot()
    loc = {m.get("name"): np.array(m.findtext("location").split(), float)
           for m in mset.iter("Marker")}
    model = np.linalg.norm(loc["R.ASIS"] - loc["L.ASIS"])
    assert n == 61
    tol = lookup("track", "scale_vs_tool").rtol
    assert np.allclose(ours.factors["pelvis"], exp / model, rtol=tol, atol=0)
    manual = {s.findtext("segment").strip(): [float(x) for x in s.findtext("scales").split()]
              for s in root.iter("Scale")}
    assert np.array_equal(ours.factors["femur_r"], manual["femur_r"])
    assert any("patella_r" in x for x in ours.summary["notes"])


def test_masses_kept_in_proportion_to_the_subjects(both):
    """preserve_mass_distribution with a subject mass: every body's mass is the generic
    one times (subject mass / generic total)."""
    ours, _, _ = both
    generic, _ = osim_scale.load(str(GENERIC))
    m0 = {b: float(el.findtext("mass")) for b, el in osim_scale.bodies(generic).items()}
    subject = float(ET.parse(SETUP).getroot().findtext(".//mass"))
    k = subject / sum(m0.values())
    for b, (m, _) in ours.inertial.items():
        assert m == pytest.approx(m0[b] * k, rel=lookup("track", "scale_vs_tool").rtol)


def test_marker_placement_against_opensim(both):
    """At OpenSim's own static pose our placement is OpenSim's to round-off; our static
    pose is the better minimum of the same cost; the placed markers differ by the two
    IKs' convergence only (track/placed_markers_vs_tool_mm)."""
    _, _, cmp = both
    assert cmp["marker_sets_equal"]
    assert cmp["placed_at_their_pose_max_mm"] <= lookup(
        "track", "placement_at_tool_pose_mm").atol, cmp
    assert cmp["static_cost_ours"] <= cmp["static_cost_theirs"], cmp
    assert cmp["placed_marker_max_mm"] <= lookup("track", "placed_markers_vs_tool_mm").atol


def test_against_the_pipelines_stored_scaled_model(both):
    """The stored pipeline model (OutputReference/subject01_simbody.osim): its masses and
    mass centres (track/scale_vs_stored) and its placed markers
    (track/placed_markers_vs_stored_mm)."""
    ours, _, _ = both
    ref, _ = osim_scale.load(str(STORED))
    mine, _ = osim_scale.load(ours.model_path)
    tol = lookup("track", "scale_vs_stored").rtol
    for b, el in osim_scale.bodies(ref).items():
        for tag in ("mass", "mass_center"):
            a = np.array(el.findtext(tag).split(), float)
            o = np.array(osim_scale.bodies(mine)[b].findtext(tag).split(), float)
            assert np.max(np.abs(a - o)) <= tol * np.max(np.abs(a)), (b, tag, a, o)
    stored = {m.name: np.array(m.location) for m in osim_scale.markers(ref, str(STORED))}
    assert set(stored) == {m.name for m in ours.markers}
    mm = max(1000 * np.linalg.norm(np.array(m.location) - stored[m.name])
             for m in ours.markers)
    assert mm <= lookup("track", "placed_markers_vs_stored_mm").atol, mm


def test_unequal_factors_and_volume_masses_against_opensim(tmp_path):
    """Unequal factors on one axis each (a femur's manual 1.1, 0.9, 1.05: OpenSim's
    cylinder rule for its inertia) with the masses scaled by volume (no
    preserve_mass_distribution), the scaler alone: factors, masses and inertias equal
    OpenSim's ScaleTool's (track/scale_vs_tool)."""
    for name in ("gait2392_Scale_MarkerSet.xml", "subject01_static.trc"):
        (tmp_path / name).write_bytes((SCALE / name).read_bytes())
    text = SETUP.read_text()
    edited = re.sub(r"<scales>[^<]*</scales>(\s*<segment> femur_r </segment>)",
                    r"<scales> 1.1 0.9 1.05 </scales>\1", text, count=1)
    edited = edited.replace("<preserve_mass_distribution> true",
                            "<preserve_mass_distribution> false")
    edited = re.sub(r"(<MarkerPlacer name=\"\">\s*(<!--[^>]*-->\s*)?<apply>) true",
                    r"\1 false", edited, count=1)
    assert edited.count("1.1 0.9 1.05") == 1 and "distribution> false" in edited
    setup = tmp_path / "setup.xml"
    setup.write_text(edited)
    ours = scale.run(str(GENERIC), str(setup), str(tmp_path))
    assert ours.placement is None
    theirs = registry.adapter_class("opensim").motion_scale_tool(str(setup), str(GENERIC),
                                                                 str(tmp_path))
    cmp = scale.compare(ours, theirs)
    tol = lookup("track", "scale_vs_tool").rtol
    assert list(ours.factors["femur_r"]) == [1.1, 0.9, 1.05]
    assert max(cmp["scale_factor_rel_max"], cmp["mass_rel_max"], cmp["inertia_rel_max"]) \
        <= tol, cmp


@pytest.mark.parametrize("edit, words", [
    (lambda s: s.replace("<marker_file> subject01_static.trc </marker_file>",
                         "<marker_file> missing_static.trc </marker_file>", 1),
     "missing_static.trc"),
    (lambda s: re.sub(r"<value_type> manual_value </value_type>",
                      "<value_type> from_file </value_type>", s, count=1),
     "from_file"),
])
def test_bad_setup_refused_nothing_written(tmp_path, edit, words):
    """A setup naming a file that does not exist, or an IK task the scaling does not
    support: one line naming the setup and the problem, exit 2, nothing written."""
    for name in ("gait2392_Scale_MarkerSet.xml", "subject01_static.trc"):
        (tmp_path / name).write_bytes((SCALE / name).read_bytes())
    bad = tmp_path / "setup.xml"
    text = SETUP.read_text()
    assert edit(text) != text
    bad.write_text(edit(text))
    walk = DATA / "gait2392_walk1"
    out = tmp_path / "out"
    p = run_cli("track", GENERIC, walk / "subject01_walk1.trc", "--loads",
                walk / "subject01_walk1_grf.xml", "--scale", bad, "--out", out, "--quiet")
    assert p.returncode == 2 and not out.exists(), p.stdout + p.stderr
    err = [x for x in p.stderr.splitlines() if x.startswith("harness: error:")]
    assert len(err) == 1 and str(bad) in err[0] and words in err[0], p.stderr
