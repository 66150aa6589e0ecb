"""SDF file → FixtureSpec (tree + loop constraints), so an SDF model takes the fixtures'
path to every engine (exported to URDF for Pinocchio/Crocoddyl/Drake, MJCF for MuJoCo).

Units: SI as SDF writes them (m, kg, kg·m², rad, N·m·s/rad). Engine-blind: the XML is
read here (Python's ElementTree, no entity expansion), no engine's parser is involved —
Drake's refuses kinematic loops, and the other engines do not read SDF.

What becomes what (SDF 1.4 – 1.6, one top ``<model>``):

* Nested ``<model>`` elements (SDF 1.5–1.6) are flattened: a nested model N's link or
  joint ``x`` is ``N::x`` (as SDF scopes it, so the outer model's joints name ``N::x``;
  ``A::B::x`` at depth two), its links' poses are composed with N's ``<pose>``, and inside
  N a joint's ``<parent>``/``<child>`` name N's own links; ``use_parent_model_frame``
  refers to N's frame.
* ``<link>`` → Body: ``<inertial>`` mass, com = the inertial pose's xyz, inertia
  R I Rᵀ (I about the com in the inertial frame's axes, R the inertial pose's rotation).
  A link's ``<pose>`` is its pose in the model frame at q = 0.
* The tree: from the root link (the one link that is no joint's child), joints that are
  not ball joints are followed first, parent → child in document order, then ball joints
  if a link is reachable only through one. Every other joint closes a loop: a ``ball``
  joint becomes a ``point`` loop constraint (stage 3) between frames ``<joint>__child``
  (its origin on the child) and ``<joint>__parent`` (the same point on the parent at
  q = 0); a ``fixed`` one a ``weld`` constraint; a ``revolute`` or ``continuous`` one
  (the canonical constraints have no 5-row hinge kind) two ``point`` constraints: the
  joint origin (``<joint>``) and the point AXIS_POINT along its axis
  (``<joint>__axis``, frames ``<joint>__child_axis`` / ``<joint>__parent_axis``). The
  two points coincide exactly when the origins coincide and the axes are aligned — the
  hinge's 5 conditions; of the 6 rows one is dependent (the axis point's motion along
  the axis), which stage 3 detects by rank and reports as exactly dependent. The model's
  own poses close every loop at q = 0 by construction, so ``q_init`` is the neutral
  configuration.
* A tree joint's frame is its ``<pose>`` in the child link frame (SDF's convention); at
  the child's origin (identity pose) the canonical joint goes straight to the child,
  otherwise to a massless body ``<child>__<joint>`` at the joint frame, which holds the
  child by the weld ``<child>__fixed`` (as MJCF joints away from their body origin:
  docs/conventions.md). ``<axis><xyz>`` is in the joint frame (in the model frame with
  ``use_parent_model_frame``); ``<limit>`` lower/upper (|value| ≥ 1e15 is unbounded),
  ``<dynamics><damping>``, and a joint spring ``<dynamics><spring_stiffness>`` k with
  ``<spring_reference>`` q_ref (default 0) → Joint.stiffness / spring_ref (−k (q − q_ref)
  in h). revolute → revolute, continuous → revolute without limits, prismatic →
  prismatic, ball → ball, fixed → fixed.
* The damping of a loop-closing joint acts on the relative motion across a loop
  constraint, which carries no force law in the canonical model: it is set aside with a
  note saying so (it acts in the dynamics; the harness compares the model without it).
* A joint to ``world``: ``fixed`` welds the root where the model puts it (the massless
  root ``world_`` when that pose is not the identity); the root floats only with
  ``floating=True`` (then its pose is dropped, as in URDF).
* Set aside with a note (they do not enter M or h): visuals, collisions, surfaces,
  ``self_collide``, ``plugin``, materials, sensors, ``<limit>`` effort/velocity;
  ``<static>``, ``<gravity>``, ``<kinematic>`` at their defaults.

Refused (BadInput naming the file and the element): another format, an ``<include>``d
model (its file is not read), more than one top model, a static or kinematic model or
link, a link without gravity, ``<frame>``, ``relative_to`` or a non-empty ``frame``
attribute on a pose (SDF ≥ 1.7 frame semantics), SDF versions after 1.6, joint types
universal, revolute2, screw, gearbox; ``<axis2>``; non-zero joint friction; a spring on
a ball joint; a loop closed by a prismatic joint; a link reachable only against a
joint's direction; a joint to ``world`` that is not fixed. ``drop_springs`` sets the
joint springs aside with a note (the harness then compares the model without them).
"""
from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any, TypedDict, cast

