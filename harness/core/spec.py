"""FixtureSpec: the one engine-blind declaration of a rigid-body model.

Dimensions and units: lengths in m, masses in kg, inertias in kg·m² (about the body's
centre of mass, axes of the body frame), angles in rad, linear damping in N·s/m,
angular damping in N·m·s/rad, armature (reflected rotor inertia) in kg·m² (revolute)
or kg (prismatic), joint stiffness in N·m/rad (revolute) or N/m (prismatic) with its
reference position in rad or m, gravity in m/s².

A spec is a tree: one root body attached to the world either rigidly (``floating=False``)
or by a free joint named ``root_joint`` (``floating=True``); every other body has exactly one
parent joint. Bodies rigidly attached by ``fixed`` joints move with their parent. Named
frames are extra poses attached to bodies (no mass). Poses use URDF's convention: ``xyz``
translation and ``rpy`` fixed-axis roll-pitch-yaw, R = Rz(yaw) Ry(pitch) Rx(roll).

Every user model (URDF, MJCF) is converted into a FixtureSpec first, so fixtures and user
models take the same path to the engines (see fixtures/export.py).
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from dataclasses import asdict, dataclass
from functools import cached_property
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from harness.core.coupling_function import check as check_function
from harness.core.coupling_function import describe as describe_function
from harness.core.errors import BadInput
from harness.core.strict import model_size_problem
from harness.core.tolerances import lookup

JOINT_TYPES = ("revolute", "continuous", "prismatic", "ball", "fixed")
# degrees of freedom (nv) of each joint type: a ball joint turns about all three axes
JOINT_DOFS = {"revolute": 1, "continuous": 1, "prismatic": 1, "ball": 3, "fixed": 0}
FREE_JOINT_NAME = "root_joint"
# The massless root body that stands for the world when a model is attached to it by
# anything but an identity weld (a spec has no root pose).
WORLD_BODY = "world_"
# Names are matched across engines and shown in reports (always escaped), so any text is
# allowed — markup and unicode included — except control characters (C0 and C1: a name
# never carries a terminal escape), surrounding whitespace and the empty string; at most
# 200 characters.
_NAME_RE = re.compile(r"^(?=.{1,200}$)(?!\s)[^\x00-\x1f\x7f-\x9f]*(?<!\s)$", re.S)


def inertia_problem(I: NDArray[np.float64]) -> str:
    """'' if the 3x3 inertia [kg·m²] is physical (symmetric, PSD, triangle inequality),
    else a one-line description with its principal moments."""
    ev = np.linalg.eigvalsh(0.5 * (I + I.T))
    margin = lookup("import", "inertia_physical")  # round-off of a physical tensor
    tol = margin.atol * max(1.0, ev.max())
    if ev.min() < -tol:
        return f"inertia is not positive semi-definite (principal moments {ev.tolist()})"
    if ev[0] + ev[1] < ev[2] - max(tol, margin.rtol * ev.max()):
        return f"inertia violates the triangle inequality (principal moments {ev.tolist()})"
    return ""


def repair_inertia(I: NDArray[np.float64]) -> NDArray[np.float64]:
    """The nearest physical inertia in the principal frame: negative principal moments
    are clipped to 0, then the two smaller moments are raised equally until
    I1 + I2 = I3 (1 + 1e-9), a margin that keeps engines that re-diagonalise the tensor
    (MuJoCo) from finding it marginally invalid. Used only when the user asks for it
    (``--repair-inertia``)."""
    ev, vecs = np.linalg.eigh(0.5 * (I + I.T))
    ev = np.clip(ev, 0.0, None)
    gap = ev[2] * (1 + 1e-9) - ev[0] - ev[1]
    if gap > 0:
        ev[0] += gap / 2
        ev[1] += gap / 2
    out: NDArray[np.float64] = vecs @ np.diag(ev) @ vecs.T
    return 0.5 * (out + out.T)


def _vec(x: ArrayLike, n: int, what: str) -> tuple[float, ...]:
    a = np.asarray(x, dtype=float).reshape(-1)
    if a.shape != (n,) or not np.all(np.isfinite(a)):
        raise ValueError(f"{what} must be {n} finite numbers, got {x!r}")
    return tuple(float(t) for t in a)


@dataclass(frozen=True)
class Body:
    """A rigid body. mass [kg]; com (3,) [m] in the body frame; inertia (3x3) [kg·m²]
    about the com, body-frame axes, stored row-major as 9 floats."""

    name: str
    mass: float
    com: tuple[float, ...] = (0.0, 0.0, 0.0)
    inertia: tuple[float, ...] = (0.0,) * 9

    @property
    def inertia_matrix(self) -> NDArray[np.float64]:
        return np.array(self.inertia, dtype=float).reshape(3, 3)


@dataclass(frozen=True)
class Joint:
    """A joint between ``parent`` and ``child`` bodies. ``xyz``/``rpy``: pose of the joint
    frame (= child body frame) in the parent body frame [m, rad]. ``axis``: unit axis in
    the joint frame. ``lower``/``upper``: position limits [rad or m], None if unbounded.
    ``damping``: viscous coefficient D (generalized force −D·v). ``armature``: added to
    the joint's diagonal of M. ``stiffness`` k [N·m/rad | N/m] and ``spring_ref`` q_ref
    [rad | m]: a joint spring, generalized force −k (q − q_ref), part of the bias h
    (revolute and prismatic joints only).

    A ``ball`` joint (spherical: 3 rotational dofs about the joint origin) has no axis (it
    is ignored) and no limits; its damping [N·m·s/rad] and armature [kg·m²] are per-axis
    scalars (−D ω on each of its three dofs, armature on each of its three diagonal
    entries of M; harness/core/conventions.py)."""

    name: str
    type: str
    parent: str
    child: str
    xyz: tuple[float, ...] = (0.0, 0.0, 0.0)
    rpy: tuple[float, ...] = (0.0, 0.0, 0.0)
    axis: tuple[float, ...] = (0.0, 0.0, 1.0)
    lower: float | None = None
    upper: float | None = None
    damping: float = 0.0
    armature: float = 0.0
    stiffness: float = 0.0
    spring_ref: float = 0.0


@dataclass(frozen=True)
class Frame:
    """A named frame rigidly attached to ``body`` at pose xyz/rpy in the body frame."""

    name: str
    body: str
    xyz: tuple[float, ...] = (0.0, 0.0, 0.0)
    rpy: tuple[float, ...] = (0.0, 0.0, 0.0)


CONSTRAINT_KINDS = {"point": 3, "line": 2, "weld": 6}  # kind -> number of rows


@dataclass(frozen=True)
class Constraint:
    """A holonomic constraint g(q) = 0 closing a loop (stage 3, harness/stages/constrained/).

    ``frame_a``, ``frame_b``: names of two named Frames (their poses and Jacobians come from
    each engine's own frame API). Rows, world axes, p in m, rotation vector in rad:

    * ``point`` (3): p_WA − p_WB (the two frame origins coincide);
    * ``line`` (2): the world x and y components of p_WA − p_WB — A's origin stays on the
      vertical line through B's origin; B must be fixed to the world (a frame on the root
      body of a fixed-base model), so the rows are a constant selection;
    * ``weld`` (6): [p_WA − p_WB; log(R_WA R_WBᵀ)] — the two frames coincide.

    URDF cannot express loops: the tree goes to URDF, constraints stay in the spec (and go
    to MJCF as ``<equality><connect/weld site1 site2>`` for MuJoCo's own solver)."""

    name: str
    kind: str
    frame_a: str
    frame_b: str

    @property
    def nrows(self) -> int:
        return CONSTRAINT_KINDS[self.kind]


COUPLED_TYPES = ("revolute", "prismatic")  # joint types a Coupling may join
# what an importer's note says of a joint it keeps coupled or freezes ("joint NAME: "
# first): the command line's summary collects these lines
COUPLING_NOTE = "coupled: "
FROZEN_NOTE = "frozen: "


@dataclass(frozen=True)
class Coupling:
    """A joint coupling (stage 3, harness/stages/constrained/). Linear, q_f = m·q_l + c: a
    URDF ``<mimic>`` or an MJCF ``<equality><joint polycoef="c m 0 0 0">``. ``follower``,
    ``leader``: names of moving revolute or prismatic joints; ``multiplier`` m [1, or m/rad
    / rad/m between a prismatic and a revolute joint]; ``offset`` c [rad | m, the
    follower's unit]. One holonomic row g = q_f − m·q_l − c, with the constant Jacobian
    row e_f − m·e_l in joint velocity space (J̇v = 0).

    Non-linear when ``function`` is given (harness/core/coupling_function.py: a spline or
    a polynomial; an OpenSim CustomJoint axis or CoordinateCouplerConstraint, an MJCF
    joint equality whose polycoef is not linear): q_f =
    f(q_l), multiplier and offset unused (1, 0); the row g = q_f − f(q_l) has the Jacobian
    e_f − f'(q_l) e_l and J̇v = −f''(q_l) v_l²."""

    follower: str
    leader: str
    multiplier: float = 1.0
    offset: float = 0.0
    function: tuple[Any, ...] = ()

    @property
    def label(self) -> str:
        """'f = m·l + c' (or 'f = spline(12 knots)(l)'), the coupling as the command line
        and reports show it."""
        if self.function:
            return f"{self.follower} = {describe_function(self.function)}({self.leader})"
        return f"{self.follower} = {self.multiplier:g}·{self.leader} + {self.offset:g}"

    @property
    def note(self) -> str:
        """'joint f: coupled: f = m·l + c', the head of the note a run keeps of it."""
        return f"joint {self.follower}: {COUPLING_NOTE}{self.label}"


@dataclass(frozen=True)
class FixtureSpec:
    """An engine-blind model: bodies, joints, frames, gravity [m/s²], floating root flag.

    ``description`` says what the fixture is for; ``damping_policy`` states how joint
    damping enters the dynamics in every engine (always: generalized force −D·v, applied
    identically by every adapter)."""

    name: str
    bodies: tuple[Body, ...]
    joints: tuple[Joint, ...]
    frames: tuple[Frame, ...] = ()
    gravity: tuple[float, ...] = (0.0, 0.0, -9.81)
    floating: bool = False
    description: str = ""
    source: str = "catalog"
    # holonomic loop constraints (Constraint) and a configuration near g(q) = 0 (canonical
    # q, solved onto the manifold by Gauss-Newton at run time); both empty for tree models
    constraints: tuple[Constraint, ...] = ()
    q_init: tuple[float, ...] = ()
    # joint couplings (Coupling: URDF mimic, MJCF joint equality, OpenSim coupled axes and
    # coordinate couplers), stage 3 rows
    couplings: tuple[Coupling, ...] = ()

    # ----- structure -------------------------------------------------------------
    # Every walk over the tree is iterative (a chain of any length needs no recursion) and
    # uses maps built once per spec (cached in the instance; dataclass fields unchanged).
    @cached_property
    def _body_map(self) -> dict[str, Body]:
        return {b.name: b for b in self.bodies}

    @cached_property
    def _children_map(self) -> dict[str, list[Joint]]:
        out: dict[str, list[Joint]] = {}
        for j in self.joints:
            out.setdefault(j.parent, []).append(j)
        return out

    @cached_property
    def _parent_map(self) -> dict[str, Joint]:
        out: dict[str, Joint] = {}
        for j in self.joints:
            out.setdefault(j.child, j)
        return out

    def body(self, name: str) -> Body:
        b = self._body_map.get(name)
        if b is None:
            raise KeyError(name)
        return b

    @property
    def root(self) -> str:
        children = self._parent_map
        roots = [b.name for b in self.bodies if b.name not in children]
        return roots[0]

    def parent_joint(self, body: str) -> Joint | None:
        return self._parent_map.get(body)

    def children(self, body: str) -> list[Joint]:
        return list(self._children_map.get(body, ()))

    def depth_first(self) -> list[str]:
        """Body names depth first from the root, children in declaration order (the order
        of a recursive walk), computed with an explicit stack."""
        out: list[str] = []
        stack, seen = [self.root], set()
        while stack:
            b = stack.pop()
            if b in seen:  # a loop (validate reports it); never walk it twice
                continue
            seen.add(b)
            out.append(b)
            stack.extend(j.child for j in reversed(self._children_map.get(b, ())))
        return out

    def moving_joints(self) -> list[Joint]:
        """Non-fixed joints in canonical (depth-first, declaration) order."""
        parent = self._parent_map
        return [parent[b] for b in self.depth_first()[1:] if parent[b].type != "fixed"]

    def _leaf_weld(self, j: Joint) -> bool:
        """A fixed joint to a massless body without children (a frame written as a link)."""
        return (j.type == "fixed" and self._body_map[j.child].mass == 0
                and not self._children_map.get(j.child))

    def chain_child(self, body: str) -> Joint | None:
        """The one child joint of ``body`` that is not a leaf weld, or None."""
        main = [j for j in self._children_map.get(body, ()) if not self._leaf_weld(j)]
        return main[0] if len(main) == 1 else None

    @cached_property
    def _joint_chains(self) -> dict[str, tuple[str, tuple[str, ...]]]:
        out: dict[str, tuple[str, tuple[str, ...]]] = {}
        collapsed = set()
        for b in self.depth_first()[1:]:  # parents first
            j = self._parent_map[b]
            if (self._body_map[b].mass == 0 and self.chain_child(b) is not None
                    and (j.type != "fixed" or j.parent in collapsed)):
                collapsed.add(b)
        for b in collapsed:
            below, c = [], b
            while c in collapsed:
                j = cast(Joint, self.chain_child(c))  # a collapsed body has its chain child
                if j.type != "fixed":
                    below.append(j.name)
                c = j.child
            out[b] = (c, tuple(below))
            for k in self._children_map.get(b, ()):  # its frame links fold with it
                if self._leaf_weld(k):
                    out[k.child] = out[b]
        return {b: out[b] for b in self.depth_first() if b in out}

    def joint_chains(self) -> dict[str, tuple[str, tuple[str, ...]]]:
        """{massless body C: (T, joints)}: the bodies an engine that refuses massless
        moving bodies (MuJoCo) folds into the first body T below them, which then carries
        their joints, several joints in one body. C is collapsed when it has no mass, one
        child joint (``chain_child``; massless childless bodies welded to C, frames written
        as links, fold with C) and a moving parent joint (or a fixed one from a collapsed
        body); ``joints`` are the moving joints between C and T (C moves with the joints
        above it, not with these). Empty for models without such chains."""
        return dict(self._joint_chains)

    def all_frame_names(self) -> list[str]:
        """Every pose compared in stage 1: each body frame, then each named frame."""
        return [b.name for b in self.bodies] + [f.name for f in self.frames]

    def digest(self) -> str:
        """sha256 of the canonical JSON form (identifies the fixture in evidence)."""
        d = asdict(self)
        for key in ("constraints", "q_init", "couplings"):  # tree models keep their digest
            if not d[key]:
                del d[key]
        for c in d.get("couplings", ()):  # so do linear couplings
            if not c["function"]:
                del c["function"]
        for j in d["joints"]:  # so do models without joint springs
            for key in ("stiffness", "spring_ref"):
                if not j[key]:
                    del j[key]
        blob = json.dumps(d, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()

    # ----- validation ------------------------------------------------------------
    def validate(self, where: str | None = None) -> "FixtureSpec":
        """Raise BadInput naming ``where`` (file or fixture) and the problem."""
        where = where or f"fixture {self.name}"
        try:
            self._validate()
        except (ValueError, KeyError) as e:
            raise BadInput(where, str(e).strip("'\"")) from None
        return self

    def _validate(self) -> None:
        """ValueError naming the first problem, checked in this order: size and names,
        bodies' mass and inertia [kg, kg·m²], joints, one tree, frames, gravity [m/s²],
        constraints, and that every moving joint moves mass."""
        names = [b.name for b in self.bodies]
        if not names:
            raise ValueError("model has no bodies")
        self._validate_size_and_names(names)
        self._validate_bodies()
        name_set = set(names)
        children = [j.child for j in self.joints]
        dup = sorted(c for c, k in Counter(children).items() if k > 1)
        if dup:
            raise ValueError(f"body {dup[0]} has more than one parent joint")
        for j in self.joints:
            _validate_joint(j, name_set)
        self._validate_tree(names, set(children))
        for f in self.frames:
            if f.body not in name_set:
                raise ValueError(f"frame {f.name}: unknown body {f.body!r}")
            _vec(f.xyz, 3, f"frame {f.name} xyz")
            _vec(f.rpy, 3, f"frame {f.name} rpy")
        _vec(self.gravity, 3, "gravity")
        self._validate_constraints()
        self._validate_moving_mass()

    def _validate_size_and_names(self, names: list[str]) -> None:
        """The supported model size, then every body, frame and joint name: allowed, unique,
        and not the free root's."""
        # the supported model size, before anything grows with it (getattr: a malformed
        # joint is reported below; the cast only names the key type for the checker)
        nv = sum(JOINT_DOFS.get(cast(str, getattr(j, "type", None)), 1) for j in self.joints) \
            + (6 if self.floating else 0)
        size = model_size_problem(len(self.bodies), nv)
        if size:
            raise ValueError(size)
        jnames = [j.name for j in self.joints]
        fnames = [f.name for f in self.frames]
        everything = names + fnames
        for n in everything + jnames:
            if not isinstance(n, str) or not _NAME_RE.match(n):
                raise ValueError(f"name {n!r} is not allowed (empty, over 200 characters, "
                                 "control characters or surrounding whitespace)")
        for kind, lst in (("body/frame", everything), ("joint", jnames)):
            dup = sorted(n for n, c in Counter(lst).items() if c > 1)
            if dup:
                raise ValueError(f"duplicate {kind} name(s): {', '.join(dup)}")
        if FREE_JOINT_NAME in jnames:
            raise ValueError(f"joint name {FREE_JOINT_NAME!r} is reserved for the free root")

    def _validate_bodies(self) -> None:
        """Every body's mass [kg] finite and ≥ 0, com (3,) [m], inertia (3×3) [kg·m²]
        symmetric and physical; every non-physical inertia named at once."""
        bad_inertia = []
        for b in self.bodies:
            if not (math.isfinite(b.mass) and b.mass >= 0):
                raise ValueError(f"body {b.name}: mass must be finite and >= 0, got {b.mass}")
            _vec(b.com, 3, f"body {b.name} com")
            inertia = np.array(_vec(b.inertia, 9, f"body {b.name} inertia")).reshape(3, 3)
            if np.abs(inertia - inertia.T).max() > lookup("import", "inertia_physical").atol \
                    * max(1.0, np.abs(inertia).max()):
                raise ValueError(f"body {b.name}: inertia is not symmetric")
            if b.mass == 0 and np.any(inertia):
                bad_inertia.append(f"body {b.name}: mass is 0 but the inertia is not zero")
                continue
            problem = inertia_problem(inertia)
            if problem:
                bad_inertia.append(f"body {b.name}: {problem}")
        if bad_inertia:  # every offending body, not only the first
            raise ValueError(("" if len(bad_inertia) == 1 else
                              f"{len(bad_inertia)} bodies have non-physical inertias: ")
                             + "; ".join(bad_inertia))

    def _validate_tree(self, names: list[str], child_set: set[str]) -> None:
        """One root body, and every body reachable from it (no loop)."""
        roots = [n for n in names if n not in child_set]
        if len(roots) != 1:
            raise ValueError("model must be one tree with one root body, found roots "
                             + ", ".join(roots[:5]) + (", …" if len(roots) > 5 else ""))
        # acyclic: every body reachable from the root
        seen, stack = set(), [roots[0]]
        while stack:
            bn = stack.pop()
            seen.add(bn)
            stack.extend(j.child for j in self._children_map.get(bn, ()) if j.child not in seen)
        if seen != set(names):
            raise ValueError("joints form a loop: " + ", ".join(sorted(set(names) - seen)))

    def _validate_moving_mass(self) -> None:
        """Every moving joint moves some mass (else M is singular), something moves, and a
        floating model has mass."""
        subtree, rigid = self._masses()
        for j in self.moving_joints():
            if rigid[j.child] <= 0 and subtree[j.child] <= 0:
                raise ValueError(f"joint {j.name} moves only massless bodies: "
                                 "the mass matrix would be singular")
        if not self.floating and not self.moving_joints():
            raise ValueError("nothing moves: the model has no joints with degrees of "
                             "freedom (use --floating for a free-flying body)")
        if self.floating and subtree[self.root] <= 0:
            raise ValueError("floating model has no mass")
        if self.floating:
            k = self._root_free_twists()
            if k:
                raise ValueError(
                    f"the floating root {self.root} can move in {k} of its 6 directions "
                    "without moving any mass (a massless root whose joints follow it): the "
                    "mass matrix would be singular")

    def _root_free_twists(self) -> int:
        """Dimension of the root twists [ω, v at the world origin] that carry no kinetic
        energy at neutral: 0 unless the root's rigid group is massless (or a point) and the
        joints below it can take its motion up. F(b) = null(group b's inertia) ∩ over its
        moving child joints c of (F(c) + span S_c), all in world axes at neutral; M is
        singular exactly when F(root) is not {0}."""
        rank_tol = lookup("import", "free_root_rank").rtol
        pose: dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]] = {
            self.root: (np.zeros(3), np.eye(3))}
        for b in self.depth_first()[1:]:
            j = self._parent_map[b]
            p, R = pose[j.parent]
            r, pi, y = j.rpy
            Rj = (_axis_rotation(2, y) @ _axis_rotation(1, pi) @ _axis_rotation(0, r))
            pose[b] = (p + R @ np.array(j.xyz, dtype=float), R @ Rj)

        def null(A: NDArray[np.float64]) -> NDArray[np.float64]:
            if A.shape[0] == 0:
                return np.eye(6)
            _, sv, vt = np.linalg.svd(A)
            big = sv.max(initial=0.0)
            rank = int(np.sum(sv > rank_tol * big)) if big > 0 else 0
            out: NDArray[np.float64] = vt[rank:].T
            return out

        def free(head: str) -> NDArray[np.float64]:
            rows: list[NDArray[np.float64]] = []
            stack = [head]
            while stack:
                b = stack.pop()
                body, (p, R) = self.body(b), pose[b]
                c = p + R @ np.array(body.com, dtype=float)
                cx = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
                if body.mass > 0:
                    rows.append(math.sqrt(body.mass) * np.hstack([-cx, np.eye(3)]))
                Iw = R @ body.inertia_matrix @ R.T
                ev, vec = np.linalg.eigh((Iw + Iw.T) / 2)
                rows.append(np.hstack([(vec * np.sqrt(np.maximum(ev, 0.0))).T,
                                       np.zeros((3, 3))]))
                for j in self.children(b):
                    if j.type == "fixed":
                        stack.append(j.child)
                        continue
                    pj, Rc = pose[j.child]
                    axes = ([Rc @ np.array(j.axis, dtype=float)] if j.type != "ball"
                            else list(Rc.T))
                    S = np.array([np.r_[0.0 * a, a] if j.type == "prismatic"
                                  else np.r_[a, np.cross(pj, a)] for a in axes]).T
                    B = np.linalg.svd(np.hstack([free(j.child), S]))
                    U = B[0][:, :int(np.sum(B[1] > rank_tol * max(B[1].max(initial=0), 1e-300)))]
                    rows.append(np.eye(6) - U @ U.T)
            return null(np.vstack(rows) if rows else np.zeros((0, 6)))

        return int(free(self.root).shape[1])

    def _validate_constraints(self) -> None:
        frames = {f.name: f for f in self.frames}
        cnames = [c.name for c in self.constraints]
        for c in self.constraints:
            if not isinstance(c, Constraint):
                raise ValueError(f"constraint {c!r} is not a Constraint")
            if not isinstance(c.name, str) or not _NAME_RE.match(c.name):
                raise ValueError(f"constraint name {c.name!r} is not allowed")
        dup = sorted({n for n in cnames if cnames.count(n) > 1})
        if dup:
            raise ValueError(f"duplicate constraint name(s): {', '.join(dup)}")
        for c in self.constraints:
            if c.kind not in CONSTRAINT_KINDS:
                raise ValueError(f"constraint {c.name}: unknown kind {c.kind!r} (kinds: "
                                 f"{', '.join(CONSTRAINT_KINDS)})")
            for end in (c.frame_a, c.frame_b):
                if end not in frames:
                    raise ValueError(f"constraint {c.name}: unknown frame {end!r} (name a "
                                     "named frame of the model)")
            if frames[c.frame_a].body == frames[c.frame_b].body:
                raise ValueError(f"constraint {c.name}: both frames are on body "
                                 f"{frames[c.frame_a].body}")
            if c.kind == "line" and (self.floating or frames[c.frame_b].body != self.root):
                raise ValueError(f"constraint {c.name}: a line constraint's frame_b must be "
                                 "on the root body of a fixed-base model")
        if self.constraints and self.floating:
            raise ValueError("constraints are supported on fixed-base models only")
        self._validate_couplings()
        if self.q_init:
            if not (self.constraints or self.couplings):
                raise ValueError("q_init is given but the model has no constraints")
            nq = sum({"continuous": 2, "ball": 4}.get(j.type, 1) for j in self.moving_joints())
            _vec(self.q_init, nq, "q_init")

    def _validate_couplings(self) -> None:
        """Every coupling joins two distinct moving revolute or prismatic joints with a
        finite multiplier [1] and offset [rad | m]; a joint follows at most one leader."""
        joints = {j.name: j for j in self.joints}
        followers: list[str] = []
        for c in self.couplings:
            if not isinstance(c, Coupling):
                raise ValueError(f"coupling {c!r} is not a Coupling")
            for role, name in (("follower", c.follower), ("leader", c.leader)):
                j = joints.get(name)
                if j is None:
                    raise ValueError(f"coupling {c.follower}: unknown {role} joint {name!r} "
                                     "(name a joint of the model)")
                if j.type not in COUPLED_TYPES:
                    raise ValueError(f"coupling {c.follower}: {role} joint {name} is "
                                     f"{j.type}; couplings join {' or '.join(COUPLED_TYPES)} "
                                     "joints")
            if c.follower == c.leader:
                raise ValueError(f"coupling {c.follower}: a joint cannot follow itself")
            for what, x in (("multiplier", c.multiplier), ("offset", c.offset)):
                if not (isinstance(x, (int, float)) and math.isfinite(x)):
                    raise ValueError(f"coupling {c.follower}: {what} must be finite, got {x!r}")
            if c.function:
                problem = check_function(c.function)
                if problem or (c.multiplier, c.offset) != (1.0, 0.0):
                    raise ValueError(f"coupling {c.follower}: "
                                     + (problem or "a non-linear coupling has no multiplier "
                                        "or offset (q_f = f(q_l))"))
            followers.append(c.follower)
        dup = sorted({n for n in followers if followers.count(n) > 1})
        if dup:
            raise ValueError(f"joint(s) {', '.join(dup)} follow more than one leader")

    def _masses(self) -> tuple[dict[str, float], dict[str, float]]:
        """({body: mass of its subtree}, {body: mass of its rigid group (itself and the
        bodies welded below it)}) [kg], accumulated from the leaves up."""
        order = self.depth_first()
        subtree = {b: self.body(b).mass for b in order}
        rigid = dict(subtree)
        parent = self._parent_map
        for b in reversed(order[1:]):
            j = parent[b]
            subtree[j.parent] += subtree[b]
            if j.type == "fixed":
                rigid[j.parent] += rigid[b]
        return subtree, rigid


