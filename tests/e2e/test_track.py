"""`harness track` on OpenSim's gait2392 walking trial (data/opensim_models/gait2392_walk1,
subject01 walk1, a 19-frame slice, the kinematics low-passed at 6 Hz before the ID on
both sides), against OpenSim's own InverseKinematicsTool and
InverseDynamicsTool run live on the same inputs; summary.json's keys against the exit
code; bad input refused in one line with nothing written.

Figures of the whole trial: bench/track_gait2392.py."""
from __future__ import annotations

import dataclasses
import html as html_lib
import json
import re
import warnings
from dataclasses import replace

import numpy as np
import pytest

from harness.capture.ik import Held
from harness.capture.motion_files import (
    ExternalForce,
    Table,
    read_external_loads,
    read_table,
    table_text,
)
from harness.core import figures
from harness.core.tolerances import lookup
from harness.model import registry
from harness.model.osim_import import load_osim_with_notes
from harness.model.prepared import PreparedModel
from harness.track import dynamics, reduce, replay
from harness.track.run import Coordinates, _rel
from tests.conftest import ROOT, run_cli

DATA = ROOT / "data" / "opensim_models" / "gait2392_walk1"
MODEL = DATA / "subject01_simbody.osim"
TRC = DATA / "subject01_walk1.trc"
LOADS = DATA / "subject01_walk1_grf.xml"
ARM = ROOT / "data" / "opensim_models" / "arm26.osim"
KEYS = ("marker_rmse_mm", "marker_max_mm", "residual_force_mean_N",
        "residual_moment_mean_Nm", "residual_force_peak_N", "residual_moment_peak_Nm",
        "ik_vs_opensim_rms_deg", "id_vs_opensim_rel", "contact_label", "engines_replayed",
        "fit_wall_s")


@pytest.fixture(scope="module")
def walk(tmp_path_factory):
    out = tmp_path_factory.mktemp("track") / "walk"
    p = run_cli("track", MODEL, TRC, "--loads", LOADS, "--start", "0.5", "--end", "0.8",
                "--lowpass-hz", "6", "--out", out, "--json", out.parent / "track.json",
                "--quiet")
    return out, p


def test_summary_keys_units_and_exit_code(walk):
    out, p = walk
    assert p.returncode in (0, 1), p.stdout + p.stderr
    s = json.loads((out / "summary.json").read_text())
    for k in KEYS:
        assert k in s, k
    assert s["exit_code"] == p.returncode and s["frames"] == 19
    assert s["kinematics_lowpass_hz"] == 6
    doc = json.loads((out.parent / "track.json").read_text())  # --json: the same, and more
    assert doc["error"] is None and {k: doc[k] for k in s} == s
    assert s["contact_label"] == "measured"
    assert s["residual_reduction"] is not None and s["engines_replayed"] is not None
    assert not s["not_run"], s["not_run"]
    assert not [c for c in s["checks"] if c["ok"] is None], s["checks"]
    html = (out / "index.html").read_text()
    assert f'data-exit-code="{p.returncode}"' in html
    # every file the report links is written, and every file written is linked
    linked = set(re.findall(r'<a href="([^"#/:]+)"', html))
    assert linked == {f.name for f in out.iterdir()} - {"index.html", "plotly.min.js"}, linked
    assert ("verdict-failed" in html) == (p.returncode == 1)
    assert "NOT run" not in p.stdout, p.stdout
    # the exit code follows from the checks, each reduction check from its figure
    assert (s["exit_code"] == 0) == all(c["ok"] is True for c in s["checks"])
    r = s["residual_reduction"]
    for name, value, tol in (
            ("residual force after reduction, mean [N]", s["residual_force_mean_N"],
             "rra_force_mean_N"),
            ("residual moment after reduction, mean [N·m]", s["residual_moment_mean_Nm"],
             "rra_moment_mean_Nm"),
            ("marker RMSE after reduction [mm]", r["marker_rmse_mm"], "rra_marker_rmse_mm")):
        c = next(c for c in s["checks"] if c["name"] == name)
        assert c["value"] == value and c["ok"] == (value <= lookup("track", tol).atol), c
    # the residuals before the reduction are the pelvis's generalized forces in id.sto
    tab = read_table(str(out / "id.sto"))
    F, M = _pelvis(tab)
    assert s["residual_force_mean_before_N"] == np.mean(np.linalg.norm(F, axis=1))
    assert s["residual_moment_peak_before_Nm"] == np.max(np.linalg.norm(M, axis=1))


