"""Identifiability of the golfer's scaled parameters at the fitted motion.

Dimensions: N fitted frames; K tracked markers (k_i seen at frame i); nv coordinates;
n_p parameters — the six segment lengths measured from the capture at address
(``LENGTHS``, m) and, in the second analysis, the 3 K calibrated marker offsets (m, in
their bodies' frames). Residuals are whitened: markers by σ_m, the grip closure by σ_c
(the fit's own weights, harness/swing/pipeline.py).

The question: do the data of the fitted window determine these parameters, if the
motion q_i of every frame is free as well? With r_i(q_i, p) the whitened residuals of
frame i, J_q,i = ∂r_i/∂q_i (the engine's frame Jacobians) and J_p,i = ∂r_i/∂p (segment
lengths: central differences of rebuilt models, step 1 mm, q fixed; offsets: ∂p_k/∂o_k
= R_body(q), exact), eliminating q_i leaves the projected Jacobian

    J̃_p,i = (I − Π_i) J_p,i,   Π_i the orthogonal projector onto range(J_q,i),

whose stack's Gauss–Newton matrix Σ J̃ᵀJ̃ is the Schur complement of the full (q, p)
information — the information about p that no motion can absorb. It goes to
harness/fit/identifiability.py (standard errors, correlations, unresolved directions
by the table's ("identifiability", "unresolved") ratio). σ̂² is the reduced χ² with
m − Σ rank(J_q,i) − rank(J̃) degrees of freedom (the residuals are passed rescaled so
that analyse's own m − rank(J̃) gives that).

Two analyses: ``lengths`` (offsets held at their calibrated values — what the fit
assumed) and ``lengths_and_offsets`` (both free — whether calibration from the same data
can tell a longer segment from a marker placed further along it).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from harness.fit.identifiability import analyse

if TYPE_CHECKING:
    from fixtures.golfers import GolferDims
    from harness.model.prepared import PreparedModel

LENGTHS = ("trunk", "head", "shoulder_half_width", "upper_arm", "forearm", "club")
STEP_M = 1e-3


def _positions(adapter, Q, frames):
    return np.stack([adapter.frame_poses(q, frames)[:, :3] for q in Q])   # (N, F, 3)


def scaled_parameters(model: PreparedModel, dims: GolferDims, adapter_cls: type,
                      Q: NDArray[np.float64], y: NDArray[np.float64], labels: Sequence[str],
                      pairs: Sequence[tuple[str, str]], sigma_m: float, sigma_c: float,
                      build: Callable[[GolferDims, dict], PreparedModel]) -> dict:
    """Q (N, nv) [rad | m], y (N, K, 3) m (module doc) → the identifiability figures.
    model: the fitted PreparedModel (golfer3d, calibrated offsets as its frames);
    dims: its GolferDims; Q (N, nv) fitted coordinates at the frames; y (N, K, 3) m
    markers (NaN unseen); pairs ((frame_a, frame_b), ...) closure pairs; build(dims,
    offsets) → PreparedModel (harness/swing/scaling.py). Returns a JSON-able dict."""
    labels = list(labels)
    pa, pb = [a for a, _ in pairs], [b for _, b in pairs]
    frames = labels + pa + pb
    K, P = len(labels), len(pa)
    base = adapter_cls(model)
    offsets = {f.name: (f.body, tuple(f.xyz)) for f in model.spec.frames if f.name in labels}
    seen = np.isfinite(y).all(axis=2)                                       # (N, K)
    N, nv = Q.shape

    # (N, F, 3) → list over frames of the whitened rows
    def residual_rows(pos: NDArray[np.float64]) -> list:
        out = []
        for i in range(N):
            rm = ((pos[i, :K] - np.nan_to_num(y[i])) / sigma_m)[seen[i]].ravel()
            rc = ((pos[i, K:K + P] - pos[i, K + P:]) / sigma_c).ravel()
            out.append(np.concatenate([rm, rc]))
        return out

    base_pos = _positions(base, Q, frames)
    r_rows = residual_rows(base_pos)
    # ∂r/∂lengths by central differences of rebuilt models (q fixed)
    dL = [np.zeros((r.size, len(LENGTHS))) for r in r_rows]
    for j, name in enumerate(LENGTHS):
        for sgn in (1.0, -1.0):
            m = build(dims.scaled(**{name: getattr(dims, name) + sgn * STEP_M}), offsets)
            rows = residual_rows(_positions(adapter_cls(m), Q, frames))
            for i in range(N):
                dL[i][:, j] += sgn * rows[i] / (2 * STEP_M)
    # ∂r/∂offsets exactly: marker k moves with R_body(q) o_k; the closure rows do not
    dO = []
    for i in range(N):
        R = base.frame_poses(Q[i], labels)[:, 3:].reshape(K, 3, 3)
        J = np.zeros((r_rows[i].size, 3 * K))
        row = 0
        for k in range(K):
            if seen[i, k]:
                J[row:row + 3, 3 * k:3 * k + 3] = R[k] / sigma_m
                row += 3
        dO.append(J)
    # project out the motion of every frame
    proj_L, proj_LO, rank_q = [], [], 0
    for i in range(N):
        Jf = base.frame_jacobians(Q[i], frames)[:, :3, :]
        Jq = np.vstack([(Jf[:K][seen[i]] / sigma_m).reshape(-1, nv),
                        ((Jf[K:K + P] - Jf[K + P:]) / sigma_c).reshape(-1, nv)])
        U, s, _ = np.linalg.svd(Jq, full_matrices=False)
        rk = int((s > 1e-9 * s[0]).sum()) if s.size else 0
        rank_q += rk
        Uq = U[:, :rk]
        JL = dL[i] - Uq @ (Uq.T @ dL[i])
        JO = dO[i] - Uq @ (Uq.T @ dO[i])
        proj_L.append(JL)
        proj_LO.append(np.hstack([JL, JO]))
    r = np.concatenate(r_rows)
    m_rows = r.size
    names_o = [f"{l}.{c}" for l in labels for c in "xyz"]
    out = {"what": "standard errors of the scaled parameters with every frame's motion "
                   "free (Schur complement of the (q, p) information; "
                   "harness/swing/identifiability.py)", "step_m": STEP_M,
           "sigma_marker_m": sigma_m, "sigma_closure_m": sigma_c, "residuals": int(m_rows),
           "motion_rank": int(rank_q)}
    for key, J, names in (("lengths", np.vstack(proj_L), list(LENGTHS)),
                          ("lengths_and_offsets", np.vstack(proj_LO),
                           list(LENGTHS) + names_o)):
        rank_p = int(np.linalg.matrix_rank(J))
        dof_true, dof_analyse = m_rows - rank_q - rank_p, m_rows - rank_p
        scale = np.sqrt(dof_true / dof_analyse) if dof_true > 0 else np.nan
        res = analyse(J, r * scale, names=names)
        d = res.to_json()
        nl = len(LENGTHS)
        bad = [j for j, v in enumerate(d["standard_errors"]) if v is None]
        for j in bad:          # no correlation for a parameter the data do not resolve
            for i in range(len(names)):
                d["correlation"][i][j] = d["correlation"][j][i] = None
        d["lengths_se_m"] = dict(zip(LENGTHS, d["standard_errors"][:nl]))
        d["lengths_value_m"] = {n: float(getattr(dims, n)) for n in LENGTHS}
        d["unresolved_count"] = int(res.unresolved.shape[0])
        d["unresolved_summary"] = [
            ", ".join(f"{names[j]} {v[j]:+.2f}" for j in np.argsort(-np.abs(v))[:4])
            for v in res.unresolved[:6]]
        if key == "lengths_and_offsets":   # the K×3 blocks are long: keep what is read
            d["correlation"] = [row[:nl] for row in d["correlation"][:nl]]
            d["standard_errors"] = d["standard_errors"][:nl]
            d["unresolved_directions"] = []
            d["names"] = list(LENGTHS)
            sv = np.asarray(res.singular_values)
            d["singular_values"] = {"largest": float(sv[0]), "smallest": float(sv[-1]),
                                    "count": int(sv.size)}
        out[key] = d
    return out
