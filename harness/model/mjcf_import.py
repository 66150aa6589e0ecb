"""MJCF file → FixtureSpec, so a user's MuJoCo model takes the fixtures' path to every
engine (exported again to URDF for Pinocchio/Crocoddyl/Drake and to MJCF for MuJoCo).

Units are SI as MuJoCo compiles them: m, kg, kg·m², rad (an MJCF in degrees is converted
by MuJoCo's compiler), N·m·s/rad (damping), kg·m² (armature). This module is
engine-blind: the MuJoCo compile and the reading of the compiled model live in
``engines.mujoco.compiled_mjcf_to_spec`` (imported lazily); here are the file checks,
the model name and the final ``FixtureSpec.validate``.

The *compiled* model is read, so the file's compiler settings (inertia from geoms,
``angle``, ``eulerseq``, fusestatic, …) have already acted; meshes an MJCF refers to
must therefore exist (MuJoCo needs them to compile). What becomes what:

* body → Body: ``body_mass``; com ``body_ipos``; inertia = R(``body_iquat``)
  diag(``body_inertia``) Rᵀ in the body frame. Bodies and joints keep MuJoCo's order
  (document order, depth first).
* body pose in its parent (``body_pos``/``body_quat``) → the parent joint's xyz / URDF
  rpy (``matrix_to_rpy``); a body without a joint is welded by a fixed joint named
  ``<body>__fixed``.
* ``hinge`` → revolute; with a ``range`` (``jnt_limited``) the limits, else unbounded
  (lower/upper None: still one q, as in MuJoCo — "continuous" would change the
  coordinates to (cos, sin)). ``slide`` → prismatic. ``dof_damping`` → damping (0 if the
  damper is disabled in ``<option>``), ``dof_armature`` → armature.
* ``free`` joint on the root body → ``floating=True`` (also if ``floating`` was False);
  its pose in ``<worldbody>`` only sets qpos0 and is dropped. ``floating=True`` on a
  root without a joint frees it the same way.
* A root body welded to the world at a non-identity pose, or attached to it by a hinge
  or slide, hangs from a massless root body ``world_`` (FixtureSpec has no root pose);
  a hinge/slide root cannot also be floating.
* site → Frame (``site_pos``/``site_quat``); a site on the world body goes to the root
  (or ``world_``), or is dropped with a note for a floating model; unnamed sites are
  dropped with a note.
* gravity from ``<option>`` (0 if gravity is disabled). Actuators, sensors, geoms
  (beyond their contribution to inertia), contacts, cameras and lights are ignored.

An MJCF may not contain (each raises BadInput naming the file and the element):
ball joints; a body with more than one joint; a joint whose ``pos`` is not the body
origin; a free joint below the root, or with damping/armature/frictionloss; non-zero
joint ``stiffness``, ``springref``, ``ref`` or ``frictionloss``; tendons; equality
constraints; flexes; plugins; mocap bodies; ``gravcomp``; fluid forces
(``density``/``viscosity``); more than one body tree at ``<worldbody>``; an unnamed body
or unnamed moving joint; a body named ``world_`` when the world body must be kept;
names outside ``[A-Za-z_][A-Za-z0-9_.-]*``; anything MuJoCo itself refuses to compile;
a ``<!DOCTYPE``/``<!ENTITY`` declaration; more bodies than the harness supports
(``MAX_BODIES``, harness/core/strict.py: counted in the file before MuJoCo compiles it).
"""
from __future__ import annotations

import dataclasses
import os
import re

from harness.core.errors import BadInput
from harness.core.spec import FixtureSpec
from harness.core.strict import MAX_BODIES, holds_warnings
from harness.model.import_common import read_model_file, sanitise_model_name


@holds_warnings
def load_mjcf_with_notes(path: str, floating: bool = False) -> tuple:
    """(FixtureSpec, notes): the MJCF at ``path`` [SI units] as a validated spec, and one
    line per change the import made. BadInput(path, problem) for unsupported content."""
    path = str(path)
    raw = read_model_file(path, "MJCF")
    # the supported size, checked before the engine's compiler sees the file
    bodies = len(re.findall(rb"<body[\s>/]", re.sub(rb"<!--.*?-->", b"", raw, flags=re.S)))
    if bodies > MAX_BODIES:
        raise BadInput(path, f"{bodies} <body> elements: the harness supports at most "
                             f"{MAX_BODIES} bodies per model (harness/core/strict.py)")
    from harness.model import registry

    # the MJCF compiler of the engine whose adapter reads MJCF back into a spec
    reader = registry.adapter_class(registry.providing("mjcf_to_spec")[0])
    spec, notes = reader.mjcf_to_spec(path, floating)
    spec = dataclasses.replace(
        spec, name=sanitise_model_name(spec.name, path), source=path,
        description=f"MJCF model {spec.name or '(unnamed)'} imported from "
                    f"{os.path.basename(path)}")
    return spec.validate(where=path), notes


def load_mjcf(path: str, floating: bool = False) -> FixtureSpec:
    """The MJCF at ``path`` [SI units] as a validated FixtureSpec (see the module
    docstring for what is read and what is rejected); BadInput(path, problem) on error."""
    return load_mjcf_with_notes(path, floating)[0]
