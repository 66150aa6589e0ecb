"""One model-dimension comparison on the swing: the golfer with and without a predeclared
pair of coordinates, fitted on training frames and scored on frames it never saw.

Dimensions: N frames of the fitted window at interval h [s]; K tracked markers (3-D
positions [m], world axes, Z-up); F folds; nv the candidate's coordinates. Angles in
rad, torques in N·m, forces in N and body weights (BW), log-likelihoods in nats.

The step compared is ``STEP``: both wrists' radial/ulnar deviation. Three candidates,
all built from the finished fit's own golfer (its calibrated segments and marker
offsets):
- "without": the two coordinates locked at 0 (fixed joints; nv − 2);
- "static": locked at the time mean of the "with" fit's angle over each fold's training
  frames (a constant geometry correction, not a coordinate);
- "with": the golfer as fitted (nv).

Per candidate and fold (frame i is held out in fold i mod F): marker IK over the fold's
training frames only (the held-out frames' start interpolated between their training
neighbours), then the swing's dynamic fit (harness/swing/pipeline.fit_problem) on the
training frames. Held fixed across candidates: the tracked markers and their gaps, the
folds, σ (the fit's marker error scale), the assumed contact schedule of the source
fit, the feet's anchors (the "with" candidate's, per fold), the ball impact at the
source fit's t_e (the event law: one reset map, the impulse refitted), every weight and
the spline, and the budget (``MAX_ITER`` Levenberg–Marquardt iterations, stop at a
relative cost decrease ``TOL``).

Criterion (declared before fitting, as harness/fit/dimension.py): the predictive
log-likelihood of the held-out frames, ℓ_i = Σ_k log N(y_ik; p_k(q̂(t_i)), σ² I) over
the markers seen at frame i, q̂ the fold's fitted trajectory; every frame held out once.
Uncertainty: paired differences with standard errors from blocks of consecutive frames
and the fraction of block-bootstrap resamples selecting each candidate.

Absorption and contact: the gain of "with" over "without" splits into a static part
(what a constant angle explains) and a dynamic part (what only a moving coordinate
explains), each with its z. Verdict: "no gain" when the whole gain is below
dimension/gain_z standard errors; else "dimension" when the dynamic part reaches it,
"absorbing" when only the static part does (then the choice falls back to "without"),
"gain not attributed" when neither part alone does. The gain also splits into the
markers on the bodies the coordinates move (the club's; both hands hold it, so the arms
move too) and the others. A gain only away from the moved bodies means the coordinate
stands in for another error (the choice falls back to "without"); the change of the
fitted ground reaction force between candidates at the training frames (same schedule,
same anchors) shows how much of the contact model's output the coordinate moves. Both
are reported beside the selection.
"""
from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from harness.capture import ik
from harness.core.conventions import (
    matrix_to_rpy,
    quat_xyzw_from_rotvec,
    quat_xyzw_to_matrix,
    rpy_to_matrix,
)
from harness.core.errors import BadInput
from harness.core.tolerances import lookup
from harness.fit import dimension as fdim
from harness.fit import trajectory as tf
from harness.model import registry
from harness.model.prepared import PreparedModel
from harness.swing import ground
from harness.swing import groundtruth as gt
from harness.swing.groundtruth import rms_bw
from harness.swing.pipeline import fit_problem, impact_event
from harness.swing.scaling import GRIP_PAIRS

if TYPE_CHECKING:
    from harness.core.spec import FixtureSpec
    from harness.swing.pipeline import SwingSettings

STEP = ("wrist radial/ulnar deviation", ("l_wrist_deviation", "r_wrist_deviation"))
FOLDS = 4
MAX_ITER = 15                  # Levenberg–Marquardt iterations per fit, every candidate
TOL = 1e-3                     # relative cost decrease that stops a fit
NAMES = ("without", "static", "with")


def locked_spec(spec: FixtureSpec, angles: dict) -> FixtureSpec:
    """The model ``spec`` with each joint named in ``angles`` {name: angle [rad]} turned
    into a fixed joint at that angle (its frame rotated about its axis by the angle)."""
    missing = set(angles) - {j.name for j in spec.joints}
    if missing:
        raise BadInput("model", f"no joint {sorted(missing)} to lock")
    joints = []
    for j in spec.joints:
        if j.name in angles:
            axis = np.asarray(j.axis, float) / np.linalg.norm(j.axis)
            R = rpy_to_matrix(j.rpy) @ quat_xyzw_to_matrix(
                quat_xyzw_from_rotvec(float(angles[j.name]) * axis))
            j = dataclasses.replace(j, type="fixed", rpy=tuple(float(x) for x in
                                                               matrix_to_rpy(R)),
                                    lower=None, upper=None, damping=0.0, armature=0.0)
        joints.append(j)
    return dataclasses.replace(spec, joints=tuple(joints))


