"""The in-house collocation fitter against OpenSim Moco (CasADi + IPOPT) on the same
problems: same data, same mesh, same transcription, same objective, same IPOPT tolerance.

Dimension legend: N mesh nodes (N − 1 intervals, uniform step h [s]); n_q coordinates.
Units: angles rad, rates rad/s, torques N·m, times s (wall = time.perf_counter, CPU =
time.process_time of this process; Moco runs in-process, single-threaded: parallel 0).

Part A — pendulum identification (harness/fit/problems.py): θ̈ = −p sin θ, p unknown
(truth 10 1/s²), θ measured with σ = 0.05 rad (pendulum_data, seed 0). Ours:
``pendulum_collocator(..., method="trapezoidal")``, i.e. ``harness fit --problem pendulum
--method trapezoidal --n N --p0 P0``. Moco: a point mass on a 1 m massless rod, gravity
(0, −p, 0) so that θ̈ = −p sin θ, p a MocoParameter on the model's gravity; a
MocoStateTrackingGoal on θ with weight 1/σ², divided by the duration.

Part B — swing tracking: the left arm + club chain of the golfer fitted to the bundled
swing (fixtures/golfers.py golfer3d with the fitted dimensions; the thorax welded to the
world; left clavicle 2, shoulder 3, elbow 1, pronation 1, wrist 2: n_q = 9), tracking the
fitted joint angles of ``harness swing data/swing/driver.c3d --quick`` (fit/trajectory.npz
"q" at the 97 frames, 360 Hz) with a torque on every coordinate:
J = mean ‖(q − q_ref)/σ_q‖² + w_e mean ‖τ‖². Ours: ``Collocator(ArticulatedDynamics(
pinocchio adapter, torque="free"), method="trapezoidal")``; Moco: the same chain built by
engines/opensim.py ``build_model`` with a CoordinateActuator (optimal force 1 N·m, so the
control is the torque) per coordinate, MocoStateTrackingGoal (weight 1/σ_q²) and
MocoControlGoal (weight w_e), both divided by the duration.

Both solvers: trapezoidal transcription on the same nodes, IPOPT tol 1e-8, constraint
violation tolerance 1e-4 (IPOPT's default, which ours keeps), max 3000 iterations, MUMPS,
the same initial guess (states: the measured/reference angles and their finite
differences; torques 0; p = p0). Moco evaluates its goals by trapezoidal quadrature and
ours by the node mean, so both solutions are scored by the same two functions
(``objective_nodes`` and ``objective_trapezoid``).

Run: ``.venv/bin/python bench/moco_vs_collocation.py [--swing-dir /tmp/w/swq]``.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.fit import problems as P  # noqa: E402
from harness.fit.collocation import (  # noqa: E402
    ArticulatedDynamics,
    Collocator,
    Objective,
    Trial,
)

TOL = 1e-8
CONSTR_TOL = 1e-4
MAX_ITER = 3000
ARM_JOINTS = ("l_clavicle_elevation", "l_clavicle_protraction", "l_shoulder_y",
              "l_shoulder_z", "l_shoulder_x", "l_elbow", "l_forearm_rot_pronation",
              "l_wrist_deviation", "l_wrist_flexion")
SIGMA_Q = 0.01      # rad, tracking scale of part B
W_EFFORT = 1e-3     # 1/(N·m)², effort weight of part B


@contextlib.contextmanager
def quiet_fd1():
    """Silence C-level stdout (IPOPT's banner, CasADi's timing table) inside the block."""
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


def timed(fn, repeats):
    """[(result, wall s, cpu s)] of ``repeats`` calls."""
    out = []
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        r = fn()
        out.append((r, time.perf_counter() - w0, time.process_time() - c0))
    return out


def med(runs, k):
    return statistics.median(r[k] for r in runs)


def trap_weights(N):
    """Trapezoid weights of a time mean over N uniform nodes (sum 1)."""
    w = np.full(N, 1.0)
    w[0] = w[-1] = 0.5
    return w / w.sum()


def objective_nodes(E, U=None, w_e=0.0):
    """Ours' form: mean over nodes of ‖E_i‖² (+ w_e mean ‖U_i‖²); E (N, k) whitened."""
    J = float(np.mean(np.sum(E ** 2, axis=1)))
    if U is not None:
        J += w_e * float(np.mean(np.sum(U ** 2, axis=1)))
    return J


