"""Stage 2, unconstrained dynamics under identical inputs (N seeded states).

* mass_matrix (N, nv, nv); bias_forces (N, nv) h(q, v) without damping;
* forward_dynamics (N, nv) v̇ for the sampled τ; inverse_dynamics (N, nv) τ for the
  sampled v̇ (both with the canonical damping −D v).
"""
from __future__ import annotations

import numpy as np

from harness.stages.base import Quantity, state_labels

NAME = "dynamics"


def _each(fn):
    return lambda a, i: np.stack([fn(a, k, i) for k in range(i.q.shape[0])])


QUANTITIES = (
    Quantity("mass_matrix", _each(lambda a, k, i: a.mass_matrix(i.q[k])), state_labels,
             None, "mass_matrix"),
    Quantity("bias_forces", _each(lambda a, k, i: a.bias_forces(i.q[k], i.v[k])),
             state_labels, None, "bias_forces"),
    Quantity("forward_dynamics",
             _each(lambda a, k, i: a.forward_dynamics(i.q[k], i.v[k], i.tau[k])),
             state_labels, None, "forward_dynamics"),
    Quantity("inverse_dynamics",
             _each(lambda a, k, i: a.inverse_dynamics(i.q[k], i.v[k], i.vdot[k])),
             state_labels, None, "inverse_dynamics"),
)