def _adapter(spec, what: str):
    return registry.adapter_class(registry.preferred("fit"))(
        PreparedModel(spec, f"swing dimension candidate: {what}"))


def _columns(full, cand) -> list:
    """Indices into the full golfer's coordinates of each of ``cand``'s (all joints are
    one-dof: revolute or prismatic)."""
    return [full.layout.slot(n).iv for n in cand.joint_names]


def _moved_markers(spec, joints, labels) -> np.ndarray:
    """(K,) bool: the markers on a body the coordinates ``joints`` move (their children's
    subtrees)."""
    todo = [j.child for j in spec.joints if j.name in joints]
    moved = set()
    while todo:
        b = todo.pop()
        if b not in moved:
            moved.add(b)
            todo.extend(j.child for j in spec.children(b))
    body = {f.name: f.body for f in spec.frames}
    return np.array([body.get(lab) in moved for lab in labels])


def _ik_start(adapter, labels, Y, train, q_init) -> np.ndarray:
    """(N, nv): marker IK over the training frames (warm-started frame to frame), the
    held-out frames linearly interpolated between their training neighbours."""
    idx = np.flatnonzero(train)
    Qt = ik.track(adapter, list(labels), Y[idx], q_init, pairs=GRIP_PAIRS).q
    N = len(train)
    return np.stack([np.interp(np.arange(N), idx, Qt[:, c]) for c in range(Qt.shape[1])],
                    axis=1)


def _fit_fold(adapter, labels, Y, train, q_init, s, src, contact=None):
    """The swing fit of ``adapter`` on the training frames of Y; returns (result, problem).
    ``src``: what is held fixed from the source fit (t0, h, floor, schedule, impact);
    ``contact``: (anchors, stick) to impose (else the source schedule with the anchors
    this problem derives)."""
    Yt = np.where(train[:, None, None], Y, np.nan)
    Q0 = _ik_start(adapter, labels, Yt, train, q_init)
    impact = None
    if src["t_e"] is not None:
        t_e = src["t_e"]
        impact = impact_event(s, s.impact_frame, t_e, src["sigma_t"], (t_e, t_e))
    prob = fit_problem(adapter, labels, Yt, Q0, src["t0"], src["h"], s, src["floor"],
                       impact=impact)
    prob.contact.stick = src["stick"].copy()
    if contact is not None:
        prob.contact.anchors = contact.copy()
    fr = tf.fit(prob, Q0, max_iter=MAX_ITER, tol=TOL)
    return fr, prob


def _source(folder, doc=None):
    full, s, doc, arr = gt.source(folder, doc)
    t = np.asarray(arr["t"], float)
    src = {"t0": float(t[0]), "h": float(t[1] - t[0]),
           "floor": float(doc["ground"]["floor_z_m"]),
           "stick": np.asarray(arr["contact_stick"], bool),
           "t_e": float(arr["impact_time_s"]) if "impact_time_s" in arr else None,
           "sigma_t": float((doc["summary"] or {}).get("impact_time_sigma_s") or 1e-3)}
    return full, s, doc, arr, src


