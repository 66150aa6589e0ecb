"""Gradients through events (harness/fit/events.py): forward sensitivities and the adjoint
of single shooting carry the jump at an impact (event-time sensitivity, saltation matrix,
the restitution's reset term). Checked against a closed form (a bouncing ball) and against
central differences on two hybrid problems: the bouncing ball with unknown restitution,
and a planar two-link arm (canonical model through the registry's preferred "fit"
engine) striking a free ball. Without the jump term the gradient must be wrong by a lot;
near grazing the gate must refuse the gradient.

``python -m tests.unit.test_event_gradients`` prints the figures of docs/fitter.md
("Gradients through events")."""
from __future__ import annotations

import numpy as np
import pytest

from harness.core.spec import Body, FixtureSpec, Frame, Joint
from harness.core.tolerances import lookup
from harness.fit import events as ev
from harness.fit import shooting as sh
from harness.model import registry
from harness.model.prepared import PreparedModel

G = 9.81
R_BALL = 0.1


# ----- the two problems -------------------------------------------------------------------
def _measurements(nx, N, every, seed, sigma=0.3, weight=4.0):
    rng = np.random.default_rng(seed)
    steps = np.arange(0, N + 1, every)
    return sh.Measurements(steps, sigma * rng.normal(size=(len(steps), nx)), np.eye(nx),
                           np.full(nx, weight))


def ball_problem(jump="full", z0=1.0, vz0=0.7, e=0.8, T=1.0, N=100, allow_grazing=False):
    """Bouncing ball, x = [x, z, ẋ, ż], z = [x0 (4), e]: one impact at t ≈ 0.51 s."""
    hs = ev.bouncing_ball(R_BALL, G)
    P = ev.HybridShooting(hs, sh.Controls("piecewise_constant", 1, T), N,
                          _measurements(4, N, 10, 0), jump=jump, allow_grazing=allow_grazing)
    return P, np.array([0.0, z0, 0.5, vz0, e])


def planar_arm_spec() -> FixtureSpec:
    """Two links in the x–z plane (hinges about y): upper 0.4 m, lower 0.35 m to ``tip``."""
    I1 = (0.02, 0.0, 0.0, 0.0, 0.02, 0.0, 0.0, 0.0, 0.002)
    return FixtureSpec(
        name="planar_arm", description="planar two-link arm for event gradients",
        bodies=(Body("base", 0.0), Body("upper", 1.2, (0.0, 0.0, -0.2), I1),
                Body("lower", 0.8, (0.0, 0.0, -0.17), tuple(0.6 * x for x in I1))),
        joints=(Joint("shoulder", "revolute", "base", "upper", (0.0, 0.0, 0.0),
                      (0.0, 0.0, 0.0), (0.0, 1.0, 0.0), -3.1, 3.1),
                Joint("elbow", "revolute", "upper", "lower", (0.0, 0.0, -0.4),
                      (0.0, 0.0, 0.0), (0.0, 1.0, 0.0), -3.1, 3.1)),
        frames=(Frame("tip", "lower", (0.0, 0.0, -0.35)),))


_ARM: dict = {}


def arm_ball():
    """ArmBall of the planar arm through the registry's preferred "fit" engine (cached)."""
    if "arm" not in _ARM:
        engine = registry.preferred("fit")
        a = registry.adapter_class(engine)(PreparedModel(planar_arm_spec(), "test:planar_arm"))
        _ARM["arm"] = ev.ArmBall(a, "tip", mass=0.2, radius=0.05)
    return _ARM["arm"]


def arm_state(offset=0.07, angle=0.7):
    """x0: arm at q = (1.0, 0.3) swinging down at 3 rad/s; the ball near where the tip
    passes at shoulder angle 0.4 rad (``offset`` [m] from it, direction ``angle``), tossed
    up at 1 m/s."""
    arm = arm_ball()
    pt = arm.adapter.frame_pose(np.array([0.4, 0.3]), "tip")[:3]
    b = pt + offset * np.array([-np.cos(angle), 0.0, -np.sin(angle)])
    return np.concatenate([[1.0, 0.3], [-3.0, 0.0], b, [0.0, 0.0, 1.0]])


def arm_problem(jump="full", x0=None, allow_grazing=False, T=0.3, N=150):
    """Arm + ball, z = [x0 (10), θ (3 piecewise-linear torques × 2), e]."""
    arm = arm_ball()
    hs = arm.system()
    P = ev.HybridShooting(hs, sh.Controls("piecewise_linear", 3, T), N,
                          _measurements(hs.nx, N, 15, 1, sigma=0.1, weight=1.0),
                          jump=jump, allow_grazing=allow_grazing)
    theta = 0.5 * np.random.default_rng(1).normal(size=(3, 2))
    x0 = arm_state() if x0 is None else x0
    return P, np.concatenate([x0, theta.reshape(-1), [0.7]])


def _rel(g, ref):
    return float(np.abs(g - ref).max() / np.abs(ref).max())


