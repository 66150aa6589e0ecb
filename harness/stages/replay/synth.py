"""Candidates from known control laws (``harness synth``) and the qualification's replay
cases.

Dimension legend: N = duration / grid_dt + 1 knots; nq, nv canonical. Torques N·m | N.
"""
from __future__ import annotations

import time

import numpy as np
from numpy.typing import ArrayLike, NDArray

from harness.core.errors import BadInput
from harness.model import registry
from harness.model.candidate import Candidate, Controls, Marker, from_arrays
from harness.model.integrators import Method, rollout
from harness.model.prepared import PreparedModel, prepare_fixture
from harness.stages.replay.cases import Case
from harness.stages.replay.measures import Observer

# ----- synthetic candidates -------------------------------------------------------------------
LAWS = ("pd", "zero")


def synthesize(model: PreparedModel, law: str | None = None, duration: float = 2.0,
               grid_dt: float = 0.01, interpolation: str = "zoh", seed: int = 0,
               engine: str | None = None, q0: ArrayLike | None = None,
               v0: ArrayLike | None = None, created: str | None = None) -> Candidate:
    """A candidate from a known control law. N = duration/grid_dt + 1 knots [s]; q0 (nq,),
    v0 (nv,) the initial state (SI units).

    ``pd`` (fixed base): PD tracking of a sinusoidal reference (amplitude 0.3 rad, or 30 %
    of a prismatic joint's half range) about the rest configuration — the minimum of
    gravitational energy over the revolute joints, prismatic joints at mid-range — with
    inverse-dynamics feed-forward, τ_k = ID(q_r, q̇_r, q̈_r) + K_p (q_r − q_k) + K_d (q̇_r − q̇_k),
    K_p = ω_c² diag M(q_r(0)), K_d = 2 ω_c diag M, ω_c = 2π·2 rad/s, simulated in closed
    loop (harness RK4, dt = grid_dt/10) with zero-order hold, so the stored τ are what a
    controller applied. ``zero``: τ = 0 (free motion) from q0, v0 (seeded if not given).
    ``engine`` computes M, ID and the closed loop (default: the first available);
    ``created`` is the provenance time stamp (default: now, UTC)."""
    lay = model.layout
    if law is None:
        law = "zero" if model.spec.floating else "pd"
    if law not in LAWS:
        raise BadInput("--law", f"must be one of {', '.join(LAWS)}")
    if not (duration > 0 and grid_dt > 0 and duration / grid_dt <= 1e6):
        raise BadInput("--duration", "duration and grid step must be > 0 (at most 1e6 knots)")
    n = int(round(duration / grid_dt))
    t = np.linspace(0.0, n * grid_dt, n + 1)
    rng = np.random.default_rng(seed)
    if engine is None:
        engine = next(e for e in registry.ENGINES if registry.probe(e).available)
    a = registry.adapter_class(engine)(model)
    if law == "zero":
        q0 = lay.random_q(rng) if q0 is None else np.asarray(q0, dtype=float)
        v0 = rng.normal(size=lay.nv) if v0 is None else np.asarray(v0, dtype=float)
        tau = np.zeros((t.size, lay.nv))
        solver = {"law": "zero torque (free motion)", "engine": engine, "seed": seed}
    else:
        if model.spec.floating:
            raise BadInput("--law", "pd needs a fixed base (a free root cannot be tracked "
                                    "by joint torques); use --law zero")
        if any(s.type in ("continuous", "ball") for s in lay.slots):
            raise BadInput("--law", "pd supports revolute and prismatic joints only")
        mid, amp = _rest_configuration(a, model, rng), np.zeros(lay.nv)
        for s in lay.slots:
            lo, hi = (s.lower, s.upper) if s.lower is not None else (-0.5, 0.5)
            amp[s.iv] = 0.3 if s.type == "revolute" else 0.3 * 0.5 * (hi - lo)
        freq = 0.4 + 0.1 * np.arange(lay.nv)
        phase = rng.uniform(0, 2 * np.pi, size=lay.nv)
        w = 2 * np.pi * freq

        def ref(tt: float) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
            s_, c_ = np.sin(w * tt + phase), np.cos(w * tt + phase)
            return mid + amp * s_, amp * w * c_, -amp * w * w * s_

        qr0, vr0, _ = ref(0.0)
        wc = 2 * np.pi * 2.0
        Md = np.diag(a.mass_matrix(qr0))
        kp, kd = wc * wc * Md, 2.0 * wc * Md
        q = qr0.copy() if q0 is None else np.asarray(q0, dtype=float)
        v = vr0.copy() if v0 is None else np.asarray(v0, dtype=float)
        q0, v0 = q.copy(), v.copy()
        tau = np.zeros((t.size, lay.nv))
        sub = Method("rk4", dt=grid_dt / 10)
        for k in range(t.size):
            qr, vr, ar = ref(t[k])
            tau[k] = a.inverse_dynamics(qr, vr, ar) + kp * (qr - q) + kd * (vr - v)
            if k + 1 < t.size:
                c = Controls(t[k:k + 2], np.vstack([tau[k], tau[k]]), "zoh")
                try:
                    with np.errstate(over="ignore", invalid="ignore"):  # raised below
                        r = rollout(a, q, v, c, sub, lay.damping)
                except FloatingPointError:
                    raise BadInput("--grid-dt", f"{grid_dt:g} s is too coarse for the pd law "
                                   "(its closed loop, 2 Hz bandwidth under zero-order hold, "
                                   "diverged); use a finer grid or --law zero") from None
                q, v = r.q[-1], r.v[-1]
        solver = {"law": "PD tracking of a sinusoid about the rest configuration + "
                         "inverse-dynamics feed-forward, zero-order hold", "engine": engine,
                  "seed": seed,
                  "omega_c_rad_s": wc, "closed_loop_integrator": "rk4",
                  "closed_loop_dt_s": grid_dt / 10}
        if interpolation != "zoh":
            solver["note"] = ("closed loop simulated with zero-order hold; the candidate "
                              f"declares {interpolation} interpolation of the same knots")
    markers = tuple(Marker(f"{f.name}_marker", f.name, (0.02, -0.01, 0.03))
                    for f in model.spec.frames)
    created = created or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    prov = {"producer": "harness synth", "created": created,
            "solver": solver, "status": "synthetic",
            "notes": f"synthetic candidate for {model.name}: {solver['law']}"}
    return from_arrays(model, q0, v0, t, tau, interpolation, markers, prov)