import numpy as np
from numpy.typing import NDArray

from harness.core.conventions import Layout, matrix_to_rpy, rpy_to_matrix
from harness.core.errors import BadInput
from harness.core.spec import WORLD_BODY, Body, Constraint, FixtureSpec, Frame, Joint
from harness.core.strict import MAX_BODIES, holds_warnings
from harness.model.import_common import read_model_file, sanitise_model_name

_SET_ASIDE = {"visual", "collision", "self_collide", "plugin", "sensor",
              "allow_auto_disable", "enable_wind", "velocity_decay",
              "must_be_base_link", "audio_source", "audio_sink", "battery", "light",
              "projector", "particle_emitter"}
# flags that change the dynamics when set: refused unless at the value that does not
_FLAGS = {"static": "false", "gravity": "true", "kinematic": "false"}
_UNBOUNDED = 1e15
# [m] distance along a loop-closing revolute joint's axis of its second point constraint
AXIS_POINT = 1.0


class _SdfJoint(TypedDict):
    """A ``<joint>`` as read (``_read_joint``): X_CJ its 4x4 pose in the child link frame
    [m], the axis a unit vector in the joint frame, limits [rad | m], damping, spring
    stiffness and reference."""

    name: str
    type: str
    parent: str
    child: str
    X_CJ: NDArray[np.float64]
    axis: tuple[float, ...]
    lower: float | None
    upper: float | None
    damping: float
    spring: float
    spring_ref: float


def _X(xyz: Sequence[float] = (0.0, 0.0, 0.0),
       rpy: Sequence[float] = (0.0, 0.0, 0.0)) -> NDArray[np.float64]:
    X = np.eye(4)
    X[:3, :3], X[:3, 3] = rpy_to_matrix(rpy), xyz
    return X


def _t(x: Iterable[float]) -> tuple[float, ...]:
    return tuple(float(v) + 0.0 for v in x)


class _Reader:
    def __init__(self, path: str) -> None:
        self.path = path

    def bad(self, problem: str) -> BadInput:
        return BadInput(self.path, problem)

    def numbers(self, el: ET.Element | None, n: int, what: str) -> tuple[float, ...]:
        text = (el.text or "").split() if el is not None else []
        try:
            vals = [float(t) for t in text]
        except ValueError:
            raise self.bad(f"{what}: {' '.join(text)!r} is not {n} numbers") from None
        if len(vals) != n or not all(math.isfinite(v) for v in vals):
            raise self.bad(f"{what}: {' '.join(text)!r} is not {n} finite numbers")
        return tuple(vals)

    def number(self, el: ET.Element | None, what: str, default: float) -> float:
        if el is None:
            return default
        return self.numbers(el, 1, what)[0]

    def pose(self, parent: ET.Element, what: str) -> NDArray[np.float64]:
        """4x4 pose of ``parent``'s ``<pose>`` (identity if absent), refusing SDF ≥ 1.7
        frame semantics."""
        el = parent.find("pose")
        if el is None:
            return np.eye(4)
        if el.get("relative_to") or el.get("frame"):
            raise self.bad(f"{what}: <pose relative_to/frame=...> is not supported (poses "
                           "are read in SDF 1.6 semantics)")
        v = self.numbers(el, 6, f"{what} <pose>")
        return _X(v[:3], v[3:])