def run_dimension(folder: str | os.PathLike[str], settings: SwingSettings | None = None,
                  folds: int = FOLDS, seed: int = 0, absorption: bool = True,
                  say: Callable[[str], None] | None = None, doc: dict | None = None) -> dict:
    """The comparison of the module docstring on the finished swing folder ``folder``
    (``doc``: its fit.json document when the file is not yet written; ``settings``: a
    SwingSettings; default the folder's own). ``absorption``: also fit the static
    candidate. Returns a dict of plain values plus ``ll`` (C, N) nats per
    held-out frame and ``q`` the held-out frames' fitted angles of the step's
    coordinates, per candidate (C, N, 2); ``qhat`` per candidate the held-out frames'
    fitted coordinates (N, nv of the candidate) in its own order (the full golfer's with
    the locked ones left out) and ``names`` the candidates."""
    say = say or (lambda msg: None)
    t_start = time.perf_counter()
    full, s_src, doc, arr, src = _source(folder, doc)
    s = settings or s_src
    if s.sigma_marker_m is None:           # the source fit's, resolved from its IK
        s = dataclasses.replace(s, sigma_marker_m=s_src.sigma_marker_m)
    labels = tuple(str(x) for x in arr["labels"])
    Y = np.asarray(arr["y"], float)
    N = len(Y)
    if folds < 2 or folds > N // 4:
        raise BadInput("folds", f"must be 2 … {N // 4}, got {folds}")
    name, joints = STEP
    sigma = float(s.sigma_marker_m)
    names = NAMES if absorption else ("without", "with")
    cv = _cross_validate(full, s, src, arr, labels, Y, folds, names, say)
    ll, qe, bw = cv["ll"], cv["qe"], cv["bw"]
    lls = np.stack([ll[n].sum(axis=1) for n in names])             # (C, N)
    tot = lls.sum(axis=1)
    cand = [n for n in names if n != "static"]
    best = max(cand, key=lambda n: tot[names.index(n)])
    z_gain = lookup("dimension", "gain_z").atol
    rows = _candidate_rows(names, cv, lls, best, fdim.bootstrap_selection(lls, seed), Y,
                           sigma)
    split, steps = _gains(names, cv, labels, z_gain, absorption)
    final, reason = best, "largest held-out log-likelihood"
    if best == "with" and steps is not None and steps["verdict"] == "absorbing":
        final = "without"
        reason = ("'with' has the largest held-out log-likelihood, but a constant angle "
                  "explains its gain: not a missing coordinate")
    if best == "with" and split["gain_elsewhere"]["z"] >= z_gain \
            and split["gain_on_moved"]["z"] < z_gain:
        final = "without"
        reason = ("'with' gains only on markers the coordinates do not move: it stands in "
                  "for another error")
    return {"step": name, "joints": list(joints), "folds": folds,
            "fold_rule": f"interleaved: frame i is held out in fold i mod {folds}",
            "criterion": "predictive log-likelihood of the held-out frames (isotropic "
                         f"Gaussian markers, σ = {1e3 * sigma:g} mm, the fit's own), summed "
                         "over every frame; declared before fitting",
            "held_fixed": ["tracked markers and their gaps", "folds",
                           f"σ = {1e3 * sigma:g} mm",
                           "the source fit's assumed contact schedule and (per fold) the "
                           "feet's anchors", "the ball impact at the source fit's t_e "
                           "(impulse refitted)" if src["t_e"] is not None else "no impact",
                           f"spline knots every {s.knot_frames} frames, w_smooth "
                           f"{s.w_smooth:g}, w_effort {s.w_effort:g}",
                           f"budget: at most {MAX_ITER} Levenberg–Marquardt iterations, "
                           f"stop at relative cost decrease {TOL:g}",
                           "start: IK over the training frames"],
            "uncertainty": f"paired differences with standard errors from blocks of "
                           f"{fdim.BLOCK} frames; fraction of {fdim.BOOTSTRAP} block-bootstrap "
                           "resamples selecting each candidate",
            "frames": N, "markers": len(labels), "body_weight_N": bw,
            "candidates": rows, "selected": best, "choice": final, "choice_reason": reason,
            "absorption": steps, "contact_separation": split, "z_gain": z_gain,
            "seed": seed, "wall_s": time.perf_counter() - t_start,
            "ll": lls, "q": np.stack([qe[n] for n in names]),
            "qhat": [cv["qhat"][n] for n in names], "names": list(names)}