def objective_trapezoid(E, U=None, w_e=0.0):
    """Moco's form: trapezoidal time mean of ‖E‖² (+ w_e ‖U‖²) over the nodes."""
    w = trap_weights(E.shape[0])
    J = float(w @ np.sum(E ** 2, axis=1))
    if U is not None:
        J += w_e * float(w @ np.sum(U ** 2, axis=1))
    return J


def _osim():
    import opensim as osim

    osim.Logger.setLevelString("error")
    return osim


def _table(osim, t, cols, data):
    tab = osim.TimeSeriesTable()
    tab.setColumnLabels(list(cols))
    for k in range(len(t)):
        tab.appendRow(float(t[k]), osim.RowVector([float(x) for x in data[k]]))
    tab.addTableMetaDataString("inDegrees", "no")
    return tab


def _solver(study, N, hessian):
    s = study.initCasADiSolver()
    s.set_num_mesh_intervals(N - 1)
    s.set_transcription_scheme("trapezoidal")
    s.set_multibody_dynamics_mode("explicit")
    s.set_optim_convergence_tolerance(TOL)
    s.set_optim_constraint_tolerance(CONSTR_TOL)
    s.set_optim_max_iterations(MAX_ITER)
    s.set_optim_hessian_approximation(hessian)
    s.set_parallel(0)
    s.set_verbosity(0)
    s.set_optim_ipopt_print_level(0)
    return s


def _vec(osim, x):
    return osim.Vector([float(v) for v in x])


def _col(traj, name, kind):
    get = {"state": traj.getStateMat, "control": traj.getControlMat}[kind]
    return np.asarray(get(name), float).ravel()


# ============================================================================ part A
PEND_Q = "/jointset/pin/q/value"
PEND_U = "/jointset/pin/q/speed"


def moco_pendulum(t, ym, p0, hessian="limited-memory"):
    """(MocoStudy, solver) of the pendulum identification; setup time excluded."""
    osim = _osim()
    m = osim.Model()
    m.setName("pendulum")
    m.set_gravity(osim.Vec3(0.0, -P.PENDULUM_TRUE_P, 0.0))
    bob = osim.Body("bob", 1.0, osim.Vec3(0.0), osim.Inertia(0.0))
    m.addBody(bob)
    pin = osim.PinJoint("pin", m.getGround(), osim.Vec3(0.0), osim.Vec3(0.0), bob,
                        osim.Vec3(0.0, 1.0, 0.0), osim.Vec3(0.0))   # bob 1 m below the hinge
    pin.upd_coordinates(0).setName("q")
    m.addJoint(pin)
    m.finalizeConnections()
    st = osim.MocoStudy()
    pr = st.updProblem()
    pr.setModel(m)
    pr.setTimeBounds(float(t[0]), float(t[-1]))
    pr.setStateInfo(PEND_Q, [-10.0, 10.0])
    pr.setStateInfo(PEND_U, [-100.0, 100.0])
    pr.addParameter(osim.MocoParameter("g_y", "/", "gravity", osim.MocoBounds(-1e3, -1e-3), 1))
    goal = osim.MocoStateTrackingGoal("track", 1.0)
    goal.setReference(osim.TableProcessor(_table(osim, t, [PEND_Q], ym[:, None])))
    ws = osim.MocoWeightSet()
    ws.cloneAndAppend(osim.MocoWeight(PEND_Q, 1.0 / P.PENDULUM_SIGMA ** 2))
    goal.setWeightSet(ws)
    goal.setDivideByDuration(True)
    pr.addGoal(goal)
    s = _solver(st, len(t), hessian)
    g = s.createGuess()
    g.resampleWithNumTimes(len(t))
    g.setState(PEND_Q, _vec(osim, ym))
    g.setState(PEND_U, _vec(osim, np.gradient(ym, t[1] - t[0])))
    g.setParameter("g_y", -p0)
    s.setGuess(g)
    return st, s


