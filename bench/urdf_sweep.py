"""Sweep every URDF shipped with example-robot-data through the URDF importer and the four
engine adapters; print one row per (robot, base): nq, nv, import result, worst relative
error against Pinocchio over M, h, forward and inverse dynamics and every frame pose.

Relative error of a quantity: max|a − b| / max(max|a|, max|b|) (dimensionless). One
random state per row: (q, v) from the Pinocchio adapter's ``random_state`` with
``np.random.default_rng(0)``, τ and v̇ standard normal. Run on demand:

    OMP_WAIT_POLICY=PASSIVE .venv/bin/python bench/urdf_sweep.py [--limit 1e-10] [SUBSTR]
"""
from __future__ import annotations

import argparse
import glob
import os
import sys
import time

import numpy as np

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("OMP_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from harness.core.errors import BadInput, HarnessError, NotProvided  # noqa: E402
from harness.model.prepared import PreparedModel  # noqa: E402
from harness.model.urdf_import import load_urdf_with_notes  # noqa: E402


def example_robot_data_urdfs() -> tuple:
    """(robots directory, sorted list of every *.urdf under it)."""
    import example_robot_data

    root = os.path.normpath(example_robot_data.getModelPath("panda_description/urdf/panda.urdf"))
    return root, sorted(glob.glob(os.path.join(root, "**", "*.urdf"), recursive=True))


def rel_err(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    scale = max(np.abs(a).max(initial=0.0), np.abs(b).max(initial=0.0))
    d = np.abs(a - b).max(initial=0.0)
    return 0.0 if d == 0.0 else d / scale


def compare_engines(model: PreparedModel, seed: int = 0) -> dict:
    """{engine: {quantity: worst relative error vs Pinocchio}} at one random state."""
    from engines.crocoddyl import CrocoddylAdapter
    from engines.drake import DrakeAdapter
    from engines.mujoco import MujocoAdapter
    from engines.pinocchio import PinocchioAdapter

    ref = PinocchioAdapter(model)
    rng = np.random.default_rng(seed)
    q, v = ref.random_state(rng)
    tau = rng.normal(size=ref.nv)
    vdot = rng.normal(size=ref.nv)
    want = {"mass_matrix": ref.mass_matrix(q), "bias_forces": ref.bias_forces(q, v),
            "forward_dynamics": ref.forward_dynamics(q, v, tau),
            "inverse_dynamics": ref.inverse_dynamics(q, v, vdot)}
    frames = {f: ref.frame_pose(q, f) for f in model.frames}
    out = {}
    for cls in (CrocoddylAdapter, MujocoAdapter, DrakeAdapter):
        eng = cls(model)
        errs = {}
        for quantity, call in (("mass_matrix", lambda: eng.mass_matrix(q)),
                               ("bias_forces", lambda: eng.bias_forces(q, v)),
                               ("forward_dynamics", lambda: eng.forward_dynamics(q, v, tau)),
                               ("inverse_dynamics", lambda: eng.inverse_dynamics(q, v, vdot))):
            try:
                errs[quantity] = rel_err(call(), want[quantity])
            except NotProvided:
                pass
        try:
            errs["frame_pose"] = max((rel_err(eng.frame_pose(q, f), X)
                                      for f, X in frames.items()), default=0.0)
        except NotProvided:
            pass
        out[eng.name] = errs
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("filter", nargs="?", default="", help="only paths containing this")
    ap.add_argument("--limit", type=float, default=1e-10, help="parity limit (relative)")
    ap.add_argument("--notes", action="store_true", help="print the importer's notes")
    ap.add_argument("--repair-inertia", action="store_true",
                    help="import with repair_inertia=True (non-physical inertias projected)")
    args = ap.parse_args(argv)
    root, files = example_robot_data_urdfs()
    files = [f for f in files if args.filter in f]
    rows, fails = [], []
    t0 = time.perf_counter()
    hdr = f"{'robot':58s} {'base':8s} {'nq':>4s} {'nv':>4s} {'import':6s} {'worst rel':>9s}  where"
    print(hdr)
    print("-" * len(hdr))
    for path in files:
        rel = os.path.relpath(path, root)
        for floating in (False, True):
            base = "floating" if floating else "fixed"
            try:
                spec, notes = load_urdf_with_notes(path, floating, args.repair_inertia)
            except BadInput as e:
                print(f"{rel:58s} {base:8s} {'-':>4s} {'-':>4s} {'no':6s} {'-':>9s}  {e.problem}")
                rows.append((rel, base, False, None))
                continue
            model = PreparedModel(spec, path)
            try:
                errs = compare_engines(model)
            except Exception as e:  # an engine refused the model, or an adapter failed
                kind = "ENGINE" if isinstance(e, HarnessError) else f"ADAPTER {type(e).__name__}"
                msg = " ".join(str(e).split())
                print(f"{rel:58s} {base:8s} {model.layout.nq:4d} {model.layout.nv:4d} "
                      f"{'yes':6s} {'-':>9s}  {kind}: {msg}")
                rows.append((rel, base, True, float("inf")))
                fails.append((rel, base, str(e)))
                continue
            worst, where = 0.0, ""
            for eng, qs in errs.items():
                for quantity, err in qs.items():
                    if err >= worst:
                        worst, where = err, f"{eng} {quantity}"
            print(f"{rel:58s} {base:8s} {model.layout.nq:4d} {model.layout.nv:4d} "
                  f"{'yes':6s} {worst:9.1e}  {where}")
            if args.notes:
                for n in notes:
                    print(f"    note: {n}")
            rows.append((rel, base, True, worst))
            if worst > args.limit:
                fails.append((rel, base, f"{where}: {worst:.2e}"))
    n_ok = sum(1 for r in rows if r[2])
    n_pass = sum(1 for r in rows if r[2] and r[3] <= args.limit)
    print(f"\n{len(rows)} rows ({len(files)} files × fixed/floating): {n_ok} imported, "
          f"{n_pass} within {args.limit:g}; {time.perf_counter() - t0:.1f} s")
    for rel, base, why in fails:
        print(f"PARITY FAIL {rel} {base}: {why}")
    return 0 if not fails else 1


if __name__ == "__main__":
    sys.exit(main())