def _cross_validate(full, s, src, arr, labels, Y, folds: int, names, say) -> dict:
    """Each candidate of ``names`` fitted on every fold's training frames (the with
    candidate first: its mean angles place the static one, its anchors the others'):
    {"ll": {name: (N, K) nats per held-out marker}, "qe": {name: (N, 2) rad held-out
    angles of the step's coordinates}, "grf": {name: per fold (n, 3) N training-frame
    ground force}, "grf_train": the source fit's per fold, "qhat": {name: (N, nv)},
    "info": {name: iterations, convergence, wall time [s], residual peak [N], RMS torque
    [N·m]}, "angles": per fold the with fit's mean angles [rad], "bw": body weight [N],
    "moved": (K,) bool the markers the step's coordinates move}."""
    N = len(Y)
    _, joints = STEP
    spec = full.model.spec
    iv = [full.layout.slot(j).iv for j in joints]
    sigma = float(s.sigma_marker_m)
    fold = np.arange(N) % folds
    moved = _moved_markers(spec, joints, labels)
    q_src = np.asarray(arr["q"], float)
    bw = ground.total_mass(full) * ground.GRAVITY
    grf_src = np.asarray(arr["contact_forces"], float).sum(axis=1)     # (N, 3) N
    ll = {n: np.zeros((N, len(labels))) for n in names}
    qe = {n: np.zeros((N, len(joints))) for n in names}
    # ground force (N, 3) N of each fold's fit at its training frames (where it saw the
    # markers; a held-out frame's force follows the spline's unseen acceleration)
    grf = {n: [] for n in names}
    grf_train = []
    qhat = {}
    info = {n: {"iterations": [], "converged": [], "wall_s": 0.0, "nv": None,
                "residual_force_peak_N": [], "rms_torque_Nm": []} for n in names}
    angles = []
    locked0 = _adapter(locked_spec(spec, dict.fromkeys(joints, 0.0)), "without")
    for f in range(folds):
        train, test = fold != f, fold == f
        grf_train.append(grf_src[train])
        anchors = None
        for n in ("with", "without", "static"):
            if n not in names:
                continue
            t0 = time.perf_counter()
            mean = None
            if n == "with":
                ad = full
            elif n == "without":
                ad, mean = locked0, dict.fromkeys(joints, 0.0)
            else:
                mean = {j: float(angles[-1][k]) for k, j in enumerate(joints)}
                ad = _adapter(locked_spec(spec, mean), n)
            cols = _columns(full, ad)
            fr, prob = _fit_fold(ad, labels, Y, train, q_src[0, cols], s, src, anchors)
            if n == "with":
                anchors = prob.contact.anchors.copy()
                angles.append(fr.q[train][:, iv].mean(axis=0))
                qe[n][test] = fr.q[test][:, iv]
            else:
                qe[n][test] = np.array([mean[j] for j in joints])
            qhat.setdefault(n, np.zeros((N, ad.nv)))[test] = fr.q[test]
            ll[n][test] = fdim.marker_loglik(ad, labels, fr.q[test], Y[test], sigma)[0]
            grf[n].append(fr.forces[train].sum(axis=1))
            F_res, _ = ground.pelvis_wrench(ad, fr.q, fr.act)
            shared = [k for k, j in enumerate(ad.joint_names) if j not in ground.PELVIS]
            i_ = info[n]
            i_["nv"] = ad.nv
            i_["iterations"].append(int(fr.iterations))
            i_["converged"].append(bool(fr.converged))
            i_["residual_force_peak_N"].append(float(np.linalg.norm(F_res, axis=1).max()))
            i_["rms_torque_Nm"].append(float(np.sqrt(np.mean(fr.act[:, shared] ** 2))))
            i_["wall_s"] += time.perf_counter() - t0
            say(f"dimension: fold {f + 1}/{folds}, {n} ({ad.nv} coordinates): "
                f"{fr.iterations} iterations, held-out RMSE "
                f"{_heldout_mm(ll[n][test], Y[test], sigma):.1f} mm "
                f"({time.perf_counter() - t0:.0f} s)")
    return {"ll": ll, "qe": qe, "grf": grf, "grf_train": grf_train, "qhat": qhat,
            "info": info, "angles": angles, "bw": bw, "moved": moved}


def _candidate_rows(names, cv: dict, lls, best: str, frac, Y, sigma: float) -> list:
    """One row per candidate: held-out log-likelihood (total and per frame, nats),
    held-out RMSE [mm], the paired difference below the selected one, the bootstrap
    fraction selecting it, and its fits' figures."""
    ll, info, N = cv["ll"], cv["info"], len(Y)
    tot = lls.sum(axis=1)
    rows = []
    for k, n in enumerate(names):
        pr = fdim.paired(lls[names.index(best)], lls[k]) if n != best else \
            {"diff": 0.0, "se": 0.0, "z": 0.0}
        r2 = _heldout_mm(ll[n], Y, sigma)
        rows.append({"name": n, "nv": info[n]["nv"],
                     "heldout_loglik": float(tot[k]), "heldout_loglik_per_frame":
                     float(tot[k] / N), "heldout_rmse_mm": r2,
                     "below_selected": pr, "bootstrap_fraction": float(frac[k]),
                     "iterations": info[n]["iterations"],
                     "converged": info[n]["converged"], "wall_s": info[n]["wall_s"],
                     "residual_force_peak_N": max(info[n]["residual_force_peak_N"]),
                     "rms_torque_Nm": {"mean": float(np.mean(info[n]["rms_torque_Nm"])),
                                       "sd": float(np.std(info[n]["rms_torque_Nm"],
                                                          ddof=1)),
                                       "per_fold": info[n]["rms_torque_Nm"]}})
    return rows


