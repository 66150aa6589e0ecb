"""A finished swing fit exported for OpenSim, in OpenSim's own conventions: golfer.osim
(the fitted golfer, y up, its pelvis on one six-coordinate CustomJoint ``ground_pelvis``,
the grip loop as a PointConstraint, a MarkerSet), swing.mot (the fitted coordinates),
markers.trc (the measured markers), grf.mot + external_loads.xml (the fitted foot contact
forces as ExternalForces in ground), id_harness.sto (the harness's own inverse dynamics),
ik_setup.xml and id_setup.xml (OpenSim's tools, run from the folder as it is) and
notes.txt (what was changed or left out, and why).

Units: the model SI (m, kg, kg·m², rad); swing.mot time [s], rotations in degrees
(``inDegrees=yes``, as OpenSim expects), translations in m; markers.trc in mm; grf.mot
forces N, points m; id_harness.sto N and N·m. Times are the capture's (every fitted
frame). Axes: OpenSim's ground, x forward, y up, z to the golfer's right: a vector v of
the harness's world (z up, y left) is ``Y_UP @ v``. Engine-blind: the files are written by
the adapter whose class provides ``write_osim_swing`` (OpenSim builds and prints the
model), reached through the registry; here the swing folder is read and checked, and the
model, the motion, the loads and the harness's inverse dynamics are put in OpenSim's axes
and coordinates.

Read from a ``harness swing … --out D`` folder: D/fit/fit.json (capture rate, tracked
markers), D/fit/candidate.json (its model, D/fit/golfer.urdf: the named frames come back
from their massless links), D/fit/trajectory.npz (t (N,), q (N, nq) at the fitted
frames, the fitted B-spline(s) of q, labels (K,), y (N, K, 3) m the measured markers, NaN
where a marker is missing; with ground contact the contact frames (nc,) and forces
(N, nc, 3) N in world axes).
"""
from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fixtures.golfers import GRIP_HAND_TURN, GRIP_LOOP
from harness.core.conventions import Layout, matrix_to_rpy, rpy_to_matrix
from harness.core.errors import BadInput
from harness.core.io import OutputKind, claims_output, swap_in, temp_folder
from harness.core.spec import Body, Constraint, FixtureSpec, Frame
from harness.core.strict import read_json
from harness.model import candidate, registry
from harness.model.osim_swing import RootCoordinate, SwingExport
from harness.model.prepared import PreparedModel

FILES = ("golfer.osim", "swing.mot", "markers.trc", "grf.mot", "external_loads.xml",
         "ik_setup.xml", "id_setup.xml", "id_harness.sto", "notes.txt")
# the frame links of an exported URDF (fixtures/export.py FRAME_JOINT_SUFFIX)
_FRAME_SUFFIX = "__frame"
# the harness's world (x forward, y left, z up) → OpenSim's ground (x forward, y up, z right)
Y_UP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
# the golfer's pelvis chain from ``world_mount`` (fixtures/golfers.py): translations along
# world x, y, z, then rotations about the body's z, x, y; in y-up ground exactly
# Trans(tx, tz, −ty) · R(y, rz) · R(x, rx) · R(z, −ry): OpenSim's CustomJoint form (three
# body-fixed rotations, then translations along ground's axes). (name, harness coordinate,
# sign, kind, axis in ground), in the CustomJoint's order.
PELVIS = (("pelvis_rotation", "pelvis_rz", 1.0, "rotation", (0.0, 1.0, 0.0)),
          ("pelvis_list", "pelvis_rx", 1.0, "rotation", (1.0, 0.0, 0.0)),
          ("pelvis_tilt", "pelvis_ry", -1.0, "rotation", (0.0, 0.0, 1.0)),
          ("pelvis_tx", "pelvis_tx", 1.0, "translation", (1.0, 0.0, 0.0)),
          ("pelvis_ty", "pelvis_tz", 1.0, "translation", (0.0, 1.0, 0.0)),
          ("pelvis_tz", "pelvis_ty", -1.0, "translation", (0.0, 0.0, 1.0)))
