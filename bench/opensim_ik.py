"""OpenSim's InverseKinematicsTool against the harness's marker IK (harness/capture/ik.py)
on the bundled swing, with the golfer exported by ``harness osim-export``.

Dimension legend: F frames (the fitted window of the swing), K tracked markers, nq
coordinates of the fitted golfer (actuated pelvis: nq = 30). Units: marker errors mm,
times s (wall = time.perf_counter, CPU = time.process_time of this process; OpenSim runs
in-process).

Both solve the same problem: per frame, min Σ_k ‖p_k(q) − y_k‖² over the K tracked
markers, every weight 1, warm-started frame to frame from the fitted q of the first frame
(the exported model's default pose), no loop constraint (the grip pair is left out of
ours, and the exported model's grip PointConstraint is removed here), coordinates not
clamped unless asked (the export clamps them; the bench unclamps them for the main run).
OpenSim's coordinates (y-up, the pelvis on ground_pelvis) are mapped back to the
harness's by the export's own signed permutation (harness/model/osim_export.py
``coordinate_map``). Both solutions are scored by one function: the markers
of q placed by the Pinocchio adapter of the same model, RMSE over every seen (frame,
marker) pair. OpenSim's own reported marker error is printed beside it as a check.

The headline ratio is against the clamped run (joint limits held on both sides: ours
always holds them).

Run: ``.venv/bin/python bench/opensim_ik.py [--swing-dir /tmp/w/swq] [--repeats 5]`` (the
folder of ``harness swing data/swing/driver.c3d --quick --no-replay --out /tmp/w/swq``).
"""
from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.capture import ik  # noqa: E402
from harness.model.osim_export import coordinate_map, read_swing  # noqa: E402
from harness.model.prepared import PreparedModel  # noqa: E402
from harness.model.registry import adapter_class  # noqa: E402

ACCURACY = 1e-5   # OpenSim IK's accuracy setting (its default)


def timed(fn, repeats):
    out = []
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        r = fn()
        out.append((r, time.perf_counter() - w0, time.process_time() - c0))
    return out


def med(runs, k):
    return statistics.median(r[k] for r in runs)


