"""The staged comparison. Each stage module declares its quantities; the runner
(harness/stages/runner.py) evaluates them on every engine with the same inputs,
compares every pair, and scores a later stage of a pair only if its earlier stages agree.

| # | stage           | quantities                                                   |
|---|-----------------|--------------------------------------------------------------|
| 0 | model_identity  | total_mass, group_inertia (per joint), mass_matrix_neutral   |
| 1 | kinematics      | frame_pose, frame_jacobian (every body and named frame)      |
| 2 | dynamics        | mass_matrix, bias_forces, forward_dynamics, inverse_dynamics |
| 3 | constrained     | KKT v̇ and λ of holonomic loops, J, J̇v, redundancy, native   |
|   |                 | constrained solvers, drift of constrained rollouts           |
|   |                 | (constraint fixtures only; harness/stages/constrained.py)    |
| 4 | contact         | contact_force, generalized_contact_force,                    |
|   |                 | contact_acceleration (shared law; contact fixtures only)     |
| 6 | derivatives     | ∂v̇/∂(q, v, τ), ∂τ/∂(q, v, v̇) (opt-in; harness/stages/derivatives.py) |

A quantity is a function (adapter, inputs) → array (S, ...) of S samples, with a label
per sample; stage 0 quantities may also have a ``declared`` value computed from the
FixtureSpec itself, which every engine is compared against.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Inputs:
    """Seeded samples shared by every engine. N states; nq, nv canonical."""

    q: np.ndarray      # (N, nq)
    v: np.ndarray      # (N, nv) [rad/s | m/s]
    tau: np.ndarray    # (N, nv) [N·m | N]
    vdot: np.ndarray   # (N, nv) [rad/s² | m/s²]
    frames: tuple      # frame names compared in stage 1

    @classmethod
    def sample(cls, model, n: int, rng: np.random.Generator) -> "Inputs":
        lay = model.layout
        q = np.stack([lay.random_q(rng) for _ in range(n)])
        v = rng.normal(size=(n, lay.nv))
        tau = rng.normal(size=(n, lay.nv))
        vdot = rng.normal(size=(n, lay.nv))
        return cls(q, v, tau, vdot, tuple(model.frames))

    def arrays(self) -> dict:
        return {"q": self.q, "v": self.v, "tau": self.tau, "vdot": self.vdot}


@dataclass(frozen=True)
class Quantity:
    name: str
    compute: Callable          # (adapter, inputs) -> (S, ...) array
    labels: Callable           # (model, inputs) -> list of S strings
    declared: Callable | None = None  # (model) -> (S, ...) array, or None
    needs: str = ""            # adapter capability (harness.protocol.QUANTITIES)
    # derivatives stage (issue 8): a per-engine reference computed from the engine's own
    # lower-level API, compared as "<reference_name>~<engine>"; ``variant(a, b)`` (b None:
    # the reference row) returns the tolerance-key suffix of a comparison
    reference: Callable | None = None   # (adapter, inputs) -> (S, ...) array
    reference_name: str = ""
    variant: Callable | None = None


def state_labels(model, inputs):
    return [f"state {i}" for i in range(inputs.q.shape[0])]


def state_frame_labels(model, inputs):
    return [f"state {i} / {f}" for i in range(inputs.q.shape[0]) for f in inputs.frames]


from harness.stages import constrained, derivatives, dynamics, identity, kinematics  # noqa: E402

STAGES = (identity.STAGE, kinematics.STAGE, dynamics.STAGE, constrained.STAGE)
# stages evaluated by their own function (their inputs are not the shared samples):
# name -> run_stage(model, adapters, engines, samples, rng, arrays, blocked_pair,
# blocked_engine, progress) -> records
CUSTOM = {constrained.NAME: constrained.run_stage}

# ----- contact (harness/stages/contact.py) ----------------------------------------------
from harness.stages import contact  # noqa: E402

STAGES = STAGES + (contact.STAGE, derivatives.STAGE)
# Stages a run without --stages leaves out (parity's default stays stages 0-2, the 1e-10
# parity claim); qualify selects them explicitly. Derivatives include a finite-difference
# engine whose rows are held to their own, looser bound.
OPT_IN = (derivatives.NAME,)
# stage name -> (model) -> bool: a stage listed here runs only on the models it applies to
APPLIES = {contact.NAME: contact.applies}
# explicit numeric aliases of stages (``--stages 4``); the others are numbered by position
NUMBERS = {constrained.NAME: 3, contact.NAME: 4, derivatives.NAME: 6}
