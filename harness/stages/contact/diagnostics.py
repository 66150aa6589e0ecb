"""Contact diagnostics per interval (engine-blind), and a recorded shared-law rollout.

Dimension legend: N samples; k contact candidates; a trajectory's intervals are the
spans between consecutive events (or given edges) [s].

Per interval (``interval_diagnostics``):

* max and RMS penetration [m] over samples, δ = max(0, −φ);
* complementarity product max |φ_i λ_i| [N·m] (0 for rigid contact; a compliant law
  has φ < 0 while λ > 0, so it is its penetration times force);
* friction-cone violation max(|f_t| − μ f_n, 0) [N], and a flag in ``flags`` when it
  exceeds ``("contact", "friction_cone")`` (the shared law keeps the cone; a force from
  elsewhere, e.g. viscous friction without normal force, is named there);
* maximum-dissipation violation max(μ f_n |v_t| + f_t·v_t, 0) [W] over slipping
  samples: 0 when friction opposes the slip at full strength (Coulomb sliding); the
  regularised law's creep below v_s shows as a positive value;
* impulse magnitude Σ|p| [N·s] of the impacts in the interval; event times and whether
  they are ordered; energy jump E⁺ − E⁻ [J] at each impact (≤ 0 is dissipative);
* dissipated-energy budget: E(start) − E(end) + W_applied [J] against the contact work
  −∫ f·v_C dt plus the impact losses, and their residual.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from harness.core.spec import ContactScene
from harness.core.tolerances import lookup
from harness.model.contact_law import (
    ContactDynamics,
    ContactLaw,
    contact_forces,
    contact_kinematics,
)
from harness.model.hybrid import Event, energy
from harness.model.integrators import _euler_step, _System
from harness.model.protocol import EngineAdapter


def penetration(phi: ArrayLike) -> tuple[float, float]:
    """(max, RMS) [m] of δ = max(0, −min_i φ_i) over N samples; phi (N, k)."""
    d = np.maximum(-np.min(np.atleast_2d(phi), axis=1), 0.0)
    return float(d.max()), float(np.sqrt(np.mean(d * d)))


def complementarity(phi: ArrayLike, f_n: ArrayLike) -> float:
    """max |φ f_n| [N·m] over the samples; phi, f_n (N, k) [m, N]."""
    return float(np.max(np.abs(np.asarray(phi) * np.asarray(f_n)))) if np.size(phi) else 0.0


def cone_violation(f_n: ArrayLike, f_t: ArrayLike, mu: float) -> float:
    """max(|f_t| − μ f_n, 0) [N] over the samples; f_n (N, k), f_t (N, k, 3) [N]."""
    ft = np.linalg.norm(np.asarray(f_t), axis=-1)
    return float(np.max(np.maximum(ft - mu * np.asarray(f_n), 0.0))) if ft.size else 0.0


def cone_flags(t: NDArray[np.float64], f_n: ArrayLike, f_t: ArrayLike, mu: float) -> list[str]:
    """One line per candidate whose friction leaves the cone |f_t| ≤ μ f_n by more than
    ``("contact", "friction_cone")`` at any sample: how far [N], at how many samples, the
    first time [s] and f_n there. t (N,) [s], f_n (N, k) [N], f_t (N, k, 3) [N]."""
    tol = lookup("contact", "friction_cone")
    f_n = np.asarray(f_n, dtype=float).reshape(len(t), -1)
    ft = np.linalg.norm(np.asarray(f_t, dtype=float).reshape(len(t), f_n.shape[1], 3), axis=-1)
    excess = ft - mu * f_n
    bad = excess > tol.atol + tol.rtol * mu * np.abs(f_n)
    out = []
    for i in range(f_n.shape[1]):
        idx = np.flatnonzero(bad[:, i])
        if idx.size:
            j = idx[0]
            out.append(f"friction outside the cone at candidate {i}: |f_t| exceeds μ f_n by "
                       f"up to {float(excess[idx, i].max()):.3g} N at {idx.size} sample(s), "
                       f"first at t = {float(t[j]):.6g} s with f_n = {float(f_n[j, i]):.3g} N"
                       f" and |f_t| = {float(ft[j, i]):.3g} N")
    return out


def max_dissipation_violation(f_n: ArrayLike, f_t: ArrayLike, v_t: ArrayLike,
                              mu: float) -> float:
    """max(μ f_n |v_t| + f_t·v_t, 0) [W] over the samples (0 where v_t = 0): the power by
    which friction dissipates less than the maximum; f_n (N, k) [N], f_t, v_t (N, k, 3)
    [N, m/s]."""
    f_t, v_t = np.asarray(f_t), np.asarray(v_t)
    s = np.linalg.norm(v_t, axis=-1)
    val = mu * np.asarray(f_n) * s + np.einsum("...i,...i->...", f_t, v_t)
    val = np.where(s > 0, val, 0.0)
    return float(np.max(np.maximum(val, 0.0))) if val.size else 0.0


def interval_diagnostics(t: ArrayLike, phi: ArrayLike, events: Sequence[Event], E: ArrayLike,
                         f_n: ArrayLike | None = None, f_t: ArrayLike | None = None,
                         v_t: ArrayLike | None = None, mu: float = 0.0,
                         P_contact: ArrayLike | None = None,
                         edges: Sequence[float] | None = None,
                         mu_slide: float | None = None) -> list[dict[str, Any]]:
    """[{t0_s, t1_s, max_penetration_m, rms_penetration_m, complementarity_Nm,
    cone_violation_N, max_dissipation_violation_W, impulse_Ns, events, ordered,
    energy_jump_J, energy_drop_J, contact_work_J, impact_loss_J, budget_residual_J,
    flags}] (flags: violations named in one line each, cone_flags).
    t (N,), phi (N, k), E (N,) [J]; f_n (N, k), f_t/v_t (N, k, 3) for a compliant law;
    P_contact (N,) [W] contact power f·v_C; events with .t, .p, .E_minus, .E_plus.
    mu: the cone's coefficient (the law's largest, μ_s); mu_slide: the sliding coefficient
    the maximum-dissipation check uses (μ_d; default mu)."""
    mu_slide = mu if mu_slide is None else mu_slide
    t = np.asarray(t)
    if edges is None:
        edges = [t[0]] + [e.t for e in events if getattr(e, "kind", "impact") == "impact"] + [t[-1]]
    edges = sorted(set(float(x) for x in edges))
    out = []
    for a, b in zip(edges[:-1], edges[1:]):
        w = (t >= a) & (t <= b)
        if not np.any(w):
            continue
        evs = [e for e in events if a < e.t <= b and getattr(e, "kind", "impact") == "impact"]
        times = [e.t for e in evs]
        mx, rms = penetration(np.asarray(phi)[w])
        row = {"t0_s": a, "t1_s": b, "max_penetration_m": mx, "rms_penetration_m": rms,
               "complementarity_Nm": 0.0, "cone_violation_N": 0.0,
               "max_dissipation_violation_W": 0.0,
               "impulse_Ns": float(sum(np.abs(e.p).sum() for e in evs)),
               "events": times, "ordered": times == sorted(times),
               "energy_jump_J": [float(e.E_plus - e.E_minus) for e in evs], "flags": []}
        if f_n is not None:
            row["complementarity_Nm"] = complementarity(np.asarray(phi)[w], np.asarray(f_n)[w])
            row["cone_violation_N"] = cone_violation(np.asarray(f_n)[w], np.asarray(f_t)[w], mu)
            row["flags"] += cone_flags(t[w], np.asarray(f_n)[w], np.asarray(f_t)[w], mu)
            row["max_dissipation_violation_W"] = max_dissipation_violation(
                np.asarray(f_n)[w], np.asarray(f_t)[w], np.asarray(v_t)[w], mu_slide)
        Ew = np.asarray(E)[w]
        drop = float(Ew[0] - Ew[-1])
        work = 0.0
        if P_contact is not None:
            Pw, tw = np.asarray(P_contact)[w], t[w]
            work = float(-np.sum(0.5 * (Pw[1:] + Pw[:-1]) * np.diff(tw)))
        loss = float(-sum(row["energy_jump_J"]))
        row.update(energy_drop_J=drop, contact_work_J=work, impact_loss_J=loss,
                   budget_residual_J=drop - work - loss)
        out.append(row)
    return out


def shared_law_rollout(adapter: EngineAdapter, scene: ContactScene, law: ContactLaw,
                       q0: ArrayLike, v0: ArrayLike, t_end: float, dt: float,
                       extra: Callable[[NDArray[np.float64], NDArray[np.float64]],
                                       NDArray[np.float64]] | None = None,
                       ) -> dict[str, NDArray[np.float64]]:
    """Semi-implicit Euler (harness/model/integrators.py) of the shared law from (q0, v0) over
    [0, t_end] [s] at dt [s], recording per step: t (N,), q, v, phi (N, k), f_n (N, k),
    f_t (N, k, 3), v_t (N, k, 3), E (N,) [J] (harness.model.hybrid.energy), P (N,) [W] contact
    power Σ f·v_C (negative while dissipating)."""
    dyn = ContactDynamics(adapter, scene, law, extra)
    sys_ = _System(dyn, None)
    zero = lambda t: np.zeros(adapter.nv)  # noqa: E731
    q, v, w, t = np.array(q0, float), np.array(v0, float), np.zeros(2), 0.0
    rec = {k: [] for k in ("t", "q", "v", "phi", "f_n", "f_t", "v_t", "E", "P")}
    n = int(round(t_end / dt))
    for i in range(n + 1):
        kin = contact_kinematics(adapter, q, scene)
        cf = contact_forces(law, kin, v)
        vn = cf.v_C @ kin.normal
        rec["t"].append(t)
        rec["q"].append(q)
        rec["v"].append(v)
        rec["phi"].append(kin.phi)
        rec["f_n"].append(cf.f_n)
        rec["f_t"].append(cf.f_t)
        rec["v_t"].append(cf.v_C - vn[:, None] * kin.normal[None, :])
        rec["E"].append(energy(adapter, q, v))
        rec["P"].append(float(np.sum(cf.f * cf.v_C)))
        if i == n:
            break
        q, v, w = _euler_step(sys_, q, v, w, t, dt, zero)
        t += dt
    return {k: np.array(x) for k, x in rec.items()}