def part_a(N, p0, repeats, moco_repeats, hessian):
    t, x_true, ym = P.pendulum_data(N, seed=0)
    print(f"== Part A: pendulum identification, N = {N} nodes (h = {P.PENDULUM_H} s, "
          f"{t[-1]:.2f} s), seed 0, p0 = {p0:g}, truth p = {P.PENDULUM_TRUE_P:g} 1/s², "
          f"trapezoidal", flush=True)
    ours_runs = timed(lambda: P.pendulum_collocator(ym, p0, method="trapezoidal").solve(),
                      repeats)
    r = ours_runs[0][0]
    th_o = r.states[0][:, 0]
    w0 = time.perf_counter()
    st, _ = moco_pendulum(t, ym, p0, hessian)
    moco_setup = time.perf_counter() - w0

    def solve():
        with quiet_fd1():
            return st.solve()
    moco_runs = timed(solve, moco_repeats)
    sol = moco_runs[0][0]
    if sol.isSealed():
        sol.unseal()   # Moco seals an unconverged solution; we score where it stopped
    th_m = _col(sol, PEND_Q, "state")
    p_m = -sol.getParameter("g_y")
    E_o = ((th_o - ym) / P.PENDULUM_SIGMA)[:, None]
    E_m = ((th_m - ym) / P.PENDULUM_SIGMA)[:, None]
    row = dict(
        problem=f"pendulum N={N}",
        ours_it=r.iterations, moco_it=sol.getNumIterations(),
        ours_status=r.status, moco_status=sol.getStatus(),
        ours_wall=med(ours_runs, 1), moco_wall=med(moco_runs, 1),
        ours_cpu=med(ours_runs, 2), moco_cpu=med(moco_runs, 2),
        ours_setup=r.setup_time_s, moco_setup=moco_setup,
        ours_nodes=objective_nodes(E_o), moco_nodes=objective_nodes(E_m),
        ours_trap=objective_trapezoid(E_o), moco_trap=objective_trapezoid(E_m),
        moco_own_objective=sol.getObjective(),
        ours_p=r.params["p"], moco_p=p_m,
        ours_walls=[x[1] for x in ours_runs], moco_walls=[x[1] for x in moco_runs],
        ours_cpus=[x[2] for x in ours_runs], moco_cpus=[x[2] for x in moco_runs],
        max_state_diff=float(np.max(np.abs(th_o - th_m))))
    _report(row, "p [1/s²]", P.PENDULUM_TRUE_P, hessian)
    return row


# ============================================================================ part B
def arm_spec(dims):
    """The left arm + club chain of golfer3d(dims), the thorax welded to the world."""
    from fixtures.golfers import GolferDims, golfer3d
    from harness.core.spec import FixtureSpec

    full = golfer3d(GolferDims(**dims), root="actuated")
    keep, stack = ["thorax"], ["thorax"]
    joints = []
    while stack:
        b = stack.pop()
        for j in full.children(b):
            if j.child.startswith(("l_", "club")):
                joints.append(j)
                keep.append(j.child)
                stack.append(j.child)
    bodies = tuple(b for b in full.bodies if b.name in keep)
    frames = tuple(f for f in full.frames if f.name == "club_head_centre")
    spec = FixtureSpec(name="golfer_left_arm", bodies=bodies, joints=tuple(joints),
                       frames=frames, gravity=full.gravity,
                       description="left arm + club of the fitted golfer, thorax welded "
                                   "to the world").validate()
    assert tuple(j.name for j in spec.moving_joints()) == ARM_JOINTS, spec.moving_joints()
    return full, spec


def _coord_path(name):
    return f"/jointset/{name}/{name}/value", f"/jointset/{name}/{name}/speed"


