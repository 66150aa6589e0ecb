"""The engine adapters, one module per engine, and the one table that names them.

The harness reaches an engine only through harness/model/registry.py, which reads
``ENGINES`` below; no module outside this package names an engine.

``preferred_for``: the roles an engine is the first choice for when the harness needs one
engine rather than all of them — ``fit`` (exact analytical derivatives and Jacobians for
the fitter and inverse kinematics), ``contact_law`` (the shared contact law's rigid-body
terms in sweep workers), ``track`` (the marker IK and inverse dynamics of `harness track`)
and ``motion_tools`` (the engine whose own IK and ID tools `harness track` runs beside its
own: ``motion_ik_tool``, ``motion_id_tool``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass


def command_process() -> None:
    """Settings only a process the harness owns may take (a ``harness`` command, a sweep or
    batch worker), called before any binding is imported: MuJoCo loads an OpenGL backend
    (glfw, ~45 ms) on import unless MUJOCO_GL says not to, and a command never renders, so
    MUJOCO_GL=disable unless the user set it. Not done on ``import harness``: a notebook
    may render with MuJoCo after using the harness."""
    os.environ.setdefault("MUJOCO_GL", "disable")


@dataclass(frozen=True)
class EngineEntry:
    """module.cls: the adapter; distribution: the PyPI distribution that carries the
    engine (its version is recorded); binding: the module the adapter needs (import name)."""

    module: str
    cls: str
    distribution: str
    binding: str
    preferred_for: tuple = ()
    # False: opt-in, run only where named (``--engines all`` or by name), not among the
    # engines a command runs when none are named (``registry.ENGINES``)
    default: bool = True


ENGINES = {
    "mujoco": EngineEntry("engines.mujoco", "MujocoAdapter", "mujoco", "mujoco"),
    "pinocchio": EngineEntry("engines.pinocchio", "PinocchioAdapter", "pin", "pinocchio",
                             preferred_for=("fit", "contact_law", "track")),
    "crocoddyl": EngineEntry("engines.crocoddyl", "CrocoddylAdapter", "crocoddyl",
                             "crocoddyl"),
    "drake": EngineEntry("engines.drake", "DrakeAdapter", "drake", "pydrake.multibody.plant"),
    "opensim": EngineEntry("engines.opensim", "OpensimAdapter", "opensim", "opensim",
                           preferred_for=("motion_tools",)),
    # opt-in: float32 (its own tolerance class), and its first use compiles kernels
    "mujoco_warp": EngineEntry("engines.mujoco_warp", "MujocoWarpAdapter", "mujoco-warp",
                               "mujoco_warp", default=False),
}
