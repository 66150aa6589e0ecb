"""MJCF file → FixtureSpec, so a user's MuJoCo model takes the fixtures' path to every
engine (exported again to URDF for Pinocchio/Crocoddyl/Drake and to MJCF for MuJoCo).

Units are SI as MuJoCo compiles them: m, kg, kg·m², rad (an MJCF in degrees is converted
by MuJoCo's compiler), N·m·s/rad (damping), kg·m² (armature). This module is
engine-blind: the compile step is the engine's (the adapter class that has
``compile_mjcf``, reached through the registry), which hands the compiled model over as
plain values (``CompiledMjcf``); here are the file checks, the reading of the compiled
model into a FixtureSpec (``compiled_to_spec``), the model name and the final
``FixtureSpec.validate``.

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
  a hinge/slide root cannot also be floating. That root takes the name of the world
  body's first site instead when the site sits at the origin with the identity rotation
  (the harness's export writes a fixed, massless root so); the site is then the root, not
  a frame of it.
* site → Frame (``site_pos``/``site_quat``); a site on the world body goes to the root
  (or ``world_``), or is dropped with a note for a floating model; unnamed sites are
  dropped with a note. A site named like a body (allowed in MJCF, whose sites and bodies
  have separate names) is the frame ``<site>__site`` (noted), so both are compared.
* several body trees at ``<worldbody>`` (a robot beside a table and objects): trees
  attached to the world (a root welded or on a hinge/slide) and static trees (no joint:
  a table) all hang from the massless root ``world_``; free-joint trees (objects) are set
  aside with a note (no contact in stages 0–2: decoupled from the rest, M
  block-diagonal). Without an attached tree the one free tree is the floating model and
  static trees are set aside (noted); several free trees, or several moving trees with
  ``floating``, are refused. Sites on set-aside bodies are dropped (noted).
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
* a hinge's or slide's ``ref`` (MuJoCo's qpos0, at which the file draws the body): the
  canonical coordinate is qpos − ref, so the neutral pose is the drawn one; its range,
  springref and keyframe values are shifted with it (noted).
* ``<equality><joint joint1 joint2 polycoef="a0 a1 a2 a3 a4">`` between hinge or slide
  joints → the joint coupling q1 = a0 + a1·q2 + … + a4·q2⁴ in canonical coordinates
  (MuJoCo's y − y0 = Σ a_k (x − x0)^k with the refs y0, x0; ``Coupling``, linear as
  multiplier and offset, else a polynomial; stage 3; floating models too), noted; a
  missing joint2 is refused.
* ``<tendon>`` without stiffness, damping, armature or frictionloss: set aside with one
  note (it does not enter M or h; its limits are constraints, not compared in stages
  0–2).

An MJCF may not contain (each raises BadInput naming the file and the element):
a free joint below the root or beside other joints in one body (MuJoCo's compiler
already refuses most of these), or with damping/armature/frictionloss; non-zero
joint ``frictionloss`` (on ball joints too); ``stiffness`` or ``springref`` on a ball
joint;
a tendon with stiffness, damping, armature or frictionloss; a joint equality that has
no joint2, a tendon or flex coupling, or a connect/weld equality on a floating model;
flexes; plugins; mocap bodies; ``gravcomp``; fluid forces
(``density``/``viscosity``); several free body trees and nothing attached to the world,
or an equality on a body tree set aside; an unnamed body
or unnamed moving joint; a body named ``world_`` when the world body must be kept;
names outside ``[A-Za-z_][A-Za-z0-9_.-]*``; anything MuJoCo itself refuses to compile;
a ``<!DOCTYPE``/``<!ENTITY`` declaration; more bodies than the harness supports
(``MAX_BODIES``, harness/core/strict.py: counted in the file before MuJoCo compiles it).
"""
from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from harness.core.conventions import (
    Layout,
    matrix_to_rpy,
    quat_wxyz_to_xyzw,
    quat_xyzw_to_matrix,
)
from harness.core.errors import BadInput
from harness.core.spec import (
    WORLD_BODY,
    Body,
    Constraint,
    Coupling,
    FixtureSpec,
    Frame,
    Joint,
)
from harness.core.strict import MAX_BODIES, holds_warnings
from harness.model import registry
from harness.model.import_common import read_model_file, sanitise_model_name
from harness.model.joint_chain import body_joint_chain
from harness.model.protocol import HasMjcfCompiler

_F = NDArray[np.float64]
# BadInput naming the file, for one problem (``compiled_to_spec``'s ``bad``)
_Bad = Callable[[str], BadInput]
# (joint id, joint name, label for messages) of a body's hinge/slide/ball joint
_NamedJoint = tuple[int, str, str]

