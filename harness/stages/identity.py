"""Stage 0, model identity: what each engine holds after loading the model.

* total_mass (1, 1) [kg]: mass of everything that moves.
* group_inertia (n_joints, 10): per joint, the rigid group it carries at neutral:
  [m kg, c_W m (3), I_W kg·m² about c (xx yy zz xy xz yz)]; labelled by joint name (c_W 0
  for a massless group, e.g. the virtual link between two joints of a ball joint).
* mass_matrix_neutral (1, nv, nv): M at the engine's own neutral configuration.

Read-back, element by element (``adapter.readback()``: the compiled model as the engine
holds it, at the canonical neutral q, world axes), each labelled by its body or joint so
that a failed record names the element (its first differing element is named by
harness/stages/diagnosis/summary.py ``first_differing``):

* body_inertia (n_groups, 10): dynamic parameters [m, m·(c − o) (3), I_o (6)] of every
  rigid group — a body whose joint moves (or the floating root) and every body fixed to
  it — as the engine keeps it, world axes, about the head body's frame origin o; labelled
  by the head body (and the massive bodies fixed to it: "panda_link7 (with panda_hand)").
  The parameters are linear, so the row is the sum over the group's bodies the engine
  holds: an engine that fused a fixed body into its parent (MuJoCo's importer) and one
  that keeps it separately give the same row, and a massless frame link counts as 0.
  Bodies welded to the world (a fixed root and what is fixed to it) move with nothing and
  form no row (total_mass counts only what moves, too). A group whose head the engine
  lacks is NaN (missing).
* joint_axis (n_joints, 3): axis in world axes (0 for the free root and ball joints).
* joint_placement (n_joints, 12): [p_WJ m (3), R_WJ (9, row-major)] of the joint frame.
* joint_limits (n_joints, 3): [bounded 0/1, lower, upper] (0, 0 when unbounded; the
  harness reads lower ≥ upper as unbounded, like its URDF importer and MuJoCo).
* joint_damping, joint_friction (n_joints, 1): the viscous [N·m·s/rad | N·s/m] and
  Coulomb [N·m | N] coefficients the engine *applies* in its dynamics (held but ignored
  counts as 0); joint_armature (n_joints, 1) [kg·m² | kg];
* joint_spring (n_joints, 2): [k N·m/rad | N/m, q_ref rad | m] of the joint spring the
  engine applies (its −k (q − q_ref) is part of h), q_ref 0 where k is 0 (no spring).

All of them are also compared with the values declared by the FixtureSpec (and, for an
as-is model, by the user's file: friction).
"""
from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from harness.core.spec import WORLD_BODY
from harness.model.prepared import PreparedModel
from harness.model.protocol import EngineAdapter
from harness.stages.base import Quantity

NAME = "model_identity"


def _massless_com_zero(rows: np.ndarray) -> np.ndarray:
    """A group without mass has no centre of mass: engines report a point of their own
    choosing there (the joint origin, half-way to it, …), so its c_W is compared as 0."""
    rows = np.array(rows, dtype=float)
    rows[~(rows[:, 0] > 0), 1:4] = 0.0
    return rows


def _groups(adapter, inputs):
    gi = adapter.group_inertias()
    return _massless_com_zero(np.stack([gi[n] for n in adapter.layout.joint_names]))


def _declared_groups(model):
    gi = model.declared_group_inertias()
    return _massless_com_zero(np.stack([gi[n] for n in model.layout.joint_names]))


def _total(adapter, inputs):
    return np.array([[_groups(adapter, inputs)[:, 0].sum()]])


def _declared_total(model):
    return np.array([[model.declared_total_mass()]])


# ----- read-back ----------------------------------------------------------------------
def compared_bodies(model: PreparedModel) -> list[str]:
    """Bodies compared one by one, depth-first from the root (so the first differing row
    is the one nearest the root): every spec body but the stand-in for the world."""
    return [b for b in model.spec.depth_first() if b != WORLD_BODY]


_READBACKS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def readback(adapter: EngineAdapter) -> dict[str, Any]:
    """adapter.readback(), computed once per adapter (the compiled model does not change);
    kept here, keyed weakly by the adapter, so that the stage writes nothing onto it."""
    rb = _READBACKS.get(adapter)
    if rb is None:
        rb = adapter.readback()
        _READBACKS[adapter] = rb
    return rb


def declared_readback(model: PreparedModel) -> dict[str, Any]:
    """The read-back the declared model implies (same format as adapter.readback())."""
    spec, poses = model.spec, model.body_poses_at_neutral()
    friction = dict(getattr(model, "declared_friction", ()) or ())
    bodies = {}
    for b in spec.bodies:
        p, R = poses[b.name]
        X = np.eye(4)
        X[:3, :3], X[:3, 3] = R, p
        bodies[b.name] = {"mass": b.mass, "com_W": p + R @ np.array(b.com),
                          "I_W": R @ b.inertia_matrix @ R.T, "X_WB": X}
    joints = {}
    for s in model.layout.slots:
        if s.type == "free":
            X, axis = bodies[spec.root]["X_WB"], np.zeros(3)
        else:
            j = next(j for j in spec.joints if j.name == s.name)
            X = bodies[j.child]["X_WB"]
            axis = np.zeros(3) if j.type == "ball" else X[:3, :3] @ np.array(j.axis)
        fr = float(friction.get(s.name, 0.0))
        joints[s.name] = {"type": s.type, "axis_W": axis, "X_WJ": X, "lower": s.lower,
                          "upper": s.upper, "limit_enforced": False, "damping": s.damping,
                          "damping_applied": s.damping, "friction": fr,
                          "friction_applied": fr, "armature": s.armature,
                          "stiffness_applied": s.stiffness, "spring_ref": s.spring_ref}
    return {"engine": "declared", "bodies": bodies, "joints": joints,
            "couplings": dict((f, l) for f, l, *_ in getattr(model, "mimic", ()) or ())}


