"""Several joints in one body: the chain of massless bodies that stands for them.

Dimensions and units: positions in m, rotations as 3x3 matrices or URDF rpy [rad], 4x4
homogeneous poses X_AB (pose of frame B in frame A); q, v canonical (nq, nv).

A FixtureSpec has one joint per body, whose frame is the child body's frame. A MuJoCo
body may carry several joints, each anchored anywhere in the body (``pos``) about its own
axis; MuJoCo moves the body by them in document order, each about its anchor:

    X_PB(q) = X_PB(0) · Π_k Trans(p_k) R_k(q_k) Trans(−p_k)      (hinge, ball)
    X_PB(q) = X_PB(0) · Π_k Trans(a_k q_k)                        (slide)

with p_k, a_k in the body frame B. ``body_joint_chain`` writes the same motion as a chain
of massless bodies, one per joint, each at its joint's anchor with B's orientation:

    P ─j1→ B__j1 ─j2→ B__j2 ─ … ─jn→ B                 (the last joint at B's origin)
    P ─j1→ B__j1 ─ … ─jn→ B__jn ─fixed B__fixed→ B     (the last joint away from it)

joint 1 placed at X_PB(0)·Trans(p_1), joint k > 1 at Trans(p_k − p_{k−1}) (no rotation),
the weld at Trans(−p_n); every axis a_k unchanged (B's axes). Expanding the product shows
it is MuJoCo's X_PB(q) exactly, term by term. A single joint away from its body origin is
the n = 1 case. Slides move the same way wherever their anchor is; it is kept (MuJoCo
reports it as the joint's position, stage 0 compares it).

Engines that refuse massless moving bodies (MuJoCo) get the chain back as one body
(fixtures/export.py ``to_mjcf``, ``FixtureSpec.joint_chains``); ``folded_frames`` says
how such an engine finds the frames of the bodies it does not hold.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from harness.core.conventions import Vec, rpy_to_matrix
from harness.core.spec import FixtureSpec

if TYPE_CHECKING:
    from harness.model.prepared import PreparedModel

# (joint name, or None for the weld; parent; child; xyz (3,) [m]; rpy (3,) [rad])
Placement = tuple[str | None, str, str, tuple[float, ...], tuple[float, ...]]
# (T, X_TF (4, 4), q_index, q_value, v_index) of a folded frame (``folded_frames``)
Folded = tuple[str, NDArray[np.float64], NDArray[np.intp], NDArray[np.float64], NDArray[np.intp]]


def chain_body_name(body: str, joint: str) -> str:
    """Name of the massless body after ``joint`` in the chain of ``body``."""
    return f"{body}__{joint}"


def body_joint_chain(parent: str, body: str, xyz: ArrayLike, rpy: Vec,
                     joints: Sequence[tuple[str, ArrayLike]]
                     ) -> tuple[list[str], list[Placement]]:
    """(bodies, placements) of the chain standing for ``body``'s joints.

    parent: the parent body's name; xyz (3,) [m], rpy (3,) [rad]: ``body``'s pose in its
    parent at q = 0; joints: [(name, anchor p_k (3,) [m] in the body frame)] in MuJoCo's
    order. Returns ``bodies``: the names of the massless bodies to add, in order, and
    ``placements``: [(joint name or None for the weld, parent, child, xyz, rpy)] — one per
    joint of the chain (the weld ``<body>__fixed`` last when the last anchor is not the
    body origin), child frames at the anchors with the body's orientation."""
    p0 = np.zeros(3)
    R = rpy_to_matrix(rpy)
    bodies: list[str] = []
    out: list[Placement] = []
    prev = parent
    last = len(joints) - 1
    for k, (jname, anchor) in enumerate(joints):
        p = np.asarray(anchor, dtype=float)
        at_origin = k == last and not np.any(p)
        child = body if at_origin else chain_body_name(body, jname)
        if k == 0:
            pos = np.asarray(xyz, dtype=float) + R @ p
            out.append((jname, prev, child, _t(pos), tuple(float(x) for x in rpy)))
        else:
            out.append((jname, prev, child, _t(p - p0), (0.0, 0.0, 0.0)))
        if not at_origin:
            bodies.append(child)
        prev, p0 = child, p
    if prev != body:
        out.append((None, prev, body, _t(-p0), (0.0, 0.0, 0.0)))
    return bodies, out


def _t(x: Iterable[float]) -> tuple[float, ...]:
    return tuple(float(v) + 0.0 for v in x)  # + 0.0 folds −0.0


def folded_frames(model: PreparedModel,
                  chains: dict[str, tuple[str, tuple[str, ...]]] | None = None
                  ) -> dict[str, Folded]:
    """{name: (T, X_TF (4, 4), q_index, q_value, v_index)} for every body an engine folds
    into the body T below it (``chains``, in the format of and by default
    ``FixtureSpec.joint_chains``) and every named frame on one.

    X_TF: the frame's pose in T when the joints between it and T are at their neutral
    value (from the declared poses at neutral). The frame does not move with those joints:
    an engine holding only T reads the frame's pose (and Jacobian, drift) at q with
    q[q_index] = q_value (their neutral coordinates) and v[v_index] = 0, then zeroes the
    Jacobian columns v_index."""
    spec = model.spec
    chains = spec.joint_chains() if chains is None else chains
    if not chains:
        return {}
    poses, lay = model.body_poses_at_neutral(), model.layout
    neutral = lay.neutral()

    def X(p: NDArray[np.float64], R: NDArray[np.float64]) -> NDArray[np.float64]:
        out = np.eye(4)
        out[:3, :3], out[:3, 3] = R, p
        return out

    out: dict[str, Folded] = {}
    owners = [(c, c, np.eye(4)) for c in chains]
    owners += [(f.name, f.body, X(np.array(f.xyz), rpy_to_matrix(f.rpy)))
               for f in spec.frames if f.body in chains]
    for name, c, X_CF in owners:
        T, below = chains[c]
        X_TC = np.linalg.solve(X(*poses[T]), X(*poses[c]))
        q_list: list[int] = []
        vi: list[int] = []
        for jn in below:
            s = lay.slot(jn)
            q_list += range(s.iq, s.iq + s.nq)
            vi += range(s.iv, s.iv + s.nv)
        qi = np.array(q_list, dtype=np.intp)
        out[name] = (T, X_TC @ X_CF, qi, neutral[qi].copy(), np.array(vi, dtype=np.intp))
    return out



def folded_massless_joints(spec: FixtureSpec) -> set[str]:
    """Names of the joints whose child rigid group (the child and the bodies welded below
    it) is made only of folded massless bodies (``FixtureSpec.joint_chains``): the group
    such a joint carries is empty, though an engine that folds the chain holds the joint
    on the massive body below it."""
    chains, out = spec.joint_chains(), set()
    for j in spec.joints:
        c = j.child
        while c in chains:
            nxt = spec.chain_child(c)
            if nxt is None or nxt.type != "fixed":
                break
            c = nxt.child
        if j.type != "fixed" and c in chains:
            out.add(j.name)
    return out
