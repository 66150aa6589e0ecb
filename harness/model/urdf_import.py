"""URDF file → FixtureSpec, so a user's robot takes the fixtures' path to the engines.

Units are URDF's (SI): lengths in m, angles in rad, masses in kg, inertias in kg·m²,
damping in N·s/m (prismatic) or N·m·s/rad (revolute). The importer is engine-blind: it
reads the file with ``xml.etree.ElementTree`` and never evaluates anything in it.

What is read, and how (every choice below is deliberate; ``load_urdf_with_notes`` lists
the ones that changed something in a given file):

* Only ``<link>`` and ``<joint>`` children of ``<robot>`` are read. ``<visual>``,
  ``<collision>``, ``<gazebo>``, ``<transmission>``, ``<material>``, ``<sensor>``,
  ``<ros2_control>`` … are ignored entirely (``package://`` mesh paths never matter).
* Bodies follow the document order of ``<link>``, joints the order of ``<joint>``.
* ``<inertial>``: com = ``origin xyz``; an ``origin rpy`` ≠ 0 rotates the inertia into
  the link frame (I_link = R I Rᵀ). ``<mass>`` and all six ``<inertia>`` attributes are
  required (as in urdfdom). A link without ``<inertial>`` has mass 0 and zero inertia;
  mass 0 with a non-zero inertia is rejected (not physical, and engines disagree on it).
* Joint types: ``revolute``, ``prismatic`` (a ``<limit>`` element is required, as in
  urdfdom; ``lower`` and ``upper`` default to 0; if lower ≥ upper — e.g. the common
  lower = upper = 0 — the joint is imported *unbounded*, limits None), ``continuous``
  (no limits; a ``<limit>`` is ignored), ``fixed``. ``planar`` is not supported. URDF has
  no ball joint: a joint of type ``ball``/``spherical`` (or Drake's ``<drake:joint
  type="ball">`` extension, which the harness writes for its own engines) is refused in
  one line saying how to write it (three revolute joints through two massless links, or
  the model as MJCF).
  ``floating`` is supported only between the link ``world`` and the root link, where it
  makes the model floating; anywhere else it is rejected.
* ``<axis>``: default (1, 0, 0); normalised; a zero axis is rejected.
* ``<dynamics damping>`` → Joint.damping. Non-zero ``friction`` is dropped (noted).
  URDF has no armature: 0. ``effort``/``velocity`` limits, ``<safety_controller>`` and
  ``<calibration>`` do not enter the dynamics and are ignored.
* ``<mimic joint multiplier offset>`` (defaults 1, 0) on a revolute or prismatic joint
  whose leader is a revolute or prismatic joint: the joint keeps moving and the relation
  becomes the spec's joint coupling q_f = multiplier·q_l + offset (``Coupling``; stage 3
  compares it in every engine), noted. A mimic on or of a continuous joint (its angle
  wraps), or of a joint that is not moving, is *frozen*: the joint becomes a ``fixed``
  joint at its zero position (child pose = the joint's ``origin``), its damping goes, and
  the note says so (``FROZEN_NOTE``). A mimic naming no joint of the file is refused.
* The link ``world`` (as in many real files) is not a body. Rules:
  - ``world`` –fixed→ child with identity origin: ``world`` and that joint are removed;
    the child is the root. With a non-identity origin (fixed base), ``world`` is kept as
    a massless root body named ``world_`` (``WORLD_BODY``) so the offset — which can tilt
    gravity in the robot's frame — is kept; with ``floating=True`` the weld is replaced
    by the free root joint and the offset is dropped (noted).
  - ``world`` –floating→ child: removed; the model is floating (whatever ``floating``
    says, noted); the joint's origin only sets the zero pose and is dropped.
  - ``world`` –revolute/prismatic/continuous→ child: ``world`` is kept as the massless
    root body ``world_`` welded to the world, carrying that joint. ``floating=True`` is
    then rejected (a massless floating body with a moving joint has a singular M).
  - ``world`` may have only one child, no parent and no mass.
* Names must match ``[A-Za-z_][A-Za-z0-9_.-]*``; other names are rejected, never
  rewritten (engines are matched by name). The robot name is sanitised into
  ``spec.name`` (it identifies the model, no engine matches on it).
* Numbers must be plain decimals (``float`` syntax without ``nan``, ``inf`` or ``_``).
* A ``<!DOCTYPE`` or ``<!ENTITY`` declaration is rejected (no entity expansion); the
  file must be UTF-8; unexpanded xacro elements are rejected (run xacro first).

Non-physical inertias are collected over the whole file: the one-line error names every
offending link, not only the first. More ``<link>`` elements than the harness supports
(``MAX_BODIES``, harness/core/strict.py) are refused before any link is read.

Finally ``FixtureSpec.validate(where=path)`` checks the rest: the supported model size,
one tree, unique names, mass ≥ 0, inertia symmetric, PSD and satisfying the triangle
inequality, and no moving joint that moves only massless bodies. Every failure is
``BadInput(path, problem)``.
"""
from __future__ import annotations