# The compiled arrays the reading uses, named as MuJoCo's compiler names them (a row per
# body, joint, dof, site, equality, tendon or keyframe; quaternions w x y z).
COMPILED_ARRAYS = (
    "body_parentid", "body_mocapid", "body_gravcomp", "body_mass", "body_ipos", "body_iquat",
    "body_inertia", "body_pos", "body_quat", "body_jntnum", "body_jntadr",
    "jnt_qposadr", "jnt_dofadr", "jnt_limited", "jnt_range", "jnt_stiffness", "jnt_axis",
    "jnt_pos", "qpos0", "qpos_spring", "dof_damping", "dof_armature", "dof_frictionloss",
    "site_bodyid", "site_pos", "site_quat",
    "eq_active0", "eq_solref", "eq_solimp", "eq_data", "eq_obj1id", "eq_obj2id",
    "tendon_stiffness", "tendon_damping", "tendon_armature", "tendon_frictionloss",
    "key_qpos",
)
# the kinds of named element, each with its names in id order ("" for an unnamed one)
NAMED_KINDS = ("body", "joint", "site", "equality", "tendon", "key")


@dataclass(frozen=True)
class CompiledMjcf:
    """An MJCF file as MuJoCo's compiler leaves it, in plain values [SI: m, kg, kg·m²,
    rad, N·m·s/rad, N·m/rad]: what ``compiled_to_spec`` reads, and all it reads.

    ``arrays``: copies of the compiled arrays of ``COMPILED_ARRAYS`` (one the compiler does
    not have is absent), also reached as attributes (``m.body_mass``); ``names``: for each
    kind of ``NAMED_KINDS`` the element names in id order ("" unnamed; body 0 is the
    world); ``joint_types`` one of "free", "ball", "slide", "hinge" per joint;
    ``equality_types`` one of "connect", "weld", "joint", "tendon", "flex" per equality
    and ``equality_on_sites`` whether it joins two sites (else two bodies); the
    ``<option>`` values (gravity (3,) [m/s²], fluid density [kg/m³] and viscosity [Pa·s],
    gravity or the joint dampers disabled); the counts of flexes, plugins and actuators;
    the model's name."""

    model_name: str
    names: Mapping[str, Sequence[str]]
    joint_types: tuple[str, ...]
    equality_types: tuple[str, ...]
    equality_on_sites: tuple[bool, ...]
    gravity: tuple[float, ...]
    gravity_disabled: bool
    damper_disabled: bool
    density: float
    viscosity: float
    nflex: int
    nplugin: int
    nu: int
    # float64, or integer for ids, counts and flags (body_parentid, jnt_limited, ...)
    arrays: dict[str, NDArray[Any]]

    def __getattr__(self, field: str) -> NDArray[Any]:
        arrays: dict[str, NDArray[Any]] = self.__dict__.get("arrays", {})
        if field in arrays:
            return arrays[field]
        raise AttributeError(field)

    def count(self, kind: str) -> int:
        """How many elements of ``kind`` (one of NAMED_KINDS) the compiled model has."""
        return len(self.names[kind])


# ----- the compiled model → FixtureSpec ------------------------------------------------
def _rot(quat_wxyz: ArrayLike) -> _F:
    """R (3, 3) of a MuJoCo quaternion (w x y z)."""
    return quat_xyzw_to_matrix(quat_wxyz_to_xyzw(np.asarray(quat_wxyz, dtype=float)))


def _rpy(quat_wxyz: ArrayLike) -> tuple[float, ...]:
    """URDF rpy [rad] of a MuJoCo quaternion (w x y z)."""
    return tuple(float(x) for x in matrix_to_rpy(_rot(quat_wxyz)))


def _vec(x: Iterable[float]) -> tuple[float, ...]:
    return tuple(float(t) for t in x)


def _model_wide(m: CompiledMjcf, notes: list[str], bad: _Bad
                ) -> tuple[tuple[float, ...], bool]:
    """(gravity (3,) [m/s²], no_damping) of the compiled model after refusing the
    model-wide content a spec cannot carry (flexes, plugins, fluid forces, not exactly one
    body tree) and noting what is dropped (tendons, disabled gravity or dampers,
    actuators)."""
    notes += _tendons_set_aside(m, bad)
    for count, what in ((m.nflex, "flexes (deformable bodies)"),
                        (m.nplugin, "engine plugins")):
        if count:
            raise bad(f"{what} ({count}): not supported (a FixtureSpec is one tree of rigid "
                      "bodies with revolute/prismatic/ball/fixed joints)")
    if m.density != 0 or m.viscosity != 0:
        raise bad("option density/viscosity is non-zero: fluid forces are not supported")
    gravity = _vec(m.gravity)
    if m.gravity_disabled:
        gravity = (0.0, 0.0, 0.0)
        notes.append("gravity is disabled in <option>: imported as gravity 0")
    no_damping = m.damper_disabled
    if no_damping:
        notes.append("joint damping is disabled in <option>: imported as damping 0")
    if m.nu:
        notes.append(f"{m.nu} actuator(s) ignored: the harness applies generalized forces "
                     "directly")
    return gravity, no_damping


