"""`harness osim-export` end to end on the bundled capture's quick swing fit (the shared
``quick_swing`` fixture): the export's files load in OpenSim without a warning; the
exported model posed by swing.mot puts its markers where the harness's fitted model puts
them, turned into OpenSim's y-up ground; OpenSim's own InverseKinematicsTool, run from
ik_setup.xml as written, keeps the right hand on the club (the grip constraint), keeps
every coordinate in its range and reaches a marker RMSE no worse than the fit's; OpenSim's
own InverseDynamicsTool, run from id_setup.xml with the exported ExternalLoads, gives the
harness's generalized forces (its pelvis residual among them). Thresholds:
harness/core/tolerances.py (swing/osim_*). Bad input: one line, exit 2, nothing
written."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import opensim as osim
import pytest
from conftest import ROOT, run_cli

from fixtures.golfers import GRIP_LOOP
from harness.core.tolerances import lookup
from harness.model import registry
from harness.model.osim_export import FILES, MOTION_OVERSAMPLE, MOTION_PAD, Y_UP, read_swing
from harness.model.prepared import PreparedModel

TOOLS = ROOT / "tests" / "support" / "osim_tools.py"


@pytest.fixture(scope="module")
def exported(quick_swing, tmp_path_factory):
    base = tmp_path_factory.mktemp("osim_export")
    _, swing, p = quick_swing
    assert p.returncode in (0, 1), p.stderr  # 1: a swing check not met; the fit exists
    assert (swing / "fit" / "trajectory.npz").is_file(), p.stderr
    out = base / "osim"
    p = run_cli("osim-export", swing, "--out", out, "--json", base / "s.json")
    assert p.returncode == 0, p.stdout + p.stderr
    assert sorted(x.name for x in out.iterdir()) == sorted(FILES)
    return swing, out, json.loads((base / "s.json").read_text())


@pytest.fixture(scope="module")
def opensim_tools(exported, tmp_path_factory):
    """OpenSim's own tools run from the export's setup files, in a copy of the folder (the
    tools write their results beside them), in a separate interpreter."""
    import shutil

    swing, out, _ = exported
    run = tmp_path_factory.mktemp("osim_tools") / "osim"
    shutil.copytree(out, run)
    data = read_swing(swing)
    grip = {f.name: f.body for f in data["spec"].frames}
    args = [grip[GRIP_LOOP[0]], GRIP_LOOP[0], grip[GRIP_LOOP[1]], GRIP_LOOP[1]]
    p = subprocess.run([sys.executable, str(TOOLS), *args], cwd=run, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    line = next(x for x in p.stdout.splitlines() if x.startswith("RESULT "))
    return data, run, json.loads(line[len("RESULT "):])


def test_export_loads_in_opensim_without_warnings(opensim_tools):
    data, _, r = opensim_tools
    assert r["warnings"] == []
    body = {f.name: f.body for f in data["spec"].frames}
    assert [f[0] for f in r["forces"]] == data["contact_frames"]
    for name, applied, force_in, point_in in r["forces"]:
        assert (applied, force_in, point_in) == (body[name], "ground", "ground")


def test_motion_poses_the_exported_model_like_the_fit(exported):
    """swing.mot read by OpenSim (degrees → rad by its own Storage reader) on golfer.osim:
    marker and grip-point positions at every 8th fitted frame against the harness's model
    at the fitted q, turned by Y_UP (the harness's z-up world → OpenSim's y-up ground)."""
    swing, out, summary = exported
    head = (out / "swing.mot").read_text().split("endheader")[0]
    assert "inDegrees=yes" in head
    assert (out / "markers.trc").read_text().splitlines()[2].split("\t")[4] == "mm"
    data = read_swing(swing)
    m = osim.Model(str(out / "golfer.osim"))
    s = m.initSystem()
    assert m.getJointSet().get("ground_pelvis").getConcreteClassName() == "CustomJoint"
    assert [m.getConstraintSet().get(i).getConcreteClassName()
            for i in range(m.getConstraintSet().getSize())] == ["PointConstraint"]
    sto = osim.Storage(str(out / "swing.mot"))
    m.getSimbodyEngine().convertDegreesToRadians(sto)
    labels = sto.getColumnLabels()
    cols = [labels.get(i) for i in range(1, labels.getSize())]
    assert cols == summary["coordinates"]
    assert cols[:6] == ["pelvis_rotation", "pelvis_list", "pelvis_tilt", "pelvis_tx",
                        "pelvis_ty", "pelvis_tz"]
    assert sto.getSize() == MOTION_OVERSAMPLE * (len(data["t"]) - 1) + 1 + 2 * MOTION_PAD
    ref = registry.adapter_class(registry.preferred("fit"))(
        PreparedModel(data["spec"], "fit"))
    tol = lookup("swing", "osim_export_markers").atol
    cs = m.getCoordinateSet()
    for k in range(0, len(data["t"]), 8):
        row = sto.getStateVector(MOTION_PAD + MOTION_OVERSAMPLE * k)
        assert abs(row.getTime() - data["t"][k]) < 1e-12
        for i, name in enumerate(cols):
            cs.get(name).setValue(s, row.getData().get(i), False)
        m.realizePosition(s)
        mine = ref.frame_poses(data["q"][k], data["labels"])[:, :3] @ Y_UP.T
        for j, lab in enumerate(data["labels"]):
            p = m.getMarkerSet().get(lab).getLocationInGround(s)
            assert np.abs(np.array([p.get(i) for i in range(3)]) - mine[j]).max() <= tol, lab


def test_default_coordinates_inside_their_ranges(exported):
    _, out, _ = exported
    m = osim.Model(str(out / "golfer.osim"))
    cs = m.getCoordinateSet()
    for i in range(cs.getSize()):
        c = cs.get(i)
        assert c.getDefaultClamped(), c.getName()
        assert c.getRangeMin() <= c.getDefaultValue() <= c.getRangeMax(), c.getName()


def test_opensim_inverse_kinematics_keeps_the_grip_and_the_ranges(exported, opensim_tools):
    swing, out, _ = exported
    data, _, r = opensim_tools
    ik = r["ik"]
    assert ik["ok"] and ik["rows"] == len(data["t"])
    assert max(ik["gap"]) <= lookup("swing", "osim_ik_grip").atol
    assert ik["outside"] <= lookup("swing", "osim_ik_range").atol
    fit = json.loads((swing / "fit" / "fit.json").read_text())
    present = np.isfinite(data["y"]).all(axis=2).sum(axis=1)
    ik_rmse = float(np.sqrt(np.sum(ik["sq"]) / present.sum()))
    ours = fit["fit"]["marker_rmse_m"]
    assert ik_rmse <= ours * (1 + lookup("swing", "osim_ik_rmse").atol), (ik_rmse, ours)


def test_opensim_inverse_dynamics_gives_the_harness_generalized_forces(exported,
                                                                       opensim_tools):
    """OpenSim's ID (swing.mot differentiated by its own splines, the feet's forces from
    external_loads.xml) against id_harness.sto (the harness's ID with the same forces) at
    every fitted frame; the harness's pelvis residual is the fit's (fit.json)."""
    swing, out, _ = exported
    data, _, r = opensim_tools
    ours = osim.TimeSeriesTable(str(out / "id_harness.sto"))
    cols = list(ours.getColumnLabels())
    H = ours.getMatrix().to_numpy()
    t = np.array(ours.getIndependentColumn())
    assert np.allclose(t, data["t"], atol=1e-12, rtol=0)
    assert cols[:6] == ["pelvis_rotation_moment", "pelvis_list_moment", "pelvis_tilt_moment",
                        "pelvis_tx_force", "pelvis_ty_force", "pelvis_tz_force"]
    fit = json.loads((swing / "fit" / "fit.json").read_text())
    peak = fit["ground"]["residual"]["force_peak_N"]
    assert abs(np.linalg.norm(H[:, 3:6], axis=1).max() - peak) \
        <= lookup("swing", "osim_id_harness_residual").atol
    idr = r["id"]
    assert idr["ok"]
    to = np.array(idr["t"])
    rows = [int(np.argmin(np.abs(to - x))) for x in t]
    assert np.abs(to[rows] - t).max() < 1e-6    # id.sto's times: 8 decimals
    O = np.array(idr["values"])[rows][:, [idr["columns"].index(c) for c in cols]]
    force = lookup("swing", "osim_id_pelvis_force").atol
    moment = lookup("swing", "osim_id_moment").atol
    assert np.abs(O[:, 3:6] - H[:, 3:6]).max() <= force
    assert np.abs(O[:, :3] - H[:, :3]).max() <= moment
    assert np.abs(O[:, 6:] - H[:, 6:]).max() <= moment     # N·m: the other joints rotate


def test_osim_export_bad_input(tmp_path):
    nothing = tmp_path / "not_a_swing"
    nothing.mkdir()
    out = tmp_path / "out"
    p = run_cli("osim-export", nothing, "--out", out)
    assert p.returncode == 2
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and str(nothing) in lines[0] and "fit/fit.json" in lines[0]
    assert not out.exists()
