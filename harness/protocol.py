"""The engine adapter interface. Engine-blind: nothing here imports an engine.

Dimension legend: nq, nv of the canonical layout (harness/conventions.py); k frames.
Every method takes the full state and returns fresh float64 arrays in canonical
coordinates; no method depends on what an earlier call left in the engine's workspace
(Model/Data split: the compiled model and its workspace are private to the adapter).

An adapter that has no API of its own for a quantity raises ``NotProvided`` instead of
repeating another engine's answer (e.g. Crocoddyl frame poses).
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from harness.model import PreparedModel

# Every quantity a stage may ask for; adapters list what they provide in ``provides``.
QUANTITIES = ("group_inertias", "mass_matrix", "frame_pose", "frame_jacobian",
              "bias_forces", "forward_dynamics", "inverse_dynamics", "integrate")
# Dynamics derivatives (issue 8): (∂/∂q, ∂/∂v, ∂/∂τ or ∂/∂v̇), each (nv, nv); ∂/∂q is
# w.r.t. the canonical tangent δ ∈ R^nv of q ⊕ δ (= integrate(q, δ, 1)).
QUANTITIES = QUANTITIES + ("forward_dynamics_derivatives", "inverse_dynamics_derivatives")
# contact (harness/contact_law.py, harness/contact_native.py, harness/contact_sweep.py):
# contact_frame_kinematics(q, frames) → (p_WF (k, 3), J_WF (k, 6, nv)) where an engine has
# no frame_pose/frame_jacobian of its own; native_contact(...) the engine's own contact
# model on the declared geometry; native_world_constraint_step(dt) a known crash
QUANTITIES = QUANTITIES + ("contact_frame_kinematics", "native_contact",
                           "native_sticking_acceleration", "native_world_constraint_step")
# stage 3 (holonomic constraints, harness/stages/constrained.py):
#   frame_jacobian_drift(q, v, frames) -> (J (k, 6, nv), J̇v (k, 6)): J_WF [linear of the
#     frame's origin; ω] world axes and its drift, the origin's classical acceleration and
#     the angular acceleration at v̇ = 0 [m/s², rad/s²];
#   native_constrained(problem: harness.constraints.NativeProblem) -> list of solver
#     results (the engine's own constrained solver; NotProvided if it has none that fits)
QUANTITIES = QUANTITIES + ("frame_jacobian_drift", "native_constrained")


@runtime_checkable
class EngineAdapter(Protocol):
    name: str          # "mujoco", "pinocchio", "crocoddyl", "drake"
    version: str       # the engine package version
    model: PreparedModel
    provides: dict     # quantity -> one-line statement of which engine API computes it

    @property
    def nq(self) -> int: ...
    @property
    def nv(self) -> int: ...
    @property
    def joint_names(self) -> list: ...

    def neutral(self) -> np.ndarray:
        """q (nq,) at rest, from the engine's own neutral configuration."""

    def group_inertias(self) -> dict:
        """{joint: (10,) [m kg, c_W m (3), I_W kg·m² (6: xx yy zz xy xz yz)]} of the rigid
        group each joint carries, at neutral, as the engine holds it after loading."""

    def frame_pose(self, q: np.ndarray, frame: str) -> np.ndarray:
        """(12,) [p_WF (3) m, R_WF (9, row-major)] of a named frame."""

    def frame_jacobian(self, q: np.ndarray, frame: str) -> np.ndarray:
        """J_WF (6, nv): v → [linear velocity of F's origin; ω_F], world axes."""

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        """M (nv, nv) [kg, kg·m, kg·m²], armature included."""

    def bias_forces(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """h (nv,) [N, N·m]: Coriolis, centrifugal and gravity terms (no damping)."""

    def forward_dynamics(self, q, v, tau) -> np.ndarray:
        """v̇ (nv,) solving M v̇ + h = τ − D v."""

    def inverse_dynamics(self, q, v, vdot) -> np.ndarray:
        """τ (nv,) = M v̇ + h + D v."""

    def integrate(self, q, v, dt: float) -> np.ndarray:
        """q (nq,) after moving along constant v for dt [s] (manifold-aware)."""


class AdapterBase:
    """Shared plumbing: the canonical layout and index maps built from joint names."""

    name = "base"
    version = "0"

    def __init__(self, model: PreparedModel):
        self.model = model
        self.layout = model.layout

    @property
    def nq(self) -> int:
        return self.layout.nq

    @property
    def nv(self) -> int:
        return self.layout.nv

    @property
    def joint_names(self) -> list:
        return self.layout.joint_names

    def neutral(self) -> np.ndarray:  # overridden where the engine has its own
        return self.layout.neutral()

    def random_state(self, rng: np.random.Generator):
        """(q, v) valid for the model; same sampler for every engine."""
        return self.layout.random_q(rng), rng.normal(size=self.nv)

    def frame_poses(self, q, frames) -> np.ndarray:
        """(k, 12) poses of several frames at one q (adapters may compute FK once)."""
        return np.stack([self.frame_pose(q, f) for f in frames])

    def frame_jacobians(self, q, frames) -> np.ndarray:
        """(k, 6, nv) Jacobians of several frames at one q."""
        return np.stack([self.frame_jacobian(q, f) for f in frames])

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} {self.version} model={self.model.name}>"


# ----- dynamics derivatives (issue 8): the contract, and the default for an engine without
# an API of its own. Adapters override both and name their method in ``derivatives_method``
# ("analytical", "automatic_differentiation" or "finite_difference"), which picks the
# tolerance class of harness/stages/derivatives.py.
def _no_forward_dynamics_derivatives(self, q, v, tau):
    """(∂v̇/∂q, ∂v̇/∂v, ∂v̇/∂τ), each (nv, nv), canonical; ∂/∂q w.r.t. the tangent δ of
    q ⊕ δ = integrate(q, δ, 1); damping as in forward_dynamics (M v̇ + h = τ − D v)."""
    from harness.errors import NotProvided

    raise NotProvided(self.name, "forward dynamics derivatives", "no engine API")


def _no_inverse_dynamics_derivatives(self, q, v, vdot):
    """(∂τ/∂q, ∂τ/∂v, ∂τ/∂v̇), each (nv, nv), canonical, of τ = M v̇ + h + D v."""
    from harness.errors import NotProvided

    raise NotProvided(self.name, "inverse dynamics derivatives", "no engine API")


AdapterBase.derivatives_method = "none"
AdapterBase.forward_dynamics_derivatives = _no_forward_dynamics_derivatives
AdapterBase.inverse_dynamics_derivatives = _no_inverse_dynamics_derivatives