def _flag(r: _Reader, el: ET.Element, where: str) -> None:
    """Refuse a flag (static, gravity, kinematic) set to the value that changes M or h."""
    value = (el.text or "").strip().lower()
    if value not in (_FLAGS[el.tag], "1" if _FLAGS[el.tag] == "true" else "0"):
        raise r.bad(f"{where}: <{el.tag}>{value}</{el.tag}> is not supported (it changes "
                    "the dynamics)")


def _inertia(r: _Reader, link: ET.Element, name: str) -> Body:
    el = link.find("inertial")
    if el is None:
        return Body(name, 0.0)
    for child in el:
        if child.tag not in ("pose", "mass", "inertia"):
            raise r.bad(f"link {name}: <inertial><{child.tag}> is not supported")
    X = r.pose(el, f"link {name} <inertial>")
    mass = r.number(el.find("mass"), f"link {name} mass", 1.0)
    ie = el.find("inertia")
    g = {k: r.number(ie.find(k) if ie is not None else None, f"link {name} {k}", 0.0)
         for k in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")}
    I = np.array([[g["ixx"], g["ixy"], g["ixz"]], [g["ixy"], g["iyy"], g["iyz"]],
                  [g["ixz"], g["iyz"], g["izz"]]])
    R = X[:3, :3]
    I = R @ I @ R.T
    I = 0.5 * (I + I.T)
    return Body(name, float(mass), _t(X[:3, 3]), tuple(float(x) for x in I.reshape(-1)))


def _read_document(r: _Reader, path: str) -> ET.Element:
    """The one ``<model>`` element of the SDF at ``path``, after the checks on the document:
    well-formed XML, an ``<sdf>`` root holding exactly one model and nothing else, and a
    version from 1.4 to 1.6."""
    raw = read_model_file(path, "SDF")
    try:
        root = ET.fromstring(raw)
    except ET.ParseError as e:
        raise r.bad(f"not well-formed XML ({e})") from None
    if root.tag != "sdf":
        raise r.bad(f"root element is <{root.tag}>, not <sdf>")
    version = root.get("version", "")
    models = root.findall("model")
    others = [c.tag for c in root if c.tag != "model"]
    if others:
        raise r.bad(f"<{others[0]}> at the top level is not supported (one <model>)")
    if len(models) != 1:
        raise r.bad(f"{len(models)} <model> elements: exactly one is supported")
    if version and version.split(".")[:2] not in (["1", "4"], ["1", "5"], ["1", "6"]):
        raise r.bad(f"SDF version {version}: versions 1.4 to 1.6 are supported (later "
                    "versions change how poses are resolved)")
    return models[0]


# an element of a (possibly nested) model: (element, scoped name, scope prefix, X_MN the
# 4x4 pose [m] of the model it is declared in, in the top model's frame)
_Scoped = tuple[ET.Element, str, str, NDArray[np.float64]]


def _model_children(r: _Reader, model: ET.Element, aside: set[str], prefix: str = "",
                    X_MN: NDArray[np.float64] | None = None
                    ) -> tuple[list[_Scoped], list[_Scoped]]:
    """(links, joints): the model's ``<link>`` and ``<joint>`` elements in document order,
    those of nested ``<model>`` elements included (depth first, SDF 1.5–1.6 scoping: a
    nested model N's link l is ``N::l``, its pose composed with N's ``<pose>``); the tags
    set aside are added to ``aside``, anything else unsupported is refused, and so is a
    model without links or with more than ``MAX_BODIES``."""
    X_MN = np.eye(4) if X_MN is None else X_MN
    links: list[_Scoped]
    sdf_joints: list[_Scoped]
    links, sdf_joints = [], []
    for el in model:
        if el.tag in ("link", "joint"):
            name = el.get("name") or ""
            if not name:
                raise r.bad(f"a <{el.tag}> has no name")
            (links if el.tag == "link" else sdf_joints).append(
                (el, prefix + name, prefix, X_MN))
        elif el.tag == "model":
            inner = el.get("name") or ""
            if not inner:
                raise r.bad("a nested <model> has no name")
            sub = _model_children(r, el, aside, f"{prefix}{inner}::",
                                  X_MN @ r.pose(el, f"model {prefix}{inner}"))
            links += sub[0]
            sdf_joints += sub[1]
        elif el.tag in _SET_ASIDE:
            aside.add(el.tag)
        elif el.tag in _FLAGS:
            _flag(r, el, "<model>")
        elif el.tag != "pose":
            raise r.bad(f"<model><{el.tag}> is not supported"
                        + (" (an included model's file is not read; nest it as "
                           "<model>)" if el.tag == "include" else ""))
    if prefix:
        return links, sdf_joints
    if len(links) > MAX_BODIES:
        raise r.bad(f"{len(links)} links: the harness supports at most {MAX_BODIES} bodies "
                    "per model (harness/core/strict.py)")
    if not links:
        raise r.bad("the model has no links")
    return links, sdf_joints


def _read_links(r: _Reader, links: list[_Scoped], aside: set[str]
                ) -> tuple[dict[str, NDArray[np.float64]], dict[str, Body]]:
    """(X_M, bodies): each link's 4x4 pose in the (top) model frame [m] and its Body, both
    keyed by scoped link name in document order; tags set aside are added to ``aside``."""
    X_M: dict[str, NDArray[np.float64]]
    bodies: dict[str, Body]
    X_M, bodies = {}, {}
    for el, name, _, X_MN in links:
        if name in bodies:
            raise r.bad(f"two links are named {name}")
        for child in el:
            if child.tag in _SET_ASIDE:
                aside.add(child.tag)
            elif child.tag in _FLAGS:
                _flag(r, child, f"link {name}")
            elif child.tag not in ("pose", "inertial"):
                raise r.bad(f"link {name}: <{child.tag}> is not supported")
        X_M[name] = X_MN @ r.pose(el, f"link {name}")
        bodies[name] = _inertia(r, el, name)
    return X_M, bodies


def _read_axis(r: _Reader, ax: ET.Element, info: _SdfJoint,
               X_MC: NDArray[np.float64]) -> None:
    """Fill ``info``'s axis (unit, in the joint frame), limits [rad | m], damping, spring
    stiffness and reference from the joint's ``<axis>``; ``X_MC`` is the 4x4 pose of the
    joint's child link in the frame of the model the joint is declared in (for
    ``use_parent_model_frame``)."""
    name, kind = info["name"], info["type"]
    xyz_el = ax.find("xyz")
    if xyz_el is not None and (xyz_el.get("expressed_in") or ""):
        raise r.bad(f"joint {name}: <xyz expressed_in> is not supported")
    a = np.array(r.numbers(xyz_el, 3, f"joint {name} axis") if xyz_el is not None
                 else (0.0, 0.0, 1.0))
    if (ax.findtext("use_parent_model_frame") or "").strip() in ("1", "true"):
        a = (X_MC @ info["X_CJ"])[:3, :3].T @ a
    nrm = np.linalg.norm(a)
    if kind != "ball" and not nrm > 0:
        raise r.bad(f"joint {name}: the axis is zero")
    info["axis"] = _t(a / nrm) if nrm > 0 else (0.0, 0.0, 1.0)
    for c in ax:
        if c.tag not in ("xyz", "limit", "dynamics", "use_parent_model_frame",
                         "initial_position"):
            raise r.bad(f"joint {name}: <axis><{c.tag}> is not supported")
    lim = ax.find("limit")
    if lim is not None and kind in ("revolute", "prismatic"):
        lo = r.number(lim.find("lower"), f"joint {name} lower", -1e16)
        hi = r.number(lim.find("upper"), f"joint {name} upper", 1e16)
        if abs(lo) < _UNBOUNDED and abs(hi) < _UNBOUNDED and lo < hi:
            info["lower"], info["upper"] = lo, hi
    dyn = ax.find("dynamics")
    if dyn is not None:
        info["damping"] = r.number(dyn.find("damping"), f"joint {name} damping", 0.0)
        if r.number(dyn.find("friction"), f"joint {name} friction", 0.0) != 0:
            raise r.bad(f"joint {name}: friction is not supported (a Coulomb force)")
        info["spring"] = r.number(dyn.find("spring_stiffness"),
                                  f"joint {name} spring_stiffness", 0.0)
        info["spring_ref"] = r.number(dyn.find("spring_reference"),
                                      f"joint {name} spring_reference", 0.0)


def _read_joint(r: _Reader, scoped: _Scoped, X_M: dict[str, NDArray[np.float64]],
                J: dict[str, _SdfJoint], aside: set[str]) -> _SdfJoint:
    """The joint as a dict (name, type, parent, child, X_CJ its 4x4 pose in the child link
    frame [m], axis, lower, upper, damping, spring, spring_ref); ``X_M`` holds the links'
    4x4 poses in the model frame, ``J`` the joints read so far (names are unique); the
    joint's ``<physics>``/``<sensor>`` go to ``aside``. ``scoped``: (element, scoped name,
    scope prefix, X_MN the pose of its model): a nested joint's link names are its
    model's (``N::l``)."""
    el, name, prefix, X_MN = scoped
    kind = el.get("type") or ""
    if name in J:
        raise r.bad(f"two joints are named {name}")
    if kind not in ("revolute", "continuous", "prismatic", "ball", "fixed"):
        raise r.bad(f"joint {name}: type {kind!r} is not supported (revolute, "
                    "continuous, prismatic, ball, fixed)")
    parent, child = ((el.findtext(end) or "").strip() for end in ("parent", "child"))
    parent, child = (prefix + n if prefix and n != "world" and prefix + n in X_M else n
                     for n in (parent, child))
    for end, what in ((parent, "parent"), (child, "child")):
        if end not in X_M and not (what == "parent" and end == "world"):
            raise r.bad(f"joint {name}: unknown {what} link {end!r}")
    info: _SdfJoint = {"name": name, "type": kind, "parent": parent, "child": child,
                       "X_CJ": r.pose(el, f"joint {name}"), "axis": (0.0, 0.0, 1.0),
                       "lower": None, "upper": None, "damping": 0.0, "spring": 0.0,
                       "spring_ref": 0.0}
    for c in el:
        if c.tag in ("parent", "child", "pose", "axis", "physics", "sensor"):
            if c.tag in ("physics", "sensor"):
                aside.add(f"joint {c.tag}")
            continue
        raise r.bad(f"joint {name}: <{c.tag}> is not supported")
    ax = el.find("axis")
    if ax is not None and kind in ("revolute", "continuous", "prismatic", "ball"):
        # float64 poses in, float64 out (numpy's stubs say only floating)
        _read_axis(r, ax, info, cast(NDArray[np.float64], np.linalg.solve(X_MN, X_M[child])))
    if info["damping"] < 0 or info["spring"] < 0:
        raise r.bad(f"joint {name}: damping and spring_stiffness must be >= 0")
    return info


def _spanning_tree(r: _Reader, J: dict[str, _SdfJoint], bodies: dict[str, Body]
                   ) -> tuple[str, list[_SdfJoint], list[_SdfJoint]]:
    """(root, tree, closures): the root link's name, the joints of the spanning tree in the
    order they reach their child (non-ball joints first, then ball joints) and the joints
    that close loops; joints to ``world`` are in neither list."""
    to_world = [j for j in J.values() if j["parent"] == "world"]
    for j in to_world:
        if j["type"] != "fixed":
            raise r.bad(f"joint {j['name']}: a {j['type']} joint to the world is not "
                        "supported (fixed only; use floating for a free root)")
    children = {j["child"] for j in J.values() if j["parent"] != "world"}
    free = [n for n in bodies if n not in children]
    if len(free) != 1:
        raise r.bad("the links form " + ("no tree (every link is a joint's child)" if not free
                                         else f"{len(free)} trees ({', '.join(free[:4])})"))
    root = free[0]
    if to_world and (len(to_world) > 1 or to_world[0]["child"] != root):
        raise r.bad(f"joint {to_world[0]['name']}: only the root link {root} may be welded "
                    "to the world")
    tree: list[_SdfJoint]
    tree, in_tree = [], {root}
    pending = [j for j in J.values() if j["parent"] != "world"]
    for balls in (False, True):
        grew = True
        while grew:
            grew = False
            for j in pending:
                if j in tree or ((j["type"] == "ball") and not balls):
                    continue
                if j["parent"] in in_tree and j["child"] not in in_tree:
                    tree.append(j)
                    in_tree.add(j["child"])
                    grew = True
    if in_tree != set(bodies):
        lost = [n for n in bodies if n not in in_tree]
        raise r.bad(f"link {lost[0]} is reachable only against a joint's parent → child "
                    "direction: not supported")
    return root, tree, [j for j in pending if j not in tree]


class _Names:
    """The names the model uses; ``claim`` takes a new one for the import's own bodies,
    joints and frames (BadInput if the model already uses it)."""

    def __init__(self, r: _Reader, taken: set[str]) -> None:
        self.r, self.taken = r, taken

    def claim(self, n: str) -> str:
        if n in self.taken:
            raise self.r.bad(f"the name {n} the import needs is taken")
        self.taken.add(n)
        return n


def _tree_joints(r: _Reader, tree: list[_SdfJoint], X_M: dict[str, NDArray[np.float64]],
                 names: _Names, drop_springs: bool, out_bodies: list[Body],
                 joints: list[Joint]) -> list[str]:
    """Append the canonical joints of the spanning tree to ``joints`` (and a massless body
    ``<child>__<joint>`` to ``out_bodies`` for a joint away from its child's origin);
    ``X_M`` holds the links' 4x4 poses in the model frame [m]. Returns the springs set
    aside by ``drop_springs``, one "<joint> (<stiffness>)" each."""
    spring_notes: list[str] = []
    for j in tree:
        P, C = j["parent"], j["child"]
        # float64 poses in, float64 out (numpy's stubs say only floating)
        X_PJ = cast(NDArray[np.float64], np.linalg.solve(X_M[P], X_M[C] @ j["X_CJ"]))
        kind = {"continuous": "revolute"}.get(j["type"], j["type"])
        if j["spring"] and kind not in ("revolute", "prismatic"):
            raise r.bad(f"joint {j['name']}: spring_stiffness on a {j['type']} joint is not "
                        "supported (joint springs act on revolute and prismatic joints)")
        if j["spring"] and drop_springs:
            spring_notes.append(f"{j['name']} ({j['spring']:g})")
        identity = np.allclose(j["X_CJ"], np.eye(4), rtol=0.0, atol=0.0)
        child = C if identity else names.claim(f"{C}__{j['name']}")
        # Joint's keyword fields, of several types (float, axis tuple, limits or None)
        extra: dict[str, Any] = {} if kind in ("fixed",) else {"damping": float(j["damping"])}
        if kind in ("revolute", "prismatic"):
            extra.update(axis=j["axis"], lower=j["lower"], upper=j["upper"])
            if j["spring"] and not drop_springs:
                extra.update(stiffness=float(j["spring"]), spring_ref=float(j["spring_ref"]))
        joints.append(Joint(j["name"], kind, P, child, _t(X_PJ[:3, 3]),
                            _t(matrix_to_rpy(X_PJ[:3, :3])), **extra))
        if not identity:
            out_bodies.append(Body(child, 0.0))
            X_JC = cast(NDArray[np.float64], np.linalg.inv(j["X_CJ"]))  # as X_PJ
            joints.append(Joint(names.claim(f"{C}__fixed"), "fixed", child, C,
                                _t(X_JC[:3, 3]), _t(matrix_to_rpy(X_JC[:3, :3]))))
    return spring_notes


def _loop_closures(r: _Reader, closures: list[_SdfJoint],
                   X_M: dict[str, NDArray[np.float64]], names: _Names, drop_springs: bool,
                   notes: list[str]) -> tuple[list[Frame], list[Constraint]]:
    """(frames, constraints): for each loop-closing joint the frames ``<joint>__child`` and
    ``<joint>__parent`` (the joint's origin on each link at q = 0; ``X_M`` holds the links'
    4x4 poses in the model frame [m]) and the point (ball) or weld (fixed) constraint
    between them. The springs and damping set aside are noted in ``notes``."""
    frames: list[Frame]
    constraints: list[Constraint]
    frames, constraints = [], []
    for j in closures:
        if j["type"] not in ("ball", "fixed", "revolute", "continuous"):
            raise r.bad(f"joint {j['name']} closes a kinematic loop but is {j['type']}: "
                        "only ball (point), revolute/continuous (two points on the axis) "
                        "and fixed (weld) joints can close loops")
        if j["spring"]:
            if not drop_springs:
                raise r.bad(f"joint {j['name']} closes a loop and has spring_stiffness "
                            f"{j['spring']:g}: not supported (a loop constraint carries no "
                            "force law); --drop-springs sets the joint springs aside")
            notes.append(f"joint {j['name']}: spring_stiffness {j['spring']:g} of a "
                         "loop-closing joint set aside (--drop-springs)")
        if j["damping"]:
            notes.append(f"joint {j['name']}: damping {j['damping']:g} of a loop-closing "
                         "joint set aside: it acts on the relative motion across the loop "
                         "constraint, which carries no force law in the canonical model, so "
                         "the harness compares the model without it")
        P, C = j["parent"], j["child"]
        X_CF = j["X_CJ"]
        # float64 poses in, float64 out (numpy's stubs say only floating)
        X_PF = cast(NDArray[np.float64], np.linalg.solve(X_M[P], X_M[C] @ X_CF))
        fa, fb = names.claim(f"{j['name']}__child"), names.claim(f"{j['name']}__parent")
        frames += [Frame(fa, C, _t(X_CF[:3, 3]), _t(matrix_to_rpy(X_CF[:3, :3]))),
                   Frame(fb, P, _t(X_PF[:3, 3]), _t(matrix_to_rpy(X_PF[:3, :3])))]
        constraints.append(Constraint(j["name"], "weld" if j["type"] == "fixed" else "point",
                                      fa, fb))
        if j["type"] in ("revolute", "continuous"):  # the axis: a second point on it
            a = np.r_[AXIS_POINT * np.asarray(j["axis"], dtype=float), 1.0]
            fa2, fb2 = names.claim(f"{j['name']}__child_axis"), \
                names.claim(f"{j['name']}__parent_axis")
            frames += [Frame(fa2, C, _t((X_CF @ a)[:3])), Frame(fb2, P, _t((X_PF @ a)[:3]))]
            constraints.append(Constraint(names.claim(f"{j['name']}__axis"), "point",
                                          fa2, fb2))
    if closures:
        notes.append(f"{len(closures)} loop(s) closed by "
                     + ", ".join(f"{j['name']} ({j['type']})" for j in closures)
                     + ": stage 3 loop constraints (point for ball, weld for fixed, two "
                       f"points {AXIS_POINT:g} m apart on the axis for revolute: "
                       "<joint> and <joint>__axis, 6 rows of which 5 independent)")
    return frames, constraints


def _place_root(r: _Reader, root: str, X_root: NDArray[np.float64], floating: bool,
                names: _Names, out_bodies: list[Body], joints: list[Joint],
                notes: list[str]) -> None:
    """Put the root link where the model does: ``X_root`` is its 4x4 pose in the model
    frame [m]. Floating, the pose is dropped (noted); fixed at a pose that is not the
    identity, the massless root ``WORLD_BODY`` and a weld to the root are put first in
    ``out_bodies`` and ``joints``."""
    if floating:
        if not np.array_equal(X_root, np.eye(4)):
            notes.append(f"root link {root}: its pose in the model is dropped (the free "
                         "root joint sets it)")
    elif not np.array_equal(X_root, np.eye(4)):
        if WORLD_BODY in names.taken:
            raise r.bad(f"a link named {WORLD_BODY!r} already exists; the importer needs "
                        "that name for the world body it keeps")
        out_bodies.insert(0, Body(WORLD_BODY, 0.0))
        joints.insert(0, Joint(f"{root}__fixed" if f"{root}__fixed" not in names.taken
                               else names.claim(f"{root}__world"), "fixed", WORLD_BODY, root,
                               _t(X_root[:3, 3]), _t(matrix_to_rpy(X_root[:3, :3]))))
        notes.append(f"the world is kept as the massless root body {WORLD_BODY!r} (root link "
                     f"{root} sits at its pose in the model)")


@holds_warnings
def load_sdf_with_notes(path: str, floating: bool = False,
                        drop_springs: bool = False) -> tuple[FixtureSpec, list[str]]:
    """(FixtureSpec, notes): the SDF at ``path`` [SI units] as a validated spec (tree and
    loop constraints, see the module docstring), and one line per change the import made.
    BadInput(path, problem) for unsupported content."""
    path = str(path)
    r = _Reader(path)
    model = _read_document(r, path)
    notes: list[str] = []
    aside: set[str] = set()
    links, sdf_joints = _model_children(r, model, aside)
    X_M, bodies = _read_links(r, links, aside)
    J: dict[str, _SdfJoint] = {}
    for scoped in sdf_joints:
        info = _read_joint(r, scoped, X_M, J, aside)
        J[info["name"]] = info
    if aside:
        notes.append("set aside (they do not enter M or h): "
                     + ", ".join(f"<{t}>" for t in sorted(aside)))
    root, tree, closures = _spanning_tree(r, J, bodies)
    out_bodies = [bodies[n] for n in bodies]
    joints: list[Joint] = []
    names = _Names(r, set(bodies) | set(J))
    spring_notes = _tree_joints(r, tree, X_M, names, drop_springs, out_bodies, joints)
    if spring_notes:
        notes.append("joint springs set aside (--drop-springs; they act in h, so the "
                     "harness compares the model without them): spring_stiffness on "
                     + ", ".join(spring_notes) + " (N·m/rad | N/m)")
    frames, constraints = _loop_closures(r, closures, X_M, names, drop_springs, notes)
    _place_root(r, root, X_M[root], floating, names, out_bodies, joints, notes)
    spec = FixtureSpec(name=sanitise_model_name(model.get("name"), path),
                       bodies=tuple(out_bodies), joints=tuple(joints), frames=tuple(frames),
                       floating=bool(floating), source=path,
                       description=f"SDF model {model.get('name') or '(unnamed)'} imported "
                                   f"from {os.path.basename(path)}",
                       constraints=tuple(constraints))
    if constraints:
        if floating:
            raise r.bad("loop constraints are supported on fixed-base models only (drop "
                        "--floating)")
        spec = replace(spec, q_init=tuple(float(x) for x in
                                          Layout.from_spec(spec).neutral()))
    return spec.validate(where=path), notes


def load_sdf(path: str, floating: bool = False, drop_springs: bool = False) -> FixtureSpec:
    """The SDF at ``path`` [SI units] as a validated FixtureSpec; BadInput(path, problem)
    on error (module docstring)."""
    return load_sdf_with_notes(path, floating, drop_springs)[0]