def _forest(m: CompiledMjcf, floating: bool, notes: list[str], bad: _Bad
            ) -> tuple[set[int], bool]:
    """(ids of the bodies set aside, whether several trees are kept) of the body trees at
    ``<worldbody>``; one tree: (∅, False). A FixtureSpec is one tree, so of a forest:

    * trees attached to the world (a weld or hinge/slide root; the robot), and static
      trees (no joint at all: a table, a floor), all hang from the massless root
      ``world_``; free-joint trees (objects lying about) are set aside with a note: with
      no contact and no equality to the rest they are decoupled from it in stages 0–2
      (M block-diagonal), each a free body the harness compares on its own file;
    * without an attached tree, the one free tree is the (floating) model and static
      trees are set aside with a note (fixed to the world, they never enter M or h, and a
      floating model has no world body); several free trees are refused (BadInput);
    * ``floating`` (free the root): the one tree that moves is the model, static trees set
      aside; several moving trees are refused."""
    n = m.count("body")
    roots = [i for i in range(1, n) if m.body_parentid[i] == 0]
    if not roots:
        raise bad("worldbody has no bodies (nothing to simulate)")
    if len(roots) == 1:
        return set(), False
    top: dict[int, int] = {}
    tree: dict[int, list[int]] = {r: [] for r in roots}
    for i in range(1, n):  # MuJoCo numbers a parent before its children
        p = int(m.body_parentid[i])
        top[i] = i if p == 0 else top[p]
        tree[top[i]].append(i)

    def label(rs: list[int]) -> str:
        return ", ".join(m.names["body"][r] or f"#{r}" for r in rs[:5]) \
            + (", …" if len(rs) > 5 else "")

    free = [r for r in roots if m.body_jntnum[r] == 1
            and m.joint_types[int(m.body_jntadr[r])] == "free"]
    static = [r for r in roots if not any(m.body_jntnum[i] for i in tree[r])]
    attached = [r for r in roots if r not in free and r not in static]
    if floating or not attached:
        moving = attached + free
        if len(moving) > 1:
            raise bad(f"{len(moving)} body trees at worldbody move ({label(moving)}): a "
                      "floating model is one tree (one free root); keep one")
        kept, aside = moving or static, [] if not moving else static
        why = "fixed to the world, they never enter M or h (a floating model has no world)"
    else:
        kept, aside = [r for r in roots if r not in free], free
        why = ("free bodies with no contact, they are decoupled from the rest in stages "
               "0-2 (compare one in a file of its own)")
    if aside:
        notes.append(f"{len(aside)} body tree(s) at worldbody set aside ({label(aside)}): "
                     + why)
    if len(kept) > 1:
        notes.append(f"{len(kept)} body trees at worldbody ({label(kept)}) hang from the "
                     f"massless root {WORLD_BODY!r}")
    return {i for r in aside for i in tree[r]}, len(kept) > 1


def _body(m: CompiledMjcf, i: int, bad: _Bad) -> Body:
    """The Body of compiled body ``i`` [kg, m, kg·m²]: mass, com ``body_ipos``, inertia
    R(body_iquat) diag(body_inertia) Rᵀ in the body frame."""
    bname = m.names["body"][i]
    if not bname:
        raise bad(f"body #{i} has no name; every body needs one (bodies are matched "
                  "by name)")
    if m.body_mocapid[i] >= 0:
        raise bad(f"body {bname} is a mocap body: not supported")
    if m.body_gravcomp[i] != 0:
        raise bad(f"body {bname}: gravcomp is non-zero: not supported")
    Ri = _rot(m.body_iquat[i])
    inertia = Ri @ np.diag(m.body_inertia[i]) @ Ri.T
    inertia = 0.5 * (inertia + inertia.T)
    return Body(bname, float(m.body_mass[i]), _vec(m.body_ipos[i]),
                tuple(float(x) for x in inertia.reshape(-1)))


def _free_root(m: CompiledMjcf, i: int, floating: bool, identity: bool, notes: list[str],
               bad: _Bad) -> None:
    """Checks and notes of the free joint of root body ``i`` (the model becomes floating)."""
    bname = m.names["body"][i]
    jid = int(m.body_jntadr[i])
    jname = m.names["joint"][jid]
    label = f"joint {jname}" if jname else f"the joint of body {bname}"
    dof = int(m.jnt_dofadr[jid])
    if np.any(m.dof_damping[dof:dof + 6]) or np.any(m.dof_armature[dof:dof + 6]) \
            or np.any(m.dof_frictionloss[dof:dof + 6]):
        raise bad(f"{label}: damping/armature/frictionloss on a free joint is not "
                  "supported")
    if m.jnt_stiffness[jid] != 0:
        raise bad(f"{label}: joint stiffness is not supported")
    if not floating:
        notes.append(f"{label} is free: the model is imported as floating")
    if not identity:
        notes.append(f"root body {bname}: its pose in worldbody is dropped (the "
                     "free root joint sets it)")


def _named_joints(m: CompiledMjcf, i: int, bad: _Bad) -> list[_NamedJoint]:
    """[(jid, name, label)] of the hinge/slide/ball joints of body ``i``; BadInput for a
    free joint among them or an unnamed one."""
    named: list[_NamedJoint]
    bname, njnt, named = m.names["body"][i], int(m.body_jntnum[i]), []
    for jid in range(int(m.body_jntadr[i]), int(m.body_jntadr[i]) + njnt):
        jname = m.names["joint"][jid]
        label = f"joint {jname}" if jname else f"a joint of body {bname}"
        if m.joint_types[jid] == "free":
            raise bad(f"{label} (body {bname}): a free joint is only supported alone on "
                      "the root body")
        if not jname:
            raise bad(f"{label} has no name; moving joints are matched by name")
        named.append((jid, jname, label))
    return named


