"""Point masses lent to moving bodies without mass or full-rank inertia, for engines that
refuse them (MuJoCo).

Dimensions and units: masses in kg, points in m (in a body's frame), inertias in kg·m²
about the centre of mass, body axes.

MuJoCo refuses a moving body whose mass or any principal inertia is below mjMINVAL.
Chains of massless bodies fold into the body below them (``FixtureSpec.joint_chains``,
fixtures/export.py); a massless moving body with several child joints cannot fold. It
borrows point masses from massive neighbours instead, at material points it shares with
them at every q (on a revolute axis), so the mass distribution — and M, h, v̇ — is the
same in every configuration; the engine's read-out gives them back. A massive body
without full-rank inertia (a point mass, a thin rod) on a revolute joint borrows the same
way (``inertia_loans``), from the world when its joint's axis is fixed in it: points of
that axis never move, so they add nothing to M or h.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from harness.core.conventions import combine_inertias, rpy_to_matrix
from harness.core.spec import FixtureSpec

LOAN_SHARE = 1e-9  # [relative] share of a donor's mass lent at each point
LOAN_ARM = 0.1  # [m] distance of the two lent points from their joint's origin
# (taker, donor, points (k, 3) m in the taker's frame, the same points in the donor's, ε kg)
Loan = tuple[str, str, NDArray[np.float64], NDArray[np.float64], float]


def _axis_lines(spec: FixtureSpec, name: str) -> list[tuple[str, NDArray[np.float64],
                                                            NDArray[np.float64]]]:
    """[(donor, points (2, 3) m in ``name``'s frame, the same in the donor's frame)]: the
    lines of material points the massless body ``name`` shares with a massive neighbour
    at every q — the axis of its own revolute joint (through its origin) when the parent
    has mass, and the axis of each revolute child joint whose child has mass — two points
    at ±LOAN_ARM from the joint's origin on each."""
    out = []
    j = spec.parent_joint(name)
    if j is not None and j.type in ("revolute", "continuous") and spec.body(j.parent).mass > 0:
        a = np.asarray(j.axis, dtype=float)
        pts = np.array([LOAN_ARM * a, -LOAN_ARM * a])
        out.append((j.parent, pts, np.asarray(j.xyz, dtype=float) + pts @ rpy_to_matrix(j.rpy).T))
    for k in spec.children(name):
        if k.type in ("revolute", "continuous") and spec.body(k.child).mass > 0:
            a = np.asarray(k.axis, dtype=float)
            pts = np.array([LOAN_ARM * a, -LOAN_ARM * a])
            out.append((k.child, np.asarray(k.xyz, dtype=float) + pts @ rpy_to_matrix(k.rpy).T,
                        pts))
    return out


def _welded_mass(spec: FixtureSpec, name: str) -> float:
    """Mass [kg] of body ``name`` and the bodies welded below it (fixed joints): what an
    engine that fuses static children (MuJoCo) counts as the moving body's mass."""
    total, stack = 0.0, [name]
    while stack:
        b = stack.pop()
        total += spec.body(b).mass
        stack.extend(k.child for k in spec.children(b) if k.type == "fixed")
    return total


def massless_loans(spec: FixtureSpec) -> list[Loan]:
    """Point masses lent to the massless moving bodies that ``FixtureSpec.joint_chains``
    cannot fold (several child joints: a massless waist carrying two legs) and that no
    massive body is welded to (MuJoCo counts those with the body), for an engine
    that refuses a moving body without mass and full-rank inertia (MuJoCo: both above
    mjMINVAL). Such a body B takes two point masses ε = LOAN_SHARE·m_D on each of two
    non-parallel joint axes it shares with a massive neighbour D (``_axis_lines``), and
    each D gives up the same point masses at the same places: points on a revolute axis
    never move relative to either body, so the mass distribution, M, h and v̇ are the same
    at every q; two non-parallel rods give B a full-rank inertia. A body with fewer than
    two such axes gets nothing (the engine refuses it, naming it)."""
    chains = spec.joint_chains()
    out: list[Loan] = []
    for j in spec.joints:
        b = j.child
        if j.type == "fixed" or b in chains or _welded_mass(spec, b) > 0:
            continue
        lines = _axis_lines(spec, b)
        pair = next(((p, q) for i, p in enumerate(lines) for q in lines[i + 1:]
                     if np.linalg.norm(np.cross(p[1][0] - p[1][1], q[1][0] - q[1][1]))
                     > 0.1 * (2 * LOAN_ARM) ** 2), None)
        for donor, pts_b, pts_d in pair or ():
            out.append((b, donor, pts_b, pts_d, LOAN_SHARE * spec.body(donor).mass))
    return out


MIN_MOMENT = 1e-15  # [kg·m²] MuJoCo's mjMINVAL: a moving body's smallest accepted moment