def _stored_ik(name, rows):
    """The walking model in Pinocchio and the pipeline's stored IK result (OutputReference)
    over ``rows``: (spec, import notes, adapter, held couplings, coordinates, t [s],
    X (F, n) OpenSim coordinates [rad | m], Q (F, nq) canonical)."""
    spec, notes = load_osim_with_notes(str(MODEL), ranges_as_limits=True)
    adapter = registry.adapter_class("pinocchio")(PreparedModel(spec, name))
    held = Held.of(adapter.layout, spec.couplings)
    coords = Coordinates(adapter, spec, {})
    ref = read_table(str(DATA / "subject01_walk1_ik.mot"))
    t = ref.t[rows]
    X = np.stack([ref.column(n, "ik.mot") for n in coords.names], axis=1)[rows]
    X[:, coords.rotational] = np.radians(X[:, coords.rotational])
    return spec, notes, adapter, held, coords, t, X, coords.to_canonical(
        X, coords.names, adapter.nq, held)


def _pelvis(tab):
    """(F (F, 3) [N], M (F, 3) [N·m]): the pelvis's generalized forces of an ID table."""
    F = np.stack([tab.column(f"pelvis_t{a}_force", "id") for a in "xyz"], axis=1)
    M = np.stack([tab.column(f"pelvis_{a}_moment", "id")
                  for a in ("tilt", "list", "rotation")], axis=1)
    return F, M


def test_reduction_residuals_recomputed_by_opensims_id(walk, tmp_path):
    """The reduced kinematics (rra_q.sto) on the adjusted model the command wrote
    (adjusted.osim): OpenSim's InverseDynamicsTool gives the generalized forces of
    rra_id.sto, and its pelvis residuals are the summary's after-reduction figures, smaller
    than before. (On the input model, the same kinematics are off: the comparison sees the
    adjustment.)"""
    out, _ = walk
    s = json.loads((out / "summary.json").read_text())
    assert s["residual_reduction"]["adjusted_model_file"] == "adjusted.osim"
    model = out / "adjusted.osim"
    q = read_table(str(out / "rra_q.sto"))
    tools = registry.adapter_class(registry.providing("motion_id_tool")[0])
    d = tools.motion_id_tool(str(model), str(out / "rra_q.sto"), str(LOADS), float(q.t[0]),
                             float(q.t[-1]), str(tmp_path))
    ours = read_table(str(out / "rra_id.sto"))
    theirs = np.stack([d["tau"][:, d["labels"].index(c)] for c in ours.columns], axis=1)
    rtol = lookup("track", "id_vs_tool").rtol
    assert _rel(ours.data, theirs) <= rtol
    F, M = _pelvis(Table(d["t"], tuple(d["labels"]), d["tau"], False))
    scale = rtol * np.max(np.abs(theirs))
    assert abs(np.mean(np.linalg.norm(F, axis=1)) - s["residual_force_mean_N"]) <= scale
    assert abs(np.mean(np.linalg.norm(M, axis=1)) - s["residual_moment_mean_Nm"]) <= scale
    assert abs(np.max(np.linalg.norm(F, axis=1)) - s["residual_force_peak_N"]) <= scale
    assert s["residual_force_mean_N"] < 0.1 * s["residual_force_mean_before_N"]
    assert s["residual_moment_mean_Nm"] < 0.1 * s["residual_moment_mean_before_Nm"]
    d0 = tools.motion_id_tool(str(MODEL), str(out / "rra_q.sto"), str(LOADS), float(q.t[0]),
                              float(q.t[-1]), str(tmp_path))
    before = np.stack([d0["tau"][:, d0["labels"].index(c)] for c in ours.columns], axis=1)
    assert _rel(ours.data, before) > rtol