def gradient_errors(P, z, forward=ev.JUMPS):
    """{jump: (forward vs FD, adjoint vs FD, adjoint vs forward)}, the events of z; the
    forward sensitivities (the costly part) only for the jumps in ``forward`` (else nan)."""
    gd = P.gradient_fd(z, 1e-6)
    out = {}
    for jump in ev.JUMPS:
        P.jump = jump
        ga = P.gradient_adjoint(z)
        gf = P.gradient_forward(z) if jump in forward else np.full_like(ga, np.nan)
        out[jump] = (_rel(gf, gd), _rel(ga, gd), _rel(ga, gf))
    P.jump = "full"
    P.gradient_adjoint(z)
    return out, P.events


# ----- tests ----------------------------------------------------------------------------------
def test_ball_sensitivities_match_closed_form():
    """z(T), ż(T) after one bounce: t_e = (ż0 + √(ż0² + 2g(z0 − r)))/g, ż⁻ = ż0 − g t_e,
    ż⁺ = −e ż⁻, z(T) = r + ż⁺ τ − g τ²/2, ż(T) = ż⁺ − g τ (τ = T − t_e), differentiated
    by hand w.r.t. z0, ż0, e; and the event-time sensitivity −g_x/D = ∂t_e/∂x0."""
    P, z = ball_problem()
    tol = lookup("shooting", "event_gradient_analytic")
    tr = P.trajectory(z, sens=True)
    _, z0, _, vz0, e = z
    te = (vz0 + np.sqrt(vz0**2 + 2 * G * (z0 - R_BALL))) / G
    vm = vz0 - G * te
    vp = -e * vm
    tau = P.ctrl.T - te
    assert len(tr.events) == 1 and abs(tr.events[0].t - te) <= tol.rtol * te
    ev0 = tr.events[0]
    assert abs(ev0.jump["dt_dx"][1] - (-1.0 / vm)) <= tol.rtol / abs(vm)  # ∂t_e/∂z⁻
    rows = {}
    for name, dz0, dvz0, de in (("z0", 1.0, 0.0, 0.0), ("vz0", 0.0, 1.0, 0.0),
                                ("e", 0.0, 0.0, 1.0)):
        dte = -(dz0 + te * dvz0) / vm
        dvm = dvz0 - G * dte
        dvp = -de * vm - e * dvm
        rows[name] = (dvp * tau - vp * dte + G * tau * dte, dvp + G * dte)
    S = tr.S[-1]
    for name, col in (("z0", 1), ("vz0", 3), ("e", 4)):
        want = np.array(rows[name])
        got = S[[1, 3], col]
        assert np.abs(got - want).max() <= tol.rtol * np.abs(want).max(), (name, got, want)
    assert abs(tr.x[-1, 1] - (R_BALL + vp * tau - 0.5 * G * tau**2)) <= 1e-12


def test_ball_gradient_through_impact_and_without_jump():
    P, z = ball_problem()
    errs, events = gradient_errors(P, z)
    tol = lookup("shooting", "event_gradient")
    assert len(events) == 1 and not events[0].grazing
    fwd, adj, both = errs["full"]
    assert fwd <= tol.rtol and adj <= tol.rtol and both <= tol.rtol, errs["full"]
    bound = lookup("shooting", "no_jump_error").atol
    for jump in ("reset_only", "none"):
        assert errs[jump][0] >= bound, (jump, errs[jump])
        assert errs[jump][1] >= bound, (jump, errs[jump])


def test_arm_reset_jacobian_is_analytic_and_right():
    """R_x, R_p of the arm–ball impact (engine derivatives, drift-polarised tip Hessian)
    against central differences of the reset map; the reset gives the ball and the tip a
    normal relative velocity −e times the incoming one."""
    arm = arm_ball()
    x = arm_state()
    p = np.array([0.7])
    R_x, R_p = arm.reset_jac(0.0, x, p)
    eps = 1e-6
    fd = np.empty_like(R_x)
    for j in range(x.size):
        d = np.zeros(x.size)
        d[j] = eps
        fd[:, j] = (arm.reset(0.0, x + d, p) - arm.reset(0.0, x - d, p)) / (2 * eps)
    fdp = (arm.reset(0.0, x, p + eps) - arm.reset(0.0, x, p - eps)) / (2 * eps)
    tol = lookup("shooting", "event_gradient")
    assert _rel(R_x, fd) <= tol.rtol, _rel(R_x, fd)
    assert _rel(R_p[:, 0], fdp) <= tol.rtol
    k_in, k_out = arm._impact(x, 0.7), arm._impact(arm.reset(0.0, x, p), 0.7)
    assert abs(k_out["w"] + 0.7 * k_in["w"]) <= 1e-12 * abs(k_in["w"])