def _joint_chain(m: CompiledMjcf, bname: str, named: list[_NamedJoint], parent: str,
                 xyz: tuple[float, ...], pose_rpy: tuple[float, ...], no_damping: bool,
                 notes: list[str], bad: _Bad) -> tuple[list[Body], list[Joint]]:
    """([Body] massless, [Joint]) of the hinge, slide and ball joints ``named`` of body
    ``bname``, one or several, anywhere in the body: a chain of massless bodies
    <body>__<joint> at the anchors (harness/model/joint_chain.py) [m, rad]."""
    extra, placements = body_joint_chain(parent or WORLD_BODY, bname, xyz, pose_rpy,
                                         [(jn, m.jnt_pos[jid]) for jid, jn, _ in named])
    by_name = {jn: (jid, label) for jid, jn, label in named}
    joints: list[Joint] = []
    for jn, jparent, jchild, jxyz, jrpy in placements:
        if jn is None:
            joints.append(Joint(f"{bname}__fixed", "fixed", jparent, jchild, jxyz, jrpy))
            continue
        jid, label = by_name[jn]
        joints.append(_moving_joint(m, jid, jn, label, jparent, jchild, jxyz, jrpy,
                                    no_damping, notes, bad))
    return [Body(n, 0.0) for n in extra], joints


def _bodies_and_joints(m: CompiledMjcf, floating: bool, no_damping: bool, notes: list[str],
                       bad: _Bad, aside: set[int], forest: bool
                       ) -> tuple[list[Body], list[Joint], bool, bool]:
    """(bodies, joints, is_floating, keep_world) of the compiled body tree [SI units]:
    each body with its pose in the parent (URDF xyz/rpy) on its joint(s); a body without
    a joint welded by ``<body>__fixed``; a free root joint makes the model floating; a
    root welded away from identity or moved by a joint keeps the world body ``world_``,
    as do several trees (``forest``: every root hangs from it). Bodies in ``aside``
    (``_forest``) are left out."""
    bodies: list[Body]
    joints: list[Joint]
    bodies, joints, is_floating, keep_world = [], [], bool(floating), forest
    for i in range(1, m.count("body")):
        if i in aside:
            continue
        bodies.append(_body(m, i, bad))
        bname = bodies[-1].name
        parent = "" if m.body_parentid[i] == 0 else m.names["body"][m.body_parentid[i]]
        xyz, pose_rpy = _vec(m.body_pos[i]), _rpy(m.body_quat[i])
        identity = not any(xyz) and np.array_equal(m.body_quat[i], (1.0, 0.0, 0.0, 0.0))
        njnt = int(m.body_jntnum[i])
        if njnt == 0:
            if parent:
                joints.append(Joint(f"{bname}__fixed", "fixed", parent, bname, xyz, pose_rpy))
            elif floating:
                if not identity:
                    notes.append(f"root body {bname}: its pose in worldbody is dropped (the "
                                 "free root joint sets it)")
            elif not identity or forest:
                keep_world = True
                joints.append(Joint(f"{bname}__fixed", "fixed", WORLD_BODY, bname, xyz,
                                    pose_rpy))
            continue
        if m.joint_types[int(m.body_jntadr[i])] == "free" and njnt == 1 and not parent:
            _free_root(m, i, floating, identity, notes, bad)
            is_floating = True
            continue
        named = _named_joints(m, i, bad)
        if not parent:
            if floating:
                raise bad(f"{named[0][2]} attaches body {bname} to the world; the model "
                          "cannot also be floating")
            keep_world = True
        extra, chain = _joint_chain(m, bname, named, parent, xyz, pose_rpy, no_damping, notes,
                                    bad)
        bodies += extra
        joints += chain
    return bodies, joints, is_floating, keep_world


def _frames(m: CompiledMjcf, bodies: list[Body], is_floating: bool, keep_world: bool,
            notes: list[str], aside: set[int]) -> tuple[list[Frame], list[str]]:
    """([Frame] of the compiled sites [m, rad], the frame name of each site by site id, ""
    for a dropped one). A site on the world body goes to the root (or ``world_``), or is
    dropped with a note for a floating model; unnamed sites and sites on bodies set aside
    (``_forest``) are dropped with a note. A site named like a body (MJCF keeps sites and
    bodies apart; a spec's frames and bodies share one namespace) is the frame
    ``<site>__site`` (``__site_2``, … if that is taken), with a note: the user's name stays
    in the frame's name."""
    frames: list[Frame] = []
    site_frames: list[str] = []
    taken = {b.name for b in bodies}
    for s in range(m.count("site")):
        sname = m.names["site"][s]
        site_frames.append("")
        if not sname:
            notes.append(f"site #{s} has no name: dropped")
            continue
        b = int(m.site_bodyid[s])
        if b in aside:
            notes.append(f"site {sname} is on body {m.names['body'][b]}, set aside: dropped")
            continue
        if b == 0:
            if is_floating:
                notes.append(f"site {sname} is on the world body of a floating model: "
                             "dropped")
                continue
            owner = WORLD_BODY if keep_world else bodies[0].name
        else:
            owner = m.names["body"][b]
        fname = sname
        if sname in taken:
            fname, k = f"{sname}__site", 2
            while fname in taken or fname in m.names["site"]:
                fname, k = f"{sname}__site_{k}", k + 1
            notes.append(f"site {sname} shares its name with a body: compared as frame "
                         f"{fname} (on body {owner})")
        taken.add(fname)
        site_frames[-1] = fname
        frames.append(Frame(fname, owner, _vec(m.site_pos[s]), _rpy(m.site_quat[s])))
    return frames, site_frames