import math
import os
import re
import xml.etree.ElementTree as ET
from typing import TypedDict, cast

import numpy as np

from harness.core.conventions import rpy_to_matrix
from harness.core.errors import BadInput
from harness.core.spec import (
    _NAME_RE,
    COUPLED_TYPES,
    FREE_JOINT_NAME,
    FROZEN_NOTE,
    WORLD_BODY,
    Body,
    Coupling,
    FixtureSpec,
    Joint,
    inertia_problem,
)
from harness.core.spec import repair_inertia as _physical_inertia
from harness.core.strict import MAX_BODIES, holds_warnings
from harness.model.import_common import read_model_file, sanitise_model_name

WORLD_LINK = "world"
SUPPORTED_TYPES = ("revolute", "continuous", "prismatic", "fixed")
# URDF has no ball joint: what files write for one, refused with one line saying how
BALL_TYPES = ("ball", "spherical")
BALL_REFUSAL = ("a ball joint is not URDF (URDF has no ball joint): write it as three "
                "revolute joints through two massless links, or bring the model as MJCF "
                "(--mjcf, <joint type=\"ball\">)")
_NUMBER_RE = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


class _RawJoint(TypedDict):
    """A ``<joint>`` as read (``_read_joint``): Joint's fields [m, rad], the type possibly
    still 'floating'."""

    name: str
    type: str
    parent: str
    child: str
    xyz: tuple[float, ...]
    rpy: tuple[float, ...]
    axis: tuple[float, ...]
    lower: float | None
    upper: float | None
    damping: float