def test_arm_strikes_ball_gradient_through_impact_and_without_jump():
    """Forward sensitivities for the full jump only (the costly part); adjoint for all."""
    P, z = arm_problem()
    errs, events = gradient_errors(P, z, forward=("full",))
    tol = lookup("shooting", "event_gradient")
    assert len(events) == 1 and not events[0].grazing
    assert 0.0 < events[0].t < P.ctrl.T
    fwd, adj, both = errs["full"]
    assert fwd <= tol.rtol and adj <= tol.rtol and both <= tol.rtol, errs["full"]
    bound = lookup("shooting", "no_jump_error").atol
    for jump in ("reset_only", "none"):
        assert errs[jump][1] >= bound, (jump, errs[jump])


def _dropped_ball(ratio, e=0.8, N=40):
    """A ball dropped from rest at height v_i²/(2g) above the plane, v_i = ratio·g/√(1 −
    ratio²) (so the event's transversality ratio is ``ratio``), horizon to the next
    apex."""
    vi = ratio * G / np.sqrt(1.0 - ratio**2)
    T = vi / G * (1.0 + e)
    hs = ev.bouncing_ball(R_BALL, G)
    P = ev.HybridShooting(hs, sh.Controls("piecewise_constant", 1, T), N,
                          _measurements(4, N, 4, 0))
    return P, np.array([0.0, R_BALL + vi**2 / (2 * G), 0.3, 0.0, e])


def test_grazing_gate_fires_near_grazing():
    gate = lookup("shooting", "grazing").atol
    P, z = _dropped_ball(10 * gate)
    P.gradient_forward(z)
    assert P.trusted and not P.events[0].grazing
    assert 5 * gate < P.events[0].ratio < 20 * gate  # ‖f⁻‖ also holds ẋ
    P, z = _dropped_ball(0.1 * gate)
    with pytest.raises(ev.GrazingEvent, match="grazing"):
        P.gradient_forward(z)
    with pytest.raises(ev.GrazingEvent):
        P.gradient_adjoint(z)
    assert P.events[0].grazing and not P.trusted
    P.allow_grazing = True
    g = P.gradient_forward(z)
    assert np.all(np.isfinite(g)) and not P.trusted  # returned, marked untrustworthy


def test_arm_grazing_gate():
    """The tip just touching the ball (its offset bisected to the edge where the strike
    vanishes): the ratio is below the gate and the gradient is refused."""
    P, _ = arm_problem()

    def hits(off):
        _, z = arm_problem(x0=arm_state(offset=off, angle=0.7 + np.pi / 2))
        return bool(P.trajectory(z).events)

    lo, hi = 0.0, 0.2  # the ball at the tip's path is hit; 0.2 m to its side is not
    assert hits(lo) and not hits(hi)
    for _ in range(32):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if hits(mid) else (lo, mid)
    _, z = arm_problem(x0=arm_state(offset=lo, angle=0.7 + np.pi / 2))
    with pytest.raises(ev.GrazingEvent):
        P.gradient_adjoint(z)
    assert P.events[0].ratio < lookup("shooting", "grazing").atol


def test_fit_restitution_through_the_impact():
    """solve_single on noise-free data of the same hybrid RK4 model: the exact Jacobian
    (with the jump) recovers x0 and e, and the independent DOP853 reintegration through
    the event accepts the fit."""
    P, z_true = ball_problem()
    tr = P.rollout(z_true)
    P.meas = sh.Measurements(P.meas.steps, tr.x[P.meas.steps], np.eye(4), np.full(4, 4.0))
    z0 = z_true + np.array([0.02, -0.05, 0.03, 0.1, -0.2])
    z, res = sh.solve_single(P, z0)
    tol = lookup("shooting", "recovery")
    assert np.abs(z - z_true).max() <= tol.rtol * np.abs(z_true).max(), z - z_true
    assert res.accepted, res.reason
    assert len(P.events) == 1


def test_missed_event_refused():
    """A bounce that re-enters the plane within one step is not located: refused."""
    P, z = ball_problem(z0=R_BALL + 1e-4, vz0=0.0, N=20)
    with pytest.raises(ev.UntrustedGradient, match="missed"):
        P.gradient_forward(z)


if __name__ == "__main__":  # the figures of docs/fitter.md
    for label, (P, z) in (("bouncing ball", ball_problem()), ("arm + ball", arm_problem())):
        errs, events = gradient_errors(P, z)
        e0 = events[0]
        print(f"{label}: event t = {e0.t:.6f} s, D = {e0.denominator:.4g}, ratio = "
              f"{e0.ratio:.3g}")
        for jump, (f, a, b) in errs.items():
            print(f"  {jump:10s} forward vs FD {f:.1e}  adjoint vs FD {a:.1e}  "
                  f"adjoint vs forward {b:.1e}")
    for ratio in (0.3, 0.1, 1e-2, 1e-3, 1e-4):
        P, z = _dropped_ball(ratio)
        P.allow_grazing = True
        gf = P.gradient_forward(z)
        e0, trusted = P.events[0], P.trusted
        print(f"ratio {e0.ratio:.0e}: max|Xi| {np.abs(e0.jump['Xi']).max():.3g}, grazing "
              f"{e0.grazing}, trusted {trusted}, forward vs FD "
              f"{_rel(gf, P.gradient_fd(z, 1e-6)):.1e}")
