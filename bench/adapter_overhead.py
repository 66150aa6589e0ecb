"""Adapter overhead: per engine, the per-call cost of the adapter's forward dynamics
against the raw binding call on the same state, as ratios measured in one run (timings
on this machine are noisy; ratios taken back to back are less so): each figure is the
median over 5 interleaved rounds of the fastest of ``--repeat`` loops of ``--number``
calls. Also the wall time of `harness qualify` on the catalog.

Raw calls: what a user of the binding writes to get v̇ for the same (q, v, τ) under the
same damping law (−D v, which Pinocchio and Crocoddyl do not apply themselves), result
copied to a fresh array; native coordinates are prepared outside the timed call:
  pinocchio  pin.aba(model, data, q, v, τ − D v)
  crocoddyl  DifferentialActionModelFreeFwdDynamics.calc(data, [q, v], τ − D v); xout copy
  mujoco     qpos/qvel/qfrc_applied set, mj_forward, qacc copy
  drake      SetPositions, SetVelocities, FixValue(τ), acceleration port Eval, copy
  opensim    setQ, setU (Simbody order, prepared), realizeDynamics, gravity body forces,
             each Force's computeForce, calcAcceleration, copy
raw* is the same with exactly the binding calls the adapter makes, so adapter/raw* is
the cost of the adapter's own work (coordinate changes, checks, Python glue) alone:
  mujoco     the MjData views taken once (each attribute access builds a new view)
  opensim    Q, U and τ Vectors built per call from the prepared numpy arrays
             (createFromMat), τ's handed to each Force's computeForce to add into; the
             output Vectors made once (u̇ and the body accelerations; with armature the
             residual, M and the zero input)
  drake      SetPositionsAndVelocities and τ written in place into the port's fixed value
             (FixValue allocates a new one each call); pinocchio, crocoddyl: raw* = raw
For fixed-base fixtures the canonical and native coordinates coincide; for floating
ones the adapter also converts quaternion order and velocity frames (reported apart;
MuJoCo's adapter, up to 24 dofs, instead runs mj_forward in a frame aligned with the
root, so only gravity's direction there depends on the root quaternion). The adapters
keep R_WB of the last root quaternion (MuJoCo in that frame: R_WBᵀ g), so repeated calls
at one q (as in finite differences in v or τ) skip it: "q varies" times calls alternating
between two configurations, where it is rebuilt every call. The table is also written to
bench/adapter_overhead.txt (``--out``).

Run: .venv/bin/python bench/adapter_overhead.py [--repeat 7] [--number 2000] [--no-qualify]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from statistics import median

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from harness.model import registry  # noqa: E402
from harness.model.prepared import prepare_fixture  # noqa: E402


def raw_call(engine, ad, q, v, tau, same_calls=False):
    """A zero-argument closure calling the engine's own binding on native inputs;
    ``same_calls``: exactly the binding calls the adapter makes (raw* in the table)."""
    if engine == "pinocchio":
        import pinocchio as pin

        m, d = ad._m, ad._d
        qn, vn, tn, Dn = ad._q(q), ad._v(v), ad._v(tau), ad._v(ad._D)
        if ad._damped:
            return lambda: pin.aba(m, d, qn, vn, tn - Dn * vn)
        return lambda: pin.aba(m, d, qn, vn, tn)
    if engine == "crocoddyl":
        dam, data = ad._fwd, ad._fwd_data
        x = ad._set_x(q, v).copy()
        qn, vn, u, Dn = x[:ad.nq].copy(), x[ad.nq:].copy(), ad._v(tau), ad._v(ad._D)
        if ad._damped:
            return lambda: (dam.calc(data, np.concatenate((qn, vn)), u - Dn * vn),
                            data.xout.copy())
        return lambda: (dam.calc(data, np.concatenate((qn, vn)), u), data.xout.copy())
    if engine == "mujoco":
        import mujoco

        m, d = ad._m, ad._d
        ad._set_qpos(q)
        qpos = d.qpos.copy()
        qvel = ad._to_mj_v(v, ad._T(q))
        qfrc = ad._to_mj_v(tau, ad._T(q))
        if same_calls:
            vq, vv, vf, va = d.qpos, d.qvel, d.qfrc_applied, d.qacc

            def f():
                vq[:] = qpos
                vv[:] = qvel
                vf[:] = qfrc
                mujoco.mj_forward(m, d)
                return va.copy()
            return f

        def f():
            d.qpos[:] = qpos
            d.qvel[:] = qvel
            d.qfrc_applied[:] = qfrc
            mujoco.mj_forward(m, d)
            return d.qacc.copy()
        return f
    if engine == "drake":
        plant, ctx, port, acc = ad._plant, ad._ctx, ad._tau_port, ad._acc_port
        qd, R = ad._drake_q(q), ad._R(q)
        vd, td = ad._to_dk(v, R), ad._to_dk(tau, R)
        if same_calls:
            x = np.concatenate((qd, vd))

            def f():  # port.value/.vector: the live fixed value (FixValue frees the old)
                plant.SetPositionsAndVelocities(ctx, x)
                port.value.GetMutableData()  # notifies the port's dependents
                port.vector.SetFromVector(td)
                return np.array(acc.Eval(ctx))
            return f

        def f():
            plant.SetPositions(ctx, qd)
            plant.SetVelocities(ctx, vd)
            port.FixValue(ctx, td)
            return np.array(acc.Eval(ctx))
        return f
    if engine == "opensim":
        import opensim as osim

        mdl, s, mat = ad._m, ad._s, ad._mat
        P = None if ad._simple else ad._P(q)
        qo = osim.Vector.createFromMat(ad._q_native(q))
        uo = osim.Vector.createFromMat(ad._to_o(v, P))
        tau_o = ad._to_o(tau, P)
        producers = ad._producers

        arm = np.diag(ad._arm_o) if ad._has_arm else None
        zero = osim.Vector.createFromMat(np.zeros(ad._nu))
        if same_calls:
            udot, a_gb, r, M = (osim.Vector(), osim.VectorOfSpatialVec(), osim.Vector(),
                                osim.Matrix())
            qn, un = ad._q_native(q), ad._to_o(v, P)

            def f():  # the adapter's calls: outputs kept, the forces added into τ's Vector
                s.setQ(osim.Vector.createFromMat(qn))
                s.setU(osim.Vector.createFromMat(un))
                mdl.realizeDynamics(s)
                body = mdl.getGravityBodyForces(s)
                mob = osim.Vector.createFromMat(tau_o)
                for fp in producers:
                    fp.computeForce(s, body, mob)
                if arm is not None:
                    mat.calcResidualForceIgnoringConstraints(s, zero, body, zero, r)
                    mat.calcM(s, M)
                    return np.linalg.solve(M.to_numpy() + arm, mob.to_numpy() - r.to_numpy())
                mat.calcAcceleration(s, mob, body, udot, a_gb)
                return udot.to_numpy()
            return f

        def f():  # what an OpenSim user writes: state, forces, calcAcceleration
            s.setQ(qo)
            s.setU(uo)
            mdl.realizeDynamics(s)
            body = mdl.getGravityBodyForces(s)
            mob = osim.Vector(ad._nu, 0.0)
            for fp in producers:  # the model's own forces (joint damping)
                fp.computeForce(s, body, mob)
            if arm is not None:  # Simbody has no armature: (M + A) u̇ = τ − residual
                r, M = osim.Vector(), osim.Matrix()
                mat.calcResidualForceIgnoringConstraints(s, mob, body, zero, r)
                mat.calcM(s, M)
                return np.linalg.solve(M.to_numpy() + arm, tau_o - r.to_numpy())
            udot, a_gb = osim.Vector(), osim.VectorOfSpatialVec()
            mat.calcAcceleration(s, osim.Vector.createFromMat(mob.to_numpy() + tau_o), body,
                                 udot, a_gb)
            return udot.to_numpy().copy()
        return f
    raise ValueError(engine)


def per_call(fn, number, repeat):
    """Per-call time [s]: the fastest of ``repeat`` loops of ``number`` calls (the other
    jobs of a shared machine only ever add time; the minimum is the least disturbed)."""
    best = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best.append((time.perf_counter() - t0) / number)
    return min(best)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--number", type=int, default=2000)
    ap.add_argument("--no-qualify", action="store_true")
    ap.add_argument("--fixtures", default="pendulum,chain7,free_body,tree_floating,golfer3d")
    ap.add_argument("--engines", default=",".join(registry.ENGINES))
    ap.add_argument("--out", default=str(ROOT / "bench" / "adapter_overhead.txt"),
                    help="text file the table is written to ('' for none)")
    args = ap.parse_args()
    lines = []

    def say(line):
        print(line, flush=True)
        lines.append(line)

    say(f"{'fixture':14s} {'engine':10s} {'base':8s} {'raw µs':>7s} {'raw* µs':>8s} "
        f"{'adapter µs':>10s} {'ratio':>6s} {'ratio*':>6s} {'q varies µs':>11s} {'ratio':>6s}")
    worst = {"fixed": {}, "floating": {}}
    for fx in args.fixtures.split(","):
        model = prepare_fixture(fx)
        rng = np.random.default_rng(0)
        q = model.layout.random_q(rng)
        v, tau = rng.normal(size=model.layout.nv), rng.normal(size=model.layout.nv)
        q2 = model.layout.random_q(rng)
        for engine in args.engines.split(","):
            ad = registry.adapter_class(engine)(model)
            raw = raw_call(engine, ad, q, v, tau)
            raw_same = raw_call(engine, ad, q, v, tau, same_calls=True)
            for fn in (raw, raw_same):
                native = fn()
                native = native[1] if engine == "crocoddyl" else native
                native = native[ad._vperm] if engine == "opensim" else native
                if not model.spec.floating:  # same coordinates: same answer
                    assert np.allclose(native, ad.forward_dynamics(q, v, tau)), engine
            wrapped = lambda: ad.forward_dynamics(q, v, tau)  # noqa: E731

            def varying():  # two configurations in turn: R_WB rebuilt on every call
                ad.forward_dynamics(q, v, tau)
                ad.forward_dynamics(q2, v, tau)
            # interleave to share the machine's state between the measurements
            t_raw, t_same, t_ad, t_var = [], [], [], []
            for _ in range(5):
                t_raw.append(per_call(raw, args.number, args.repeat))
                t_same.append(per_call(raw_same, args.number, args.repeat))
                t_ad.append(per_call(wrapped, args.number, args.repeat))
                t_var.append(per_call(varying, args.number // 2, args.repeat) / 2)
            r, r1, a, av = median(t_raw), median(t_same), median(t_ad), median(t_var)
            base = "floating" if model.spec.floating else "fixed"
            say(f"{fx:14s} {engine:10s} {base:8s} {r * 1e6:7.2f} {r1 * 1e6:8.2f} "
                f"{a * 1e6:10.2f} {a / r:6.2f} {a / r1:6.2f} {av * 1e6:11.2f} {av / r:6.2f}")
            w = worst[base].setdefault(engine, [0.0, 0.0, 0.0])
            worst[base][engine] = [max(w[0], a / r), max(w[1], a / r1), max(w[2], av / r)]
    for base, table in worst.items():
        if table:
            say(f"worst {base}-base ratio per engine (adapter/raw, adapter/raw*, q varies/raw): "
                + ", ".join(f"{e} {r[0]:.2f} {r[1]:.2f} {r[2]:.2f}" for e, r in table.items()))
    if args.out:
        Path(args.out).write_text(
            "# bench/adapter_overhead.py: median per-call forward dynamics, adapter vs the raw "
            "binding call (raw* = the adapter's own binding calls), one run\n"
            + "\n".join(lines) + "\n")
    if not args.no_qualify:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            proc = subprocess.run([str(ROOT / ".venv/bin/harness"), "qualify", "--out",
                                   f"{tmp}/q", "--quiet"], capture_output=True, text=True)
            wall = time.perf_counter() - t0
        print(f"harness qualify (catalog, ci profile): {wall:.1f} s wall, exit {proc.returncode}")


if __name__ == "__main__":
    main()
