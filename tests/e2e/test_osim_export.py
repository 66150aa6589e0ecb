"""`harness osim-export` end to end on the bundled capture's quick swing fit:
golfer.osim, swing.mot and markers.trc load in OpenSim; the exported model posed by
swing.mot puts its markers where the harness's fitted model puts them; OpenSim's own
InverseKinematicsTool on markers.trc with golfer.osim reaches a marker RMSE no worse than
the fit's (the threshold: harness/core/tolerances.py swing/osim_ik_rmse). Bad input:
one line, exit 2, nothing written."""
from __future__ import annotations

import json

import numpy as np
import opensim as osim
import pytest
from conftest import ROOT, run_cli

from harness.core.tolerances import lookup

CAPTURE = ROOT / "data" / "swing" / "driver.c3d"


@pytest.fixture(scope="module")
def exported(quick_swing, tmp_path_factory):
    base = tmp_path_factory.mktemp("osim_export")
    _, swing, p = quick_swing
    assert p.returncode in (0, 1), p.stderr  # 1: a swing check not met; the fit exists
    assert (swing / "fit" / "trajectory.npz").is_file(), p.stderr
    out = base / "osim"
    p = run_cli("osim-export", swing, "--out", out, "--json", base / "s.json")
    assert p.returncode == 0, p.stdout + p.stderr
    assert sorted(x.name for x in out.iterdir()) == ["golfer.osim", "markers.trc",
                                                      "swing.mot"]
    return swing, out, json.loads((base / "s.json").read_text())


def _fitted(swing):
    z = np.load(swing / "fit" / "trajectory.npz")
    fit = json.loads((swing / "fit" / "fit.json").read_text())
    return z, fit


def test_motion_poses_the_exported_model_like_the_fit(exported):
    """swing.mot read by OpenSim (degrees → rad by its own Storage reader) on golfer.osim:
    marker positions against the harness's model at the fitted q, every 8th frame."""
    from harness.model import registry
    from harness.model.osim_export import read_swing
    from harness.model.prepared import PreparedModel

    swing, out, _ = exported
    head = (out / "swing.mot").read_text().split("endheader")[0]
    assert "inDegrees=yes" in head
    assert (out / "markers.trc").read_text().splitlines()[2].split("\t")[4] == "mm"
    data = read_swing(swing)
    m = osim.Model(str(out / "golfer.osim"))
    s = m.initSystem()
    sto = osim.Storage(str(out / "swing.mot"))
    m.getSimbodyEngine().convertDegreesToRadians(sto)
    labels = sto.getColumnLabels()
    cols = [labels.get(i) for i in range(1, labels.getSize())]
    assert cols == [j.name for j in data["spec"].moving_joints()]
    ref = registry.adapter_class(registry.preferred("fit"))(
        PreparedModel(data["spec"], "fit"))
    tol = lookup("swing", "osim_export_markers").atol
    for k in range(0, len(data["t"]), 8):
        row = sto.getStateVector(k).getData()
        for i, name in enumerate(cols):
            m.getCoordinateSet().get(name).setValue(s, row.get(i), False)
        m.realizePosition(s)
        mine = ref.frame_poses(data["q"][k], data["labels"])[:, :3]
        for j, lab in enumerate(data["labels"]):
            p = m.getMarkerSet().get(lab).getLocationInGround(s)
            assert np.abs(np.array([p.get(i) for i in range(3)]) - mine[j]).max() <= tol, lab


def test_opensim_inverse_kinematics_matches_the_fit(exported, tmp_path):
    swing, out, _ = exported
    z, fit = _fitted(swing)
    model = osim.Model(str(out / "golfer.osim"))  # held: the tool keeps a pointer to it
    tool = osim.InverseKinematicsTool()
    tool.setModel(model)
    tool.set_marker_file(str(out / "markers.trc"))
    t = z["t"]
    tool.setStartTime(float(t[0]))
    tool.setEndTime(float(t[-1]))
    tool.setResultsDir(str(tmp_path))
    tool.setOutputMotionFileName(str(tmp_path / "ik.mot"))
    tool.set_report_errors(True)
    tasks = tool.getIKTaskSet()
    for lab in z["labels"]:
        task = osim.IKMarkerTask()
        task.setName(str(lab))
        task.setWeight(1.0)
        task.setApply(True)
        tasks.cloneAndAppend(task)
    assert tool.run()
    err = osim.TimeSeriesTable(str(tmp_path / "_ik_marker_errors.sto"))
    sq = err.getDependentColumn("total_squared_error").to_numpy()
    present = np.isfinite(z["y"]).all(axis=2).sum(axis=1)
    assert len(sq) == len(t)
    ik_rmse = float(np.sqrt(sq.sum() / present.sum()))
    ours = fit["fit"]["marker_rmse_m"]
    tol = lookup("swing", "osim_ik_rmse")
    assert ik_rmse <= ours * (1 + tol.atol), (ik_rmse, ours)


def test_osim_export_bad_input(tmp_path):
    nothing = tmp_path / "not_a_swing"
    nothing.mkdir()
    out = tmp_path / "out"
    p = run_cli("osim-export", nothing, "--out", out)
    assert p.returncode == 2
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and str(nothing) in lines[0] and "fit/fit.json" in lines[0]
    assert not out.exists()