def test_adjusted_model_mass_properties_read_by_opensim(walk):
    """adjusted.osim as OpenSim reads it: every body's mass and inertia are the input's
    times the summary's mass scale (each mass the summary's mass_after_kg), its total mass
    the summary's mass_total_after_kg and the input's plus mass_change_kg, the torso's mass
    centre the summary's com_after_m, the input's plus com_shift_m; and the file is the
    input's text but for those elements."""
    out, _ = walk
    r = json.loads((out / "summary.json").read_text())["residual_reduction"]
    tools = registry.adapter_class(registry.providing("motion_model_masses")[0])
    before, after = (tools.motion_model_masses(str(m)) for m in (MODEL, out / "adjusted.osim"))
    s, body = r["mass_scale"], r["com_body"]
    assert body == "torso" and s != 1.0  # the adjustment is there to see
    assert set(after["bodies"]) == set(before["bodies"])
    for name, b in after["bodies"].items():
        b0 = before["bodies"][name]
        assert b["mass_kg"] == b0["mass_kg"] * s == r["mass_after_kg"].get(name, 0.0), name
        assert b["inertia_kgm2"] == [x * s for x in b0["inertia_kgm2"]], name
        if name != body:
            assert b["com_m"] == b0["com_m"], name
    rtol = lookup("model_identity", "total_mass").rtol  # summation order only
    m0, m1 = before["total_mass_kg"], after["total_mass_kg"]
    assert abs(m1 - r["mass_total_after_kg"]) <= rtol * m1
    assert abs(m0 - r["mass_total_before_kg"]) <= rtol * m0
    assert abs(m1 - m0 - r["mass_change_kg"]) <= rtol * m1
    com0, com1 = before["bodies"][body]["com_m"], after["bodies"][body]["com_m"]
    assert com1 == r["com_after_m"] and com0 == r["com_before_m"]
    assert np.subtract(com1, com0).tolist() == r["com_shift_m"] != [0.0, 0.0, 0.0]
    changed = [(a, b) for a, b in zip(MODEL.read_text().splitlines(),
                                      (out / "adjusted.osim").read_text().splitlines())
               if a != b]
    assert len(MODEL.read_text().splitlines()) == len(
        (out / "adjusted.osim").read_text().splitlines())
    tags = {re.match(r"\s*<(\w+)>", a).group(1) for a, _ in changed}
    assert tags == {"mass", "inertia", "mass_center"}, tags


def _pelvis_wrench(adapter, held, t, Q, loads, coords):
    """AppliedLoads: ``loads`` and one more force on the pelvis (ground axes, at its
    origin) whose wrench cancels the pelvis's generalized forces of Q on ``adapter``'s
    model in every frame."""
    tau = dynamics.inverse_dynamics(adapter, held, t, Q, loads)
    root = coords.iv[:6]
    W = np.stack([np.linalg.solve(adapter.frame_jacobian(q, "pelvis")[:, root].T, tau[f, root])
                  for f, q in enumerate(Q)])
    extra = ExternalForce("pelvis_wrench", "pelvis", "ground", "pelvis", "w", "", "wt")
    return dynamics.AppliedLoads((*loads.forces, extra), np.concatenate(
        [loads.F, W[None, :, :3]]), np.concatenate([loads.p, np.zeros((1, len(t), 3))]),
        np.concatenate([loads.T, W[None, :, 3:]]))


def test_reduced_kinematics_inside_opensims_ranges(walk):
    """rra_q.sto against every coordinate's range as OpenSim reads the model: inside, and
    the summary's report and check say so."""
    import opensim  # the ranges read by OpenSim itself, not by our import

    out, _ = walk
    s = json.loads((out / "summary.json").read_text())
    r = s["residual_reduction"]
    assert r["outside_range"] == {"frames": 0, "coordinates": {}}
    (c,) = [c for c in s["checks"] if "outside the coordinates' ranges" in c["name"]]
    assert c["value"] == 0 and c["ok"] is True
    q = read_table(str(out / "rra_q.sto"))
    model = opensim.Model(str(MODEL))  # kept: the set below is the model's own
    cs = model.getCoordinateSet()
    for n in q.columns:
        x = q.column(n, "rra_q.sto")
        assert cs.get(n).getRangeMin() <= x.min() and x.max() <= cs.get(n).getRangeMax(), n


