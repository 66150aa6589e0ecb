"""Three hinges or one ball joint for the golfer's shoulders (and the other three-hinge
groups: lumbar, neck, hips), measured on a fitted swing.

A group of three revolute joints at one point (two massless links between them) maps its
rates q̇ (3,) [rad/s] to the child's angular velocity relative to the parent ω (3,)
[rad/s] through E(q) = [a₁, R₁ a₂, R₁ R₂ a₃] (a_k the unit axes, R_k the rotation of
joint k). A ball joint's velocity is ω itself, so its map is the identity (condition 1)
everywhere; the hinge sequence's map loses rank where its first and third axes align
(gimbal lock). What a fit on the hinges pays is this conditioning: a small σ_min(E)
means large rates for a small angular velocity and an ill-conditioned mass matrix.

Read from a ``harness swing … --out D`` folder (D/fit/trajectory.npz q at the fitted
frames, D/fit/candidate.json the model). Per group: the smallest σ_min(E) over the
frames [–], the largest condition number σ_max/σ_min [–], and the frame where it occurs.
σ_min is computed twice, by numpy's SVD of E and from the closed form of a sequence of
three orthogonal axes (σ = 1, √(1 ± |a₁ · R₁R₂ a₃|)), and the two must agree.

Run: .venv/bin/python bench/golfer_ball_joints.py --swing-dir D [--out FILE]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness.core.conventions import Layout  # noqa: E402
from harness.model.osim_export import read_swing  # noqa: E402


def hinge_groups(spec) -> list:
    """[(name, [joint, joint, joint])]: three revolute joints in a row through two tiny
    links (≤ 10 g, fixtures/golfers.py ``_group``) with no offset between them."""
    by_parent: dict = {}
    for j in spec.joints:
        by_parent.setdefault(j.parent, []).append(j)
    out = []
    for j1 in spec.joints:
        chain = [j1]
        while len(chain) < 3:
            kids = by_parent.get(chain[-1].child, [])
            if (len(kids) != 1 or kids[0].type != "revolute"
                    or spec.body(chain[-1].child).mass > 0.01
                    or any(abs(x) > 0 for x in kids[0].xyz + kids[0].rpy)):
                break
            chain.append(kids[0])
        if len(chain) == 3 and j1.type == "revolute":
            prefix = j1.name.rsplit("_", 1)[0]
            out.append((prefix, chain))
    # keep the groups whose first joint is not itself inside another group
    inner = {c.name for _, ch in out for c in ch[1:]}
    return [(n, ch) for n, ch in out if ch[0].name not in inner]


def rate_map(chain, angles) -> np.ndarray:
    """E (3, 3) [–] of three hinges with zero rpy: columns a₁, R₁a₂, R₁R₂a₃."""
    cols, R = [], np.eye(3)
    for j, th in zip(chain, angles):
        a = np.asarray(j.axis, dtype=float)
        a = a / np.linalg.norm(a)
        cols.append(R @ a)
        R = R @ Rotation.from_rotvec(th * a).as_matrix()
    return np.column_stack(cols)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--swing-dir", required=True)
    ap.add_argument("--out", default=str(ROOT / "bench" / "golfer_ball_joints.txt"))
    args = ap.parse_args()
    sw = read_swing(args.swing_dir)
    spec, t, q = sw["spec"], sw["t"], sw["q"]
    lay = Layout.from_spec(spec)
    iq = {s.name: s.iq for s in lay.slots}
    lines = [f"{'group':16s} {'min σ_min':>9s} {'max cond':>9s} {'at t [s]':>9s} "
             f"{'closed form':>11s} {'|middle| max [deg]':>18s}"]
    for name, chain in hinge_groups(spec):
        idx = [iq[j.name] for j in chain]
        smin, cond, closed = [], [], []
        for k in range(len(t)):
            E = rate_map(chain, q[k, idx])
            s = np.linalg.svd(E, compute_uv=False)
            smin.append(s[-1])
            cond.append(s[0] / s[-1])
            c = abs(float(E[:, 0] @ E[:, 2]))  # a₁ · R₁R₂a₃
            closed.append(np.sqrt(1.0 - c))
        smin, cond, closed = map(np.asarray, (smin, cond, closed))
        agree = float(np.max(np.abs(smin - closed)))
        if agree > 1e-12:
            raise SystemExit(f"{name}: SVD and closed form differ by {agree:.2e}")
        k = int(np.argmin(smin))
        mid = float(np.degrees(np.max(np.abs(q[:, idx[1]]))))
        lines.append(f"{name:16s} {smin[k]:9.3f} {cond[k]:9.2f} {t[k]:9.3f} "
                     f"{agree:11.1e} {mid:18.1f}")
    head = (f"# bench/golfer_ball_joints.py on {args.swing_dir}: {len(t)} frames "
            f"{t[0]:.3f}-{t[-1]:.3f} s; a ball joint's map is the identity (σ_min = cond "
            "= 1); 'closed form' = max |σ_min(SVD) − √(1 − |a₁·R₁R₂a₃|)|")
    text = head + "\n" + "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