def moco_arm(spec, t, Qr, hessian="limited-memory", max_iter=MAX_ITER):
    from engines.opensim import build_model

    osim = _osim()
    m = build_model(spec)
    for n in ARM_JOINTS:
        a = osim.CoordinateActuator(n)
        a.setName(f"tau_{n}")
        a.setOptimalForce(1.0)
        a.setMinControl(-1e4)
        a.setMaxControl(1e4)
        m.addForce(a)
    m.finalizeConnections()
    st = osim.MocoStudy()
    pr = st.updProblem()
    pr.setModel(m)
    pr.setTimeBounds(float(t[0]), float(t[-1]))
    pr.setStateInfoPattern("/jointset/.*/value", [-10.0, 10.0])
    pr.setStateInfoPattern("/jointset/.*/speed", [-1000.0, 1000.0])
    pr.setControlInfoPattern("/forceset/tau_.*", [-1e4, 1e4])
    vals = [_coord_path(n)[0] for n in ARM_JOINTS]
    goal = osim.MocoStateTrackingGoal("track", 1.0)
    goal.setReference(osim.TableProcessor(_table(osim, t, vals, Qr)))
    ws = osim.MocoWeightSet()
    for v in vals:
        ws.cloneAndAppend(osim.MocoWeight(v, 1.0 / SIGMA_Q ** 2))
    goal.setWeightSet(ws)
    goal.setDivideByDuration(True)
    pr.addGoal(goal)
    eff = osim.MocoControlGoal("effort", W_EFFORT)
    eff.setDivideByDuration(True)
    pr.addGoal(eff)
    s = _solver(st, len(t), hessian)
    s.set_optim_max_iterations(max_iter)
    g = s.createGuess()
    g.resampleWithNumTimes(len(t))
    Vg = np.gradient(Qr, t[1] - t[0], axis=0)
    for k, n in enumerate(ARM_JOINTS):
        qp, up = _coord_path(n)
        g.setState(qp, _vec(osim, Qr[:, k]))
        g.setState(up, _vec(osim, Vg[:, k]))
        g.setControl(f"/forceset/tau_{n}", _vec(osim, np.zeros(len(t))))
    s.setGuess(g)
    return st, s


def trapezoid_defect(adapter, t, Q, V, TAU):
    """max |x_{i+1} − x_i − h/2 (f_i + f_{i+1})| [rad, rad/s] with f = [v, FD(q, v, τ)]
    from ``adapter``: how well a solution satisfies the same discrete dynamics."""
    h = t[1] - t[0]
    A = np.stack([adapter.forward_dynamics(Q[i], V[i], TAU[i]) for i in range(len(t))])
    dq = Q[1:] - Q[:-1] - 0.5 * h * (V[1:] + V[:-1])
    dv = V[1:] - V[:-1] - 0.5 * h * (A[1:] + A[:-1])
    return float(max(np.abs(dq).max(), np.abs(dv).max()))


