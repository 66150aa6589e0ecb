"""Stage 1, kinematics from the same generalized coordinates.

* frame_pose (N·k, 12): [p_WF m (3), R_WF (9, row-major)] of every body and named frame.
* frame_jacobian (N·k, 6, nv): J_WF, [linear; angular], world axes.
Samples are labelled "state i / frame".
"""
from __future__ import annotations

import numpy as np

from harness.model.protocol import HasBatchedEvaluation
from harness.stages.base import Quantity, state_frame_labels

NAME = "kinematics"


def _poses(adapter, inputs):
    if isinstance(adapter, HasBatchedEvaluation):  # the N states as one batch of worlds
        return adapter.batch_frame_poses(inputs.q, inputs.frames).reshape(-1, 12)
    return np.concatenate([adapter.frame_poses(q, inputs.frames) for q in inputs.q])


def _jacobians(adapter, inputs):
    if isinstance(adapter, HasBatchedEvaluation):
        J = adapter.batch_frame_jacobians(inputs.q, inputs.frames)
        return J.reshape(-1, *J.shape[2:])
    return np.concatenate([adapter.frame_jacobians(q, inputs.frames) for q in inputs.q])


QUANTITIES = (
    Quantity("frame_pose", _poses, state_frame_labels, None, "frame_pose"),
    Quantity("frame_jacobian", _jacobians, state_frame_labels, None, "frame_jacobian"),
)