def test_reduction_holds_a_range_it_would_leave():
    """The stored IK kinematics of 12 frames; pelvis_rotation's and lumbar_rotation's ranges
    narrowed to the IK's own extent over them. Unbounded (the model's own ±90° ranges), the
    kinematics step takes them out of the narrowed ranges; on the narrowed model it keeps
    every coordinate inside (some at a bound) and still cuts the residuals, and the range
    report says which coordinates left, by how much, and when none did."""
    spec, _, adapter, held, coords, t, X, Q = _stored_ik("rra_range", slice(60, 72))
    names = ("pelvis_rotation", "lumbar_rotation")
    k = [coords.names.index(n) for n in names]
    lo, hi = Q[:, coords.iq[k]].min(axis=0), Q[:, coords.iq[k]].max(axis=0)
    joints = tuple(replace(j, lower=float(lo[names.index(j.name)]),
                           upper=float(hi[names.index(j.name)])) if j.name in names else j
                   for j in spec.joints)
    narrow = registry.adapter_class("pinocchio")(PreparedModel(replace(spec, joints=joints),
                                                               "rra_range_narrow"))
    forces, _, table = read_external_loads(str(LOADS))
    loads = dynamics.AppliedLoads.at(forces, table, t)
    sigma = reduce.tracking_sigma(spec, coords.names, coords.rotational, coords.scale)
    runs = {}
    for label, a in (("wide", adapter), ("narrow", narrow)):
        p = reduce.Problem(a, held, coords.iq, coords.iv, np.arange(6), coords.rotational[:6],
                           t, loads)
        Qr, fig = reduce.kinematics_step(p, Q, sigma)
        runs[label] = Qr, fig, reduce.root_tau(p, Qr), reduce.root_tau(p, Q)
    Qw, _, _, _ = runs["wide"]
    wide = reduce.outside_range(narrow, Qw, {})
    assert set(wide["coordinates"]) & set(names) and wide["frames"] > 0, wide
    for n, d in wide["coordinates"].items():  # the report's amounts, recomputed
        j = names.index(n)
        x = Qw[:, coords.iq[k[j]]]
        assert d["max"] == np.degrees(max(lo[j] - x.min(), x.max() - hi[j])), n
        assert d["frames"] == int(np.sum((x < lo[j]) | (x > hi[j]))) and d["unit"] == "deg"
    Qn, fig, after, before = runs["narrow"]
    x = Qn[:, coords.iq[k]]
    assert np.all((lo <= x) & (x <= hi)), (x - lo, hi - x)
    assert reduce.outside_range(narrow, Qn, {}) == {"frames": 0, "coordinates": {}}
    assert fig["values_at_a_range_bound"] > 0
    assert np.linalg.norm(after) < 0.1 * np.linalg.norm(before)


@pytest.mark.parametrize("case", ["com", "mass"])
def test_reduction_recovers_a_known_mass_centre_and_mass(case):
    """A model B: the walking model with its torso's mass centre moved by a known offset
    (or every mass and inertia times 1.02); loads: the measured ones and a pelvis wrench
    that makes B's residuals zero at every frame of the stored IK kinematics. The
    reduction of the original model A under those loads recovers the offset (its
    horizontal components) or the mass scale."""
    spec, _, adapter, held, coords, t, X, Q = _stored_ik("rra_a", slice(60, 79))
    forces, _, table = read_external_loads(str(LOADS))
    delta = np.array([0.03, 0.0, -0.025])
    if case == "com":
        bodies = tuple(replace(b, com=tuple(np.add(b.com, delta))) if b.name == "torso"
                       else b for b in spec.bodies)
    else:
        bodies = tuple(replace(b, mass=1.02 * b.mass, inertia=tuple(1.02 * np.array(
            b.inertia))) for b in spec.bodies)
    spec_b = replace(spec, bodies=bodies)
    adapter_b = registry.adapter_class("pinocchio")(PreparedModel(spec_b, "rra_b"))
    loads = _pelvis_wrench(adapter_b, held, t, Q, dynamics.AppliedLoads.at(forces, table, t),
                           coords)
    zero = dynamics.inverse_dynamics(adapter_b, held, t, Q, loads)[:, coords.iv[:6]]
    assert np.max(np.abs(zero)) < 1e-6  # the construction: B needs no residual
    p = reduce.Problem(adapter, held, coords.iq, coords.iv, np.arange(6),
                       coords.rotational[:6], t, loads)
    if case == "mass":
        s, fig = reduce.mass_step(p, spec, Q)
        tol = lookup("track", "rra_mass_recovery").rtol
        assert abs(s - 1.02) <= tol * 1.02, s
        total = sum(b.mass for b in spec.bodies)
        assert abs(fig["mass_change_kg"] - 0.02 * total) <= tol * 1.02 * total
        return
    _, fig = reduce.com_step(p, spec, "torso", Q)
    shift = np.array(fig["com_shift_m"])
    tol = lookup("track", "rra_com_recovery").atol
    assert np.max(np.abs(shift[[0, 2]] - delta[[0, 2]])) <= tol, shift
    before, after = fig["mean_moments_before_com_Nm"], fig["mean_moments_after_com_Nm"]
    assert max(map(abs, after[:2])) < 1e-3 * max(map(abs, before[:2])), (before, after)


def test_ik_against_opensims_ik(walk):
    out, p = walk
    s = json.loads((out / "summary.json").read_text())
    assert s["reference_tool"]["available"], s["reference_tool"]
    assert s["reference_tool"]["engine"] == "opensim"
    assert s["ik_vs_opensim_rms_deg"] <= lookup("track", "ik_vs_tool_deg").atol
    assert s["marker_rmse_mm"] <= s["reference_tool"]["marker_rmse_mm"]
    # and the files: our ik.mot (degrees) against OpenSim's, coordinate by coordinate
    ours, theirs = read_table(str(out / "ik.mot")), read_table(str(out / "opensim_ik.mot"))
    assert ours.in_degrees and theirs.in_degrees
    for n in ("hip_flexion_r", "knee_angle_l", "ankle_angle_r", "lumbar_extension"):
        d = ours.column(n, "ik.mot") - theirs.column(n, "opensim_ik.mot")
        assert np.sqrt(np.mean(d ** 2)) <= lookup("track", "ik_vs_tool_deg").atol, n