def _name_the_world(m: CompiledMjcf, bodies: list[Body], joints: list[Joint],
                    frames: list[Frame], site_frames: list[str], notes: list[str]) -> str:
    """The name of the massless root body the importer keeps for the world: the name of the
    world body's first site when that site sits at the origin with the identity rotation
    (the harness's own export writes a fixed massless root so: fixtures/export.py
    ``to_mjcf``), else ``world_``. A naming site is the root itself, not a frame of it, and
    the notes about the kept world go (the file names it); bodies, joints, frames and
    site_frames are renamed in place."""
    first = next((s for s in range(m.count("site")) if int(m.site_bodyid[s]) == 0), None)
    if first is None or not site_frames[first] or site_frames[first] != m.names["site"][first]:
        return WORLD_BODY
    name = site_frames[first]
    if (np.any(np.asarray(m.site_pos[first]) != 0.0)
            or np.any(np.asarray(m.site_quat[first]) != (1.0, 0.0, 0.0, 0.0))
            or any(b.name == name for b in bodies)):
        return WORLD_BODY
    bodies[0] = dataclasses.replace(bodies[0], name=name)
    joints[:] = [dataclasses.replace(j, parent=name) if j.parent == WORLD_BODY else j
                 for j in joints]
    frames[:] = [dataclasses.replace(f, body=name) if f.body == WORLD_BODY else f
                 for f in frames if f.name != name]
    notes[:] = [n for n in notes if f"massless root body {WORLD_BODY!r}" not in n
                and not n.endswith(f"hang from the massless root {WORLD_BODY!r}")]
    return name


def _q_init(m: CompiledMjcf, spec: FixtureSpec, notes: list[str], aside: set[int]
            ) -> tuple[float, ...]:
    """q (nq,) stage 3 starts from: the first keyframe's qpos (ball quaternions reordered
    to x y z w, a hinge's or slide's ref subtracted; the joints of bodies set aside left
    out), else qpos0 (= neutral)."""
    q = Layout.from_spec(spec).neutral()
    if m.count("key"):
        kq = np.asarray(m.key_qpos[0], dtype=float).copy()
        for j in range(m.count("joint")):  # ball quaternions w x y z → x y z w
            a = int(m.jnt_qposadr[j])
            if m.joint_types[j] == "ball":
                kq[a:a + 4] = quat_wxyz_to_xyzw(kq[a:a + 4])
            elif m.joint_types[j] in ("hinge", "slide"):  # canonical q = qpos − ref
                kq[a] -= float(m.qpos0[a])
        nq = {"free": 7, "ball": 4}
        keep = [int(m.jnt_qposadr[j]) + k
                for b in range(1, m.count("body")) if b not in aside
                for j in range(int(m.body_jntadr[b]), int(m.body_jntadr[b])
                               + int(m.body_jntnum[b]))
                for k in range(nq.get(m.joint_types[j], 1))]
        q = kq[keep]
        key = m.names["key"][0] or "#0"
        notes.append(f"loop constraints: the manifold is sampled from keyframe {key}")
    return tuple(float(x) for x in q)


def _ball_joint(m: CompiledMjcf, jid: int, jname: str, label: str, parent: str, bname: str,
                xyz: tuple[float, ...], pose_rpy: tuple[float, ...], no_damping: bool,
                notes: list[str], bad: _Bad) -> Joint:
    """The Joint of a compiled MuJoCo ball joint (quaternion qpos w first, qvel ω in the
    child frame: the canonical ball joint). MuJoCo gives a joint's damping and armature to
    each of its three dofs (per-axis scalars, as in the canonical model); a range (a cone
    limit) is dropped with a note (the canonical ball joint has no limits, and stages 0–2
    apply none); springref, a non-identity reference and frictionloss are refused."""
    qa, dof = int(m.jnt_qposadr[jid]), int(m.jnt_dofadr[jid])
    if not np.array_equal(m.qpos_spring[qa:qa + 4], (1.0, 0.0, 0.0, 0.0)):
        raise bad(f"{label}: springref is not supported")
    if not np.array_equal(m.qpos0[qa:qa + 4], (1.0, 0.0, 0.0, 0.0)):
        raise bad(f"{label}: a non-identity reference orientation is not supported")
    if np.any(m.dof_frictionloss[dof:dof + 3]):
        raise bad(f"{label}: frictionloss is not supported")
    if m.jnt_limited[jid]:
        notes.append(f"{label}: ball joint range (a cone of {float(m.jnt_range[jid][1]):g} "
                     "rad) dropped: the canonical ball joint has no limits")
    return Joint(jname, "ball", parent or WORLD_BODY, bname, xyz, pose_rpy,
                 damping=0.0 if no_damping else float(m.dof_damping[dof]),
                 armature=float(m.dof_armature[dof]))


