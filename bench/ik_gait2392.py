"""Speed of the harness's marker IK (harness/capture/ik.py, as `harness track` runs it)
against OpenSim's InverseKinematicsTool on OpenSim's gait2392 walking trial (subject01
walk1, data/opensim_models/gait2392_walk1), at equal or lower marker RMSE.

Dimensions: F frames (t = 0.5–2.5 s of the IK setup: 121 frames at 60 Hz), K = 31
weighted markers, n = 23 OpenSim coordinates. Units: s (CPU = time.process_time of this
process, OpenSim runs in-process; wall = time.perf_counter), mm (marker errors).

Both solve the same problem on the same frames: the IK setup's marker weights and
coordinate tasks, every coordinate held in its range (OpenSim: each coordinate clamped, so
its solver holds the range as a bound; ours: the limits as a box), the knee's coupled
coordinates held exactly, OpenSim's accuracy 1e-5 (the setup's). OpenSim's side is the
tools adapter's ``motion_ik_tool`` (engines/opensim_tools.py): one call loads the model,
reads the .trc, solves every frame and writes its .mot and marker-error .sto. Ours is
timed twice: ``ik.track`` alone (the solve), and the whole of our side — the .osim
imported, the Pinocchio adapter built, the .trc read and the solve. OpenSim's solve alone is
timed too: the tool's InverseKinematicsSolver set up the same way, its assemble and track
calls only (the adapter's ``motion_ik_solver``); it is the like-for-like figure against
``ik.track``. Both solutions are
scored by one function (the markers of q placed by the Pinocchio adapter,
harness/track/run.py ``marker_errors``). Repetitions: --repeats each, medians, the two
sides alternated.

Run: ``.venv/bin/python bench/ik_gait2392.py [--repeats 5] [--write]`` (--write: this
script's output to bench/ik_gait2392.txt).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.capture import ik  # noqa: E402
from harness.model import registry  # noqa: E402
from harness.track import run as track_run  # noqa: E402

DATA = ROOT / "data" / "opensim_models" / "gait2392_walk1"
MODEL, TRC = DATA / "subject01_simbody.osim", DATA / "subject01_walk1.trc"
T0, T1 = 0.5, 2.5


def ours_whole():
    """(IKResult, adapter, labels, Y, the solve's own CPU s): our side from the files."""
    inp = track_run.read_inputs(str(MODEL), str(TRC), None, None, T0, T1)
    adapter = track_run._adapter(inp.spec, "pinocchio")
    coords = track_run.Coordinates(adapter, inp.spec, inp.scale)
    labels = [m for m in inp.markers.labels if m in inp.weights]
    Y = inp.markers.xyz[inp.frames][:, [inp.markers.labels.index(m) for m in labels]]
    w = np.array([inp.weights[m] for m in labels])
    tasks = track_run.coordinate_tasks(inp, coords)
    c0 = time.process_time()
    res = ik.track(adapter, labels, Y, adapter.neutral(), weights=w, max_iter=200,
                   couplings=inp.spec.couplings, tasks=tasks)
    return res, adapter, labels, Y, time.process_time() - c0, inp, coords


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    lines = []

    def say(s=""):
        print(s, flush=True)
        lines.append(s)

    tools = registry.adapter_class(registry.providing("motion_ik_tool")[0])
    ours, theirs, solver = [], [], []
    for k in range(args.repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        res, adapter, labels, Y, solve_cpu, inp, coords = ours_whole()
        ours.append((time.process_time() - c0, time.perf_counter() - w0, solve_cpu))
        with tempfile.TemporaryDirectory(prefix="bench_ik_gait_") as tmp:
            c0, w0 = time.process_time(), time.perf_counter()
            r = tools.motion_ik_tool(str(MODEL), str(TRC), inp.weights, T0, T1, tmp,
                                     coordinate_tasks=inp.coordinate_tasks)
            theirs.append((time.process_time() - c0, time.perf_counter() - w0))
        s = tools.motion_ik_solver(str(MODEL), str(TRC), inp.weights,
                                   inp.markers.t[inp.frames], inp.coordinate_tasks)
        solver.append(s["solve_cpu_s"])
    held = ik.Held.of(adapter.layout, inp.spec.couplings)
    Qo = coords.to_canonical(r["q"], r["names"], adapter.nq, held)
    rm_o, mx_o = track_run.marker_errors(adapter, labels, res.q, Y)
    rm_m, mx_m = track_run.marker_errors(adapter, labels, Qo, Y)
    rm_s, mx_s = track_run.marker_errors(
        adapter, labels, coords.to_canonical(s["q"], s["names"], adapter.nq, held), Y)
    ms = statistics.median(solver)
    med = [statistics.median(x[i] for x in ours) for i in range(3)]
    mt = [statistics.median(x[i] for x in theirs) for i in range(2)]
    say(f"gait2392 subject01 walk1, t = {T0}–{T1} s: {len(Y)} frames, {len(labels)} weighted "
        f"markers, {len(inp.coordinate_tasks)} coordinate tasks, {len(inp.spec.couplings)} "
        f"coupled coordinates held; OpenSim: {r['settings']}")
    say(f"repeats {args.repeats}, medians (CPU s = process_time; wall s = perf_counter)")
    say(f"  OpenSim's IK tool (load, solve, write):      CPU {mt[0]:.3f}  wall {mt[1]:.3f}")
    say(f"  ours, ik.track (the solve):                  CPU {med[2]:.3f}   "
        f"-> OpenSim/ours {mt[0] / med[2]:.2f}")
    say(f"  ours, import + adapter + .trc + solve:       CPU {med[0]:.3f}  wall {med[1]:.3f}  "
        f"-> OpenSim/ours CPU {mt[0] / med[0]:.2f}, wall {mt[1] / med[1]:.2f}")
    say(f"  OpenSim's InverseKinematicsSolver alone (assemble + track, the tool's solve): "
        f"CPU {ms:.3f}  -> against our solve: OpenSim/ours {ms / med[2]:.2f}")
    say(f"  all CPU s: OpenSim's solver {', '.join(f'{x:.3f}' for x in solver)};"
        f" ours solve {', '.join(f'{x[2]:.3f}' for x in ours)}; ours whole "
        f"{', '.join(f'{x[0]:.3f}' for x in ours)}; OpenSim "
        f"{', '.join(f'{x[0]:.3f}' for x in theirs)}")
    say(f"  marker RMSE (one function, Pinocchio markers): ours {1e3 * rm_o:.4f} mm (max "
        f"{1e3 * mx_o:.2f}), OpenSim {1e3 * rm_m:.4f} mm (max {1e3 * mx_m:.2f}; its own "
        f"report {1e3 * float(np.sqrt(np.mean(r['marker_rms_m'] ** 2))):.4f}); OpenSim's "
        f"solver alone {1e3 * rm_s:.4f} mm (max {1e3 * mx_s:.2f})")
    it = res.iterations
    say(f"  ours: iterations per frame median {np.median(it):.0f}, max {it.max()} (cap 200)")
    if args.write:
        (ROOT / "bench" / "ik_gait2392.txt").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
