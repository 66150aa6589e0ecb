"""Speed–accuracy of every integrator × engine (run on demand, not part of the tests).

    OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE .venv/bin/python bench/integrators.py \
        [--fixture chain7,free_body] [--duration 1.0] [--svg OUT.svg]

For each fixture a synthetic candidate (harness.stages.replay.synth.synthesize: PD
tracking on a fixed base, torque-free tumbling on a free root) is integrated by the
harness's semi-implicit Euler, RK4 and DOP853 over each engine's forward dynamics, and by
each engine's own stepping, at a range of steps / tolerances. Error: max over knots and
coordinates of |x − x_ref| against DOP853 at rtol = atol = 1e-13 with Pinocchio's
dynamics. Wall time: the rollout only (adapter construction excluded), median of --repeat
runs.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from harness.model import registry  # noqa: E402
from harness.model.integrators import Method, rollout  # noqa: E402
from harness.model.prepared import prepare_fixture  # noqa: E402
from harness.stages.replay.synth import synthesize  # noqa: E402

HARNESS = {"semi_implicit_euler": [Method("semi_implicit_euler", dt=d)
                                   for d in (4e-3, 2e-3, 1e-3, 5e-4)],
           "rk4": [Method("rk4", dt=d) for d in (2e-2, 1e-2, 5e-3, 2.5e-3, 1e-3)],
           "dop853": [Method("dop853", rtol=r, atol=r) for r in (1e-6, 1e-8, 1e-10, 1e-12)]}
_STEPS = [{"integrator": i, "dt": d} for i in ("Euler", "RK4") for d in (4e-3, 2e-3, 1e-3)]
NATIVE = {"mujoco": _STEPS, "crocoddyl": _STEPS,
          "drake": [{"integrator": "runge_kutta5", "dt": d} for d in (1e-2, 5e-3, 2e-3)]
          + [{"integrator": "runge_kutta3", "accuracy": a, "max_step": 0.01} for a in (1e-6, 1e-8)]}


def candidate(fixture, duration):
    model = prepare_fixture(fixture)
    if model.spec.floating:
        q0 = model.layout.neutral()
        v0 = np.zeros(model.layout.nv)
        v0[-3:] = (2.0, -3.0, 1.5)
        return synthesize(model, "zero", duration=duration, grid_dt=0.02, q0=q0, v0=v0)
    return synthesize(model, "pd", duration=duration, grid_dt=0.02)


def timed(fn, repeat):
    walls, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        walls.append(time.perf_counter() - t0)
    return out, statistics.median(walls)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fixture", default="chain7,free_body")
    ap.add_argument("--duration", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--engines", default=",".join(registry.ENGINES))
    ap.add_argument("--svg", help="write the speed–accuracy plot here")
    args = ap.parse_args(argv)
    rows = []
    for fx in args.fixture.split(","):
        cand = candidate(fx, args.duration)
        c = cand.controls()
        D = cand.model.layout.damping
        ref = rollout(registry.adapter_class("pinocchio")(cand.model), cand.q0, cand.v0, c,
                      Method("dop853", rtol=1e-13, atol=1e-13), D).x
        fn = lambda k, t, c=c: c.segment(k)(t)  # noqa: E731
        for e in args.engines.split(","):
            a = registry.adapter_class(e)(cand.model)
            for name, methods in HARNESS.items():
                for m in methods:
                    r, wall = timed(lambda: rollout(a, cand.q0, cand.v0, c, m, D), args.repeat)
                    rows.append((fx, e, f"harness {m.label}", wall, np.abs(r.x - ref).max()))
            for s in NATIVE.get(e, []) if hasattr(a, "native_rollout") else []:
                (Q, V), wall = timed(lambda: a.native_rollout(cand.q0, cand.v0, cand.t, fn, s),
                                     args.repeat)
                label = "native " + ",".join(f"{k}={v}" for k, v in s.items())
                rows.append((fx, e, label, wall, np.abs(np.hstack([Q, V]) - ref).max()))
            for row in rows[-(sum(map(len, HARNESS.values())) + len(NATIVE.get(e, []))):]:
                print(f"{row[0]:10s} {row[1]:10s} {row[2]:58s} {row[3] * 1e3:9.1f} ms "
                      f"error {row[4]:.2e}", flush=True)
    if args.svg:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fxs = sorted({r[0] for r in rows})
        fig, axes = plt.subplots(1, len(fxs), figsize=(7 * len(fxs), 5), squeeze=False)
        for ax, fx in zip(axes[0], fxs):
            for e in args.engines.split(","):
                for kind in ("harness semi", "harness rk4", "harness dop853", "native"):
                    pts = [(r[3], max(r[4], 1e-16)) for r in rows
                           if r[0] == fx and r[1] == e and r[2].startswith(kind)]
                    if pts:
                        x, y = zip(*pts)
                        ax.loglog(x, y, marker="o", ms=3, lw=0.8, label=f"{e} {kind}")
            ax.set_title(fx)
            ax.set_xlabel("wall time [s]")
            ax.set_ylabel("max state error")
            ax.legend(fontsize=6)
        fig.tight_layout()
        fig.savefig(args.svg)
        print(f"plot: {args.svg}")


if __name__ == "__main__":
    main()