def _moving_joint(m: CompiledMjcf, jid: int, jname: str, label: str, parent: str,
                  child: str, xyz: tuple[float, ...], rpy: tuple[float, ...], no_damping: bool,
                  notes: list[str], bad: _Bad) -> Joint:
    """The Joint of a compiled MuJoCo hinge (→ revolute: ``range`` if ``jnt_limited``,
    else unbounded), slide (→ prismatic) or ball joint (``_ball_joint``) from ``parent`` to
    ``child`` at xyz [m] / rpy [rad], axis ``jnt_axis`` (the child frame has the MuJoCo
    body's orientation: harness/model/joint_chain.py); a joint spring (``stiffness`` k,
    ``springref`` = MuJoCo's qpos_spring) becomes the joint's stiffness and spring_ref (a
    springref without stiffness acts on nothing and is dropped); a hinge's or slide's
    ``ref`` (MuJoCo's qpos0: the joint moves the body by qpos − qpos0) makes the canonical
    coordinate qpos − ref, its range and springref shifted by −ref (noted); a ball joint's
    stiffness and frictionloss are refused (BadInput naming the joint)."""
    if m.joint_types[jid] == "ball":
        if m.jnt_stiffness[jid] != 0:
            raise bad(f"{label}: joint stiffness on a ball joint is not supported")
        return _ball_joint(m, jid, jname, label, parent, child, xyz, rpy, no_damping, notes,
                           bad)
    qa, dof = int(m.jnt_qposadr[jid]), int(m.jnt_dofadr[jid])
    k = float(m.jnt_stiffness[jid])
    if m.dof_frictionloss[dof] != 0:
        raise bad(f"{label}: frictionloss is not supported")
    kind = "revolute" if m.joint_types[jid] == "hinge" else "prismatic"
    ref = float(m.qpos0[qa])  # the canonical q is qpos − ref (MuJoCo moves by qpos − qpos0)
    if ref:
        notes.append(f"{label}: ref {ref:g}: the canonical coordinate is MuJoCo's "
                     f"{_minus('qpos', ref)} (0 at the pose the file draws; its range and "
                     "springref shifted with it)")
    lo = hi = None
    if m.jnt_limited[jid]:
        lo, hi = (float(x) - ref for x in m.jnt_range[jid])
    return Joint(jname, kind, parent, child, xyz, rpy, tuple(float(x) for x in m.jnt_axis[jid]),
                 lo, hi, damping=0.0 if no_damping else float(m.dof_damping[dof]),
                 armature=float(m.dof_armature[dof]), stiffness=k,
                 spring_ref=float(m.qpos_spring[qa]) - ref if k else 0.0)


def _tendons_set_aside(m: CompiledMjcf, bad: _Bad) -> list[str]:
    """Notes for the tendons of a compiled MjModel, which do not enter M or h (stages 0–2)
    unless they carry stiffness, damping or armature: those, and frictionloss, are refused
    (BadInput naming the tendon); the rest are set aside with one note."""
    if not m.count("tendon"):
        return []
    names: list[str] = []
    for t in range(m.count("tendon")):
        tname = m.names["tendon"][t] or f"#{t}"
        for what, arr in (("stiffness", m.tendon_stiffness), ("damping", m.tendon_damping),
                          ("armature", m.arrays.get("tendon_armature")),
                          ("frictionloss", m.tendon_frictionloss)):
            if arr is not None and np.any(np.asarray(arr[t]) != 0):
                raise bad(f"tendon {tname}: {what} is not supported (it would act in the "
                          "dynamics; a FixtureSpec has no tendons)")
        names.append(tname)
    return [f"{len(names)} tendon(s) set aside ({', '.join(names)}): without stiffness, "
            "damping or armature they do not enter M or h (their limits are constraints, "
            "not compared in stages 0-2)"]


_DEFAULT_SOLREF, _DEFAULT_SOLIMP = (0.02, 1.0), (0.9, 0.95, 0.001, 0.5, 2.0)


def _minus(what: str, ref: float) -> str:
    """'what − ref' as text ('what + 0.1' for ref −0.1, 'what' for 0)."""
    return f"{what} {'−' if ref > 0 else '+'} {abs(ref):g}" if ref else what


