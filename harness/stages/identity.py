"""Stage 0, model identity: what each engine holds after loading the model.

* total_mass (1, 1) [kg]: mass of everything that moves.
* group_inertia (n_joints, 10): per joint, the rigid group it carries at neutral:
  [m kg, c_W m (3), I_W kg·m² about c (xx yy zz xy xz yz)]; labelled by joint name.
* mass_matrix_neutral (1, nv, nv): M at the engine's own neutral configuration.
Both inertial quantities are also compared with the values declared by the FixtureSpec.
"""
from __future__ import annotations

import numpy as np

from harness.stages import Quantity

NAME = "model_identity"


def _groups(adapter, inputs):
    gi = adapter.group_inertias()
    return np.stack([gi[n] for n in adapter.layout.joint_names])


def _declared_groups(model):
    gi = model.declared_group_inertias()
    return np.stack([gi[n] for n in model.layout.joint_names])


def _total(adapter, inputs):
    return np.array([[_groups(adapter, inputs)[:, 0].sum()]])


def _declared_total(model):
    return np.array([[model.declared_total_mass()]])


STAGE = (NAME, (
    Quantity("total_mass", _total, lambda m, i: ["model"], _declared_total, "group_inertias"),
    Quantity("group_inertia", _groups, lambda m, i: list(m.layout.joint_names),
             _declared_groups, "group_inertias"),
    Quantity("mass_matrix_neutral", lambda a, i: a.mass_matrix(a.neutral())[None],
             lambda m, i: ["neutral"], None, "mass_matrix"),
))