def test_ik_against_the_pipelines_stored_ik(walk):
    """The standard pipeline's own IK result (OutputReference/subject01_walk1_ik.mot), same
    frames: our IK with the setup's marker weights and coordinate tasks reproduces it."""
    out, _ = walk
    s = json.loads((out / "summary.json").read_text())
    assert set(s["coordinate_tasks"]) == {"subtalar_angle_r", "mtp_angle_r",
                                          "subtalar_angle_l", "mtp_angle_l"}
    ours = read_table(str(out / "ik.mot"))
    ref = read_table(str(DATA / "subject01_walk1_ik.mot"))
    rows = [int(np.argmin(np.abs(ref.t - x))) for x in ours.t]
    assert np.max(np.abs(ref.t[rows] - ours.t)) < 1e-6
    worst = 0.0
    for n in s["coordinates"]:
        if n.startswith("pelvis_t"):
            continue
        d = ours.column(n, "ik.mot") - ref.column(n, "ref")[rows]
        worst = max(worst, float(np.sqrt(np.mean(d ** 2))))
    assert worst <= lookup("track", "ik_vs_stored_deg").atol, worst


def test_id_against_opensims_id_in_the_command(walk):
    out, _ = walk
    s = json.loads((out / "summary.json").read_text())
    assert s["id_vs_opensim_rel"] <= lookup("track", "id_vs_tool").rtol
    ours, theirs = read_table(str(out / "id.sto")), read_table(str(out / "opensim_id.sto"))
    a = np.stack([ours.column(c, "id.sto") for c in theirs.columns], axis=1)
    assert _rel(a, theirs.data) <= lookup("track", "id_vs_tool").rtol


def test_id_on_the_reference_kinematics_against_opensims_id(tmp_path):
    """The standard pipeline's own IK result (OutputReference) as the kinematics, 12 frames:
    our ID (Pinocchio) and OpenSim's InverseDynamicsTool on the same coordinates and loads.
    Without the loads ours is far off: the comparison sees them."""
    spec, notes, adapter, held, coords, t, X, Q = _stored_ik("track_test", slice(60, 72))
    q_file = tmp_path / "q.sto"
    q_file.write_text(table_text("q", t, coords.names, coords.to_osim(Q), False))
    tools = registry.adapter_class(registry.providing("motion_id_tool")[0])
    d = tools.motion_id_tool(str(MODEL), str(q_file), str(LOADS), float(t[0]),
                                       float(t[-1]), str(tmp_path))
    forces, _, table = read_external_loads(str(LOADS))
    loads = dynamics.AppliedLoads.at(forces, table, t)
    cols = [f"{n}_{'moment' if r else 'force'}" for n, r in zip(coords.names, coords.rotational)]
    theirs = d["tau"][:, [d["labels"].index(c) for c in cols]]
    for with_loads, ok in ((loads, True), (None, False)):
        tau = dynamics.inverse_dynamics(adapter, held, t, Q, with_loads)[:, coords.iv]
        rel = _rel(tau, theirs)
        assert (rel <= lookup("track", "id_vs_tool").rtol) is ok, rel


def test_derivatives_exact_on_a_quadratic():
    """The natural quintic reproduces a quadratic exactly (its 3rd and 4th derivatives
    vanish at the ends, as the natural conditions ask): V and A analytic."""
    t = np.linspace(0.0, 0.3, 11) + 0.01 * np.sin(np.arange(11))  # uneven spacing
    c = np.array([[0.3, -1.2, 2.5], [1.0, 0.4, -3.0]])  # (a, b, c) per column
    Q = np.stack([a + b * t + k * t ** 2 for a, b, k in c], axis=1)
    V, A = dynamics.derivatives(t, Q)
    rtol = lookup("track", "spline_derivatives").rtol
    for got, want in ((V, np.stack([b + 2 * k * t for _, b, k in c], 1)),
                      (A, np.stack([2 * k + 0 * t for _, _, k in c], 1))):
        assert np.max(np.abs(got - want)) <= rtol * np.max(np.abs(want))