def _joint_coupling(m: CompiledMjcf, e: int, ename: str, notes: list[str],
                    bad: _Bad) -> Coupling:
    """The Coupling of the compiled ``<equality><joint>`` ``e`` in canonical coordinates
    [rad | m]. MuJoCo's relation is y − y0 = a0 + a1 (x − x0) + … + a4 (x − x0)⁴ (y joint1,
    x joint2, y0 and x0 their ``ref``s, a = ``eq_data[0:5]`` = polycoef); the canonical
    coordinates are qpos − ref (``_moving_joint``), so q1 = Σ a_k q2^k exactly: linear
    (a2 = a3 = a4 = 0) as multiplier a1 and offset a0, else the polynomial of its degree
    (harness/core/coupling_function.py, highest power first). BadInput for a missing joint2
    or a joint that is not a hinge or slide."""
    c = np.asarray(m.eq_data[e], dtype=float)[:5]
    ids = (int(m.eq_obj1id[e]), int(m.eq_obj2id[e]))
    if ids[1] < 0:
        raise bad(f"equality {ename}: a joint equality without joint2 holds joint1 at a "
                  "constant: not supported")
    for i in ids:
        if m.joint_types[i] not in ("hinge", "slide"):
            raise bad(f"equality {ename}: joint {m.names['joint'][i]} is "
                      f"{m.joint_types[i]}; a coupling joins hinge or slide joints")
    names = (m.names["joint"][ids[0]], m.names["joint"][ids[1]])
    if np.any(c[2:] != 0.0):
        degree = int(np.flatnonzero(c)[-1])
        fn = ("polynomial", tuple(float(a) for a in c[degree::-1]))
        k = Coupling(names[0], names[1], function=fn)
    else:
        k = Coupling(names[0], names[1], float(c[1]), float(c[0]))
    if tuple(m.eq_solref[e]) != _DEFAULT_SOLREF or tuple(m.eq_solimp[e]) != _DEFAULT_SOLIMP:
        notes.append(f"equality {ename}: solref/solimp shape only MuJoCo's soft solver "
                     "(the harness compares the exact coupling; MuJoCo's native row uses "
                     "the defaults)")
    refs = [float(m.qpos0[int(m.jnt_qposadr[i])]) for i in ids]
    shift = (f"; in MuJoCo's qpos: {_minus(names[0], refs[0])} = "
             f"p({_minus(names[1], refs[1])})" if any(refs) else "")
    notes.append(f"{k.note} (MJCF <equality><joint> {ename}, polycoef "
                 f"{' '.join(f'{a:g}' for a in c)}{shift}; stage 3 holds the relation)")
    return k


def _equalities(m: CompiledMjcf, frames: list[Frame], site_frames: list[str],
                bodies: set[str], world_owner: str, floating: bool, notes: list[str],
                bad: _Bad, couplings: list[Coupling]) -> list[Constraint]:
    """[Constraint] of a compiled MjModel's ``<equality>`` connect and weld elements
    (stage 3 loops); frames they need are appended to ``frames`` [m, rad], joint
    equalities to ``couplings`` (``_joint_coupling``, on floating models too).

    * connect between sites: a ``point`` constraint on the two sites (already frames,
      named by ``site_frames``);
      between bodies: frames ``<name>__1`` on body1 at ``anchor`` and ``<name>__2`` on
      body2 at the compiled body2-side anchor (``eq_data[3:6]``, MuJoCo's own at qpos0).
    * weld between sites: ``weld`` on the two sites; between bodies: frame ``<name>__1``
      on body1 at the compiled relative pose (``eq_data[3:10]``: body2's anchor point and
      orientation in body1 at qpos0) and ``<name>__2`` on body2 at ``anchor``
      (``eq_data[0:3]``), unrotated: they coincide exactly when MuJoCo's weld holds.
    * the world body (id 0) is the root body (or ``world_``) of a fixed-base model.
    Refused (BadInput naming the element): tendon and flex equalities, a joint equality
    without joint2. Inactive equalities are set aside; a weld's ``torquescale`` and non-default
    solref/solimp only shape MuJoCo's soft solver: noted."""
    out: list[Constraint] = []
    taken = bodies | {f.name for f in frames}

    for e in range(m.count("equality")):
        ename = m.names["equality"][e] or f"equality_{e}"
        et = m.equality_types[e]
        kind = {"connect": "point", "weld": "weld"}
        if et not in kind and et != "joint":
            what = {"tendon": "a tendon coupling"}.get(et, "a flex equality")
            raise bad(f"equality {ename} is {what}: not supported (connect and weld become "
                      "loop constraints, joint a joint coupling)")
        if not m.eq_active0[e]:
            notes.append(f"equality {ename} is inactive: set aside")
            continue
        if et == "joint":
            couplings.append(_joint_coupling(m, e, ename, notes, bad))
            continue
        if floating:
            raise bad(f"equality {ename}: loop constraints are supported on fixed-base "
                      "models only")
        if tuple(m.eq_solref[e]) != _DEFAULT_SOLREF or tuple(m.eq_solimp[e]) != _DEFAULT_SOLIMP:
            notes.append(f"equality {ename}: solref/solimp shape only MuJoCo's soft solver "
                         "(the harness compares the exact constraint; MuJoCo's native row "
                         "uses the defaults)")
        data = np.asarray(m.eq_data[e], dtype=float)
        if et == "weld" and data[10] != 1.0:
            notes.append(f"equality {ename}: torquescale {data[10]:g} shapes only MuJoCo's "
                         "soft solver (the exact weld holds both parts)")
        if m.equality_on_sites[e]:
            ends = [site_frames[int(i)] for i in (m.eq_obj1id[e], m.eq_obj2id[e])]
            if not all(ends):
                raise bad(f"equality {ename}: its sites must be named frames of the model "
                          "(not on a body tree set aside)")
            out.append(Constraint(ename, kind[et], ends[0], ends[1]))
            continue
        owners: list[str] = []
        for i in (int(m.eq_obj1id[e]), int(m.eq_obj2id[e])):
            owners.append(world_owner if i == 0 else m.names["body"][i])
            if owners[-1] not in bodies:
                raise bad(f"equality {ename}: body {owners[-1]} is in a body tree set aside "
                          "(a free tree beside the model)")
        fa, fb = f"{ename}__1", f"{ename}__2"
        for n in (fa, fb):
            if n in taken:
                raise bad(f"equality {ename}: the frame name {n} it needs is taken")
            taken.add(n)
        if et == "connect":
            frames += [Frame(fa, owners[0], _vec(data[0:3])),
                       Frame(fb, owners[1], _vec(data[3:6]))]
        else:
            frames += [Frame(fa, owners[0], _vec(data[3:6]), _rpy(data[6:10])),
                       Frame(fb, owners[1], _vec(data[0:3]))]
        out.append(Constraint(ename, kind[et], fa, fb))
    return out