def body_row(b: dict[str, Any], origin: ArrayLike | None = None) -> NDArray[np.float64]:
    """(10,) dynamic parameters of one body, world axes, about the point o (default: the
    body frame's origin) [m]: [m, m (c − o) (3), I_o (6: xx yy zz xy xz yz)] with
    I_o = I_c + m (|d|² 1 − d dᵀ), d = c − o. The dynamics are linear in these numbers, so
    they weigh a com error by the mass it moves (a 1e-6 kg placeholder link's com is not
    amplified by 1/m), and the rows of bodies about one point add up to their union's."""
    m = float(b["mass"])
    if not m > 0:
        return np.zeros(10)
    o = np.asarray(b["X_WB"])[:3, 3] if origin is None else np.asarray(origin, dtype=float)
    dv = np.asarray(b["com_W"], dtype=float) - o
    I = np.asarray(b["I_W"]) + m * (dv @ dv * np.eye(3) - np.outer(dv, dv))
    return np.array([m, *(m * dv), I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]])


def _spring(j):
    """[k, q_ref] of a read-back joint (an engine that reports no spring applies none)."""
    k = float(j.get("stiffness_applied", 0.0))
    return np.array([k, float(j.get("spring_ref", 0.0)) if k else 0.0])


def _limits(j):
    return np.array([1.0, j["lower"], j["upper"]]) if j["lower"] is not None else np.zeros(3)


JOINT_FIELDS = {  # quantity -> (width, row of one read-back joint)
    "joint_axis": (3, lambda j: np.asarray(j["axis_W"], dtype=float)),
    "joint_placement": (12, lambda j: np.concatenate([np.asarray(j["X_WJ"])[:3, 3],
                                                      np.asarray(j["X_WJ"])[:3, :3].ravel()])),
    "joint_limits": (3, _limits),
    "joint_damping": (1, lambda j: np.array([j["damping_applied"]])),
    "joint_friction": (1, lambda j: np.array([j["friction_applied"]])),
    "joint_armature": (1, lambda j: np.array([j["armature"]])),
    "joint_spring": (2, lambda j: _spring(j)),
}


def body_groups(model: PreparedModel) -> list[tuple[str, list[str]]]:
    """[(head, [bodies of its group])] in depth-first order of the heads: a group is a
    body whose parent joint moves (or the floating root) with every body fixed to it,
    directly or through other fixed bodies. Bodies welded to the world form no group."""
    spec = model.spec
    groups, order = {}, []
    for b in compared_bodies(model):
        h = b
        while True:
            j = spec.parent_joint(h)
            if j is None:  # the root: a group if it floats, else welded to the world
                h = h if spec.floating else None
                break
            if j.type != "fixed":
                break
            h = j.parent
        if h is None:
            continue
        if h not in groups:
            groups[h] = []
            order.append(h)
        groups[h].append(b)
    return [(h, groups[h]) for h in order]


def group_labels(model: PreparedModel) -> list[str]:
    """One label per body group: the head's name, with the massive bodies fixed to it."""
    out = []
    for h, members in body_groups(model):
        heavy = [b for b in members if b != h and model.spec.body(b).mass > 0]
        out.append(f"{h} (with {', '.join(heavy)})" if heavy else h)
    return out


def body_rows(rb: dict[str, Any],
              groups: Iterable[tuple[str, Sequence[str]]]) -> NDArray[np.float64]:
    """(n_groups, 10) group rows of one read-back: per group, the sum of the rows of the
    bodies the engine holds, about the head body's frame origin (NaN if the engine does
    not hold the head)."""
    rows = []
    for h, members in groups:
        head = rb["bodies"].get(h)
        if head is None:
            rows.append(np.full(10, np.nan))
            continue
        o = np.asarray(head["X_WB"])[:3, 3]
        rows.append(sum((body_row(rb["bodies"][b], o) for b in members if b in rb["bodies"]),
                        np.zeros(10)))
    return np.stack(rows)


def joint_rows(rb: dict[str, Any], names: Iterable[str], quantity: str) -> NDArray[np.float64]:
    """(n_joints, width) rows of one read-back's joints for ``quantity`` (JOINT_FIELDS:
    axis [–], placement [m, –], limits [rad | m], damping, friction, armature, spring, in
    the joint's SI units); NaN rows for joints the engine does not hold."""
    width, fn = JOINT_FIELDS[quantity]
    return np.stack([fn(rb["joints"][n]) if n in rb["joints"] else np.full(width, np.nan)
                     for n in names])


def _joint_quantity(qname):
    return Quantity(qname,
                    lambda a, i: joint_rows(readback(a), a.layout.joint_names, qname),
                    lambda m, i: list(m.layout.joint_names),
                    lambda m: joint_rows(declared_readback(m), m.layout.joint_names, qname),
                    "readback")


QUANTITIES = (
    Quantity("total_mass", _total, lambda m, i: ["model"], _declared_total, "group_inertias"),
    Quantity("group_inertia", _groups, lambda m, i: list(m.layout.joint_names),
             _declared_groups, "group_inertias"),
    Quantity("mass_matrix_neutral", lambda a, i: a.mass_matrix(a.neutral())[None],
             lambda m, i: ["neutral"], None, "mass_matrix"),
    Quantity("body_inertia", lambda a, i: body_rows(readback(a), body_groups(a.model)),
             lambda m, i: group_labels(m),
             lambda m: body_rows(declared_readback(m), body_groups(m)), "readback"),
    *(_joint_quantity(q) for q in JOINT_FIELDS),
)
