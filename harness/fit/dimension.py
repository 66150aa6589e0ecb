"""Choosing a model's dimension from held-out frames: candidate serial chains of d* − 1,
d* and d* + 1 hinges fitted to the same markers on training frames, compared on frames
they never saw (docs/dimension.md).

Dimension legend: N frames t_i = i·h [s]; K markers (3-D positions [m], world axes,
Z-up); F folds (interleaved: frame i belongs to fold i mod F); C candidates; d the number
of hinges of a candidate (its nq = nv). Angles in rad, torques in N·m, log-likelihoods in
nats.

The synthetic problem. A planar chain hangs from a fixed base and swings in the x–z plane
(hinges about y). It is a polyline of total arc length ``LENGTH``; a model places hinges
at arc positions s (the first at s = 0) and may carry fixed kinks (a constant bend about
y at an arc position: a geometry, not a coordinate). Markers sit on the polyline at the
arc positions ``MARKERS``. Mass is uniform along the arc (``DENSITY`` kg/m), so splitting a
body at a locked hinge leaves the dynamics unchanged (up to the 1e-5 kg·m² floor added to
each body's inertia). The truth has d* = 2 hinges at
s = 0 and 0.5 m moving as sums of sines; the d* − 1 candidate lacks the second, the
d* + 1 candidate adds one at ``EXTRA_S`` = 0.7 m that the data do not need. Markers are
the truth's frame positions plus isotropic Gaussian noise σ = ``SIGMA`` (seeded), a
seeded occlusion mask removing ``OCCLUDED`` of the marker samples.

The variant with a model error of another kind: the truth's distal link is bent by
``KINK`` rad at s = ``EXTRA_S`` (its two distal markers lie off the straight link the
candidates assume). The d* + 1 candidate's extra hinge can absorb that bend as a
constant angle; the absorption check tells this apart from a missing coordinate.

Per candidate and fold: marker IK over the training frames (``ik_start``) as the start,
then the B-spline inverse-dynamics fit (harness/fit/trajectory.py) through the preferred
fit engine (harness/model/registry.py ``preferred("fit")``). Held fixed across
candidates: the marker set and occlusion mask, the folds, σ, the spline (degree 5, knots
every ``KNOT_FRAMES`` frames), the objective's weights and torque scale, the budget
(``MAX_ITER`` Levenberg–Marquardt iterations, relative cost decrease ``TOL``), no contact.

Criterion (declared before fitting): the predictive log-likelihood of the held-out
frames, ℓ_i = Σ_k log N(y_ik; p_k(q̂(t_i)), σ² I) over the markers seen at frame i,
where q̂ is the spline fitted on the other folds; L_c = Σ_i ℓ_i (every frame held out
exactly once). The candidate with the largest L_c is selected. Uncertainty: the paired
differences L_best − L_c with a standard error from blocks of ``BLOCK`` consecutive
frames, and the fraction of ``BOOTSTRAP`` block-bootstrap resamples of the frames that
select each candidate. Stability: across the F fold fits, the spread of what every
candidate shares, the base hinge's angle trajectory [rad] and RMS torque [N·m].

Absorption check, for each step c − 1 → c (c has one hinge more, at arc s_e): the
"static" model is c − 1 with a fixed kink at s_e whose angle is the time mean of c's
fitted extra coordinate (per fold, over its training frames). The gain of c splits into
a static part L_static − L_{c−1} (what a constant geometry correction explains) and a
dynamic part L_c − L_static (what only a moving coordinate explains). Verdict, with z a
part over its standard error: "dimension" when the dynamic part reaches ``Z_GAIN``;
else "absorbing" when the static part does (the extra coordinate stands in for a
geometry error, not a missing dimension: if c was selected, the choice falls back to
c − 1 with the error modelled); else "no gain".

Held-out whole trials (``compare_trials``; the choice): ``TRIALS`` trials of the truth's
movement, each with its own amplitudes (× (1 + a), a ~ N(0, ``TRIAL_AMPLITUDE_SD``²)),
phases (+ b, b ~ N(0, ``TRIAL_PHASE_SD``²) rad), noise and occlusions (``trials_data``);
each held out once, every candidate fitted to the other trials' mean markers and scored
on it with each marker's spread about the fit over the training trials
(``trial_loglik``). The largest total is selected and the choice starts from it; the
frames of one trial above are the second opinion (``selected``), and the absorption
check still applies to the step that reached the choice.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

import numpy as np
from numpy.typing import NDArray

from harness.core.errors import BadInput
from harness.core.spec import Body, FixtureSpec, Frame, Joint
from harness.core.tolerances import lookup
from harness.fit import trajectory as tf
from harness.fit import trajectory_uncertainty as tu
from harness.model import registry
from harness.model.prepared import PreparedModel

if TYPE_CHECKING:
    from harness.model.protocol import EngineAdapter

D_STAR = 2
TRUE_HINGES = (0.0, 0.5)          # m, arc positions of the truth's hinges
EXTRA_S = 0.7                     # m, the d* + 1 candidate's extra hinge
LENGTH = 0.9                      # m, arc length of the chain
MARKERS = (0.25, 0.45, 0.6, 0.8, 0.9)   # m, arc positions of the markers
DENSITY = 2.0                     # kg/m, uniform along the arc
AMPLITUDE = (0.6, 0.8)            # rad, the truth's motion q_j = A_j sin(2π f_j t + φ_j)
FREQUENCY = (0.7, 1.1)            # Hz
PHASE = (0.0, 0.7)                # rad
H = 0.02                          # s, frame interval
N = 101                           # frames (2 s)
SIGMA = 0.003                     # m, marker noise (isotropic, known)
OCCLUDED = 0.05                   # fraction of marker samples unseen (seeded mask)
KINK = 0.15                       # rad, the variant's bend of the distal link at EXTRA_S
FOLDS = 4
BLOCK = 10                        # frames per block of the standard errors and bootstrap
BOOTSTRAP = 2000
MAX_ITER = 30                     # Levenberg–Marquardt iterations per fit
IK_MAX_ITER = 20                  # Gauss–Newton iterations per frame of the IK start
TOL = 1e-9                        # relative cost decrease that stops a fit
KNOT_FRAMES = 2
TRIALS = 5                        # whole trials of the held-out-trial comparison
TRIAL_AMPLITUDE_SD = 0.02         # relative trial-to-trial spread of each amplitude
TRIAL_PHASE_SD = 0.02             # rad, trial-to-trial spread of each phase
W_EFFORT = 1e-3
W_SMOOTH = 1e-3
TORQUE_SCALE = 1.0                # N·m
# standard errors that make a gain significant (the absorption check's threshold)
Z_GAIN = lookup("dimension", "gain_z").atol

LABELS = tuple(f"m{k}" for k in range(len(MARKERS)))


@dataclass(frozen=True)
class Candidate:
    """A chain: hinge arc positions [m] (first 0) and fixed kinks ((s [m], angle [rad]),
    ...)."""
    name: str
    hinges: tuple
    kinks: tuple = ()

    @property
    def d(self) -> int:
        return len(self.hinges)


def _rot_y(a: float) -> NDArray[np.float64]:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def _walk(s0: float, s1: float, kinks) -> tuple:
    """(position (3,) m, bend angle [rad]) of arc point s1 in the frame at arc s0 (a
    straight chain points along −z; a kink at s0 < s_k < s1 bends what follows about y)."""
    p, a, s = np.zeros(3), 0.0, s0
    for sk, ak in sorted(kinks):
        if s0 < sk < s1:
            p = p + _rot_y(a) @ np.array([0.0, 0.0, -(sk - s)])
            a, s = a + ak, sk
    return p + _rot_y(a) @ np.array([0.0, 0.0, -(s1 - s)]), a


def spec(cand: Candidate) -> FixtureSpec:
    """FixtureSpec of a candidate: one body per hinge (``seg<j>``, from its hinge to the
    next or the chain's end), hinges about y, uniform linear density, thin-rod inertias
    about each segment's arc midpoint, one frame per marker."""
    ends = list(cand.hinges) + [LENGTH]
    bodies, joints, frames = [Body("base", 0.0)], [], []
    for j, (s0, s1) in enumerate(zip(ends[:-1], ends[1:])):
        m = DENSITY * (s1 - s0)
        com, _ = _walk(s0, 0.5 * (s0 + s1), cand.kinks)
        ixx = m * (s1 - s0) ** 2 / 12.0 + 1e-5
        inertia = (ixx, 0.0, 0.0, 0.0, ixx, 0.0, 0.0, 0.0, 2e-5)
        bodies.append(Body(f"seg{j}", m, tuple(float(x) for x in com), inertia))
        if j == 0:
            xyz, rpy = (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
        else:
            p, a = _walk(ends[j - 1], s0, cand.kinks)
            xyz, rpy = tuple(float(x) for x in p), (0.0, float(a), 0.0)
        joints.append(Joint(f"hinge{j}", "revolute", "base" if j == 0 else f"seg{j - 1}",
                            f"seg{j}", xyz, rpy, (0.0, 1.0, 0.0)))
    for k, s in enumerate(MARKERS):
        j = max(i for i, h in enumerate(cand.hinges) if h <= s + 1e-12)
        p, _ = _walk(cand.hinges[j], s, cand.kinks)
        frames.append(Frame(LABELS[k], f"seg{j}", tuple(float(x) for x in p)))
    return FixtureSpec(name=f"dimension_{cand.name}", bodies=tuple(bodies),
                       joints=tuple(joints), frames=tuple(frames),
                       description="planar serial chain of the dimension problem "
                                   "(harness/fit/dimension.py)").validate()


def adapter(cand: Candidate, engine: str | None = None) -> EngineAdapter:
    """An adapter of ``engine`` (default: registry.preferred("fit")) for the candidate."""
    engine = engine or registry.preferred("fit")
    sp = spec(cand)
    return registry.adapter_class(engine)(PreparedModel(sp, f"dimension:{cand.name}",
                                                        sp.digest()))


def candidates() -> list:
    """The compared candidates d* − 1, d*, d* + 1 (none models a kink)."""
    return [Candidate(f"d{D_STAR - 1}", TRUE_HINGES[:-1]),
            Candidate(f"d{D_STAR}", TRUE_HINGES),
            Candidate(f"d{D_STAR + 1}", TRUE_HINGES + (EXTRA_S,))]


def truth_candidate(kinked: bool) -> Candidate:
    return Candidate("truth", TRUE_HINGES, ((EXTRA_S, KINK),) if kinked else ())


def truth_motion(t: NDArray[np.float64]) -> NDArray[np.float64]:
    """q (len(t), d*) rad of the truth."""
    t = np.asarray(t, float)[:, None]
    return np.asarray(AMPLITUDE) * np.sin(2 * np.pi * np.asarray(FREQUENCY) * t
                                          + np.asarray(PHASE))


def data(seed: int, kinked: bool = False, engine: str | None = None) -> dict:
    """{"t" (N,) s, "q" (N, d*) rad, "clean" (N, K, 3) m, "y" (N, K, 3) m NaN where
    unseen, "seen" (N, K) bool}: the truth's marker positions (its adapter's frame poses),
    noise and occlusions drawn from ``seed``."""
    t = H * np.arange(N)
    q = truth_motion(t)
    ad = adapter(truth_candidate(kinked), engine)
    clean = np.stack([ad.frame_poses(qi, list(LABELS))[:, :3] for qi in q])
    rng = np.random.default_rng(seed)
    y = clean + SIGMA * rng.standard_normal(clean.shape)
    seen = rng.random(clean.shape[:2]) >= OCCLUDED
    y[~seen] = np.nan
    return {"t": t, "q": q, "clean": clean, "y": y, "seen": seen}


def fold_of(n: int = N, folds: int = FOLDS) -> NDArray[np.intp]:
    """(n,) int: frame i's fold (interleaved, i mod folds)."""
    return np.arange(n) % folds


def marker_loglik(ad: EngineAdapter, labels: Sequence[str], q: NDArray[np.float64],
                  y: NDArray[np.float64], sigma: float) -> tuple:
    """(ℓ (N, K) nats, p (N, K, 3) m): log N(y_ik; p_k(q_i), σ² I) of each seen marker
    (0 where unseen) and the predicted marker positions, for the frames q (N, nq) and
    markers y (N, K, 3) m (NaN where unseen) of the frames ``labels``."""
    p = np.stack([ad.frame_poses(qi, list(labels))[:, :3] for qi in q])
    seen = np.isfinite(y).all(axis=2)
    r2 = np.where(seen, np.sum((p - np.nan_to_num(y)) ** 2, axis=2), 0.0)
    const = 1.5 * np.log(2 * np.pi * sigma ** 2)
    return np.where(seen, -0.5 * r2 / sigma ** 2 - const, 0.0), p


def _loglik(ad, q, y) -> tuple:
    """(ℓ (N,) nats per frame over its seen markers, p (N, K, 3) m predicted)."""
    ll, p = marker_loglik(ad, LABELS, q, y, SIGMA)
    return ll.sum(axis=1), p


def ik_start(ad: EngineAdapter, y: NDArray[np.float64],
             max_iter: int = IK_MAX_ITER) -> NDArray[np.float64]:
    """Q (N, nq) rad: per-frame marker inverse kinematics, the fit's start. Gauss–Newton
    on Σ_k ‖p_k(q) − y_k‖² over the markers seen at each frame (the residual of
    harness/capture/ik.py, which the fit layer does not import), Jacobians from the
    adapter, a 1e-6 ridge; warm-started from the previous frame (from q = 0 at the first);
    a frame with no marker seen keeps the previous q."""
    q = np.zeros(ad.nq)
    Q = np.empty((y.shape[0], ad.nq))
    for i in range(y.shape[0]):
        seen = np.isfinite(y[i]).all(axis=1)
        if seen.any():
            fr = [LABELS[k] for k in np.flatnonzero(seen)]
            for _ in range(max_iter):
                r = (ad.frame_poses(q, fr)[:, :3] - y[i, seen]).ravel()
                J = ad.frame_jacobians(q, fr)[:, :3, :].reshape(-1, ad.nv)
                step = np.linalg.solve(J.T @ J + 1e-6 * np.eye(ad.nv), -(J.T @ r))
                q = q + step
                if np.abs(step).max() < 1e-10:
                    break
        Q[i] = q
    return Q


def fit_fold(cand: Candidate, y: NDArray[np.float64], train: NDArray[np.bool_],
             engine: str | None = None) -> dict:
    """Fit ``cand`` to the markers of the frames ``train`` (N,) bool (the others set
    unseen); {"q" (N, d) rad at every frame, "tau" (N, d) N·m, "iterations",
    "converged", "train_cost", "wall_s"}."""
    t0 = time.perf_counter()
    ad = adapter(cand, engine)
    yt = np.array(y, float)
    yt[~train] = np.nan
    q_start = ik_start(ad, yt)
    prob = tf.FitProblem(ad, LABELS, yt, H, SIGMA, np.full(ad.nv, TORQUE_SCALE),
                         w_effort=W_EFFORT, w_smooth=W_SMOOTH, knot_frames=KNOT_FRAMES,
                         samples_per_frame=1, control_degree=0)
    fr = tf.fit(prob, q_start, max_iter=MAX_ITER, tol=TOL)
    return {"q": fr.q, "tau": fr.tau, "iterations": fr.iterations, "problem": prob,
            "result": fr,
            "converged": bool(fr.converged), "train_cost": fr.components["total"],
            "wall_s": time.perf_counter() - t0, "adapter": ad}


def cross_validate(cand: Candidate, y: NDArray[np.float64], folds: int | None = None,
                   engine: str | None = None, kinks_per_fold: Sequence | None = None) -> dict:
    """Every fold held out once. ``kinks_per_fold``: per fold, extra fixed kinks added to
    the candidate (the static model of the absorption check). Returns {"ll" (N,) held-out
    ℓ_i [nats], "q" (F, N, d) rad, "tau" (F, N, d) N·m, "iterations" (F,), "converged",
    "wall_s"}."""
    folds = fold_of(y.shape[0]) if folds is None else folds
    F = int(folds.max()) + 1
    ll = np.zeros(y.shape[0])
    qs, taus, its, conv, wall = [], [], [], True, 0.0
    for f in range(F):
        c = cand if kinks_per_fold is None else Candidate(
            cand.name, cand.hinges, cand.kinks + tuple(kinks_per_fold[f]))
        r = fit_fold(c, y, folds != f, engine)
        held = folds == f
        ll[held] = _loglik(r["adapter"], r["q"][held], y[held])[0]
        qs.append(r["q"])
        taus.append(r["tau"])
        its.append(r["iterations"])
        conv &= r["converged"]
        wall += r["wall_s"]
    return {"ll": ll, "q": np.stack(qs), "tau": np.stack(taus), "iterations": its,
            "converged": conv, "wall_s": wall}


def _blocks(x: NDArray[np.float64], block: int = BLOCK) -> NDArray[np.float64]:
    """Sums of x over consecutive blocks of ``block`` frames (the last may be shorter)."""
    return np.add.reduceat(x, np.arange(0, x.size, block))


def paired(ll_a: NDArray[np.float64], ll_b: NDArray[np.float64]) -> dict:
    """{"diff": Σ(ℓ_a − ℓ_b) nats, "se": its standard error from the block sums
    (√n_blocks · their standard deviation), "z"}."""
    b = _blocks(ll_a - ll_b)
    se = float(np.sqrt(b.size) * b.std(ddof=1))
    d = float(b.sum())
    # equal scores give z = 0; a nonzero difference with no spread at all (not met on this
    # problem) is reported as ±1e300 to stay a JSON number
    z = d / se if se > 0 else (0.0 if d == 0 else float(np.copysign(1e300, d)))
    return {"diff": d, "se": se, "z": z}


def bootstrap_selection(lls: NDArray[np.float64], seed: int,
                        n: int = BOOTSTRAP) -> NDArray[np.float64]:
    """Fraction of block-bootstrap resamples (blocks of ``BLOCK`` frames drawn with
    replacement) in which each candidate has the largest held-out log-likelihood;
    lls (C, N)."""
    B = np.stack([_blocks(row) for row in lls])              # (C, n_blocks)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, B.shape[1], size=(n, B.shape[1]))
    tot = B[:, idx].sum(axis=2)                               # (C, n)
    win = np.argmax(tot, axis=0)
    return np.bincount(win, minlength=B.shape[0]) / n


def stability(cv: dict) -> dict:
    """Spread across the fold fits of what every candidate shares: the base hinge's angle
    trajectory (RMS over frames of its across-fold standard deviation [rad]) and its RMS
    torque [N·m] (mean and standard deviation across folds)."""
    q0 = cv["q"][:, :, 0]
    rms_tau = np.sqrt(np.mean(cv["tau"][:, :, 0] ** 2, axis=1))
    return {"base_angle_spread_rad": float(np.sqrt(np.mean(q0.std(axis=0, ddof=1) ** 2))),
            "base_rms_torque_Nm": {"mean": float(rms_tau.mean()),
                                   "sd": float(rms_tau.std(ddof=1)),
                                   "per_fold": rms_tau.tolist()}}


def absorption(lo: Candidate, hi: Candidate, cv_lo: dict, cv_hi: dict, y: NDArray[np.float64],
               folds: int | None, engine: str | None = None) -> dict:
    """The absorption check of the step lo → hi (hi has one more hinge): the static model
    (lo with a fixed kink at hi's extra hinge, angle = the time mean of hi's fitted extra
    coordinate over each fold's training frames) cross-validated on the same folds; the
    gain split into static and dynamic parts (``paired``) and the verdict."""
    extra = [s for s in hi.hinges if s not in lo.hinges]
    if len(extra) != 1:
        raise BadInput("dimension", f"{hi.name} must add exactly one hinge to {lo.name}")
    s_e = extra[0]
    je = list(hi.hinges).index(s_e)
    F = cv_hi["q"].shape[0]
    qe = cv_hi["q"][:, :, je]                                  # (F, N) rad
    phi = np.array([qe[f][folds != f].mean() for f in range(F)])
    motion = np.array([qe[f][folds != f].std() for f in range(F)])
    st = cross_validate(lo, y, folds, engine, [((s_e, float(p)),) for p in phi])
    total = paired(cv_hi["ll"], cv_lo["ll"])
    static = paired(st["ll"], cv_lo["ll"])
    dynamic = paired(cv_hi["ll"], st["ll"])
    if dynamic["z"] >= Z_GAIN:
        verdict = "dimension"          # only a moving coordinate explains the gain
    elif static["z"] >= Z_GAIN:
        verdict = "absorbing"          # a constant geometry correction explains it
    else:
        verdict = "no gain"
    return {"step": f"{lo.name} → {hi.name}", "extra_hinge_s_m": s_e,
            "extra_mean_angle_rad": float(phi.mean()),
            "extra_mean_angle_per_fold_rad": phi.tolist(),
            "extra_motion_rms_rad": float(np.sqrt(np.mean(motion ** 2))),
            "total_gain": total, "static_gain": static, "dynamic_gain": dynamic,
            "verdict": verdict, "static_ll": st["ll"], "static_converged": st["converged"],
            "static_wall_s": st["wall_s"]}


def compare(seed: int = 0, kinked: bool = False, engine: str | None = None,
            check_absorption: bool = True, trials: bool = True) -> dict:
    """The whole comparison on one seeded data set; a dict of plain values plus arrays
    (``ll`` (C, N) nats, ``q`` per candidate, ``data``). ``trials``: also the held-out
    whole trials (``compare_trials``, under ``trials``), whose selection then makes the
    choice; the interleaved frames of one trial (``selected``) are the second opinion."""
    engine = engine or registry.preferred("fit")
    d = data(seed, kinked, engine)
    y, folds = d["y"], fold_of()
    cands = candidates()
    cvs = [cross_validate(c, y, folds, engine) for c in cands]
    lls = np.stack([cv["ll"] for cv in cvs])
    tot = lls.sum(axis=1)
    best = int(np.argmax(tot))
    frac = bootstrap_selection(lls, seed)
    rows = []
    for i, (c, cv) in enumerate(zip(cands, cvs)):
        pr = paired(lls[best], cv["ll"]) if i != best else {"diff": 0.0, "se": 0.0,
                                                            "z": 0.0}
        rows.append({"name": c.name, "d": c.d, "hinges_m": list(c.hinges),
                     "heldout_loglik": float(tot[i]),
                     "heldout_loglik_per_frame": float(tot[i] / N),
                     "below_selected": pr, "bootstrap_fraction": float(frac[i]),
                     "iterations": cv["iterations"], "converged": cv["converged"],
                     "wall_s": cv["wall_s"], "stability": stability(cv)})
    steps = []
    if check_absorption:
        for i in range(1, len(cands)):
            steps.append(absorption(cands[i - 1], cands[i], cvs[i - 1], cvs[i], y, folds,
                                    engine))
    # the final choice: the largest held-out score, unless the step that reached it only
    # absorbs another error (then the candidate below, with that error modelled)
    tr = compare_trials(seed, kinked, engine) if trials else None
    top = best if tr is None else [c.name for c in cands].index(tr["selected"])
    final = top
    reason = ("largest held-out log-likelihood" + (" on held-out frames" if tr is None else
              " on held-out whole trials (held-out frames of one trial: "
              f"{cands[best].name}, the second opinion)"))
    if steps and top > 0 and steps[top - 1]["verdict"] == "absorbing":
        final = top - 1
        where = "" if tr is None else " on held-out whole trials"
        reason = (f"{cands[top].name} has the largest held-out log-likelihood{where}, but its "
                  f"gain over {cands[top - 1].name} is absorbed by a fixed geometry "
                  "correction (a static bend): not a missing coordinate")
    # the chosen chain's parameters (its joint angles' spline) fitted to every frame, with
    # their standard errors (harness/fit/trajectory_uncertainty.py)
    full = fit_fold(cands[final], y, np.ones(y.shape[0], bool), engine)
    unc = {"of": f"{cands[final].name} fitted to every frame of the trial",
           **tu.summary(full["problem"], full["result"],
                        [f"hinge{j}" for j in range(cands[final].d)])}
    return {"engine": engine, "seed": seed, "kinked": kinked, "candidates": rows,
            "uncertainty": unc,
            "selected": cands[best].name, "selected_d": cands[best].d,
            "choice": cands[final].name, "choice_d": cands[final].d,
            "choice_reason": reason, "absorption": steps, "ll": lls,
            **({} if tr is None else {"trials": {k: v for k, v in tr.items() if k != "ll"},
                                      "trials_ll": tr["ll"]}),
            "q": [cv["q"] for cv in cvs], "data": d, "folds": folds}


def trials_data(seed: int, kinked: bool = False, engine: str | None = None,
                n_trials: int = TRIALS) -> dict:
    """{"t" (N,) s, "q" (T, N, d*) rad, "y" (T, N, K, 3) m NaN where unseen}: T whole
    trials of the same movement, each with its own amplitudes A_j (1 + a), a ~ N(0,
    ``TRIAL_AMPLITUDE_SD``²), and phases φ_j + b, b ~ N(0, ``TRIAL_PHASE_SD``²), its own
    marker noise σ and occlusion mask, all drawn from ``seed`` (a stream apart from
    ``data``'s)."""
    t = H * np.arange(N)
    ad = adapter(truth_candidate(kinked), engine)
    rng = np.random.default_rng([seed, 1])
    qs, ys = [], []
    for _ in range(n_trials):
        amp = np.asarray(AMPLITUDE) * (1 + TRIAL_AMPLITUDE_SD * rng.standard_normal(D_STAR))
        ph = np.asarray(PHASE) + TRIAL_PHASE_SD * rng.standard_normal(D_STAR)
        q = amp * np.sin(2 * np.pi * np.asarray(FREQUENCY) * t[:, None] + ph)
        clean = np.stack([ad.frame_poses(qi, list(LABELS))[:, :3] for qi in q])
        y = clean + SIGMA * rng.standard_normal(clean.shape)
        y[rng.random(clean.shape[:2]) < OCCLUDED] = np.nan
        qs.append(q)
        ys.append(y)
    return {"t": t, "q": np.stack(qs), "y": np.stack(ys)}


def trial_loglik(ad: EngineAdapter, q: NDArray[np.float64], train: NDArray[np.float64],
                 test: NDArray[np.float64]) -> NDArray[np.float64]:
    """(N,) nats: the held-out trial ``test`` (N, K, 3) m scored frame by frame under the
    movement q (N, nq) rad fitted to the training trials ``train`` (T − 1, N, K, 3):
    ℓ_i = Σ_k log N(y_ik; p_k(q(t_i)), s_k² I) over the seen markers, s_k² [m²] marker
    k's spread about the fit over the training trials (per coordinate; at least σ²), so
    that the trial-to-trial variation is part of the prediction."""
    p = np.stack([ad.frame_poses(qi, list(LABELS))[:, :3] for qi in q])       # (N, K, 3)
    d2 = np.nansum((train - p[None]) ** 2, axis=3)                           # (T-1, N, K)
    seen = np.isfinite(train).all(axis=3)
    s2 = np.maximum(np.sum(np.where(seen, d2, 0.0), axis=(0, 1))
                    / (3 * np.maximum(seen.sum(axis=(0, 1)), 1)), SIGMA ** 2)  # (K,)
    seen_t = np.isfinite(test).all(axis=2)
    r2 = np.where(seen_t, np.sum((p - np.nan_to_num(test)) ** 2, axis=2), 0.0)
    ll = -0.5 * r2 / s2 - 1.5 * np.log(2 * np.pi * s2)
    return np.where(seen_t, ll, 0.0).sum(axis=1)


def compare_trials(seed: int = 0, kinked: bool = False, engine: str | None = None,
                   n_trials: int = TRIALS) -> dict:
    """Held-out whole trials: each of T trials held out once; every candidate fitted
    (``fit_fold``, every frame) to the training trials' mean markers (the movement they
    share) and scored on the held-out trial (``trial_loglik``). Per candidate the total
    held-out log-likelihood [nats] and per trial; the paired difference to the selected
    one with its standard error over trials (√T · their standard deviation); the
    selection (largest total). Plain values plus ``ll`` (C, T) nats."""
    engine = engine or registry.preferred("fit")
    d = trials_data(seed, kinked, engine, n_trials)
    cands = candidates()
    ll = np.zeros((len(cands), n_trials))
    conv, wall = True, 0.0
    for j in range(n_trials):
        train = np.delete(d["y"], j, axis=0)
        with np.errstate(invalid="ignore"):      # a sample unseen in every training trial
            mean = np.nanmean(train, axis=0)
        for c, cand in enumerate(cands):
            r = fit_fold(cand, mean, np.ones(N, bool), engine)
            ll[c, j] = trial_loglik(r["adapter"], r["q"], train, d["y"][j]).sum()
            conv &= r["converged"]
            wall += r["wall_s"]
    tot = ll.sum(axis=1)
    best = int(np.argmax(tot))
    rows = []
    for c, cand in enumerate(cands):
        diff = ll[best] - ll[c]
        se = float(np.sqrt(n_trials) * diff.std(ddof=1))
        z = float(diff.sum() / se) if se > 0 else 0.0
        rows.append({"name": cand.name, "d": cand.d, "heldout_loglik": float(tot[c]),
                     "per_trial": ll[c].tolist(),
                     "below_selected": {"diff": float(diff.sum()), "se": se, "z": z}})
    return {"trials": n_trials, "candidates": rows, "selected": cands[best].name,
            "selected_d": cands[best].d, "converged": bool(conv), "wall_s": wall,
            "rule": "each trial held out once; every candidate fitted to the other trials' "
                    "mean markers and scored on the held-out trial with each marker's "
                    "spread about the fit over the training trials; the largest total "
                    "held-out log-likelihood is selected",
            "ll": ll}


def _plain(r: dict) -> dict:
    """A comparison without its arrays (what fit.json holds)."""
    out = {k: v for k, v in r.items() if k not in ("ll", "q", "data", "folds", "trials_ll")}
    out["absorption"] = [{k: v for k, v in s.items() if k != "static_ll"}
                         for s in r["absorption"]]
    return out


def settings() -> dict:
    """What every candidate shares (the comparison's fixed settings), for fit.json."""
    return {"h_s": H, "N": N, "duration_s": (N - 1) * H, "sigma_m": SIGMA,
            "occluded_fraction": OCCLUDED, "markers_arc_m": list(MARKERS),
            "chain_length_m": LENGTH, "density_kg_per_m": DENSITY,
            "folds": FOLDS, "fold_rule": "interleaved: frame i is held out in fold i mod "
                                          f"{FOLDS}",
            "criterion": "predictive log-likelihood of the held-out frames (isotropic "
                         "Gaussian markers of the known σ, plug-in at the fitted spline), "
                         "summed over every frame; declared before fitting",
            "uncertainty": f"paired differences with standard errors from blocks of {BLOCK} "
                           f"frames; fraction of {BOOTSTRAP} block-bootstrap resamples "
                           "selecting each candidate",
            "held_fixed": ["marker set and occlusion mask", "folds", "σ", "spline degree 5, "
                           f"knots every {KNOT_FRAMES} frames",
                           f"weights w_effort {W_EFFORT:g}, w_smooth {W_SMOOTH:g}, torque "
                           f"scale {TORQUE_SCALE:g} N·m", "no contact or event law",
                           f"budget: at most {MAX_ITER} Levenberg–Marquardt iterations, "
                           f"stop at relative cost decrease {TOL:g}",
                           "start: IK over the training frames from q = 0"],
            "budget": {"max_iter": MAX_ITER, "tol": TOL, "ik_max_iter": IK_MAX_ITER},
            "z_gain": Z_GAIN, "block_frames": BLOCK, "bootstrap": BOOTSTRAP,
            "trials": {"count": TRIALS, "amplitude_sd_relative": TRIAL_AMPLITUDE_SD,
                       "phase_sd_rad": TRIAL_PHASE_SD,
                       "rule": "each whole trial held out once (the choice); the "
                               "interleaved frames of one trial are the second opinion"}}


def run_bundle(seed: int = 0, engine: str | None = None) -> dict:
    """``harness fit --problem dimension``: the comparison on the d* chain and on the
    variant with the bent distal link (same seed); {"json": dict, "arrays": dict}.
    fit.json's ``dimension`` holds the candidates (held-out log-likelihoods, their
    differences to the selected one with standard errors, bootstrap fractions, stability),
    the selection, the absorption check and the final choice, and ``variant`` the same for
    the data with the model error."""
    if seed < 0:
        raise BadInput("--seed", f"must be >= 0, got {seed}")
    t0 = time.perf_counter()
    clean = compare(seed, False, engine)
    variant = compare(seed, True, clean["engine"])
    wall = time.perf_counter() - t0
    conv = all(c["converged"] for r in (clean, variant) for c in r["candidates"]) \
        and all(s["static_converged"] for r in (clean, variant) for s in r["absorption"]) \
        and clean["trials"]["converged"] and variant["trials"]["converged"]
    je = list(candidates()[-1].hinges).index(EXTRA_S)
    arrays = {"t": clean["data"]["t"], "y": clean["data"]["y"],
              "y_variant": variant["data"]["y"], "q_true": clean["data"]["q"],
              "folds": clean["folds"], "ll": clean["ll"], "ll_variant": variant["ll"],
              "static_ll": np.stack([s["static_ll"] for s in clean["absorption"]]),
              "static_ll_variant": np.stack([s["static_ll"] for s in variant["absorption"]]),
              "trials_ll": clean["trials_ll"], "trials_ll_variant": variant["trials_ll"],
              "extra_q": clean["q"][-1][:, :, je],
              "extra_q_variant": variant["q"][-1][:, :, je]}
    doc = {"schema": "harness-fit", "schema_version": 1, "problem": "dimension",
           "N": N, "seed": seed, "settings": settings(),
           "truth": {"d": D_STAR, "hinges_m": list(TRUE_HINGES),
                     "amplitude_rad": list(AMPLITUDE), "frequency_hz": list(FREQUENCY),
                     "phase_rad": list(PHASE), "variant_kink_rad": KINK,
                     "variant_kink_at_m": EXTRA_S},
           "dimension": _plain(clean), "variant": _plain(variant), "converged": conv,
           "engine": clean["engine"], "wall_s": wall, "command_line": sys.argv[1:],
           "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    return {"json": doc, "arrays": arrays}