def _rest_configuration(adapter, model, rng, starts=4):
    """q (nq,) of least gravitational energy over the revolute joints (BFGS from seeded
    starts, gradient = gravity torques ID(q, 0, 0)), prismatic joints at mid-range, angles
    wrapped to (−π, π]. A reference about it keeps an open-loop replay away from the
    exponential sensitivity of an inverted chain (λ ≈ 5 /s on chain7 upright). Joint
    limits do not act in these unconstrained replays (no engine enforces them)."""
    from scipy.optimize import minimize

    lay = model.layout
    obs = Observer(adapter, model)
    rev = np.array([s.type == "revolute" for s in lay.slots])
    q = np.zeros(lay.nq)
    for s in lay.slots:
        if s.type == "prismatic" and s.lower is not None:
            q[s.iq] = 0.5 * (s.lower + s.upper)
    if not rev.any():
        return q
    zero = np.zeros(lay.nv)

    def full(x: NDArray[np.float64]) -> NDArray[np.float64]:
        qq = q.copy()
        qq[rev] = x
        return qq

    def V(x: NDArray[np.float64]) -> float:
        qq = full(x)
        return float(obs.energy(qq[None], zero[None], obs.poses(qq[None]))[0])

    def G(x: NDArray[np.float64]) -> NDArray[np.float64]:
        return adapter.inverse_dynamics(full(x), zero, zero)[rev]

    best = None
    for _ in range(starts):
        r = minimize(V, rng.uniform(-np.pi, np.pi, size=int(rev.sum())), jac=G, method="BFGS")
        if best is None or r.fun < best.fun:
            best = r
    return full(np.angle(np.exp(1j * best.x)))


# ----- the replay checks of `harness qualify` ---------------------------------------------------
def qualify_cases(coarse: bool = False) -> list[Case]:
    """Synthetic candidates replayed by ``harness qualify`` (about 20 s on 2 cores):

    * chain7, agreement: PD-tracking candidate, 2 s, RK4 dt 1e-3 in every engine plus each
      engine's own stepping; energy balance with joint damping (dissipated work).
    * pendulum, agreement: free swing from 1 rad, 2 s: conservative energy.
    * double_pendulum, horizon: free motion from (1.5, 3.0) rad, (−4, 2) rad/s, 8 s, RK4
      dt 2e-3: chaotic (growth ≈ 2 /s), so the report shows a finite agreement horizon.
    * free_body, convergence: torque-free tumbling (ω0 = (2, −3, 1.5) rad/s) for 1 s,
      semi-implicit Euler and RK4 at three steps each against a DOP853 reference.

    ``coarse``: chain7 with RK4 at dt = 1e-2 (one step per knot), which the refinement gate
    must mark unconverged (a test of the gate; qualify then exits 1)."""
    at = "when this bundle was made (manifest: created)"  # keeps the manifest reproducible
    chain = synthesize(prepare_fixture("chain7"), "pd", duration=2.0, grid_dt=0.01, seed=0,
                       created=at)
    pend = synthesize(prepare_fixture("pendulum"), "zero", duration=2.0, grid_dt=0.01,
                      q0=[1.0], v0=[0.0], created=at)
    dpend = synthesize(prepare_fixture("double_pendulum"), "zero", duration=8.0,
                       grid_dt=0.01, q0=[1.5, 3.0], v0=[-4.0, 2.0], created=at)
    free = synthesize(prepare_fixture("free_body"), "zero", duration=1.0, grid_dt=0.02,
                      q0=[0.1, -0.2, 0.3, 0.0, 0.0, 0.0, 1.0],
                      v0=[0.3, -0.2, 0.1, 2.0, -3.0, 1.5], created=at)
    sweep = ((Method("semi_implicit_euler", dt=4e-3), 3), (Method("rk4", dt=0.02), 3))
    return [Case("chain7", chain, "agreement", Method("rk4", dt=1e-2 if coarse else 1e-3)),
            Case("pendulum", pend, "agreement", Method("rk4", dt=1e-3), native=False),
            Case("double_pendulum", dpend, "horizon", Method("rk4", dt=2e-3), native=False),
            Case("free_body", free, "convergence", sweep=sweep)]