def _axis_rotation(axis: int, angle: float) -> NDArray[np.float64]:
    """Rotation by ``angle`` [rad] about the x (0), y (1) or z (2) axis."""
    c, s = math.cos(angle), math.sin(angle)
    i, k = [(1, 2), (2, 0), (0, 1)][axis]
    R = np.eye(3)
    R[i, i], R[i, k], R[k, i], R[k, k] = c, -s, s, c
    return R


def _validate_joint(j: Joint, bodies: set[str]) -> None:
    """ValueError naming the first problem of joint ``j``: its type, bodies, placement
    xyz [m] and rpy [rad], unit axis, damping, armature, stiffness and spring reference
    (finite, ≥ 0), and limits [rad | m] (both or neither, lower below upper, none on a
    continuous or ball joint)."""
    if j.type not in JOINT_TYPES:
        raise ValueError(f"joint {j.name}: unsupported type {j.type!r} "
                         f"(supported: {', '.join(JOINT_TYPES)})")
    for end in (j.parent, j.child):
        if end not in bodies:
            raise ValueError(f"joint {j.name}: unknown body {end!r}")
    _vec(j.xyz, 3, f"joint {j.name} xyz")
    _vec(j.rpy, 3, f"joint {j.name} rpy")
    ax = np.array(_vec(j.axis, 3, f"joint {j.name} axis"))
    if j.type not in ("fixed", "ball") and abs(np.linalg.norm(ax) - 1.0) > 1e-12:
        raise ValueError(f"joint {j.name}: axis must be a unit vector")
    if not (math.isfinite(j.damping) and j.damping >= 0):
        raise ValueError(f"joint {j.name}: damping must be finite and >= 0")
    if not (math.isfinite(j.armature) and j.armature >= 0):
        raise ValueError(f"joint {j.name}: armature must be finite and >= 0")
    if not (math.isfinite(j.stiffness) and j.stiffness >= 0):
        raise ValueError(f"joint {j.name}: stiffness must be finite and >= 0")
    if not math.isfinite(j.spring_ref):
        raise ValueError(f"joint {j.name}: spring_ref must be finite")
    if (j.stiffness or j.spring_ref) and j.type not in ("revolute", "prismatic"):
        raise ValueError(f"joint {j.name}: a joint spring needs a revolute or "
                         f"prismatic joint, not {j.type} (a continuous joint's "
                         f"angle wraps)")
    for lim in (j.lower, j.upper):
        if lim is not None and not math.isfinite(lim):
            raise ValueError(f"joint {j.name}: limits must be finite or absent")
    if (j.lower is None) != (j.upper is None):
        raise ValueError(f"joint {j.name}: give both limits or neither")
    if j.lower is not None and j.upper is not None and not j.lower < j.upper:
        raise ValueError(f"joint {j.name}: lower limit must be below upper")
    if j.type == "continuous" and j.lower is not None:
        raise ValueError(f"joint {j.name}: continuous joints have no limits")
    if j.type == "ball" and j.lower is not None:
        raise ValueError(f"joint {j.name}: ball joints have no limits in the "
                         "canonical model")


# ----- contact geometry (k contact candidates of a scene against one plane) ----------
@dataclass(frozen=True)
class Sphere:
    frame: str
    radius: float  # [m]


@dataclass(frozen=True)
class Point:
    frame: str


@dataclass(frozen=True)
class Plane:
    normal: tuple[float, ...] = (0.0, 0.0, 1.0)  # unit normal, world axes
    offset: float = 0.0              # [m]: the plane is n·x = offset


@dataclass(frozen=True)
class ContactScene:
    """Contact candidates (k) of one fixture against ``plane``; ``law`` the default
    parameters of the shared law (harness.model.contact_law.ContactLaw keyword arguments)."""

    fixture: str
    geometry: tuple[Sphere | Point, ...]
    plane: Plane = Plane()
    law: tuple[tuple[str, float], ...] = ()  # ((name, value), ...)
    description: str = ""

    @property
    def k(self) -> int:
        return len(self.geometry)

    def law_params(self) -> dict[str, float]:
        return dict(self.law)
