"""`harness track` on OpenSim's other pipelines with markers (and force plates), whole
trials, each with its scaled model, its .trc, its ExternalLoads and its IK setup (the
window is the setup's time_range), as the command is given them.

Dimensions: F frames per trial. Units: mm (marker errors), deg (IK differences), N and
N·m (pelvis residuals), s (wall times: time.perf_counter, OpenSim in the same process).

The pipelines are read from a checkout of OpenSim's model repository
(``opensim-org/opensim-models``, commit 20a888b9655e73fb84963d6e03eee3752cf6074b); they
are not copied into the project (data/opensim_models/README.md).

Run: ``.venv/bin/python bench/track_pipelines.py --models-repo PATH [--out DIR]
[--write]`` (--write: bench/track_pipelines.txt beside this file).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import opensim

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.capture import ik  # noqa: E402
from harness.capture.motion_files import table_text  # noqa: E402
from harness.model import registry  # noqa: E402
from harness.model.osim_import import load_osim_with_notes  # noqa: E402
from harness.track import dynamics, run  # noqa: E402

# name: (model, markers, loads or None, IK setup), paths inside the models repository
P = "Pipelines"
PIPELINES = {
    "Gait10dof18musc walk": (
        f"{P}/Gait10dof18musc/OutputReference/subject01.osim",
        f"{P}/Gait10dof18musc/ExperimentalData/subject01_walk.trc",
        f"{P}/Gait10dof18musc/ExperimentalData/subject01_walk_grf.xml",
        f"{P}/Gait10dof18musc/IK/walk_Setup_IK.xml"),
    "Gait2354 walk1": (
        f"{P}/Gait2354_Simbody/OutputReference/subject01_simbody.osim",
        f"{P}/Gait2354_Simbody/subject01_walk1.trc",
        f"{P}/Gait2354_Simbody/subject01_walk1_grf.xml",
        f"{P}/Gait2354_Simbody/subject01_Setup_IK.xml"),
    "Hamner run (subject02, the registered model)": (
        f"{P}/Hamner/outputReference/subject02_registered.osim",
        f"{P}/Hamner/subject02_running.trc",
        f"{P}/Hamner/External_Loads.xml",
        f"{P}/Hamner/Setup_IK.xml"),
    "Rajagopal run (the generic model: the scaled one is not in the repository)": (
        "Models/Rajagopal/Rajagopal2016.osim",
        f"{P}/Rajagopal/ExpData/motion_capture_run.trc",
        f"{P}/Rajagopal/ID/grf_run.xml",
        f"{P}/Rajagopal/IK/ik_setup_run.xml"),
    "Rajagopal walk (the generic model)": (
        "Models/Rajagopal/Rajagopal2016.osim",
        f"{P}/Rajagopal/ExpData/motion_capture_walk.trc",
        f"{P}/Rajagopal/ID/grf_walk.xml",
        f"{P}/Rajagopal/IK/ik_setup_walk.xml"),
    "Leg39 swing (markers only)": (
        "Models/Leg39/leg39.osim",
        f"{P}/Leg39/leg39_swing.trc", None,
        f"{P}/Leg39/leg39_swing_IK_Setup.xml"),
}
FIGURES = ("frames", "t_start_s", "t_end_s", "markers_tracked", "marker_rmse_mm",
           "ik_vs_opensim_rms_deg", "id_vs_opensim_rel", "residual_force_mean_N",
           "residual_force_peak_N", "residual_moment_mean_Nm", "residual_moment_peak_Nm",
           "fit_wall_s")


def run_one(repo: Path, name: str, out: Path) -> list[str]:
    """The command on one pipeline, as a user runs it; its exit code, error line or
    figures."""
    model, trc, loads, setup = PIPELINES[name]
    cmd = [sys.executable, "-m", "harness.cli", "track", str(repo / model), str(repo / trc),
           "--ik-setup", str(repo / setup), "--out", str(out), "--quiet"]
    if loads:
        cmd += ["--loads", str(repo / loads)]
    w0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT,
                       env={"PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1",
                            "PATH": "/usr/bin:/bin"})
    lines = [f"## {name}", f"exit code {p.returncode}, wall {time.perf_counter() - w0:.1f} s"]
    err = [x for x in p.stderr.splitlines() if x.startswith("harness: error:")]
    lines += err
    if (out / "summary.json").exists():
        s = json.loads((out / "summary.json").read_text())
        assert s["exit_code"] == p.returncode, (s["exit_code"], p.returncode)
        for k in FIGURES:
            v = s.get(k)
            lines.append(f"  {k}: {v:.6g}" if isinstance(v, float) else f"  {k}: {v}")
        ref = s["reference_tool"]
        if ref.get("available"):
            lines.append(f"  opensim marker_rmse_mm: {ref['marker_rmse_mm']:.6g}")
            worst = max(ref["ik_rms_deg"], key=ref["ik_rms_deg"].get)
            lines.append(f"  worst IK coordinate: {worst}")
            lines.append(f"  opensim ID settings: {ref['id_settings']}")
        for c in s["checks"]:
            word = {True: "met", False: "NOT met", None: "NOT run"}[c["ok"]]
            lines.append(f"  [{word}] {c['name']}: {c['value']} ({c['target']})")
    return lines


def power_balance(model_path: Path, work: Path) -> list[str]:
    """Rajagopal's knee alone moving (0.8 + 0.5 sin 3t rad, 1001 frames over 1 s, the
    pelvis held, no loads): the power each ID puts into the knee, τ q̇, against dE/dt of
    the model's kinetic plus gravitational energy (OpenSim's, its body velocities agree
    with finite differences of its positions), differentiated by finite differences."""
    spec, notes = load_osim_with_notes(str(model_path), ranges_as_limits=True)
    ad = run._adapter(spec, "pinocchio")
    held = ik.Held.of(ad.layout, spec.couplings)
    coords = run.Coordinates(ad, spec, run._scales(notes))
    k, ty = coords.names.index("knee_angle_r"), coords.names.index("pelvis_ty")
    t = np.linspace(0.0, 1.0, 1001)
    X = np.zeros((len(t), len(coords.names)))
    X[:, ty], X[:, k] = 1.0, 0.8 + 0.5 * np.sin(3 * t)
    V = np.zeros_like(X)
    V[:, k] = 1.5 * np.cos(3 * t)
    Q = coords.to_canonical(X, coords.names, ad.nq, held)
    tau = dynamics.inverse_dynamics(ad, held, t, Q, None)[:, coords.iv] * coords.scale
    work.mkdir(parents=True, exist_ok=True)
    (work / "q.sto").write_text(table_text("q", t, coords.names, X, False))
    tools = registry.adapter_class(registry.for_role("motion_tools")[0])
    d = tools.motion_id_tool(str(model_path), str(work / "q.sto"), None, 0.0, 1.0,
                             str(work))
    tau_o = d["tau"][:, d["labels"].index("knee_angle_r_moment")]
    m = opensim.Model(str(model_path))
    s = m.initSystem()
    cs = m.getCoordinateSet()
    bodies = [m.getBodySet().get(i) for i in range(m.getBodySet().getSize())]
    g = m.getGravity().to_numpy()
    E = np.empty(len(t))
    for i in range(len(t)):
        for j, c in enumerate(coords.names):
            cs.get(c).setValue(s, X[i, j], False)
            cs.get(c).setSpeedValue(s, V[i, j])
        for dep, ind in (("knee_angle_r_beta", k),):
            cs.get(dep).setValue(s, X[i, ind], False)
            cs.get(dep).setSpeedValue(s, V[i, ind])
        m.realizeVelocity(s)
        E[i] = m.calcKineticEnergy(s) - sum(
            b.getMass() * g.dot(b.findStationLocationInGround(s, b.getMassCenter()).to_numpy())
            for b in bodies)
    dE = np.gradient(E, t, edge_order=2)[50:-50]
    ours, theirs = (tau[:, k] * V[:, k])[50:-50], (tau_o * V[:, k])[50:-50]
    return ["## power balance of Rajagopal's knee (knee alone moving, no loads)",
            f"  max |dE/dt|: {np.max(np.abs(dE)):.6g} W",
            f"  ours: max |tau qdot - dE/dt|: {np.max(np.abs(ours - dE)):.3g} W",
            f"  OpenSim's ID: max |tau qdot - dE/dt|: {np.max(np.abs(theirs - dE)):.3g} W"]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models-repo", required=True, type=Path,
                    help="a checkout of opensim-org/opensim-models")
    ap.add_argument("--out", default=None)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    work = Path(args.out or tempfile.mkdtemp(prefix="track_pipelines_"))
    lines: list[str] = []
    for k, name in enumerate(PIPELINES):
        for x in run_one(args.models_repo, name, work / f"p{k}"):
            print(x, flush=True)
            lines.append(x)
    for x in power_balance(args.models_repo / "Models/Rajagopal/Rajagopal2016.osim",
                           work / "power"):
        print(x, flush=True)
        lines.append(x)
    if args.write:
        (Path(__file__).with_suffix(".txt")).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