def part_b(swing_dir, repeats, moco_repeats, hessian, moco_max_iter):
    import json

    from harness.model.prepared import PreparedModel
    from harness.model.registry import adapter_class

    fit = json.loads((Path(swing_dir) / "fit" / "fit.json").read_text())
    tr = np.load(Path(swing_dir) / "fit" / "trajectory.npz")
    full, spec = arm_spec(fit["model"]["dims"])
    order = [j.name for j in full.moving_joints()]
    cols = [order.index(n) for n in ARM_JOINTS]
    t, Qr = np.asarray(tr["t"], float), np.asarray(tr["q"], float)[:, cols]
    N, h = len(t), float(t[1] - t[0])
    print(f"\n== Part B: swing tracking, left arm + club chain ({len(ARM_JOINTS)} coordinates, "
          f"thorax welded), {N} nodes (h = 1/{1 / h:.0f} s, {t[0]:.4f}–{t[-1]:.4f} s), "
          f"σ_q = {SIGMA_Q} rad, w_effort = {W_EFFORT:g} 1/(N·m)², trapezoidal; reference "
          f"{swing_dir}/fit/trajectory.npz", flush=True)
    ad = adapter_class("pinocchio")(PreparedModel(spec, "bench:golfer_left_arm"))
    dyn = ArticulatedDynamics(ad, torque="free")
    nq = len(ARM_JOINTS)
    Vg = np.gradient(Qr, h, axis=0)
    C = np.hstack([np.eye(nq), np.zeros((nq, nq))])

    def ours():
        trial = Trial(h=h, y=Qr, x_guess=np.hstack([Qr, Vg]), u_guess=np.zeros((N, nq)),
                      t0=float(t[0]))
        obj = Objective(C=C, sigma=np.full(nq, SIGMA_Q), w_effort=W_EFFORT)
        return Collocator(dyn, [trial], obj, method="trapezoidal").solve(
            options={"tol": TOL, "max_iter": MAX_ITER})
    ours_runs = timed(ours, repeats)
    r = ours_runs[0][0]
    Qo, Vo, Uo = r.states[0][:, :nq], r.states[0][:, nq:], r.controls[0]
    w0 = time.perf_counter()
    st, _ = moco_arm(spec, t, Qr, hessian, moco_max_iter)
    moco_setup = time.perf_counter() - w0

    def solve():
        with quiet_fd1():
            return st.solve()
    moco_runs = timed(solve, moco_repeats)
    sol = moco_runs[0][0]
    if sol.isSealed():
        sol.unseal()   # Moco seals an unconverged solution; we score where it stopped
    Qm = np.stack([_col(sol, _coord_path(n)[0], "state") for n in ARM_JOINTS], axis=1)
    Vm = np.stack([_col(sol, _coord_path(n)[1], "state") for n in ARM_JOINTS], axis=1)
    Um = np.stack([_col(sol, f"/forceset/tau_{n}", "control") for n in ARM_JOINTS], axis=1)
    Eo, Em = (Qo - Qr) / SIGMA_Q, (Qm - Qr) / SIGMA_Q
    row = dict(
        problem=f"arm tracking N={N}",
        ours_it=r.iterations, moco_it=sol.getNumIterations(),
        ours_status=r.status, moco_status=sol.getStatus(),
        ours_wall=med(ours_runs, 1), moco_wall=med(moco_runs, 1),
        ours_cpu=med(ours_runs, 2), moco_cpu=med(moco_runs, 2),
        ours_setup=r.setup_time_s, moco_setup=moco_setup,
        ours_nodes=objective_nodes(Eo, Uo, W_EFFORT), moco_nodes=objective_nodes(Em, Um, W_EFFORT),
        ours_trap=objective_trapezoid(Eo, Uo, W_EFFORT),
        moco_trap=objective_trapezoid(Em, Um, W_EFFORT),
        moco_own_objective=sol.getObjective(),
        ours_walls=[x[1] for x in ours_runs], moco_walls=[x[1] for x in moco_runs],
        ours_cpus=[x[2] for x in ours_runs], moco_cpus=[x[2] for x in moco_runs],
        ours_rms_track_rad=float(np.sqrt(np.mean((Qo - Qr) ** 2))),
        moco_rms_track_rad=float(np.sqrt(np.mean((Qm - Qr) ** 2))),
        ours_defect=trapezoid_defect(ad, t, Qo, Vo, Uo),
        moco_defect=trapezoid_defect(ad, t, Qm, Vm, Um),
        max_q_diff=float(np.max(np.abs(Qo - Qm))), max_tau_diff=float(np.max(np.abs(Uo - Um))),
        peak_tau=float(np.max(np.abs(Uo))))
    _report(row, None, None, hessian)
    return row