def _trc(path, labels, rows=8):
    head = ["PathFileType\t4\t(X/Y/Z)\tx.trc",
            "DataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits",
            f"60\t60\t{rows}\t{len(labels)}\tmm",
            "Frame#\tTime\t" + "\t\t\t".join(labels), "\t\t" + "\t".join(
                f"X{i}\tY{i}\tZ{i}" for i in range(1, len(labels) + 1)), ""]
    body = [f"{i + 1}\t{i / 60:.5f}\t" + "\t".join("1.0" for _ in range(3 * len(labels)))
            for i in range(rows)]
    path.write_text("\n".join(head + body) + "\n")
    return path


def _loads(tmp_path, body):
    (tmp_path / "f.mot").write_text("f\nversion=1\nendheader\ntime\tfx\tfy\tfz\n"
                                    "0\t1\t2\t3\n1\t1\t2\t3\n")
    x = tmp_path / "loads.xml"
    x.write_text(f"""<?xml version="1.0"?><OpenSimDocument><ExternalLoads name="l"><objects>
<ExternalForce name="F1"><applied_to_body>{body}</applied_to_body>
<force_identifier>f</force_identifier></ExternalForce></objects>
<datafile>f.mot</datafile></ExternalLoads></OpenSimDocument>""")
    return x


@pytest.mark.parametrize("case", ["missing_model", "garbage_trc", "marker_not_in_model",
                                  "loads_body_not_in_model", "loads_datafile_missing",
                                  "nonphysical_inertia"])
def test_bad_input_one_line_exit_2_nothing_written(tmp_path, case):
    marks = ["r_acromion", "r_humerus_epicondyle"]
    model, trc, extra = ARM, _trc(tmp_path / "m.trc", marks), []
    if case == "missing_model":
        model = tmp_path / "nope.osim"
        named, what = model, "does not exist|no such file"
    elif case == "garbage_trc":
        trc.write_text("hello\n")
        named, what = trc, "not a .trc"
    elif case == "marker_not_in_model":
        trc = _trc(tmp_path / "m.trc", [*marks, "Nose"])
        named, what = trc, "marker Nose is not a marker of"
    elif case == "nonphysical_inertia":  # Ixx > Iyy + Izz: no mass distribution has it
        text = ARM.read_text()
        good = "<inertia>0.01481 0.0045510000000000004 0.013193 0 0 0</inertia>"
        assert text.count(good) == 1
        model = tmp_path / "arm.osim"
        model.write_text(text.replace(good, "<inertia>0.04 0.0045 0.013 0 0 0</inertia>"))
        # track has no --repair-inertia (OpenSim's tools read the file as written)
        named, what = model, r"r_humerus.*corrected in the file(?!.*replaces)"
    elif case == "loads_body_not_in_model":
        named = _loads(tmp_path, "calcn_r")
        extra, what = ["--loads", named], "applied_to_body calcn_r is not a body of"
    else:
        named = _loads(tmp_path, "r_humerus")
        (tmp_path / "f.mot").unlink()
        extra, what = ["--loads", named], "datafile f.mot does not exist"
    out = tmp_path / "out"
    p = run_cli("track", model, trc, *extra, "--out", out, "--quiet")
    assert p.returncode == 2, p.stdout + p.stderr
    lines = [x for x in p.stderr.splitlines() if x.startswith("harness: error:")]
    assert len(lines) == 1 and str(named) in lines[0], p.stderr
    assert re.search(what, lines[0], re.I), lines[0]
    assert not out.exists()