# swing.mot's samples per fitted frame interval (notes in ``_notes``)
MOTION_OVERSAMPLE = 32
# swing.mot's samples before the first fitted frame and after the last (the spline's end
# polynomials continued): OpenSim's own splines of the file then end outside the window
MOTION_PAD = 8
# ik_setup.xml's pull of GRIP_HAND_TURN towards the fitted values [rad⁻²] (markers weigh
# 1 m⁻²): 0.01 of a 0.1 rad departure weighs as a 1 mm marker error; the marker RMSE of
# OpenSim's IK moves by < 0.1 mm between 0.01 and 0.001 on the bundled capture's fit
IK_HOLD_WEIGHT = 0.01
# ik_setup.xml's accuracy: with clamped coordinates OpenSim's IK solves each frame by its
# interior-point optimizer, which on this model with the grip constraint stops at its
# iteration limit at OpenSim's default 1e-5 (frame 67 of the bundled capture's quick fit)
# and converges loosely at 1e-4 (marker RMSE 13.2 mm); at 3e-5 every frame converges
# (12.0 mm, the fit's 12.5 mm)
IK_ACCURACY = 3e-5
_CHAIN = (("pelvis_tx", (1, 0, 0)), ("pelvis_ty", (0, 1, 0)), ("pelvis_tz", (0, 0, 1)),
          ("pelvis_rz", (0, 0, 1)), ("pelvis_rx", (1, 0, 0)), ("pelvis_ry", (0, 1, 0)))


def _recognise(path: Path) -> None:
    head = path.read_bytes()[:4096]
    if b"<OpenSimDocument" not in head:
        raise BadInput(str(path), "not an OpenSim model written by osim-export")


OUTPUT = OutputKind("an OpenSim export", "golfer.osim", _recognise, frozenset(FILES))


def frames_from_links(spec: FixtureSpec) -> FixtureSpec:
    """``spec`` with every massless leaf body held by a fixed joint ``<name>__frame`` (a
    named frame written as a URDF link) turned back into the named frame ``<name>``."""
    kids = {j.parent for j in spec.joints}
    links = {j.child: j for j in spec.joints
             if j.type == "fixed" and j.name == j.child + _FRAME_SUFFIX
             and j.child not in kids and spec.body(j.child).mass == 0}
    if not links:
        return spec
    frames = tuple(spec.frames) + tuple(Frame(b, j.parent, j.xyz, j.rpy)
                                        for b, j in links.items())
    return replace(spec, bodies=tuple(b for b in spec.bodies if b.name not in links),
                   joints=tuple(j for j in spec.joints if j.child not in links),
                   frames=frames)


_SPLINE_KEYS = ("spline_degree", "spline_knots", "spline_coefficients", "spline_knots_post",
                "spline_coefficients_post", "impact_time_s")