class _Reader:
    """Parsing helpers bound to one file path (every error names it)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def bad(self, problem: str) -> BadInput:
        return BadInput(self.path, problem)

    def number(self, text: str | None, what: str) -> float:
        s = (text or "").strip()
        if not _NUMBER_RE.match(s):
            raise self.bad(f"{what}: {text!r} is not a finite decimal number")
        x = float(s)
        if not math.isfinite(x):
            raise self.bad(f"{what}: {text!r} is not finite")
        return x

    def vector(self, text: str | None, what: str,
               default: tuple[float, ...] = (0.0, 0.0, 0.0)) -> tuple[float, ...]:
        if text is None:
            return tuple(default)
        parts = text.split()
        if len(parts) != 3:
            raise self.bad(f"{what}: expected 3 numbers, got {text!r}")
        return tuple(self.number(p, what) for p in parts)

    def origin(self, el: ET.Element | None,
               what: str) -> tuple[tuple[float, ...], tuple[float, ...]]:
        o = el.find("origin") if el is not None else None
        if o is None:
            return (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
        return (self.vector(o.get("xyz"), f"{what} origin xyz"),
                self.vector(o.get("rpy"), f"{what} origin rpy"))

    def name(self, el: ET.Element, kind: str) -> str:
        n = el.get("name")
        if n is None or not n.strip():
            raise self.bad(f"a <{kind}> has no name")
        if not _NAME_RE.match(n):
            raise self.bad(f"{kind} name {n!r} is not allowed (empty, over 200 characters, "
                           "control characters or surrounding whitespace); names are matched "
                           "across engines, so the importer does not rewrite them")
        return n


def _read_root(path: str) -> ET.Element:
    """The <robot> element of the file, after the safety checks on the raw text."""
    raw = read_model_file(path, "URDF")
    try:
        root = ET.fromstring(raw)
    except ET.ParseError as e:
        line, col = getattr(e, "position", (None, None))
        msg = str(e).split(":")[0]
        raise BadInput(path, f"malformed XML at line {line}, column {col}: {msg}") from None
    if root.tag != "robot":
        raise BadInput(path, f"root element is <{root.tag}>, expected <robot>")
    if any(isinstance(el.tag, str) and "xacro" in el.tag for el in root.iter()):
        raise BadInput(path, "contains xacro elements: expand it first "
                             "(xacro FILE.urdf.xacro > FILE.urdf)")
    return root


def _read_link(r: _Reader, el: ET.Element, name: str, repair: bool = False,
               notes: list[str] | None = None, bad: list[str] | None = None) -> Body:
    """The link as a Body. A non-physical inertia is repaired (``repair``, with a note),
    appended to ``bad`` (the caller names every offending link at once) or raised."""
    inertial = el.find("inertial")
    if inertial is None:
        return Body(name, 0.0)
    what = f"link {name} inertial"
    com, rpy = r.origin(inertial, what)
    m = inertial.find("mass")
    if m is None or m.get("value") is None:
        raise r.bad(f"{what}: <mass value=...> is required")
    mass = r.number(m.get("value"), f"{what} mass")
    if mass < 0:
        raise r.bad(f"{what}: mass is negative ({mass})")
    i = inertial.find("inertia")
    if i is None:
        raise r.bad(f"{what}: <inertia> is required")
    vals = {}
    for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"):
        if i.get(k) is None:
            raise r.bad(f"{what}: inertia attribute {k} is missing")
        vals[k] = r.number(i.get(k), f"{what} inertia {k}")
    inertia = np.array([[vals["ixx"], vals["ixy"], vals["ixz"]],
                        [vals["ixy"], vals["iyy"], vals["iyz"]],
                        [vals["ixz"], vals["iyz"], vals["izz"]]])
    if mass == 0.0 and np.any(inertia):
        if not repair:
            why = (f"{what}: mass is 0 but the inertia is not zero; a massless link "
                   "cannot have rotational inertia (engines disagree on such links: "
                   "some keep the inertia, some drop it)")
            if bad is None:
                raise r.bad(f"{why}; --repair-inertia drops it")
            bad.append(why)
            return Body(name, 0.0)
        assert notes is not None  # repair comes with a notes list (_read_links)
        notes.append(f"link {name}: mass 0 with non-zero inertia; inertia set to 0 "
                     "(--repair-inertia)")
        inertia = np.zeros((3, 3))
    problem = inertia_problem(inertia)
    if problem and not repair:
        if bad is None:
            raise r.bad(f"{what}: {problem}; --repair-inertia projects it onto the nearest "
                        "physical inertia")
        bad.append(f"{what}: {problem}")
        return Body(name, mass, com)
    if problem:
        fixed = _physical_inertia(inertia)
        assert notes is not None  # repair comes with a notes list (_read_links)
        notes.append(f"link {name}: {problem}; replaced by the nearest physical inertia "
                     f"(max change {np.abs(fixed - inertia).max():.3g} kg·m², "
                     "--repair-inertia)")
        inertia = fixed
    if any(rpy):
        R = rpy_to_matrix(rpy)
        inertia = R @ inertia @ R.T
        inertia = 0.5 * (inertia + inertia.T)
    return Body(name, mass, com, tuple(float(x) for x in inertia.reshape(-1)))


def _read_joint(r: _Reader, el: ET.Element, notes: list[str]) -> _RawJoint:
    """Raw joint fields; the type may still be 'floating' (resolved by the caller)."""
    name = r.name(el, "joint")
    jtype = el.get("type")
    if jtype is None:
        raise r.bad(f"joint {name}: no type")
    if jtype in BALL_TYPES:
        raise r.bad(f"joint {name}: {BALL_REFUSAL}")
    if jtype == "planar":
        raise r.bad(f"joint {name}: planar joints are not supported "
                    f"(supported: {', '.join(SUPPORTED_TYPES)}, floating at the root)")
    if jtype not in SUPPORTED_TYPES + ("floating",):
        raise r.bad(f"joint {name}: unknown joint type {jtype!r} "
                    f"(supported: {', '.join(SUPPORTED_TYPES)}, floating at the root)")
    ends: dict[str, str] = {}
    for end in ("parent", "child"):
        e = el.find(end)
        if e is None or not e.get("link"):
            raise r.bad(f"joint {name}: <{end} link=...> is required")
        ends[end] = cast(str, e.get("link"))  # a non-empty str: checked just above
    xyz, rpy = r.origin(el, f"joint {name}")
    out: _RawJoint = dict(name=name, type=jtype, parent=ends["parent"], child=ends["child"],
                          xyz=xyz, rpy=rpy, axis=(1.0, 0.0, 0.0), lower=None, upper=None,
                          damping=0.0)
    if jtype in ("fixed", "floating"):
        return out
    ax = el.find("axis")
    if ax is not None and ax.get("xyz") is not None:
        a = np.array(r.vector(ax.get("xyz"), f"joint {name} axis"))
        n = float(np.linalg.norm(a))
        if n == 0.0:
            raise r.bad(f"joint {name}: axis is zero")
        if n != 1.0:
            a = a / n
        out["axis"] = tuple(float(x) for x in a)
    lim = el.find("limit")
    if jtype in ("revolute", "prismatic"):
        if lim is None:
            raise r.bad(f"joint {name}: a {jtype} joint needs a <limit> element")
        lo = r.number(lim.get("lower", "0"), f"joint {name} limit lower")
        hi = r.number(lim.get("upper", "0"), f"joint {name} limit upper")
        if lo < hi:
            out["lower"], out["upper"] = lo, hi
        elif lo == hi == 0.0:
            notes.append(f"joint {name}: limits lower = upper = 0 read as unbounded")
        else:
            notes.append(f"joint {name}: limits lower {lo} >= upper {hi} read as unbounded")
    dyn = el.find("dynamics")
    if dyn is not None:
        out["damping"] = r.number(dyn.get("damping", "0"), f"joint {name} damping")
        if out["damping"] < 0:
            raise r.bad(f"joint {name}: damping is negative ({out['damping']})")
        friction = r.number(dyn.get("friction", "0"), f"joint {name} friction")
        if friction != 0.0:
            notes.append(f"joint {name}: friction {friction} dropped (not modelled)")
    return out


def _refuse_foreign_joints(r: _Reader, root: ET.Element) -> None:
    """Refuse a joint element that is not URDF's ``<joint>`` (e.g. Drake's
    ``<drake:joint type="ball">`` extension), in one line saying what to write instead."""
    for el in root:  # e.g. Drake's <drake:joint type="ball"> extension
        tag = el.tag if isinstance(el.tag, str) else ""
        if tag != "joint" and tag.rsplit("}", 1)[-1].rsplit(":", 1)[-1] == "joint":
            if el.get("type") in BALL_TYPES:
                raise r.bad(f"joint {el.get('name')}: {BALL_REFUSAL}")
            raise r.bad(f"joint {el.get('name')}: <{tag}> is not a URDF joint element")


def _read_links(r: _Reader, root: ET.Element, repair_inertia: bool,
                notes: list[str]) -> tuple[list[Body], dict[str, ET.Element]]:
    """(bodies, body_els): the links other than ``world`` as Bodies [kg, m, kg·m²] in
    document order, and every link element by name (``world`` included). Non-physical
    inertias are repaired with a note (``repair_inertia``) or refused all in one line."""
    links = root.findall("link")
    if len(links) > MAX_BODIES + 1:  # (+1: a link "world" is not a body)
        raise r.bad(f"{len(links)} <link> elements: the harness supports at most "
                    f"{MAX_BODIES} bodies per model (harness/core/strict.py)")
    bodies: list[Body]
    body_els: dict[str, ET.Element]
    bad_inertia: list[str]
    bodies, body_els, bad_inertia = [], {}, []
    for el in links:
        n = el.get("name")
        if n == WORLD_LINK:
            if WORLD_LINK in body_els:
                raise r.bad("duplicate link name: world")
            body_els[WORLD_LINK] = el
            continue
        n = r.name(el, "link")
        if n in body_els:
            raise r.bad(f"duplicate link name: {n}")
        body_els[n] = el
        bodies.append(_read_link(r, el, n, repair_inertia, notes, bad_inertia))
    if len(bad_inertia) == 1:
        raise r.bad(f"{bad_inertia[0]}; --repair-inertia "
                    + ("drops it" if "mass is 0" in bad_inertia[0] else
                       "projects it onto the nearest physical inertia"))
    if bad_inertia:  # every offending link in the one line, not only the first
        raise r.bad(f"{len(bad_inertia)} links have non-physical inertias: "
                    + "; ".join(bad_inertia) + "; --repair-inertia replaces each by the "
                    "nearest physical inertia")
    if not bodies:
        raise r.bad("no <link> elements (nothing to simulate)")
    return bodies, body_els


def _read_joints(r: _Reader, root: ET.Element, body_els: dict[str, ET.Element],
                 notes: list[str],
                 mimics: list[Coupling]) -> tuple[list[_RawJoint], dict[str, str]]:
    """(raw_joints, parent_of): the ``<joint>`` elements as dicts (``_read_joint``) in
    document order, and for each child link the name of its joint (one parent each); the
    ``<mimic>`` relations of moving joints are appended to ``mimics`` as written."""
    raw_joints: list[_RawJoint]
    seen: set[str]
    raw_joints, seen = [], set()
    for el in root.findall("joint"):
        j = _read_joint(r, el, notes)
        mm = el.find("mimic")
        if mm is not None and j["type"] in ("revolute", "continuous", "prismatic"):
            mimics.append(Coupling(
                j["name"], mm.get("joint") or "",
                r.number(mm.get("multiplier", "1"), f"joint {j['name']} mimic multiplier"),
                r.number(mm.get("offset", "0"), f"joint {j['name']} mimic offset")))
        if j["name"] in seen:
            raise r.bad(f"duplicate joint name: {j['name']}")
        if j["name"] == FREE_JOINT_NAME:
            raise r.bad(f"joint name {FREE_JOINT_NAME!r} is reserved for the free root")
        seen.add(j["name"])
        for end in ("parent", "child"):
            if j[end] not in body_els:
                raise r.bad(f"joint {j['name']}: {end} link {j[end]!r} is not a <link>")
        if j["parent"] == j["child"]:
            raise r.bad(f"joint {j['name']}: link {j['parent']} is its own parent")
        raw_joints.append(j)
    parent_of: dict[str, str] = {}
    for j in raw_joints:
        if j["child"] in parent_of:
            raise r.bad(f"link {j['child']} has two parents (joints {parent_of[j['child']]} "
                        f"and {j['name']}); a URDF is a tree")
        parent_of[j["child"]] = j["name"]
    return raw_joints, parent_of


def _world_joint(r: _Reader, wj: _RawJoint, raw_joints: list[_RawJoint], floating: bool,
                 notes: list[str]) -> tuple[bool, bool]:
    """(is_floating, keep_world) for the joint ``wj`` from the link ``world`` to the root
    link (module docstring): whether the model floats (a floating ``wj`` makes it float,
    otherwise ``floating`` says) and whether ``world`` stays as a body; a joint the import
    replaces is removed from ``raw_joints``."""
    identity = not any(wj["xyz"]) and not any(wj["rpy"])
    if wj["type"] == "floating":
        if not floating:
            notes.append(f"joint {wj['name']} (world → {wj['child']}) is floating: "
                         "the model is imported as floating")
        if not identity:
            notes.append(f"joint {wj['name']}: origin of the floating joint dropped "
                         "(it only sets the zero pose)")
        raw_joints.remove(wj)
        return True, False
    if wj["type"] == "fixed":
        if floating:
            notes.append(f"joint {wj['name']} (world → {wj['child']}, fixed) replaced "
                         "by the free root joint" +
                         ("" if identity else "; its origin is dropped"))
            raw_joints.remove(wj)
        elif identity:
            notes.append(f"link world and joint {wj['name']} removed: "
                         f"{wj['child']} is the root, welded to the world")
            raw_joints.remove(wj)
        else:
            return bool(floating), True
        return bool(floating), False
    if floating:
        raise r.bad(f"joint {wj['name']} attaches the model to the world by a "
                    f"{wj['type']} joint; it cannot also be floating")
    return bool(floating), True


def _resolve_world(r: _Reader, body_els: dict[str, ET.Element], parent_of: dict[str, str],
                   raw_joints: list[_RawJoint], bodies: list[Body], floating: bool,
                   notes: list[str]) -> bool:
    """Whether the model floats, after the link ``world`` is removed or kept as the
    massless root body ``WORLD_BODY`` (module docstring); ``raw_joints`` and ``bodies``
    are edited in place."""
    is_floating = bool(floating)
    keep_world = False
    if WORLD_LINK not in body_els:
        return is_floating
    world_body = _read_link(r, body_els[WORLD_LINK], WORLD_LINK)
    if world_body.mass > 0 or any(world_body.inertia):
        raise r.bad("link world has an <inertial>; world cannot have mass")
    if WORLD_LINK in parent_of:
        raise r.bad(f"link world is the child of joint {parent_of[WORLD_LINK]}")
    to_world = [j for j in raw_joints if j["parent"] == WORLD_LINK]
    if len(to_world) > 1:
        raise r.bad("link world has more than one child ("
                    + ", ".join(j["child"] for j in to_world) + "); one tree is required")
    if to_world:
        is_floating, keep_world = _world_joint(r, to_world[0], raw_joints, floating, notes)
    else:
        notes.append("link world has no children and was removed")
    if keep_world:
        if WORLD_BODY in body_els:
            raise r.bad(f"a link named {WORLD_BODY!r} already exists; the importer needs "
                        "that name for the world link it keeps")
        bodies.insert(0, Body(WORLD_BODY, 0.0))
        for j in raw_joints:
            if j["parent"] == WORLD_LINK:
                j["parent"] = WORLD_BODY
        notes.append(f"link world kept as the massless root body {WORLD_BODY!r} "
                     "(its joint to the robot is not an identity weld)")
    return is_floating


def _subtree_mass(bodies: list[Body], raw_joints: list[_RawJoint], link: str) -> float:
    """Mass [kg] of ``link`` and every link below it."""
    mass = {b.name: b.mass for b in bodies}
    kids: dict[str, list[str]] = {}
    for j in raw_joints:
        kids.setdefault(j["parent"], []).append(j["child"])
    total, stack, seen = 0.0, [link], set()
    while stack:
        b = stack.pop()
        if b in seen:
            continue
        seen.add(b)
        total += mass.get(b, 0.0)
        stack.extend(kids.get(b, ()))
    return total


def _resolve_mimics(r: _Reader, bodies: list[Body], raw_joints: list[_RawJoint],
                    mimics: list[Coupling], notes: list[str]) -> tuple[Coupling, ...]:
    """The couplings the spec keeps (module docstring); a follower that cannot be coupled
    (continuous, or its leader continuous or not moving, also after freezing, or moving
    no mass) is frozen in ``raw_joints`` with a note. BadInput for a mimic naming no
    joint of the file."""
    by_name = {j["name"]: j for j in raw_joints}
    for c in mimics:
        if c.leader not in by_name:
            raise r.bad(f"joint {c.follower}: <mimic joint={c.leader!r}> names no joint "
                        "of the file")
    kept = list(mimics)
    changed = True
    while changed:  # freezing a joint can leave its own followers without a moving leader
        changed = False
        for c in list(kept):
            f, lead = by_name[c.follower], by_name[c.leader]
            massless = _subtree_mass(bodies, raw_joints, f["child"]) <= 0.0
            if f["type"] in COUPLED_TYPES and lead["type"] in COUPLED_TYPES and not massless:
                continue
            why = (f"the mimic joint is {f['type']}" if f["type"] not in COUPLED_TYPES else
                   f"its leader {c.leader} is {lead['type']}"
                   if lead["type"] not in COUPLED_TYPES else "it moves no mass")
            notes.append(f"joint {c.follower}: {FROZEN_NOTE}mimic of {c.leader} "
                         f"({c.label}) not kept as a coupling ({why}; couplings join "
                         f"{' or '.join(COUPLED_TYPES)} joints): imported as a fixed joint "
                         "at its zero position")
            f["type"], f["lower"], f["upper"], f["damping"] = "fixed", None, None, 0.0
            f["axis"] = (1.0, 0.0, 0.0)
            kept.remove(c)
            changed = True
    for c in kept:
        notes.append(f"{c.note} (URDF <mimic>; the joint moves, stage 3 holds the "
                     "relation)")
    return tuple(kept)


def _check_one_tree(r: _Reader, bodies: list[Body], raw_joints: list[_RawJoint]) -> None:
    """Refuse joints that do not make the bodies one tree: several roots, or a cycle."""
    names = [b.name for b in bodies]
    children = {j["child"] for j in raw_joints}
    roots = [n for n in names if n not in children]
    if not roots:
        raise r.bad("the joints form a cycle: no link is without a parent")
    if len(roots) > 1:
        raise r.bad(f"more than one root link ({', '.join(roots[:5])}"
                    f"{', …' if len(roots) > 5 else ''}); a URDF is one tree")
    reached: set[str]
    reached, stack = set(), [roots[0]]
    kids: dict[str, list[str]] = {}
    for j in raw_joints:
        kids.setdefault(j["parent"], []).append(j["child"])
    while stack:
        b = stack.pop()
        reached.add(b)
        stack.extend(kids.get(b, ()))
    if reached != set(names):
        raise r.bad("the joints form a cycle through links "
                    + ", ".join(sorted(set(names) - reached)))


@holds_warnings
def load_urdf_with_notes(path: str, floating: bool = False,
                         repair_inertia: bool = False) -> tuple[FixtureSpec, list[str]]:
    """(FixtureSpec, notes): the URDF at ``path`` [SI units] as a validated spec, and one
    line per change the import made (dropped friction, mimic joints coupled or frozen,
    world link removed, …). ``floating=True`` gives the root link a free joint ``root_joint``.
    ``repair_inertia=True`` replaces non-physical link inertias (not PSD, triangle
    inequality violated, inertia on a massless link) by the nearest physical one, with a
    note each, instead of rejecting the file; every engine then sees the same repair.
    Raises BadInput(path, problem) for anything the harness cannot represent."""
    path = str(path)
    r = _Reader(path)
    root = _read_root(path)
    notes: list[str] = []
    _refuse_foreign_joints(r, root)
    bodies, body_els = _read_links(r, root, repair_inertia, notes)
    mimics: list[Coupling] = []
    raw_joints, parent_of = _read_joints(r, root, body_els, notes, mimics)
    couplings = _resolve_mimics(r, bodies, raw_joints, mimics, notes)
    is_floating = _resolve_world(r, body_els, parent_of, raw_joints, bodies, floating, notes)
    for j in raw_joints:
        if j["type"] == "floating":
            raise r.bad(f"joint {j['name']}: floating joints are only supported between "
                        "the link world and the root link")
    _check_one_tree(r, bodies, raw_joints)
    joints = tuple(Joint(**j) for j in raw_joints)
    robot_name = root.get("name")
    spec = FixtureSpec(
        name=sanitise_model_name(robot_name, path),
        bodies=tuple(bodies),
        joints=joints,
        floating=is_floating,
        description=f"URDF robot {robot_name or '(unnamed)'} imported from "
                    f"{os.path.basename(path)}",
        source=path,
        couplings=couplings,
    )
    return spec.validate(where=path), notes


def load_urdf(path: str, floating: bool = False, repair_inertia: bool = False) -> FixtureSpec:
    """The URDF at ``path`` [SI units] as a validated FixtureSpec (see the module
    docstring for what is read and what is rejected); BadInput(path, problem) on error."""
    return load_urdf_with_notes(path, floating, repair_inertia)[0]