def _gains(names, cv: dict, labels, z_gain: float, absorption: bool) -> tuple:
    """(contact_separation: the with candidate's gain on the markers the step moves and
    elsewhere, the ground force's change [BW]; absorption: the total, static and dynamic
    gains with the verdict, None without the static candidate)."""
    _, joints = STEP
    ll, grf, moved, bw = cv["ll"], cv["grf"], cv["moved"], cv["bw"]
    grf_train, angles, qe = cv["grf_train"], cv["angles"], cv["qe"]

    def part(a: str, b: str, mask: NDArray[np.bool_] | None = None) -> dict[str, Any]:
        m = np.ones(len(labels), bool) if mask is None else mask
        return fdim.paired(ll[a][:, m].sum(axis=1), ll[b][:, m].sum(axis=1))

    split = {"moved_markers": [lab for lab, m in zip(labels, moved) if m],
             "gain_on_moved": part("with", "without", moved),
             "gain_elsewhere": part("with", "without", ~moved),
             "grf_change_bw": rms_bw(np.vstack(grf["with"]), np.vstack(grf["without"]), bw),
             "grf_from_source_fit_bw": {n: rms_bw(np.vstack(grf[n]), np.vstack(grf_train),
                                                  bw) for n in names}}
    steps = None
    if absorption:
        total, static, dynamic = part("with", "without"), part("static", "without"), \
            part("with", "static")
        verdict = "no gain" if total["z"] < z_gain else \
            "dimension" if dynamic["z"] >= z_gain else \
            "absorbing" if static["z"] >= z_gain else "gain not attributed"
        ang = np.array(angles)
        steps = {"total_gain": total, "static_gain": static, "dynamic_gain": dynamic,
                 "verdict": verdict,
                 "static_angle_rad": {j: ang[:, k].tolist() for k, j in enumerate(joints)},
                 "motion_rms_rad": {j: float(np.sqrt(np.mean(
                     (qe["with"][:, k] - qe["with"][:, k].mean()) ** 2)))
                     for k, j in enumerate(joints)}}
    return split, steps


def _heldout_mm(ll_nk, Y, sigma) -> float:
    """Held-out marker RMSE [mm] (3-D distance, as the swing's other marker figures)
    recovered from the per-marker log-likelihoods ll_nk (N, K) of the markers Y (N, K, 3)
    (NaN where unseen)."""
    seen = np.isfinite(Y).all(axis=2)
    c = -1.5 * np.log(2 * np.pi * sigma ** 2)
    r2 = -2.0 * sigma ** 2 * (ll_nk[seen] - c)
    return float(1e3 * np.sqrt(np.mean(r2)))


def plain(r: dict) -> dict:
    """The comparison without its arrays (what fit.json holds)."""
    return {k: v for k, v in r.items() if k not in ("ll", "q", "qhat", "names")}


def check(r: dict) -> dict:
    """The swing check row: the selection with its held-out scores (reported)."""
    rows = {row["name"]: row for row in r["candidates"]}
    w, wo = rows["with"], rows["without"]
    d = w["heldout_loglik"] - wo["heldout_loglik"]
    a = r["absorption"]
    value = (f"{r['step']}: with ({w['nv']} coordinates) {w['heldout_rmse_mm']:.1f} mm, "
             f"without ({wo['nv']}) {wo['heldout_rmse_mm']:.1f} mm held-out RMSE; "
             f"log-likelihood {d:+.0f} nats for 'with'; chosen: {r['choice']} "
             f"(bootstrap {100 * rows[r['selected']]['bootstrap_fraction']:.0f} %)"
             + (f"; static or moving: {a['verdict']}" if a else ""))
    return {"name": "model dimension chosen on held-out frames (the --dimension option)",
            "value": value, "target": "reported, no threshold", "ok": None}