def compiled_to_spec(m: CompiledMjcf, path: str, floating: bool = False
                     ) -> tuple[FixtureSpec, list[str]]:
    """(FixtureSpec, notes) of the MJCF at ``path`` from its compiled model ``m`` [SI
    units: m, kg, kg·m², rad]. Not validated (``load_mjcf_with_notes`` does that, naming
    the file).

    Reads the *compiled* model, so whatever the file's compiler settings did (inertia from
    geoms, degrees, fused bodies) is already applied: per body
    ``body_mass``, com ``body_ipos``, inertia R(body_iquat) diag(body_inertia) Rᵀ in the
    body frame, pose ``body_pos``/``body_quat`` in the parent (as URDF xyz/rpy); hinge →
    revolute (``range`` if ``jnt_limited``, else unbounded: lower/upper None, one q like
    MuJoCo's hinge), slide → prismatic, no joint → fixed (named ``<body>__fixed``), free
    joint on the root → floating; ``dof_damping`` and ``dof_armature``; sites → Frames.
    Everything the module docstring lists as unsupported raises BadInput(path, ...)."""
    path = str(path)

    def bad(problem: str) -> BadInput:
        return BadInput(path, problem)

    notes: list[str] = []
    gravity, no_damping = _model_wide(m, notes, bad)
    aside, forest = _forest(m, floating, notes, bad)
    bodies, joints, is_floating, keep_world = _bodies_and_joints(m, floating, no_damping,
                                                                 notes, bad, aside, forest)
    if keep_world:
        if any(b.name == WORLD_BODY for b in bodies):
            raise bad(f"a body named {WORLD_BODY!r} already exists; the importer needs that "
                      "name for the world body it keeps")
        bodies.insert(0, Body(WORLD_BODY, 0.0))
    if keep_world and not forest:
        notes.append(f"the world is kept as the massless root body {WORLD_BODY!r} (the "
                     "root body is not attached to it by an identity weld)")
    frames, site_frames = _frames(m, bodies, is_floating, keep_world, notes, aside)
    world_owner = WORLD_BODY if keep_world else bodies[0].name
    if keep_world:
        world_owner = _name_the_world(m, bodies, joints, frames, site_frames, notes)
    couplings: list[Coupling] = []
    constraints = _equalities(m, frames, site_frames, {b.name for b in bodies}, world_owner,
                              is_floating, notes, bad, couplings)
    spec = FixtureSpec(name=m.model_name, bodies=tuple(bodies), joints=tuple(joints),
                       frames=tuple(frames), gravity=gravity, floating=is_floating,
                       source=path, constraints=tuple(constraints),
                       couplings=tuple(couplings))
    if constraints:  # stage 3 starts from the first keyframe's qpos, else qpos0 (= neutral)
        spec = dataclasses.replace(spec, q_init=_q_init(m, spec, notes, aside))
    return spec, notes


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

    # the MJCF compiler of the engine whose adapter compiles MJCF
    compiler = registry.adapter_class(registry.providing(HasMjcfCompiler)[0])
    spec, notes = compiled_to_spec(compiler.compile_mjcf(path), path, floating)
    spec = dataclasses.replace(
        spec, name=sanitise_model_name(spec.name, path), source=path,
        description=f"MJCF model {spec.name or '(unnamed)'} imported from "
                    f"{os.path.basename(path)}")
    return spec.validate(where=path), notes


def load_mjcf(path: str, floating: bool = False) -> FixtureSpec:
    """The MJCF at ``path`` [SI units] as a validated FixtureSpec (see the module
    docstring for what is read and what is rejected); BadInput(path, problem) on error."""
    return load_mjcf_with_notes(path, floating)[0]
