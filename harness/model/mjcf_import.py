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
* several hinge/slide/ball joints in one body, or a joint away from its body origin
  (``pos``) → a chain of massless bodies ``<body>__<joint>``, one per joint at its anchor
  with the body's orientation, the body itself after the last joint (or hung from the
  last one's massless body by the weld ``<body>__fixed`` when that joint is not at the
  body origin); exact, derived in harness/model/joint_chain.py and docs/conventions.md.
  Classes, defaults, degrees and euler sequences are resolved by MuJoCo's compiler.
* ``hinge`` → revolute; with a ``range`` (``jnt_limited``) the limits, else unbounded
  (lower/upper None: still one q, as in MuJoCo — "continuous" would change the
  coordinates to (cos, sin)). ``slide`` → prismatic. ``dof_damping`` → damping (0 if the
  damper is disabled in ``<option>``), ``dof_armature`` → armature, a joint spring
  ``stiffness`` k with ``springref`` (MuJoCo's qpos_spring) → stiffness and spring_ref
  (−k (q − q_ref) in h; a springref without stiffness acts on nothing and is dropped).
* ``ball`` → ball (quaternion, ω in the child frame: MuJoCo's own ball joint with the
  quaternion reordered to x y z w); its damping and armature are per-axis scalars, as in
  MuJoCo; a ``range`` (a cone limit) is dropped with a note (the canonical ball joint has
  no limits, and stages 0–2 apply none).
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
* ``<equality>`` ``connect`` → a ``point`` loop constraint, ``weld`` → a ``weld`` one
  (stage 3; fixed-base models only). Between sites: on the two sites. Between bodies:
  frames ``<name>__1`` / ``<name>__2`` on body1 / body2 placed from MuJoCo's compiled
  ``eq_data`` (connect: the anchor on body1 and its body2-side image at qpos0; weld:
  body2's anchor point and orientation in body1 at qpos0, and the anchor on body2), so
  they coincide exactly when MuJoCo's equality holds; the world body is the root (or
  ``world_``). An unnamed equality is ``equality_<i>``; an inactive one is set aside with
  a note; ``torquescale`` and non-default ``solref``/``solimp`` shape only MuJoCo's soft
  solver (noted). The manifold is sampled from the first keyframe's qpos if there is
  one, else from qpos0 (``q_init``).
* ``<tendon>`` without stiffness, damping, armature or frictionloss: set aside with one
  note (it does not enter M or h; its limits are constraints, not compared in stages
  0–2).

An MJCF may not contain (each raises BadInput naming the file and the element):
a free joint below the root or beside other joints in one body (MuJoCo's compiler
already refuses most of these), or with damping/armature/frictionloss; non-zero
joint ``ref`` or ``frictionloss`` (on ball joints too); ``stiffness`` or ``springref``
on a ball joint;
a tendon with stiffness, damping, armature or frictionloss; an equality that is a joint
coupling (``polycoef``), a tendon or flex coupling, or an equality on a floating model;
flexes; plugins; mocap bodies; ``gravcomp``; fluid forces
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
def load_mjcf_with_notes(path: str, floating: bool = False) -> tuple[FixtureSpec, list[str]]:
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
    read: tuple[FixtureSpec, list[str]] = reader.mjcf_to_spec(path, floating)
    spec, notes = read
    spec = dataclasses.replace(
        spec, name=sanitise_model_name(spec.name, path), source=path,
        description=f"MJCF model {spec.name or '(unnamed)'} imported from "
                    f"{os.path.basename(path)}")
    return spec.validate(where=path), notes


def load_mjcf(path: str, floating: bool = False) -> FixtureSpec:
    """The MJCF at ``path`` [SI units] as a validated FixtureSpec (see the module
    docstring for what is read and what is rejected); BadInput(path, problem) on error."""
    return load_mjcf_with_notes(path, floating)[0]