def _fixed_to_world(spec: FixtureSpec, name: str) -> bool:
    """True if body ``name`` never moves: welded (fixed joints only) to a fixed root."""
    if spec.floating:
        return False
    j = spec.parent_joint(name)
    while j is not None:
        if j.type != "fixed":
            return False
        j = spec.parent_joint(j.parent)
    return True


def _massive_welded(spec: FixtureSpec, name: str, down: bool
                    ) -> tuple[str, NDArray[np.float64]] | None:
    """(body, X_name,body (4, 4)) of the first massive body welded to ``name`` (itself,
    then through fixed joints: down to its one fixed child when ``down``, else up to its
    parent), or None."""
    X, cur = np.eye(4), name
    while spec.body(cur).mass <= 0:
        kids = spec.children(cur) if down else []
        up = None if down else spec.parent_joint(cur)
        k = kids[0] if len(kids) == 1 else up
        if k is None or k.type != "fixed":
            return None
        P = np.eye(4)
        P[:3, :3], P[:3, 3] = rpy_to_matrix(k.rpy), np.asarray(k.xyz, dtype=float)
        X, cur = (X @ P, k.child) if down else (X @ np.linalg.inv(P), k.parent)
    return cur, X


def inertia_loans(spec: FixtureSpec) -> list[Loan]:
    """Point masses lent to the massive bodies a revolute joint moves whose own inertia
    has a principal moment below MIN_MOMENT (a point mass, a thin rod: MuJoCo refuses
    them). The body T (the joint's child, or the massive body welded below it) takes two
    point masses ε on the joint's axis, at ±2·LOAN_ARM from its origin when the parent
    never moves (points of an axis fixed in the world never move: nothing is given up,
    ε = LOAN_SHARE·m_T; donor ''), else at ±LOAN_ARM, given up by the massive body D
    welded to the parent at the same points (ε = LOAN_SHARE·m_D). Either way M, h and v̇
    are the same at every q. Kept only when every body it changes ends with all its
    principal moments at least MIN_MOMENT (else MuJoCo refuses the model, naming it)."""
    out: list[Loan] = []
    for j in spec.joints:
        if j.type not in ("revolute", "continuous"):
            continue
        below = _massive_welded(spec, j.child, down=True)
        if below is None:
            continue
        T, X_CT = below
        if np.linalg.eigvalsh(spec.body(T).inertia_matrix).min() >= MIN_MOMENT:
            continue
        a = np.asarray(j.axis, dtype=float)
        world = _fixed_to_world(spec, j.parent)
        arm = (2.0 if world else 1.0) * LOAN_ARM
        pts_c = np.array([arm * a, -arm * a])  # on the axis, in the joint (child) frame
        Xi = np.linalg.inv(X_CT)
        pts_t = pts_c @ Xi[:3, :3].T + Xi[:3, 3]
        if world:
            out.append((T, "", pts_t, pts_t, LOAN_SHARE * spec.body(T).mass))
            continue
        above = _massive_welded(spec, j.parent, down=False)
        if above is None:
            continue
        D, X_PD = above
        pts_p = np.asarray(j.xyz, dtype=float) + pts_c @ rpy_to_matrix(j.rpy).T
        Di = np.linalg.inv(X_PD)
        out.append((T, D, pts_t, pts_p @ Di[:3, :3].T + Di[:3, 3],
                    LOAN_SHARE * spec.body(D).mass))
    return out


def _lend(spec: FixtureSpec, loans: list[Loan]) -> dict[str, tuple[float, NDArray[np.float64],
                                                                   NDArray[np.float64]]]:
    """{body: (mass, com, inertia about the com)} of the bodies ``loans`` change."""
    out: dict[str, tuple[float, NDArray[np.float64], NDArray[np.float64]]] = {}
    for taker, donor, pts_b, pts_d, eps in loans:
        for name, pts, sign in ((taker, pts_b, 1.0), (donor, pts_d, -1.0)):
            if not name:  # the world gives nothing up
                continue
            B = spec.body(name)
            body = out.get(name, (B.mass, np.asarray(B.com, dtype=float), B.inertia_matrix))
            # the body and its lent (+ε) or given (−ε) point masses, parallel-axis summed
            m0, c0, I0 = combine_inertias([body] + [(sign * eps, x, np.zeros((3, 3)))
                                                    for x in pts])
            out[name] = (m0, c0, 0.5 * (I0 + I0.T))
    return out


def with_loans(spec: FixtureSpec) -> dict[str, tuple[float, NDArray[np.float64],
                                                     NDArray[np.float64]]]:
    """{body: (mass kg, com (3,) m, inertia about the com (3×3) kg·m², body axes)} of the
    bodies ``massless_loans`` and ``inertia_loans`` change, after the loans (the inertia
    loans only when every body they change ends full-rank)."""
    loans = massless_loans(spec)
    extra = inertia_loans(spec)
    if extra:
        trial = _lend(spec, loans + extra)
        if all(np.linalg.eigvalsh(trial[b][2]).min() >= MIN_MOMENT
               for t, d, *_ in extra for b in (t, d) if b):
            return trial
    return _lend(spec, loans)
