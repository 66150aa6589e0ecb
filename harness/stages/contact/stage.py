"""Stage "contact": the shared contact law (harness/model/contact_law.py) on every engine.

Dimension legend: N seeded states; k contact candidates of the fixture's scene
(fixtures/contact_catalog.py); nv canonical (6: every contact fixture is one floating
body).

Applies only to fixtures with declared contact geometry (a floating root body carrying
every contact frame). The states are built from the runner's seeded inputs, engine-blind
and identically for every engine (``contact_states``): the sampled orientation (every
third state: its yaw alone, so a box lands on 4 corners and the rod on both ends), the
body lowered until its lowest candidate penetrates δ ∈ [0.5, 1.5] mm, and velocities that
slide (the sampled v, contact-point slip ≫ v_s) or stick (1e-4 × the sampled v, slip
below v_s); τ is the sampled τ.

Quantities (each engine's own kinematics and forward dynamics, one shared law):

* contact_force (N, k, 3) [N]: f_i = f_n n + f_t per candidate, world axes;
* generalized_contact_force (N, nv) [N | N·m]: τ_c = Σ J_Ciᵀ f_i;
* contact_acceleration (N, nv): v̇ = FD(q, v, τ + τ_c).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from fixtures.contact_catalog import has_scene, scene
from fixtures.contact_catalog import scene as get_scene
from harness.core.conventions import quat_xyzw_to_matrix
from harness.core.spec import Sphere
from harness.model.contact_law import ContactLaw, contact_vdot
from harness.model.prepared import PreparedModel
from harness.stages.base import Inputs, Quantity

NAME = "contact"
STICK_SCALE = 1e-4  # sticking states: v scaled so contact-point slip is below v_s


def applies(model: PreparedModel) -> bool:
    """Whether the contact stage runs on ``model``: a floating base with a contact scene."""

    return bool(model.spec.floating) and has_scene(model.name)


def _frame_offsets(model, scene) -> np.ndarray:
    """(k, 3) [m] each candidate frame's origin in the root body frame (declared spec)."""
    spec = model.spec
    out = []
    for g in scene.geometry:
        if g.frame == spec.root:
            out.append(np.zeros(3))
            continue
        fr = [f for f in spec.frames if f.name == g.frame]
        if not fr or fr[0].body != spec.root:
            raise ValueError(f"contact frame {g.frame} must be the root body or a frame on it")
        out.append(np.array(fr[0].xyz, dtype=float))
    return np.stack(out)


def _mode(s: int) -> str:
    return ("sliding", "sticking", "flat sliding")[s % 3]


def contact_states(model: PreparedModel, inputs: Inputs
                   ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64],
                              list[str]]:
    """(q (N, 7), v (N, 6), tau (N, 6), labels) with active contacts (module docstring)."""
    sc = get_scene(model.name)
    n = np.asarray(sc.plane.normal, dtype=float)
    offs = _frame_offsets(model, sc)
    radii = np.array([g.radius if isinstance(g, Sphere) else 0.0 for g in sc.geometry])
    N = inputs.q.shape[0]
    Q, V, labels = inputs.q.copy(), inputs.v.copy(), []
    for s in range(N):
        quat = Q[s, 3:7] / np.linalg.norm(Q[s, 3:7])
        if s % 3 == 2:  # keep the yaw only: rotation about z
            quat = np.array([0.0, 0.0, quat[2], quat[3]]) / np.hypot(quat[2], quat[3])
        Q[s, 3:7] = quat
        R = quat_xyzw_to_matrix(quat)
        h = (R @ offs.T).T @ n - radii  # gap of each candidate with the body origin on the plane
        depth = 1e-3 * (1.0 + 0.5 * np.tanh(inputs.tau[s, 0]))
        Q[s, :3] = n * (sc.plane.offset - h.min() - depth)
        if s % 3 == 1:
            V[s] = STICK_SCALE * inputs.v[s]
        labels.append(f"state {s} ({_mode(s)})")
    return Q, V, inputs.tau.copy(), labels


def _law(model):


    sc = scene(model.name)
    return sc, ContactLaw.from_dict(sc.law_params(), f"fixtures/contact_catalog.py:{sc.fixture}")


def _evaluate(adapter, inputs):
    """{quantity: (N, ...)} for one engine, cached on the adapter per input set."""
    import hashlib


    cache = adapter.__dict__.setdefault("_contact_stage_cache", {})
    key = hashlib.sha256(b"".join(np.ascontiguousarray(x).tobytes() for x in
                                  (inputs.q, inputs.v, inputs.tau))).hexdigest()
    if key not in cache:
        sc, law = _law(adapter.model)
        Q, V, T, _ = contact_states(adapter.model, inputs)
        F, TC, A = [], [], []
        for q, v, tau in zip(Q, V, T):
            vdot, cf = contact_vdot(adapter, q, v, tau, sc, law)
            F.append(cf.f)
            TC.append(cf.tau_c)
            A.append(vdot)
        cache.clear()
        cache[key] = {"contact_force": np.array(F), "generalized_contact_force": np.array(TC),
                      "contact_acceleration": np.array(A)}
    return cache[key]


def _labels(model, inputs):
    return contact_states(model, inputs)[3]


QUANTITIES = (
    Quantity("contact_force", lambda a, i: _evaluate(a, i)["contact_force"], _labels, None,
             "forward_dynamics"),
    Quantity("generalized_contact_force",
             lambda a, i: _evaluate(a, i)["generalized_contact_force"], _labels, None,
             "forward_dynamics"),
    Quantity("contact_acceleration", lambda a, i: _evaluate(a, i)["contact_acceleration"],
             _labels, None, "forward_dynamics"),
)