def test_an_arm_fixed_to_the_ground_recovers_its_known_motion(tmp_path):
    """Any OpenSim model: arm26 (two coordinates, attached to the ground, no loads), its
    markers placed at a known q(t) by Pinocchio on the imported model. Our IK recovers
    q(t); OpenSim's IK agrees; our ID equals OpenSim's ID tool on the same q; no residual
    (the root does not translate), said with its reason."""
    spec, _ = load_osim_with_notes(str(ARM), ranges_as_limits=True)
    adapter = registry.adapter_class("pinocchio")(PreparedModel(spec, "arm_truth"))
    labels = [f.name for f in spec.frames]
    t = np.arange(14) / 60.0
    Q = np.stack([0.5 + 0.4 * np.sin(2 * np.pi * t), 1.0 + 0.5 * np.sin(1.6 * np.pi * t + 0.3)],
                 axis=1)
    Y = np.stack([adapter.frame_poses(q, labels)[:, :3] for q in Q]) * 1000.0  # mm
    head = ["PathFileType\t4\t(X/Y/Z)\tarm.trc",
            "DataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\tOrigDataRate\t"
            "OrigDataStartFrame\tOrigNumFrames",
            f"60\t60\t{len(t)}\t{len(labels)}\tmm\t60\t1\t{len(t)}",
            "Frame#\tTime\t" + "\t\t\t".join(labels),
            "\t\t" + "\t".join(f"X{i}\tY{i}\tZ{i}" for i in range(1, len(labels) + 1)), ""]
    rows = [f"{i + 1}\t{ti:.9f}\t" + "\t".join(f"{x:.9f}" for x in Y[i].ravel())
            for i, ti in enumerate(t)]
    trc = tmp_path / "arm.trc"
    trc.write_text("\n".join(head + rows) + "\n")
    out = tmp_path / "out"
    p = run_cli("track", ARM, trc, "--out", out, "--quiet")
    assert p.returncode == 1, p.stdout + p.stderr
    s = json.loads((out / "summary.json").read_text())
    ik = read_table(str(out / "ik.mot"))
    got = np.radians(np.stack([ik.column(n, "ik.mot") for n in s["coordinates"]], axis=1))
    assert np.max(np.abs(got - Q)) <= lookup("track", "ik_truth_recovery").atol
    assert s["ik_vs_opensim_rms_deg"] <= lookup("track", "ik_vs_tool_deg").atol
    assert s["id_vs_opensim_rel"] <= lookup("track", "id_vs_tool").rtol
    assert s["residual_force_mean_N"] is None and s["residual_moment_peak_Nm"] is None
    assert "attached to the ground" in s["residual_force_reason"]
    assert s["residual_reduction"] is None
    assert "attached to the ground" in s["not_run"]["residual_reduction"]
    assert s["contact_label"] is None


def _double_engines():
    """The default engines available here that compute in double precision (asked of the
    registry and the adapters' precision, not of the command)."""
    return [e for e in registry.default_names() if registry.probe(e).available
            and getattr(registry.adapter_class(e), "precision", "float64") == "float64"]


def test_replay_in_every_engine_summary_and_exit_code(walk):
    """The walking slice replayed open loop in every double engine, segment by segment:
    each engine within the bound of the tracked q in every segment, every engine pair
    within the replay stage's band, the segments tiling the whole window and no longer
    than the horizon; engines_replayed, the check and the exit code say the same."""
    out, p = walk
    s = json.loads((out / "summary.json").read_text())
    rep = s["replay"]
    engines = _double_engines()
    assert rep["engines"] == engines and len(engines) >= 2
    bound = lookup("track", "replay_vs_tracked").atol
    band = lookup("replay", "trajectory").atol
    segs = rep["segments"]
    assert segs[0]["t_s"][0] == s["t_start_s"] and segs[-1]["t_s"][1] == s["t_end_s"]
    for a, b in zip(segs, segs[1:]):
        assert a["t_s"][1] == b["t_s"][0]
    for seg in segs:
        assert seg["t_s"][1] - seg["t_s"][0] <= rep["horizon_s"] + 1e-12
        assert set(seg["engines"]) == set(engines)
        for e, d in seg["engines"].items():
            assert d["q_dev_max"] <= bound, (seg["case"], e, d)
            assert d["passed"] and d["records_passed"], (seg["case"], e, d)
        assert len(seg["pairs"]) == len(engines) * (len(engines) - 1) // 2
        for pair, d in seg["pairs"].items():
            assert d["status"] == "passed" and d["max_abs"] <= band, (seg["case"], pair, d)
    assert s["engines_replayed"] == engines
    assert s["replay_window_s"] == [s["t_start_s"], s["t_end_s"]]
    (row,) = [c for c in s["checks"] if c["name"].startswith("replay in every engine")]
    assert row["ok"] is True and f"t = {s['t_start_s']:.4f}–{s['t_end_s']:.4f} s" in row["name"]
    assert f"{len(segs)} segment(s)" in row["name"]
    assert row["value"] == max(d["q_dev_max"] for g in segs for d in g["engines"].values())
    assert s["exit_code"] == p.returncode == 1  # only residual reduction keeps it from 0
    html = (out / "index.html").read_text()
    assert 'id="replay"' in html and 'id="track-replay"' in html
    specs = [json.loads(html_lib.unescape(m)) for m in re.findall(r'data-spec="([^"]*)"', html)]
    (chart,) = [c for c in specs if "replayed in each engine" in c["layout"]["title"]["text"]]
    order = figures.engine_order(registry.engine_names(), engines)
    style = {tr["name"]: tr["line"]["color"] for tr in chart["data"]}
    for e in engines:  # one trace per engine, in the project's colour of that engine
        assert style[e] == figures.engine_style(e, order)[0], e
    assert "tracked (IK)" in style
    assert chart["layout"]["xaxis"]["title"]["text"] == "time [s]"
    assert chart["layout"]["yaxis"]["title"]["text"].endswith(("[deg]", "[mm]"))