@contextlib.contextmanager
def quiet_fd1():
    """Silence C-level stdout (OpenSim prints a model summary when the tool runs)."""
    sys.stdout.flush()
    saved = os.dup(1)
    with open(os.devnull, "w") as dn:
        os.dup2(dn.fileno(), 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def limit_excess(spec, Q):
    """(frames with a coordinate outside its declared range, largest excess [rad or m])."""
    lo = np.array([j.lower if j.lower is not None else -np.inf for j in spec.moving_joints()])
    hi = np.array([j.upper if j.upper is not None else np.inf for j in spec.moving_joints()])
    ex = np.maximum(lo - Q, Q - hi).clip(min=0.0)
    return int(np.sum(ex.max(axis=1) > 1e-9)), float(ex.max())


def marker_rmse(adapter, labels, Q, Y):
    """(RMSE, max) [m] of the markers of Q (F, nq) placed by ``adapter`` against Y (F, K, 3),
    over the seen (frame, marker) pairs."""
    P = np.stack([adapter.frame_poses(q, labels)[:, :3] for q in Q])
    e = np.linalg.norm(P - Y, axis=2)
    seen = np.isfinite(e)
    return float(np.sqrt(np.mean(e[seen] ** 2))), float(np.max(e[seen]))


def opensim_ik(folder, labels, t, cmap, out_dir, clamp=False):
    """Run the InverseKinematicsTool on the exported model without its grip constraint
    (``clamp``: every coordinate clamped to its range, which OpenSim's IK then enforces as
    a bound; else none); returns (Q (F, nq) canonical order through ``cmap`` = (OpenSim
    names, harness index, sign), OpenSim's reported RMS marker error per frame [m])."""
    import opensim as osim

    osim.Logger.setLevelString("error")
    tool = osim.InverseKinematicsTool()
    tool.setName("bench")
    model = osim.Model(str(folder / "golfer.osim"))
    model.updConstraintSet().clearAndDestroy()
    cs = model.updCoordinateSet()
    for i in range(cs.getSize()):
        cs.get(i).setDefaultClamped(clamp)
    tool.setModel(model)
    tool.setMarkerDataFileName(str(folder / "markers.trc"))
    tool.setStartTime(float(t[0]))
    tool.setEndTime(float(t[-1]))
    tool.set_accuracy(ACCURACY)
    tasks = tool.getIKTaskSet()
    for lab in labels:
        task = osim.IKMarkerTask()
        task.setName(lab)
        task.setWeight(1.0)
        task.setApply(True)
        tasks.cloneAndAppend(task)
    tool.set_report_errors(True)
    tool.setResultsDir(str(out_dir))
    mot = out_dir / "ik.mot"
    tool.setOutputMotionFileName(str(mot))
    if not tool.run():
        raise RuntimeError("InverseKinematicsTool.run() returned false")
    table = osim.TimeSeriesTable(str(mot))
    in_deg = table.getTableMetaDataAsString("inDegrees") == "yes"
    cs = model.getCoordinateSet()
    names, index, sign = cmap
    Q = np.empty((table.getNumRows(), len(names)))
    for n, i, sg in zip(names, index, sign):
        col = np.asarray(table.getDependentColumn(n).to_numpy(), float)
        rot = cs.get(n).getMotionType() == osim.Coordinate.Rotational
        Q[:, i] = sg * (np.radians(col) if (rot and in_deg) else col)
    err = osim.TimeSeriesTable(str(out_dir / "bench_ik_marker_errors.sto"))
    rms = np.asarray(err.getDependentColumn("marker_error_RMS").to_numpy(), float)
    return Q, rms


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--swing-dir", default="/tmp/w/swq")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    import opensim

    t_start = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="bench_osim_ik_"))
    exp = work / "export"
    cmd = [sys.executable, "-m", "harness.cli", "osim-export", args.swing_dir, "--out",
           str(exp)]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    if r.returncode != 0:
        print(f"osim-export failed (exit {r.returncode}): {r.stderr.strip()}")
        return 1
    data = read_swing(args.swing_dir)
    spec, t, Qfit, labels, Y = data["spec"], data["t"], data["q"], data["labels"], data["y"]
    names = [j.name for j in spec.moving_joints()]
    print(f"opensim {opensim.GetVersion()}; swing {args.swing_dir}: {len(t)} frames "
          f"({t[0]:.4f}–{t[-1]:.4f} s at {data['rate_hz']:g} Hz), {len(labels)} markers, "
          f"nq {len(names)}; export: harness {' '.join(cmd[3:])}", flush=True)
    ad = adapter_class("pinocchio")(PreparedModel(spec, "bench:swing"))

    runs_o = timed(lambda: ik.track(ad, labels, Y, Qfit[0]), args.repeats)
    Qo = runs_o[0][0].q
    k = [0]

    def osim_run(clamp=False):
        k[0] += 1
        d = work / f"ik{k[0]}"
        d.mkdir()
        with quiet_fd1():
            return opensim_ik(exp, labels, t, coordinate_map(spec), d, clamp)
    runs_m = timed(osim_run, args.repeats)
    try:
        runs_c = timed(lambda: osim_run(True), args.repeats)
    except RuntimeError as e:
        runs_c, clamp_error = None, str(e).splitlines()[0]
    Qm, rms_osim = runs_m[0][0]
    if Qm.shape != Qo.shape:
        print(f"OpenSim returned {Qm.shape[0]} frames, ours {Qo.shape[0]}")
        return 1
    rm_o, mx_o = marker_rmse(ad, labels, Qo, Y)
    rm_m, mx_m = marker_rmse(ad, labels, Qm, Y)
    rm_f, mx_f = marker_rmse(ad, labels, Qfit, Y)
    print(f"\nrepeats: {args.repeats} each, medians; OpenSim IK accuracy {ACCURACY:g}, "
          f"every marker weight 1; ours: Levenberg–Marquardt, tol 1e-10, ≤ 60 iterations "
          f"per frame, limits held (active set)")
    print(f"  wall s   ours {med(runs_o, 1):.3f}  OpenSim {med(runs_m, 1):.3f}  OpenSim/ours "
          f"{med(runs_m, 1) / med(runs_o, 1):.2f}  (all: ours "
          f"{', '.join(f'{x[1]:.3f}' for x in runs_o)}; OpenSim "
          f"{', '.join(f'{x[1]:.3f}' for x in runs_m)})")
    print(f"  CPU s    ours {med(runs_o, 2):.3f}  OpenSim {med(runs_m, 2):.3f}  OpenSim/ours "
          f"{med(runs_m, 2) / med(runs_o, 2):.2f}  (all: ours "
          f"{', '.join(f'{x[2]:.3f}' for x in runs_o)}; OpenSim "
          f"{', '.join(f'{x[2]:.3f}' for x in runs_m)})")
    print(f"  marker RMSE (one function, Pinocchio markers): ours {1e3 * rm_o:.3f} mm "
          f"(max {1e3 * mx_o:.2f})  OpenSim {1e3 * rm_m:.3f} mm (max {1e3 * mx_m:.2f})  "
          f"dynamic fit (reference) {1e3 * rm_f:.3f} mm (max {1e3 * mx_f:.2f})")
    if runs_c is None:
        n0, e0 = limit_excess(spec, Qfit[:1])
        print(f"  OpenSim, coordinates clamped to their ranges: the tool failed ({clamp_error}); "
              f"the first fitted frame, the model's default pose, has {'a' if n0 else 'no'} "
              f"coordinate outside its range (largest excess {e0:.3f})")
    else:
        Qc, rms_c = runs_c[0][0]
        rm_c, mx_c = marker_rmse(ad, labels, Qc, Y)
        nf_c, ex_c = limit_excess(spec, Qc)
    if runs_c is not None:
        print(f"  OpenSim, coordinates clamped to their ranges (limits held on both sides): wall "
              f"{med(runs_c, 1):.3f} s, CPU {med(runs_c, 2):.3f} s (OpenSim/ours CPU "
              f"{med(runs_c, 2) / med(runs_o, 2):.2f}; all CPU "
              f"{', '.join(f'{x[2]:.3f}' for x in runs_c)}), "
              f"marker RMSE {1e3 * rm_c:.3f} mm (max {1e3 * mx_c:.2f}; its own mean "
              f"{1e3 * rms_c.mean():.3f}), frames outside a range {nf_c} (largest excess "
              f"{ex_c:.3f})")
    print(f"  OpenSim's own marker_error_RMS: mean over frames {1e3 * rms_osim.mean():.3f} mm; "
          f"RMS over frames {1e3 * np.sqrt(np.mean(rms_osim ** 2)):.3f} mm")
    Pm = np.stack([ad.frame_poses(q, labels)[:, :3] for q in Qm])
    rms_m = np.sqrt(np.nanmean(np.linalg.norm(Pm - Y, axis=2) ** 2, axis=1))
    print(f"  largest |q_ours − q_OpenSim| {np.max(np.abs(Qo - Qm)):.2e} (rad or m); "
          f"per-frame RMS marker error, largest |ours − OpenSim| "
          f"{1e3 * np.max(np.abs(runs_o[0][0].rms_m - rms_m)):.3f} mm")
    it = runs_o[0][0].iterations
    nf_o, ex_o = limit_excess(spec, Qo)
    nf_m, ex_m = limit_excess(spec, Qm)
    print(f"  ours: LM iterations per frame median {np.median(it):.0f}, max {it.max()} "
          f"(cap 60); frames with a coordinate outside its range: ours {nf_o} (largest "
          f"excess {ex_o:.3f}), OpenSim {nf_m} of {len(t)} (largest excess {ex_m:.3f}; "
          "the exported coordinates are not clamped, ours are projected onto the range)")
    print(f"\nscript wall time {time.perf_counter() - t_start:.0f} s (work folder {work})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