def section(r: dict) -> tuple:
    """(title, HTML): the answer, the candidates' table (the choice marked), the
    absorption and contact split, and what was held fixed."""
    from markupsafe import escape

    def pm(p: Mapping[str, float]) -> str:
        return f"{p['diff']:+.0f} ± {p['se']:.0f} (z {p['z']:.1f})"

    rows = {row["name"]: row for row in r["candidates"]}
    w, wo = rows["with"], rows["without"]
    c = rows[r["choice"]]
    label = {"with": "with the coordinates", "without": "locked at 0",
             "static": "locked at the fitted mean angle"}
    head = (f"<p><b>Chosen: {escape(label[r['choice']])} ({c['nv']} coordinates).</b> "
            f"Held-out marker RMSE {w['heldout_rmse_mm']:.1f} mm with the "
            f"{escape(r['step'])}, {wo['heldout_rmse_mm']:.1f} mm without; the held-out "
            f"log-likelihood of 'with' exceeds 'without' by "
            f"{pm(r['absorption']['total_gain'] if r['absorption'] else wo['below_selected'])}"
            f" nats; {100 * rows[r['selected']]['bootstrap_fraction']:.0f} % of the "
            "block-bootstrap resamples select the same candidate. Reason: "
            f"{escape(r['choice_reason'])}.</p>"
            f"<p>Each candidate is fitted on the training frames of {r['folds']} folds "
            f"({escape(r['fold_rule'])}) and scored on the frames it never saw. "
            f"Criterion: {escape(r['criterion'])}.</p>")
    body = []
    for row in r["candidates"]:
        mark = row["name"] == r["choice"]
        tq = row["rms_torque_Nm"]
        body.append(
            f"<tr{' class=chosen' if mark else ''}><td>{escape(label[row['name']])}"
            f"{' (chosen)' if mark else ''}</td><td>{row['nv']}</td>"
            f"<td>{row['heldout_loglik']:.0f}</td>"
            f"<td>{'—' if row['name'] == r['selected'] else pm(row['below_selected'])}</td>"
            f"<td>{row['heldout_rmse_mm']:.2f}</td>"
            f"<td>{100 * row['bootstrap_fraction']:.1f}</td>"
            f"<td>{tq['mean']:.1f} ± {tq['sd']:.1f}</td>"
            f"<td>{r['contact_separation']['grf_from_source_fit_bw'][row['name']]:.3f}</td>"
            f"<td>{row['residual_force_peak_N']:.2f}</td>"
            f"<td>{', '.join(str(i) for i in row['iterations'])}</td></tr>")
    table = ("<table id='dimension'><tr><th>candidate</th><th>coordinates</th>"
             "<th>held-out log-likelihood [nats]</th><th>below the selected [nats]</th>"
             "<th>held-out marker RMSE [mm]</th><th>bootstrap selections [%]</th>"
             "<th>RMS joint torque [N·m], mean ± sd over folds</th>"
             "<th>ground force vs the source fit [BW RMS]</th>"
             "<th>pelvis residual peak [N]</th><th>iterations per fold</th></tr>"
             + "".join(body) + "</table>")
    sep = r["contact_separation"]
    parts = []
    a = r["absorption"]
    if a:
        parts.append(f"<li>Static or moving: a constant angle gains {pm(a['static_gain'])} "
                     f"nats over 'locked at 0'; the moving coordinate gains "
                     f"{pm(a['dynamic_gain'])} more. Verdict: <b>{escape(a['verdict'])}</b> "
                     f"(a gain counts at z ≥ {r['z_gain']:g}: <i>dimension</i>, the moving "
                     "part counts; <i>absorbing</i>, only the constant part does; <i>gain "
                     "not attributed</i>, the whole gain counts but neither part alone: a "
                     "constant angle helps at some frames and hurts at others, which widens "
                     "both parts' standard errors). The static angles per fold: "
                     + str(escape("; ".join(f"{j} " + ", ".join(f"{x:.2f}" for x in v)
                                            + " rad" for j, v in a["static_angle_rad"].items())))
                     + ".</li>")
    parts.append(f"<li>Where the gain lies: {pm(sep['gain_on_moved'])} nats on the markers "
                 f"the coordinates move (the club's: {escape(', '.join(sep['moved_markers']))}), "
                 f"{pm(sep['gain_elsewhere'])} on the others (both hands hold the club, so "
                 "locking a wrist also moves the arms).</li>")
    parts.append(f"<li>The contact model's share: at the training frames the total ground "
                 f"force of 'with' and 'without' differ by {sep['grf_change_bw']:.3f} BW RMS "
                 "(same schedule, same anchors); the column above gives each against the "
                 "source fit at the same frames.</li>")
    held = "".join(f"<li>{escape(h)}</li>" for h in r["held_fixed"])
    tail = (f"<ul>{''.join(parts)}</ul><p>Held fixed across candidates:</p><ul>{held}</ul>"
            f"<p>{escape(r['uncertainty'])}; {r['wall_s']:.0f} s in all.</p>")
    return (f"Model dimension on held-out frames: {r['step']}", head + table + tail)
