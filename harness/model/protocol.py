"""The engine adapter interface. Engine-blind: nothing here imports an engine.

Dimension legend: nq, nv of the canonical layout (harness/core/conventions.py); k frames.
Every method takes the full state and returns fresh float64 arrays in canonical
coordinates; no method depends on what an earlier call left in the engine's workspace
(Model/Data split: the compiled model and its workspace are private to the adapter).

An adapter that has no API of its own for a quantity raises ``NotProvided`` instead of
repeating another engine's answer (e.g. Crocoddyl frame poses).

``EngineAdapter`` is what every adapter implements. The ``Has…`` protocols name the
optional capabilities one at a time; a caller that needs one checks
``isinstance(adapter, HasX)`` before calling it, or asks the registry which engines have
it (``registry.providing(HasX)``).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from harness.core.errors import NotProvided
from harness.model.prepared import PreparedModel

if TYPE_CHECKING:
    from harness.core.conventions import JointSlot
    from harness.core.spec import ContactScene

_F = NDArray[np.float64]
_I = NDArray[np.intp]
# an engine's settings of its own contact model or integrator (names and values its own)
_Settings = dict[str, Any]

# Every quantity a stage may ask for; adapters list what they provide in ``provides``.
QUANTITIES = (
    # model identity and kinematics: group inertias at neutral, M (nv, nv), frame pose
    # (12,) and Jacobian (6, nv)
    "group_inertias", "mass_matrix", "frame_pose", "frame_jacobian",
    # dynamics: h (nv,), v̇ (nv,), τ (nv,), q ⊕ v dt (nq,)
    "bias_forces", "forward_dynamics", "inverse_dynamics", "integrate",
    # dynamics derivatives: (∂/∂q, ∂/∂v, ∂/∂τ or ∂/∂v̇), each (nv, nv); ∂/∂q is w.r.t. the
    # canonical tangent δ ∈ R^nv of q ⊕ δ (= integrate(q, δ, 1))
    "forward_dynamics_derivatives", "inverse_dynamics_derivatives",
    # contact (harness/model/contact_law.py, harness/stages/contact/, harness/sweep/):
    # contact_frame_kinematics(q, frames) → (p_WF (k, 3), J_WF (k, 6, nv)) where an engine
    # has no frame_pose/frame_jacobian of its own; native_contact the engine's own contact
    # model on the declared geometry; native_sticking_acceleration its exact sticking
    # contact at one point; native_world_constraint_step a known crash
    "contact_frame_kinematics", "native_contact",
    "native_sticking_acceleration", "native_world_constraint_step",
    # holonomic constraints (harness/stages/constrained/): frame_jacobian_drift(q, v,
    # frames) → (J (k, 6, nv), J̇v (k, 6)); native_constrained(problem) the engine's own
    # constrained solver
    "frame_jacobian_drift", "native_constrained",
)


# Any: as_is.py's AsIsFile or None; as_is.py leads back here through its imports
def as_is_source(model: PreparedModel, engine: str) -> Any:
    """The user's file ``engine`` loads as-is (harness/model/as_is.py AsIsFile: path, kind,
    text), or None: the parity path (the harness's own exported model)."""
    get = getattr(model, "as_is_file", None)
    return get(engine) if callable(get) else None


# ----- optional capabilities -------------------------------------------------------------
@runtime_checkable
class HasDerivatives(Protocol):
    """(nv, nv) blocks [units of the output per unit of the input: 1/s², 1/s, 1/(kg·m²)…
    for v̇; N·m/rad, N·m·s/rad, kg·m²… for τ]: derivatives of the dynamics, canonical rows
    and columns; ∂/∂q is w.r.t. the tangent δ (nv,) of q ⊕ δ = integrate(q, δ, 1); damping
    enters as in forward_dynamics / inverse_dynamics.

    ``derivatives_method`` names how the engine computes them ("analytical",
    "automatic_differentiation", "finite_difference"; "none" when it raises NotProvided),
    which picks the tolerance class of harness/stages/derivatives.py."""

    derivatives_method: str

    def forward_dynamics_derivatives(self, q: _F, v: _F, tau: _F) -> tuple[_F, _F, _F]:
        """(∂v̇/∂q, ∂v̇/∂v, ∂v̇/∂τ), each (nv, nv), of v̇ solving M v̇ + h = τ − D v."""

    def inverse_dynamics_derivatives(self, q: _F, v: _F, vdot: _F) -> tuple[_F, _F, _F]:
        """(∂τ/∂q, ∂τ/∂v, ∂τ/∂v̇), each (nv, nv), of τ = M v̇ + h + D v."""


@runtime_checkable
class HasConstrainedDynamics(Protocol):
    """J (k, 6, nv) [m/s, rad/s per unit of v], drift J̇v (k, 6) [m/s², rad/s²], v̇ (N, nv)
    [m/s², rad/s²], λ (N, m) [N, N·m]: the kinematic terms of holonomic constraints and
    the engine's own constrained solver."""

    def frame_jacobian_drift(self, q: _F, v: _F, frames: Sequence[str]) -> tuple[_F, _F]:
        """(J (k, 6, nv), a (k, 6)) of k frames at (q, v): J_WF [linear velocity of the
        frame's origin; ω] in world axes, and the drift J̇_WF v = the origin's classical
        acceleration and the angular acceleration at v̇ = 0 [m/s², rad/s²]."""

    # Any: the stage's NativeProblem (harness/stages), a layer this module may not import
    def native_constrained(self, problem: Any) -> list[dict[str, Any]]:
        """The engine's own constrained solvers on ``problem``
        (harness/stages/constrained/constraints.py NativeProblem: N states, m rows): one
        dict per solver, {"solver": str, "exact": bool, "vdot" (N, nv), "lam" (N, m) or
        None, "law": one-line statement}; NotProvided if the engine has none that fits."""


@runtime_checkable
class HasReadback(Protocol):
    """Read-back at the canonical neutral q [SI: kg, m, kg·m², N·m·s/rad, rad], world axes:
    the model as the engine compiled it, ablations of known causes, and the engine's
    answer (M (nv, nv), v̇ (nv,)) to canonical arrays handed over unconverted. The
    read-back format is described in harness/stages/diagnosis/__init__.py."""

    def readback(self) -> dict[str, Any]:
        """{"engine", "api", "notes", "nq_native", "nv_native", "bodies", "joints",
        "couplings"}: every body and canonical joint as the engine holds it."""

    def ablated(self, changes: dict[str, Any]) -> EngineAdapter:
        """A new adapter on the same model with the named causes removed (``damping=0``,
        ``armature=0``, ``friction=0``, ``limits=False``, ``couplings=False``, …);
        ValueError for a cause the engine cannot remove."""

    def naive_dynamics(self, q: _F, v: _F, tau: _F) -> tuple[_F, _F] | None:
        """(M (nv, nv), v̇ (nv,)) from the engine with q (nq,), v (nv,), τ (nv,) handed
        over without conversion, or None if the engine cannot take them."""

    @classmethod
    def as_is_joints(cls, model: PreparedModel) -> list[str]:
        """Names of the moving joints (free root excluded) the engine reads from the
        as-is file of ``model``."""


@runtime_checkable
class HasNativeContact(Protocol):
    """q (N, 7) [m, quaternion xyzw], v (N, 6) [m/s, rad/s] of one floating body over t
    (N,) [s] under the engine's own contact model on the declared contact geometry,
    force_W(t) (3,) [N] applied at the body's origin."""

    # (label, settings) compared side by side
    NATIVE_CONTACT_VARIANTS: tuple[tuple[str, _Settings], ...]

    def native_contact(self, scene: ContactScene, q0: _F, v0: _F, t_end: float,
                       force_W: Callable[[float], _F],
                       settings: _Settings | None = None) -> dict[str, Any]:
        """{"t" (N,), "q" (N, 7), "v" (N, 6) canonical, "settings", "statement"} over
        [0, t_end] [s] from canonical (q0 (7,), v0 (6,))."""

    def native_contact_statement(self, settings: _Settings | None = None
                                 ) -> tuple[_Settings, str]:
        """(settings, one-line statement of the contact law)."""


@runtime_checkable
class HasStickingContact(Protocol):
    """v̇ (nv,) [m/s², rad/s²] and contact force λ_W (3,) [N] with one material point
    [m] of a body held fixed: the engine's exact sticking (bilateral) contact."""

    def native_sticking_acceleration(self, q: _F, v: _F, tau: _F, frame: str,
                                     offset_W: _F) -> tuple[_F, _F | None]:
        """(v̇ (nv,), λ_W (3,) or None) with the point p_WF + offset_W (3,) [m] of
        ``frame``'s body held fixed."""

    def native_contact_statement(self, settings: _Settings | None = None
                                 ) -> tuple[_Settings, str]:
        """(settings, one-line statement of the contact law)."""


@runtime_checkable
class HasContactFrameKinematics(Protocol):
    """p_WF (k, 3) [m], J_WF (k, 6, nv) [linear; angular], world axes: frame origins from
    an engine with no frame_pose/frame_jacobian of its own."""

    def contact_frame_kinematics(self, q: _F, frames: Sequence[str]) -> tuple[_F, _F]:
        """(p_WF (k, 3), J_WF (k, 6, nv)) of k frame origins at q (nq,)."""


@runtime_checkable
class HasNativeRollout(Protocol):
    """Q (N, nq), V (N, nv) [canonical units] on knots t (N,) [s], stepped by the engine's
    own integrator with controls τ (nv,) [N, N·m]."""

    def native_describe(self, settings: _Settings | None = None) -> tuple[_Settings, str]:
        """(settings, one-line statement) of ``native_rollout``; ValueError for settings
        the engine does not take."""

    def native_rollout(self, q0: _F, v0: _F, t: _F, controls: Callable[[int, float], _F],
                       settings: _Settings | None = None) -> tuple[_F, _F]:
        """(Q (N, nq), V (N, nv)) on the knots t (N,) [s]; controls(k, t) → τ (nv,)
        canonical, the interpolant of grid interval k."""


@runtime_checkable
class HasBatchedEvaluation(Protocol):
    """N states at once [canonical units]: Q (N, nq), V, TAU, VDOT (N, nv); an engine that
    evaluates a batch of worlds in one call (MuJoCo Warp). The stages hand such an engine a
    stage's samples as one batch; each result equals the single-state method's on each
    state."""

    def batch_mass_matrix(self, Q: _F) -> _F:
        """M (N, nv, nv) [kg, kg·m, kg·m²]."""

    def batch_bias_forces(self, Q: _F, V: _F) -> _F:
        """h (N, nv) [N, N·m]."""

    def batch_forward_dynamics(self, Q: _F, V: _F, TAU: _F) -> _F:
        """v̇ (N, nv) [m/s², rad/s²]."""

    def batch_inverse_dynamics(self, Q: _F, V: _F, VDOT: _F) -> _F:
        """τ (N, nv) [N, N·m]."""

    def batch_frame_poses(self, Q: _F, frames: Sequence[str]) -> _F:
        """(N, k, 12) [p_WF m, R_WF row-major] of k frames."""

    def batch_frame_jacobians(self, Q: _F, frames: Sequence[str]) -> _F:
        """(N, k, 6, nv) J_WF [linear; angular], world axes."""


@runtime_checkable
class HasWorldConstraintStep(Protocol):
    """dt [s]: one step of a known crash (a constraint on the world body), for the
    sweep's crash isolation; run it only in a process that may be lost."""

    def native_world_constraint_step(self, dt: float = 1e-3) -> dict[str, float]:
        """{"advanced_to_s": t [s]} if the engine does not crash."""


@runtime_checkable
class HasMjcfCompiler(Protocol):
    """An MJCF file compiled by the engine [SI: m, kg, kg·m², rad], handed over as plain
    values for the MJCF importer (harness/model/mjcf_import.py)."""

    # Any: the importer's CompiledMjcf, which imports this module (no cycle of imports)
    @staticmethod
    def compile_mjcf(path: str) -> Any:
        """harness/model/mjcf_import.py CompiledMjcf of the MJCF at ``path``; BadInput(path,
        problem) if the engine cannot compile it."""


# ----- the interface every adapter implements --------------------------------------------
@runtime_checkable
class EngineAdapter(HasDerivatives, HasConstrainedDynamics, HasReadback, Protocol):
    """q (nq,), v (nv,), τ (nv,) canonical [m, rad, m/s, rad/s, N, N·m]: the quantities
    every engine answers (or refuses with NotProvided), plus the capabilities all four
    adapters share (derivatives, constrained dynamics, read-back)."""

    name: str          # "mujoco", "pinocchio", "crocoddyl", "drake"
    version: str       # the engine package version
    model: PreparedModel
    provides: dict[str, str]  # quantity -> one-line statement of which engine API computes it
    # (label, settings) of native contact compared
    NATIVE_CONTACT_VARIANTS: tuple[tuple[str, _Settings], ...]

    @property
    def nq(self) -> int: ...
    @property
    def nv(self) -> int: ...
    @property
    def joint_names(self) -> list[str]: ...

    def neutral(self) -> _F:
        """q (nq,) at rest, from the engine's own neutral configuration."""

    def random_state(self, rng: np.random.Generator) -> tuple[_F, _F]:
        """(q (nq,), v (nv,)) valid for the model; the same sampler for every engine."""

    def group_inertias(self) -> dict[str, _F]:
        """{joint: (10,) [m kg, c_W m (3), I_W kg·m² (6: xx yy zz xy xz yz)]} of the rigid
        group each joint carries, at neutral, as the engine holds it after loading."""

    def frame_pose(self, q: _F, frame: str) -> _F:
        """(12,) [p_WF (3) m, R_WF (9, row-major)] of a named frame."""

    def frame_poses(self, q: _F, frames: Sequence[str]) -> _F:
        """(k, 12) poses of k frames at one q."""

    def frame_jacobian(self, q: _F, frame: str) -> _F:
        """J_WF (6, nv): v → [linear velocity of F's origin; ω_F], world axes."""

    def frame_jacobians(self, q: _F, frames: Sequence[str]) -> _F:
        """(k, 6, nv) Jacobians of k frames at one q."""

    def mass_matrix(self, q: _F) -> _F:
        """M (nv, nv) [kg, kg·m, kg·m²], armature included."""

    def bias_forces(self, q: _F, v: _F) -> _F:
        """h (nv,) [N, N·m]: Coriolis, centrifugal and gravity terms and the joint springs'
        K (q − q_ref) (no damping)."""

    def forward_dynamics(self, q: _F, v: _F, tau: _F) -> _F:
        """v̇ (nv,) [m/s², rad/s²] solving M v̇ + h = τ − D v."""

    def inverse_dynamics(self, q: _F, v: _F, vdot: _F) -> _F:
        """τ (nv,) [N, N·m] = M v̇ + h + D v."""

    def integrate(self, q: _F, v: _F, dt: float) -> _F:
        """q (nq,) after moving along constant v for dt [s] (manifold-aware)."""

    def native_contact_statement(self, settings: _Settings | None = None
                                 ) -> tuple[_Settings, str]:
        """(settings, one-line statement) of the engine's own contact model."""


@dataclass(frozen=True)
class QCopyMaps:
    """Index arrays, each (k,) intp, between the canonical q (nq,) and an engine's own q for
    an engine that holds a revolute or prismatic coordinate as it is, a continuous joint as
    one angle θ = atan2(sin, cos) and a free root as 7 numbers in an order of its own.

    ``simple_can``/``simple_eng``: revolute and prismatic coordinates; ``cont_can`` (the
    cos; the sin is ``cont_sin`` = cont_can + 1)/``cont_eng``: continuous joints;
    ``copy_can``/``copy_eng``: every engine q number that is a plain copy of a canonical one
    (the simple coordinates, the free root's 7, then the adapter's extra copies), so that
    q_eng[copy_eng] = q[copy_can] is one fancy assignment; ``free_qa``: the engine's q
    address of the free root (None for a fixed base)."""

    simple_can: _I
    simple_eng: _I
    cont_can: _I
    cont_eng: _I
    cont_sin: _I
    copy_can: _I
    copy_eng: _I
    free_qa: int | None


def _index_pairs(pairs: Sequence[tuple[int, int]]) -> tuple[_I, _I]:
    """(canonical (k,), engine (k,)) intp arrays of k (canonical, engine) index pairs."""
    if not pairs:
        return np.zeros(0, np.intp), np.zeros(0, np.intp)
    can, eng = zip(*pairs)
    return np.array(can, dtype=np.intp), np.array(eng, dtype=np.intp)


def q_copy_maps(slots: Sequence[tuple[JointSlot, int, int]], free: JointSlot | None,
                free_order: Sequence[int], extra: Iterable[tuple[int, int]] = ()) -> QCopyMaps:
    """QCopyMaps, (k,) intp index arrays, of ``slots`` [(layout slot, engine q address,
    engine v address)] in canonical order; ``free`` the layout's free slot (None: fixed
    base) and ``free_order`` the canonical index (p 0–2, quaternion x y z w 3–6) of each of
    the engine's 7 free-root numbers in its order; ``extra`` more (canonical, engine) plain
    copies (e.g. a ball joint's quaternion)."""
    simple = [(s.iq, qa) for s, qa, _ in slots if s.type in ("revolute", "prismatic")]
    cont = [(s.iq, qa) for s, qa, _ in slots if s.type == "continuous"]
    free_qa = slots[0][1] if free is not None else None
    copies = list(simple)
    if free_qa is not None:
        copies += [(c, free_qa + k) for k, c in enumerate(free_order)]
    copies += list(extra)
    cont_can, cont_eng = _index_pairs(cont)
    return QCopyMaps(*_index_pairs(simple), cont_can, cont_eng, cont_can + 1,
                     *_index_pairs(copies), free_qa)


class AdapterBase:
    """Shared plumbing: the canonical layout and index maps built from joint names, and the
    defaults of an engine without an API of its own for dynamics derivatives."""

    name = "base"
    # (label, settings) of the native contact variants compared side by side
    NATIVE_CONTACT_VARIANTS: tuple[tuple[str, _Settings], ...] = (("defaults", {}),)
    version = "0"
    # how forward/inverse_dynamics_derivatives are computed ("analytical",
    # "automatic_differentiation" or "finite_difference"; "none": not provided), which picks
    # the tolerance class of harness/stages/derivatives.py
    derivatives_method = "none"

    if TYPE_CHECKING:  # every adapter defines them (EngineAdapter); frame_poses/… call them
        def frame_pose(self, q: _F, frame: str) -> _F: ...
        def frame_jacobian(self, q: _F, frame: str) -> _F: ...

    def __init__(self, model: PreparedModel) -> None:
        self.model = model
        self.layout = model.layout

    @property
    def nq(self) -> int:
        return self.layout.nq

    @property
    def nv(self) -> int:
        return self.layout.nv

    @property
    def joint_names(self) -> list[str]:
        return self.layout.joint_names

    def neutral(self) -> _F:  # overridden where the engine has its own
        return self.layout.neutral()

    def random_state(self, rng: np.random.Generator) -> tuple[_F, _F]:
        """(q, v) valid for the model; same sampler for every engine."""
        return self.layout.random_q(rng), rng.normal(size=self.nv)

    def frame_poses(self, q: _F, frames: Iterable[str]) -> _F:
        """(k, 12) poses of several frames at one q (adapters may compute FK once)."""
        return np.stack([self.frame_pose(q, f) for f in frames])

    def frame_jacobians(self, q: _F, frames: Iterable[str]) -> _F:
        """(k, 6, nv) Jacobians of several frames at one q."""
        return np.stack([self.frame_jacobian(q, f) for f in frames])

    def forward_dynamics_derivatives(self, q: _F, v: _F, tau: _F) -> tuple[_F, _F, _F]:
        """(∂v̇/∂q, ∂v̇/∂v, ∂v̇/∂τ), each (nv, nv), canonical; ∂/∂q w.r.t. the tangent δ of
        q ⊕ δ = integrate(q, δ, 1); damping as in forward_dynamics (M v̇ + h = τ − D v).
        Default: NotProvided (no engine API)."""
        raise NotProvided(self.name, "forward dynamics derivatives", "no engine API")

    def inverse_dynamics_derivatives(self, q: _F, v: _F, vdot: _F) -> tuple[_F, _F, _F]:
        """(∂τ/∂q, ∂τ/∂v, ∂τ/∂v̇), each (nv, nv), canonical, of τ = M v̇ + h + D v.
        Default: NotProvided (no engine API)."""
        raise NotProvided(self.name, "inverse dynamics derivatives", "no engine API")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} {self.version} model={self.model.name}>"