def spline_motion(spline: dict[str, Any], t: NDArray[np.float64]
                  ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """(q, q̇, q̈) each (len(t), nq) [rad, m and per s, per s²] at times t [s] from the
    fit's B-spline(s) of q (trajectory.npz's ``spline_*`` arrays): with a ball impact the
    pre-impact spline up to its time and the post-impact one after it."""
    from scipy.interpolate import BSpline  # on use: ~200 ms on every command's start

    t = np.asarray(t, float)
    p = int(spline["spline_degree"])
    pre = BSpline(spline["spline_knots"], spline["spline_coefficients"], p)
    post = (BSpline(spline["spline_knots_post"], spline["spline_coefficients_post"], p)
            if "spline_knots_post" in spline else None)
    after = (t > float(spline["impact_time_s"])) if post is not None else np.zeros(len(t), bool)
    out: list[NDArray[np.float64]] = []
    for d in (0, 1, 2):
        f = pre if d == 0 else pre.derivative(d)
        x = np.asarray(f(t))
        if post is not None:
            g = post if d == 0 else post.derivative(d)
            x = np.where(after[:, None], g(t), x)
        out.append(x)
    return out[0], out[1], out[2]


def read_swing(swing_dir: str | os.PathLike[str],
               doc: dict[str, Any] | None = None) -> dict[str, Any]:
    """{"spec", "t" (N,) s, "q" (N, nq), "v" (N, nv), "a" (N, nv) the fitted q̈, "spline"
    (the fitted B-spline arrays, ``spline_motion``),
    "labels" [K], "y" (N, K, 3) m, "rate_hz", "contact_frames" [nc], "contact_forces"
    (N, nc, 3) N (world axes; none without ground contact)} of a finished swing output
    folder (``doc``: its fit.json document when it is not yet written, as for the studies
    of a run in progress); BadInput naming the file and the problem."""
    d = Path(swing_dir)
    fit = d / "fit"
    fj = fit / "fit.json"
    if not d.is_dir():
        raise BadInput(str(d), "not a folder (name a `harness swing --out` folder)")
    if doc is None:
        if not fj.is_file():
            raise BadInput(str(d), "no fit/fit.json: not a finished swing output folder")
        doc = read_json(fj)
    try:
        rate = float(doc["capture"]["rate_hz"])
        tracked = list(doc["model"]["tracked_markers"])
    except (KeyError, TypeError, ValueError):
        raise BadInput(str(fj), "not a swing summary (no capture rate or tracked "
                                "markers)") from None
    tp = fit / "trajectory.npz"
    if not tp.is_file():
        raise BadInput(str(d), "no fit/trajectory.npz: not a finished swing output folder")
    try:
        with np.load(tp, allow_pickle=False) as z:
            t, q = np.asarray(z["t"], float), np.asarray(z["q"], float)
            v = np.asarray(z["v"], float)
            spline = {k: np.asarray(z[k]) for k in _SPLINE_KEYS if k in z.files}
            a = spline_motion(spline, t)[2]
            labels = [str(x) for x in z["labels"]]
            y = np.asarray(z["y"], float)
            cf = [str(x) for x in z["contact_frames"]] if "contact_frames" in z.files else []
            F = np.asarray(z["contact_forces"], float) if cf else np.zeros((len(t), 0, 3))
    except (KeyError, ValueError, OSError) as e:
        raise BadInput(str(tp), f"unreadable trajectory ({e})") from None
    cand = candidate.load(fit / "candidate.json")
    spec = frames_from_links(cand.model.spec)

    n, nq = len(t), Layout.from_spec(spec).nq
    if q.shape != (n, nq) or y.shape != (n, len(labels), 3) or labels != tracked \
            or v.shape != (n, nq) or a.shape != (n, nq) or F.shape != (n, len(cf), 3) \
            or not all(np.all(np.isfinite(x)) for x in (t, q, v, a, F)):
        raise BadInput(str(tp), "t, q, labels and y do not match each other or fit.json")
    return {"spec": spec, "t": t, "q": q, "v": v, "a": a, "spline": spline,
            "labels": labels, "y": y,
            "rate_hz": rate, "contact_frames": cf, "contact_forces": F}


def _pelvis_chain(spec: FixtureSpec) -> list[str]:
    """The bodies of the golfer's pelvis chain from its fixed root to ``pelvis`` (the six
    joints of ``_CHAIN`` at one point, unturned); BadInput when the model has another."""
    chain, body = [spec.root], spec.root
    for name, axis in _CHAIN:
        kids = spec.children(body)
        if len(kids) != 1 or kids[0].name != name or tuple(kids[0].axis) != axis \
                or any(kids[0].xyz) or any(kids[0].rpy):
            raise BadInput(spec.source or spec.name, "the OpenSim export needs the golfer's "
                           f"six-coordinate pelvis chain ({name} not found as such)")
        body = kids[0].child
        chain.append(body)
    if body != "pelvis" or spec.body(spec.root).mass != 0:
        raise BadInput(spec.source or spec.name, "the pelvis chain does not end on pelvis")
    return chain


def _folded_pelvis(spec: FixtureSpec, chain: list[str]) -> Body:
    """The pelvis with the links of its chain that sit on its origin (after the three
    translations: their joints only turn them about it) folded in, exactly: mass [kg],
    centre of mass [m] and inertia about it [kg·m²] of the rigid union (their small
    inertias are isotropic, so their turning does not matter)."""
    parts = [spec.body(b) for b in chain[3:]]       # links 2..4 and the pelvis
    m = sum(b.mass for b in parts)
    c = np.sum([b.mass * np.asarray(b.com, float) for b in parts], axis=0) / m
    iso = all(np.allclose(b.inertia_matrix, b.inertia_matrix[0, 0] * np.eye(3))
              for b in parts[:-1])
    if not iso or any(np.any(np.asarray(b.com)) for b in parts[:-1]):
        raise BadInput(spec.source or spec.name, "the pelvis links are not point-like")
    inertia = np.zeros((3, 3))
    for b in parts:
        d = np.asarray(b.com) - c
        inertia += b.inertia_matrix + b.mass * (d @ d * np.eye(3) - np.outer(d, d))
    return Body("pelvis", float(m), tuple(float(x) for x in c),
                tuple(float(x) for x in inertia.ravel()))


def _turned(R: NDArray[np.float64], rpy: Any) -> tuple[float, float, float]:
    """rpy [rad] of R · rpy_to_matrix(rpy) · Rᵀ (a frame's orientation in turned axes)."""
    a, b, c = (float(x) for x in matrix_to_rpy(R @ rpy_to_matrix(rpy) @ R.T))
    return a, b, c


def _vec(R: NDArray[np.float64], x: Any) -> tuple[float, float, float]:
    """R · x (a vector in turned axes)."""
    a, b, c = (float(v) for v in R @ np.asarray(x, float))
    return a, b, c


def export_spec(spec: FixtureSpec) -> FixtureSpec:
    """The golfer [m, kg, kg·m², rad] as the OpenSim export holds it: the pelvis chain
    (``_pelvis_chain``) replaced by a floating pelvis (the first two links, which move
    with pelvis_tx and pelvis_ty only, dropped: 2 g; the other three folded in), every
    body, joint and frame turned into y-up axes by ``Y_UP`` (each body frame turned with
    it, so every coordinate keeps its value and sign), and the grip loop ``GRIP_LOOP`` a
    point constraint ``grip``."""
    R = Y_UP
    chain = _pelvis_chain(spec)
    gone = set(chain[:-1])
    bodies = [_folded_pelvis(spec, chain)] + [b for b in spec.bodies
                                              if b.name not in gone and b.name != "pelvis"]
    bodies = [replace(b, com=_vec(R, b.com),
                      inertia=tuple(float(x) for x in (R @ b.inertia_matrix @ R.T).ravel()))
              for b in bodies]
    joints = tuple(replace(j, xyz=_vec(R, j.xyz), rpy=_turned(R, j.rpy),
                           axis=_vec(R, j.axis)) for j in spec.joints if j.parent not in gone)
    frames = tuple(replace(f, xyz=_vec(R, f.xyz), rpy=_turned(R, f.rpy))
                   for f in spec.frames)
    names = {f.name for f in frames}
    grip = (Constraint("grip", "point", *GRIP_LOOP),) if set(GRIP_LOOP) <= names else ()
    return replace(spec, bodies=tuple(bodies), joints=joints, frames=frames,
                   gravity=_vec(R, spec.gravity), floating=True, q_init=(),
                   constraints=tuple(spec.constraints) + grip)


def root_coordinates(spec: FixtureSpec) -> tuple[RootCoordinate, ...]:
    """The pelvis CustomJoint's coordinates (``PELVIS``) with the ranges of the harness
    coordinates they carry (a sign flip swaps and negates the bounds)."""
    out = []
    for name, src, sign, kind, axis in PELVIS:
        j = next(j for j in spec.joints if j.name == src)
        if j.lower is None or j.upper is None:
            raise BadInput(spec.source or spec.name, f"{src}: the pelvis coordinate has no "
                           "range")
        lo, hi = sorted((sign * j.lower, sign * j.upper))
        out.append(RootCoordinate(name, kind, axis, lo, hi))
    return tuple(out)


def coordinate_map(spec: FixtureSpec) -> tuple[tuple[str, ...], NDArray[np.intp],
                                                NDArray[np.float64]]:
    """(names (n,), index (n,), sign (n,)): the export's coordinate k is sign[k] ·
    q[index[k]] of the harness's q (and its generalized force likewise: the map is a
    signed permutation); the pelvis's six first, then the other moving joints in order."""
    order = [j.name for j in spec.moving_joints()]
    names = [p[0] for p in PELVIS] + [n for n in order if n not in {p[1] for p in PELVIS}]
    src = {p[0]: (p[1], p[2]) for p in PELVIS}
    index = np.array([order.index(src.get(n, (n, 1.0))[0]) for n in names], dtype=np.intp)
    sign = np.array([src.get(n, (n, 1.0))[1] for n in names])
    return tuple(names), index, sign


def harness_inverse_dynamics(data: dict[str, Any]) -> tuple[NDArray[np.float64],
                                                              NDArray[np.float64]]:
    """(τ (N, nv) [N, N·m], P (N, nc, 3) m): the harness's generalized forces of the fitted
    motion with the fitted contact forces applied, τ = ID(q, q̇, q̈) − Σ_c J_c(q)ᵀ f_c
    (the pelvis's six its residual), and the contact points in world axes, by the
    registry's fit engine on the fitted model."""
    spec = data["spec"]
    ad = registry.adapter_class(registry.preferred("fit"))(PreparedModel(spec, "fit"))
    cf, F = data["contact_frames"], data["contact_forces"]
    n = len(data["t"])
    tau = np.empty((n, data["v"].shape[1]))
    P = np.zeros((n, len(cf), 3))
    for i in range(n):
        q = data["q"][i]
        tau[i] = ad.inverse_dynamics(q, data["v"][i], data["a"][i])
        if cf:
            J = ad.frame_jacobians(q, cf)[:, :3]                   # (nc, 3, nv)
            tau[i] -= np.einsum("cki,ck->i", J, F[i])
            P[i] = ad.frame_poses(q, cf)[:, :3]
    return tau, P


def motion_times(t: NDArray[np.float64], k: int = MOTION_OVERSAMPLE,
                 pad: int = MOTION_PAD) -> NDArray[np.float64]:
    """(k (N − 1) + 1 + 2 pad,) s: the fitted frames t (N,) s, k − 1 evenly spaced times
    between each two, and ``pad`` more at that spacing before the first and after the
    last (row pad + k·i is frame i)."""
    t = np.asarray(t, float)
    frac = np.arange(k) / k
    inner = np.r_[(t[:-1, None] + frac[None, :] * np.diff(t)[:, None]).ravel(), t[-1:]]
    step = np.arange(1, pad + 1) * (t[1] - t[0]) / k
    out: NDArray[np.float64] = np.r_[t[0] - step[::-1], inner, t[-1] + step]
    return out


def _notes(spec: FixtureSpec, names: tuple[str, ...], index: NDArray[np.intp],
           sign: NDArray[np.float64], unseen: list[str], hold: tuple[str, ...]) -> list[str]:
    """notes.txt's lines: what the export changed from the harness's golfer, and why."""
    moving = spec.moving_joints()
    out = ["axes: OpenSim's ground, x forward, y up, z to the golfer's right (the "
           "harness's world turned: x, z, -y); every body frame turned with it, so every "
           "coordinate other than the pelvis's keeps its name, value and sign",
           "pelvis: one CustomJoint ground_pelvis; its three rotations (body-fixed) then "
           "translations (ground axes) reproduce the harness's chain exactly; the chain's "
           "two links that move with pelvis_tx and pelvis_ty only (1 g each) are left out, "
           "its other three (on the pelvis origin) folded into the pelvis"]
    out += [f"coordinate {n} = {'-' if s < 0 else ''}{moving[i].name} of the harness's "
            "golfer" for n, i, s in zip(names[:6], index[:6], sign[:6])]
    out += [f"grip: PointConstraint 'grip' between {GRIP_LOOP[0]} (right hand) and "
            f"{GRIP_LOOP[1]} (club), the point pair the fit holds the right hand on the "
            "club by; the fit holds it kinematically (a residual, no constraint force), so "
            "its inverse dynamics and OpenSim's (which ignores constraints) agree"]
    out += [f"marker {lab}: tracked by the fit but never seen in the capture's fitted "
            "frames; left out of markers.trc and of ik_setup.xml's tasks (kept in the "
            "model's MarkerSet where the fit's model carries it: with no sample to calibrate "
            "it on, its first guess)" for lab in unseen]
    if hold:
        out.append("ik_setup.xml: " + ", ".join(hold) + " (the right hand's turn about "
                   "its grip point, which no marker sees) pulled towards swing.mot with "
                   f"weight {IK_HOLD_WEIGHT:g}; without it OpenSim's IK drifts along that "
                   "direction (out of range when unclamped, its optimizer stalls when "
                   f"clamped); its accuracy {IK_ACCURACY:g} (OpenSim's default 1e-5 stalls "
                   "its optimizer on this model)")
    out += [f"swing.mot: every fitted frame and {MOTION_OVERSAMPLE - 1} evenly spaced "
            "samples of the fitted spline between each two, and "
            f"{MOTION_PAD} samples beyond each end (the spline's end polynomials "
            "continued; the setups' time ranges are the fitted window): OpenSim's inverse "
            "dynamics differentiates the file by its own splines, so the denser the "
            "samples the closer its q̈ to the fit's, and the ball impact's velocity jump "
            "is smoothed over a few samples only",
            "grf.mot, id_harness.sto: at the fitted frames (the contact forces are the "
            "fit's per frame); forces of points in flight are zero",
            "set aside: muscles, wrap objects, contact geometry (the feet's forces come "
            "as ExternalLoads), the club-ball impulse (the fitted motion carries its "
            "velocity jump)"]
    return out


def build_export(data: dict[str, Any]) -> SwingExport:
    """The fitted swing ``data`` (``read_swing``) in OpenSim's axes and coordinates."""
    spec = data["spec"]
    xs = export_spec(spec)
    names, index, sign = coordinate_map(spec)
    tau, P = harness_inverse_dynamics(data)
    y = data["y"]
    seen = np.isfinite(y).all(axis=2).any(axis=0)
    labels = tuple(lab for lab, s in zip(data["labels"], seen) if s)
    unseen = [lab for lab, s in zip(data["labels"], seen) if not s]
    hold = tuple(n for n in GRIP_HAND_TURN if n in names)
    body = {f.name: f.body for f in xs.frames}
    contacts = tuple((c, body[c], data["contact_forces"][:, k] @ Y_UP.T, P[:, k] @ Y_UP.T)
                     for k, c in enumerate(data["contact_frames"]))
    tm = motion_times(data["t"])
    Qm = spline_motion(data["spline"], tm)[0] if data["spline"] else data["q"]
    return SwingExport(spec=xs, root=root_coordinates(spec), t=data["t"], names=names,
                       t_motion=tm if data["spline"] else data["t"], Q=Qm[:, index] * sign,
                       markers=tuple(data["labels"]), labels=labels,
                       Y=y[:, seen] @ Y_UP.T, rate_hz=data["rate_hz"], contacts=contacts,
                       tau=tau[:, index] * sign, ik_hold=hold, ik_hold_weight=IK_HOLD_WEIGHT,
                       ik_accuracy=IK_ACCURACY,
                       notes=tuple(_notes(spec, names, index, sign, unseen, hold)))


@claims_output(OUTPUT)  # the --out rule checked and the folder locked first
def export_swing(swing_dir: str | os.PathLike[str], *, out: Path) -> dict[str, Any]:
    """Write the OpenSim export (``FILES``, module docstring) of the swing in
    ``swing_dir`` to ``out`` (replaced whole, atomically); returns {"model", "motion",
    "markers", "loads", "inverse_dynamics": path, "coordinates": [names], "frames": N,
    "markers_count": K, "notes": [lines]}."""
    ex = build_export(read_swing(swing_dir))
    writer = registry.adapter_class(registry.providing("write_osim_swing")[0])
    tmp = temp_folder(out)
    try:
        res: dict[str, Any] = writer.write_osim_swing(ex, str(tmp))
        swap_in(tmp, out, OUTPUT)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    keys = ("model", "motion", "markers", "loads", "inverse_dynamics")
    paths = {k: str(Path(out) / Path(res[k]).name) for k in keys}
    return paths | {"coordinates": list(ex.names), "frames": len(ex.t),
                    "markers_count": len(ex.labels), "notes": list(ex.notes)}