# ============================================================================ output
def _report(w, pname, truth, hessian):
    print(f"  ours: {len(w['ours_walls'])} solves, Moco ({hessian} Hessian): "
          f"{len(w['moco_walls'])} solves; medians below")
    print(f"  wall s   ours {w['ours_wall']:.4f}  Moco {w['moco_wall']:.3f}  ratio "
          f"{w['moco_wall'] / w['ours_wall']:.0f}x   (all: ours "
          f"{', '.join(f'{x:.4f}' for x in w['ours_walls'])}; Moco "
          f"{', '.join(f'{x:.3f}' for x in w['moco_walls'])})")
    print(f"  CPU s    ours {w['ours_cpu']:.4f}  Moco {w['moco_cpu']:.3f}  ratio "
          f"{w['moco_cpu'] / w['ours_cpu']:.0f}x   (all: ours "
          f"{', '.join(f'{x:.4f}' for x in w['ours_cpus'])}; Moco "
          f"{', '.join(f'{x:.3f}' for x in w['moco_cpus'])})")
    print(f"  setup s  ours {w['ours_setup']:.4f}  Moco {w['moco_setup']:.3f} "
          "(Moco: model, study and solver objects; its NLP is built inside solve)")
    print(f"  iterations ours {w['ours_it']}  Moco {w['moco_it']};  status ours "
          f"{w['ours_status']}  Moco {w['moco_status']}")
    if w["moco_status"] != "Solve_Succeeded":
        print("  Moco did not converge: its times are lower bounds of a converged solve, "
              "and its objective is where it stopped")
    dn, dt = w["moco_nodes"] / w["ours_nodes"] - 1, w["moco_trap"] / w["ours_trap"] - 1
    print(f"  objective, node mean (ours' form):      ours {w['ours_nodes']:.10g}  Moco "
          f"{w['moco_nodes']:.10g}  (Moco − ours) / ours {dn:+.2e}")
    print(f"  objective, trapezoid mean (Moco's form): ours {w['ours_trap']:.10g}  Moco "
          f"{w['moco_trap']:.10g}  (Moco − ours) / ours {dt:+.2e};"
          f"  Moco's own value {w['moco_own_objective']:.10g}")
    if pname:
        eo, em = 100 * (w["ours_p"] / truth - 1), 100 * (w["moco_p"] / truth - 1)
        print(f"  identified {pname}: ours {w['ours_p']:.6f} ({eo:+.4f} %)"
              f"  Moco {w['moco_p']:.6f} ({em:+.4f} %)  truth {truth:g}")
        print(f"  largest |θ_ours − θ_Moco| {w['max_state_diff']:.2e} rad")
    else:
        print(f"  RMS tracking error: ours {w['ours_rms_track_rad']:.3e} rad  Moco "
              f"{w['moco_rms_track_rad']:.3e} rad;  peak |τ| {w['peak_tau']:.1f} N·m")
        print(f"  trapezoidal defect under the Pinocchio model: ours {w['ours_defect']:.1e}  "
              f"Moco {w['moco_defect']:.1e}")
        print(f"  largest |q_ours − q_Moco| {w['max_q_diff']:.2e} rad, |τ_ours − τ_Moco| "
              f"{w['max_tau_diff']:.2e} N·m")
    sys.stdout.flush()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=100, help="pendulum nodes (default 100)")
    ap.add_argument("--p0", type=float, default=5.0, help="pendulum start p0 (default 5)")
    ap.add_argument("--repeats", type=int, default=5, help="solves of ours (default 5)")
    ap.add_argument("--moco-repeats", type=int, default=1,
                    help="solves of Moco (default 1: a Moco solve takes minutes here)")
    ap.add_argument("--repeats-b", type=int, default=3, help="solves of ours in part B")
    ap.add_argument("--moco-max-iter-b", type=int, default=100,
                    help="IPOPT iteration cap of Moco in part B (default 100)")
    ap.add_argument("--swing-dir", default="/tmp/w/swq",
                    help="output folder of `harness swing ... --quick` (part B reference)")
    ap.add_argument("--hessian", default="limited-memory",
                    help="Moco's optim_hessian_approximation (default: Moco's default)")
    ap.add_argument("--part", choices=("a", "b", "both"), default="both")
    args = ap.parse_args(argv)
    import opensim

    print(f"opensim {opensim.GetVersion()}, Moco CasADi solver; IPOPT tol {TOL:g}, "
          f"constraint tol {CONSTR_TOL:g}; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}")
    t0 = time.perf_counter()
    rows = []
    if args.part in ("a", "both"):
        rows.append(part_a(args.n, args.p0, args.repeats, args.moco_repeats, args.hessian))
    if args.part in ("b", "both"):
        print(f"\nPart B: Moco capped at {args.moco_max_iter_b} IPOPT iterations (about 2.5 s "
              "CPU each here; ours converges in a handful)", flush=True)
        rows.append(part_b(args.swing_dir, args.repeats_b, args.moco_repeats, args.hessian,
                           args.moco_max_iter_b))
    print(f"\nscript wall time {time.perf_counter() - t0:.0f} s")
    return rows


if __name__ == "__main__":
    main()