def test_replay_of_our_torques_reproduces_a_known_motion_and_others_fail(tmp_path):
    """arm26 at a known q(t): the tracked motion's replay under our ID (every double
    engine, one segment) stays within the bound of the tracked q, and of the known q(t)
    itself (the spline through the frames is that close to it); the same torques one
    frame later take it far outside the bound (the check can fail)."""
    spec, _ = load_osim_with_notes(str(ARM), ranges_as_limits=True)
    model = PreparedModel(spec, "arm_replay")
    adapter = registry.adapter_class("pinocchio")(model)
    coords = Coordinates(adapter, spec, {})
    t = np.arange(10) / 60.0

    def truth(x):
        return np.stack([0.5 + 0.4 * np.sin(2 * np.pi * x),
                         1.0 + 0.5 * np.sin(1.6 * np.pi * x + 0.3)], axis=1)

    tr = replay.tracked(adapter, None, t, truth(t), [], None)
    whole = float(t[-1] - t[0])
    engines = _double_engines()
    bound = lookup("track", "replay_vs_tracked").atol
    (seg,), series = replay.replay_segments(model, tr, whole, engines, coords, lambda m: None)
    assert set(seg["engines"]) == set(engines)
    for e, d in seg["engines"].items():
        assert d["passed"] and d["q_dev_max"] <= bound, (e, d)
    for pair, d in seg["pairs"].items():
        assert d["max_abs"] <= lookup("replay", "trajectory").atol, pair
    j = coords.names.index(series["coordinate"])
    for e, (tt, y) in series["engines"].items():  # against the known motion, not our spline
        tt, y = np.asarray(tt), np.asarray(y)
        keep = np.isfinite(y)
        assert np.max(np.abs(y[keep] - truth(tt[keep])[:, j])) <= bound, e
    late = dataclasses.replace(tr, tau=np.roll(tr.tau, replay.KNOTS_PER_FRAME, axis=0))
    (bad,), _ = replay.replay_segments(model, late, whole, ["pinocchio"], coords,
                                       lambda m: None)
    assert bad["engines"]["pinocchio"]["q_dev_max"] > 10 * bound
    assert not bad["engines"]["pinocchio"]["passed"]


def test_replay_horizon_halves_when_every_engine_diverges_silently(capfd):
    """arm26 at a known q(t) over 9 frame intervals, our ID's torques times 1e8 from the
    sixth frame on: open loop, every engine's horizon run over the whole window leaves
    the finite numbers, so the horizon is measured again over the first half, in whole
    frame intervals (4 of the 9; the controls' knots come P to an interval), whose
    controls are our ID's alone: a finite horizon shorter than the window, the window
    still tiled into segments, the later ones (diverging again) without a trajectory;
    no warning raised and nothing printed (a diverging run is an expected outcome)."""
    spec, _ = load_osim_with_notes(str(ARM), ranges_as_limits=True)
    model = PreparedModel(spec, "arm_diverge")
    adapter = registry.adapter_class("pinocchio")(model)
    coords = Coordinates(adapter, spec, {})
    t = np.arange(10) / 60.0
    Q = np.stack([0.5 + 0.4 * np.sin(2 * np.pi * t), 1.0 + 0.5 * np.sin(1.6 * np.pi * t)],
                 axis=1)
    tr = replay.tracked(adapter, None, t, Q, [], None)
    tau = tr.tau.copy()
    tau[5 * replay.KNOTS_PER_FRAME:] *= 1e8
    blown = dataclasses.replace(tr, tau=tau)
    engines = _double_engines()
    capfd.readouterr()  # the model import's notes are not the replay's
    said = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        H, windows, span = replay.horizon(model, blown, engines, said.append)
        segs, _ = replay.replay_segments(model, blown, H, engines, coords, said.append)
    whole = float(t[-1] - t[0])
    assert any("raised; measured again over its first half" in m for m in said), said
    assert np.isfinite(H) and 0 < H <= span < whole, (H, span)
    assert set(windows) == set(engines) and min(windows.values()) == H, windows
    assert len(segs) >= 2 and segs[0]["t_s"][0] == t[0] and segs[-1]["t_s"][1] == t[-1]
    assert all(s["t_s"][1] - s["t_s"][0] <= H + 1e-12 for s in segs)
    assert set(segs[0]["engines"]) == set(engines) and not segs[-1]["engines"]
    assert not [str(w.message) for w in caught]
    out, err = capfd.readouterr()
    assert err == "", err
