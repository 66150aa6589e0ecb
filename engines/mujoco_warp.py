"""MuJoCo Warp adapter (mujoco-warp 4.0.0 on warp-lang 1.19.0): float32, batched over
worlds, on a CPU or CUDA device.

Dimension legend: N states (worlds of one batch); nq, nv canonical; k frames. MuJoCo
Warp holds MuJoCo's own coordinates (qpos: free joint [p, quat w x y z], 1-number hinge
for a continuous joint; qvel: free joint [v_W (world), ω_B (body)]), so the canonical ↔
engine maps and the free-root conversion are MuJoCo's (engines/mujoco.py module
docstring): M = Tᵀ M_o T, h = Tᵀ h_o + M c, v̇ = Tᵀ v̇_o − c, τ_o = T τ, J = J_o T,
c = [ω_B × v_B, 0], here applied to N states at once.

The model: the harness's full-precision MJCF compiled by MuJoCo (constraints disabled,
as the MuJoCo adapter does), then ``mujoco_warp.put_model``, which copies every number
into float32 device arrays. Every quantity below is computed by MuJoCo Warp's kernels
on those arrays (inputs rounded to float32, outputs widened to float64); nothing is
taken from MuJoCo's CPU functions. Its rows are scored in the float32 tolerance class
(``…/float32`` in harness/core/tolerances.py), against the double-precision engines.

Batches: every quantity has a ``batch_…`` method taking N states in one call (one set
of kernel launches over N worlds); the single-state methods are that call with N = 1.

Device and kernel cache: the device is ``HARNESS_DEVICE`` (``cpu`` or ``cuda``; unset:
cuda when warp finds one, else cpu). Warp compiles its kernels on first use and caches
them (``WARP_CACHE_PATH``, default ~/.cache/warp/<version>); the seconds the first
launch of each kernel path took (compile or cache load) are kept apart from run time in
``compile_seconds`` and reported with the device and the cache folder by ``runtime()``.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from engines.mujoco import MujocoAdapter, _native_contact_mjcf
from harness.core.conventions import (
    quat_wxyz_to_xyzw,
    quat_xyzw_to_matrix,
)
from harness.core.errors import EngineUnavailable, NotProvided
from harness.core.spec import ContactScene, Coupling
from harness.model.binding import Binding
from harness.model.prepared import PreparedModel

BINDING = Binding("mujoco_warp")
with BINDING:
    import mujoco
    import mujoco_warp as mjw
    import warp as wp

    # warp prints its device table and every module load otherwise (to stdout)
    wp.config.quiet = True
    wp.config.log_level = max(wp.config.log_level, wp.LOG_WARNING)

_F = NDArray[np.float64]
PRECISION = "float32"
_NOT_DERIV = ("MuJoCo Warp 4.0.0 has no dynamics derivatives with respect to q, v and "
              "τ (deriv_smooth_vel gives only ∂(smooth forces)/∂v for its implicit "
              "integrator)")


# what warp's native library printed while it initialised (e.g. that no CUDA driver is
# installed), kept for the manifest instead of reaching the terminal as a bare line
INIT_MESSAGES: list[str] = []
_INITIALISED: list[bool] = []   # [True] once init_warp has run in this process


def init_warp() -> None:
    """``wp.init()`` once, with the process's stderr (file descriptor 2, which warp's C++
    writes to directly) captured into INIT_MESSAGES."""
    if _INITIALISED:
        return
    _INITIALISED.append(True)
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            wp.init()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        text = tmp.read().decode(errors="replace")
    INIT_MESSAGES.extend(line.strip() for line in text.splitlines() if line.strip())


def device_name() -> str:
    """The warp device of this process: ``HARNESS_DEVICE`` (cpu, cuda, cuda:0, …), else
    cuda when warp finds a CUDA device, else cpu."""
    want = os.environ.get("HARNESS_DEVICE", "").strip()
    if want:
        return want
    init_warp()
    return "cuda" if wp.is_cuda_available() else "cpu"


def _cross(a: _F, b: _F) -> _F:
    """(N, 3) row-wise a × b."""
    return np.cross(a, b)


class MujocoWarpAdapter(MujocoAdapter):
    """The coordinate maps of the MuJoCo adapter (the same compiled MjModel); every
    quantity from MuJoCo Warp's kernels in float32 (module docstring)."""

    name = "mujoco_warp"
    precision = PRECISION
    NATIVE_CONTACT_VARIANTS = (("defaults", {}),)

    def __init__(self, model: PreparedModel) -> None:
        BINDING.require()
        if os.environ.get("MUJOCO_GL") is None:
            os.environ["MUJOCO_GL"] = "disable"
        super().__init__(model)
        if self._as_is is not None:
            raise NotProvided(self.name, "as-is model", "MuJoCo Warp reads the harness's "
                              "own MJCF only (its as-is file would be MuJoCo's)")
        self.version = mjw.__version__ if hasattr(mjw, "__version__") else "4.0.0"
        self.device = device_name()
        try:
            init_warp()
            self._dev = wp.get_device(self.device)
        except Exception as e:  # an unknown or absent device: the engine is unavailable
            raise EngineUnavailable(self.name, f"warp device {self.device!r}: {e}") from None
        self.kernel_cache = str(wp.config.kernel_cache_dir)
        self.compile_seconds: dict[str, float] = {}
        self.run_seconds: dict[str, float] = {}
        with wp.ScopedDevice(self._dev):
            self._mw = mjw.put_model(self._m)
        self._data: dict[int, Any] = {}  # nworld -> mjw Data
        self.derivatives_method = "none"
        self.provides = self._warp_provides()

    # ----- what this engine computes ----------------------------------------------------
    def _warp_provides(self) -> dict[str, str]:
        """{quantity: the MuJoCo Warp function that computes it}."""
        return {
            "group_inertias": "Model.body_mass/body_inertia (float32) with xipos/ximat of "
                              "mujoco_warp.kinematics at neutral",
            "frame_pose": "mujoco_warp.kinematics → xpos/xmat, site_xpos/site_xmat",
            "frame_jacobian": "mujoco_warp.jac at the frame's origin (after kinematics, "
                              "com_pos)",
            "mass_matrix": "mujoco_warp kinematics, com_pos, crb → Data.M (CSR, "
                           "armature included)",
            "bias_forces": "mujoco_warp com_vel, passive, rne → qfrc_bias (− qfrc_spring)",
            "forward_dynamics": "mujoco_warp smooth dynamics (kinematics … rne, "
                                "fwd_acceleration → qacc_smooth; mujoco_warp.forward for a "
                                "model with tendons, actuators, flexes or equalities), "
                                "qfrc_applied = τ (passive damping by MuJoCo Warp)",
            "inverse_dynamics": "mujoco_warp.inverse → qfrc_inverse",
            "native_rollout": "mujoco_warp.step (Euler or RK4), constraints disabled",
            "frame_jacobian_drift": "mujoco_warp.rne_postconstraint at qacc = 0 (cacc, cvel "
                                    "moved to the frame's origin, gravity removed)",
            "native_constrained": "mujoco_warp.forward with the equality constraints "
                                  "enabled (soft: MuJoCo's law in float32)",
            "native_contact": "mujoco_warp.step on MuJoCo's native-contact MJCF (soft "
                              "contact in float32)",
        }

    def runtime(self) -> dict[str, Any]:
        """{device, kernel_cache, compile_s {path: s}, run_s {path: s}, precision,
        init_messages}: where and how this adapter ran, compile (first launch) apart from
        run time [s], and what warp said when it initialised."""
        return {"device": str(self._dev), "kernel_cache": self.kernel_cache,
                "precision": PRECISION, "init_messages": list(INIT_MESSAGES),
                "compile_s": {k: round(v, 3) for k, v in self.compile_seconds.items()},
                "run_s": {k: round(v, 3) for k, v in self.run_seconds.items()}}

    # ----- batches of worlds --------------------------------------------------------------
    def _world(self, n: int) -> Any:
        """The mjw Data of n worlds on the device (allocated once per n)."""
        if n not in self._data:
            with wp.ScopedDevice(self._dev):
                self._data[n] = mjw.make_data(self._m, nworld=n)
        return self._data[n]

    def _launch(self, path: str, fn: Callable[[], None]) -> None:
        """Run ``fn`` (kernel launches) and synchronise; the first run of each path is
        counted as compile time (warp compiles or loads the kernels then), later runs as
        run time [s]."""
        t = time.perf_counter()
        with wp.ScopedDevice(self._dev):
            fn()
            wp.synchronize_device(self._dev)
        dt = time.perf_counter() - t
        if path not in self.compile_seconds:
            self.compile_seconds[path] = dt
        else:
            self.run_seconds[path] = self.run_seconds.get(path, 0.0) + dt

    def _qpos_batch(self, Q: _F) -> _F:
        """(N, nq_mj) MuJoCo qpos of N canonical q (N, nq)."""
        out = np.zeros((Q.shape[0], self._m.nq))
        if self._cp_can.size:
            out[:, self._cp_mj] = Q[:, self._cp_can]
        if self._cq_can.size:
            out[:, self._cq_mj] = np.arctan2(Q[:, self._cq_sin], Q[:, self._cq_can])
        return out

    def _R(self, Q: _F) -> _F | None:
        """(N, 3, 3) R_WB of the free root at N states (None for a fixed base)."""
        if self._free is None:
            return None
        x, y, z, w = (Q[:, 3 + i] for i in range(4))
        s = 2.0 / (x * x + y * y + z * z + w * w)
        return np.stack([
            np.stack([1 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w)], -1),
            np.stack([s * (x * y + z * w), 1 - s * (x * x + z * z), s * (y * z - x * w)], -1),
            np.stack([s * (x * z - y * w), s * (y * z + x * w), 1 - s * (x * x + y * y)], -1),
        ], 1)

    def _to_mj(self, X: _F, R: _F | None) -> _F:
        """(N, nv) canonical vectors → MuJoCo dof order, T applied."""
        out = np.empty_like(X)
        out[:, self._vmap] = X
        if R is not None:
            a = self._free_da
            out[:, a:a + 3] = np.einsum("nij,nj->ni", R, X[:, 0:3])
        return out

    def _from_mj(self, X: _F, R: _F | None) -> _F:
        """(N, nv) MuJoCo dof vectors → canonical, Tᵀ applied."""
        out = X[:, self._vmap]
        if R is not None:
            out[:, 0:3] = np.einsum("nji,nj->ni", R, out[:, 0:3])
        return out

    def _c(self, V: _F) -> _F:
        """(N, 6) c = [ω_B × v_B, 0] of the free root."""
        return np.concatenate([_cross(V[:, 3:6], V[:, 0:3]), np.zeros((V.shape[0], 3))], 1)

    def _set(self, d: Any, Q: _F, V: _F | None = None, applied: _F | None = None,
             qacc: _F | None = None) -> None:
        """Write N states (MuJoCo coordinates) into the worlds of ``d`` as float32."""
        f32 = np.float32
        d.qpos.assign(self._qpos_batch(Q).astype(f32))
        n, nv = Q.shape[0], self._m.nv
        d.qvel.assign((np.zeros((n, nv)) if V is None else V).astype(f32))
        d.qfrc_applied.assign((np.zeros((n, nv)) if applied is None else applied).astype(f32))
        if qacc is not None:
            d.qacc.assign(qacc.astype(f32))

    def _full_M(self, d: Any) -> _F:
        """(N, nv, nv) MuJoCo's M of every world from the CSR lower triangle Data.M."""
        m = self._m
        vals = d.M.numpy().astype(float)
        rows = np.repeat(np.arange(m.nv), m.M_rownnz)
        cols = np.asarray(m.M_colind)
        M = np.zeros((vals.shape[0], m.nv, m.nv))
        M[:, rows, cols] = vals[:, :rows.size]
        M[:, cols, rows] = vals[:, :rows.size]
        return M

    def _M_canonical(self, Mo: _F, R: _F | None) -> _F:
        """(N, nv, nv) canonical M = Tᵀ M_o T."""
        M = Mo[:, self._vmap][:, :, self._vmap]
        if R is not None:
            M[:, :, 0:3] = np.einsum("nij,njk->nik", M[:, :, 0:3], R)
            M[:, 0:3, :] = np.einsum("nji,njk->nik", R, M[:, 0:3, :])
        return M

    def _forward_batch(self, Q: _F, V: _F, TAU: _F | None, acc: bool = True
                       ) -> tuple[Any, _F | None]:
        """MuJoCo Warp's smooth dynamics on N states; (Data, R (N, 3, 3) or None).

        The parity model has no tendons, actuators or flexes and its constraints are
        disabled, so mujoco_warp.forward reduces to its smooth part, called here directly
        (the constraint solver and sensors launch nothing of use, and cost half the time
        of a call): kinematics, com_pos, crb (M, armature included), com_vel, passive
        (springs, damping), rne (qfrc_bias) and, with ``acc``, fwd_acceleration
        (factorize M, qacc_smooth = M⁻¹ (τ + passive − bias)). A model with any of those
        runs mujoco_warp.forward whole."""
        Q, V = np.atleast_2d(Q).astype(float), np.atleast_2d(V).astype(float)
        R = self._R(Q)
        d = self._world(Q.shape[0])
        self._set(d, Q, self._to_mj(V, R),
                  None if TAU is None else self._to_mj(np.atleast_2d(TAU).astype(float), R))
        m, mw = self._m, self._mw
        if m.ntendon or m.nu or m.nflex or m.neq:
            self._launch("forward", lambda: mjw.forward(mw, d))
            return d, R

        def smooth() -> None:
            mjw.kinematics(mw, d)
            mjw.com_pos(mw, d)
            mjw.crb(mw, d)
            mjw.com_vel(mw, d)
            mjw.passive(mw, d)
            mjw.rne(mw, d)
            if acc:
                mjw.fwd_acceleration(mw, d, factorize=True)
        self._launch("smooth dynamics" if acc else "smooth terms", smooth)
        return d, R

    def batch_mass_matrix(self, Q: _F) -> _F:
        """M (N, nv, nv) [kg, kg·m, kg·m²] of N states q (N, nq), armature included."""
        Q = np.atleast_2d(Q).astype(float)
        d, R = self._forward_batch(Q, np.zeros((Q.shape[0], self.nv)), None, acc=False)
        return self._M_canonical(self._full_M(d), R)

    def batch_bias_forces(self, Q: _F, V: _F) -> _F:
        """h (N, nv) [N, N·m] of N states (no damping; joint springs included)."""
        d, R = self._forward_batch(Q, V, None, acc=False)
        hb = d.qfrc_bias.numpy().astype(float)
        if self._sprung:
            hb = hb - d.qfrc_spring.numpy().astype(float)
        h = self._from_mj(hb, R)
        if R is not None:
            M = self._M_canonical(self._full_M(d), R)
            h += np.einsum("nij,nj->ni", M[:, :, 0:6], self._c(np.atleast_2d(V)))
        return h

    def batch_forward_dynamics(self, Q: _F, V: _F, TAU: _F) -> _F:
        """v̇ (N, nv) [m/s², rad/s²] solving M v̇ + h = τ − D v at N states."""
        d, R = self._forward_batch(Q, V, TAU)
        acc = d.qacc if self._m.ntendon or self._m.nu or self._m.nflex or self._m.neq \
            else d.qacc_smooth
        a = self._from_mj(acc.numpy().astype(float), R)
        if R is not None:
            a[:, 0:6] -= self._c(np.atleast_2d(V))
        return a

    def batch_inverse_dynamics(self, Q: _F, V: _F, VDOT: _F) -> _F:
        """τ (N, nv) [N, N·m] = M v̇ + h + D v at N states (mujoco_warp.inverse)."""
        Q, V = np.atleast_2d(Q).astype(float), np.atleast_2d(V).astype(float)
        VD = np.atleast_2d(VDOT).astype(float).copy()
        R = self._R(Q)
        if R is not None:
            VD[:, 0:6] += self._c(V)
        d = self._world(Q.shape[0])
        self._set(d, Q, self._to_mj(V, R), None, self._to_mj(VD, R))
        self._launch("inverse", lambda: mjw.inverse(self._mw, d))
        return self._from_mj(d.qfrc_inverse.numpy().astype(float), R)

    # ----- kinematics ---------------------------------------------------------------------
    def _kinematics(self, Q: _F, com: bool = False) -> Any:
        """mujoco_warp.kinematics (and com_pos) on N states; the Data."""
        d = self._world(Q.shape[0])
        self._set(d, Q)

        def run() -> None:
            mjw.kinematics(self._mw, d)
            if com:
                mjw.com_pos(self._mw, d)
        self._launch("kinematics+com" if com else "kinematics", run)
        return d

    def _pose_arrays(self, d: Any, kind: str, i: int) -> tuple[_F, _F]:
        """(p (N, 3), R (N, 9)) of body or site ``i`` in every world."""
        if kind == "body":
            return d.xpos.numpy()[:, i].astype(float), d.xmat.numpy()[:, i].reshape(-1, 9)
        return (d.site_xpos.numpy()[:, i].astype(float),
                d.site_xmat.numpy()[:, i].reshape(-1, 9))

    def _folded_poses(self, Q: _F, frame: str) -> tuple[_F, Any, int, _F]:
        """(poses (N, 12), Data, body T, Q with the folded joints at neutral) of a frame on
        a massless body folded into the body T below it (engines/mujoco.py
        ``_folded_frame``)."""
        T, X_TF, qi, qv, _ = self._folded[frame]
        Qf = np.array(Q, dtype=float)
        Qf[:, qi] = qv
        b = mujoco.mj_name2id(self._m, mujoco.mjtObj.mjOBJ_BODY, T)
        d = self._kinematics(Qf, com=True)
        p, Rw = self._pose_arrays(d, "body", b)
        Rw = Rw.astype(float).reshape(-1, 3, 3)
        pf = p + Rw @ X_TF[:3, 3]
        Rf = Rw @ X_TF[:3, :3]
        return np.concatenate([pf, Rf.reshape(-1, 9)], 1), d, b, Qf

    def batch_frame_poses(self, Q: _F, frames: Sequence[str]) -> _F:
        """(N, k, 12) [p_WF m, R_WF row-major] of k frames at N states."""
        Q = np.atleast_2d(Q).astype(float)
        out = np.empty((Q.shape[0], len(frames), 12))
        d = None
        for n, f in enumerate(frames):
            if f in self._folded:
                out[:, n] = self._folded_poses(Q, f)[0]
                d = None
                continue
            if d is None:
                d = self._kinematics(Q)
            p, R = self._pose_arrays(d, *self._frame(f))
            out[:, n, :3], out[:, n, 3:] = p, R
        return out

    def _jac(self, d: Any, point: _F, body: int) -> _F:
        """(N, 6, nv) [jacp; jacr] in MuJoCo dof order at ``point`` (N, 3) on ``body``."""
        n, nv = point.shape[0], self._m.nv
        with wp.ScopedDevice(self._dev):
            jp = wp.zeros((n, 3, nv), dtype=float)
            jr = wp.zeros((n, 3, nv), dtype=float)
            pt = wp.array(point.astype(np.float32), dtype=wp.vec3)
            bd = wp.array(np.full(n, body, dtype=np.int32), dtype=int)
        self._launch("jac", lambda: mjw.jac(self._mw, d, jp, jr, pt, bd))
        return np.concatenate([jp.numpy(), jr.numpy()], 1).astype(float)

    def _jac_canonical(self, J: _F, R: _F | None) -> _F:
        """(N, 6, nv) J_can = J_o T."""
        out = J[:, :, self._vmap]
        if R is not None:
            out[:, :, 0:3] = np.einsum("nij,njk->nik", out[:, :, 0:3], R)
        return out

    def batch_frame_jacobians(self, Q: _F, frames: Sequence[str]) -> _F:
        """(N, k, 6, nv) J_WF [linear of F's origin; ω] of k frames at N states."""
        Q = np.atleast_2d(Q).astype(float)
        R = self._R(Q)
        out = np.empty((Q.shape[0], len(frames), 6, self.nv))
        d = None
        for n, f in enumerate(frames):
            if f in self._folded:
                pose, df, b, _ = self._folded_poses(Q, f)
                J = self._jac_canonical(self._jac(df, pose[:, :3], b), R)
                J[:, :, self._folded[f][4]] = 0.0  # the folded joints do not move it
                out[:, n] = J
                d = None
                continue
            if d is None:
                d = self._kinematics(Q, com=True)
            kind, i = self._frame(f)
            p, _ = self._pose_arrays(d, kind, i)
            body = i if kind == "body" else int(self._m.site_bodyid[i])
            out[:, n] = self._jac_canonical(self._jac(d, p, body), R)
        return out

    # ----- the single-state protocol: batches of one --------------------------------------
    def frame_pose(self, q: _F, frame: str) -> _F:
        """(12,) pose of ``frame`` at q (nq,): a batch of one."""
        return self.batch_frame_poses(q[None], [frame])[0, 0]

    def frame_poses(self, q: _F, frames: Sequence[str]) -> _F:
        """(k, 12) poses of k frames at q (nq,): a batch of one."""
        return self.batch_frame_poses(q[None], frames)[0]

    def frame_jacobian(self, q: _F, frame: str) -> _F:
        """J_WF (6, nv) at q (nq,): a batch of one."""
        return self.batch_frame_jacobians(q[None], [frame])[0, 0]

    def frame_jacobians(self, q: _F, frames: Sequence[str]) -> _F:
        """(k, 6, nv) Jacobians at q (nq,): a batch of one."""
        return self.batch_frame_jacobians(q[None], frames)[0]

    def mass_matrix(self, q: _F) -> _F:
        """M (nv, nv) [kg, kg·m, kg·m²] at q (nq,): a batch of one."""
        return self.batch_mass_matrix(q[None])[0]

    def bias_forces(self, q: _F, v: _F) -> _F:
        """h (nv,) [N, N·m] at q (nq,), v (nv,): a batch of one."""
        return self.batch_bias_forces(q[None], v[None])[0]

    def forward_dynamics(self, q: _F, v: _F, tau: _F) -> _F:
        """v̇ (nv,) [m/s², rad/s²]: a batch of one."""
        return self.batch_forward_dynamics(q[None], v[None], tau[None])[0]

    def inverse_dynamics(self, q: _F, v: _F, vdot: _F) -> _F:
        """τ (nv,) [N, N·m]: a batch of one."""
        return self.batch_inverse_dynamics(q[None], v[None], vdot[None])[0]

    def neutral(self) -> _F:
        """q (nq,) at rest from the warp model's qpos0 (float32, widened)."""
        return self._get_q(self._mw.qpos0.numpy()[0].astype(float))

    def integrate(self, q: _F, v: _F, dt: float) -> _F:
        """NotProvided: MuJoCo Warp exposes no position integration of its own apart
        from a whole time step."""
        raise NotProvided(self.name, "integrate", "MuJoCo Warp 4.0.0 has no public "
                          "q ⊕ v·dt (its position update runs only inside step)")

    # ----- model identity -----------------------------------------------------------------
    def _wm(self, field: str) -> _F:
        """A field of the warp Model (world 0 of its batched arrays), widened to float64."""
        return np.asarray(getattr(self._mw, field).numpy()[0], dtype=float)

    def _body_inertial(self, b: int) -> tuple[float, _F, _F]:
        """(mass kg, com (3,) m, inertia about the com (3×3) kg·m², world axes) of body
        ``b`` from the warp model (float32) at the neutral kinematics (``_neutral_d``); a
        body the harness's MJCF lent point masses to reads as the spec declares it, at the
        pose MuJoCo Warp computes (as engines/mujoco.py does)."""
        d = self._neutral_d
        name = mujoco.mj_id2name(self._m, mujoco.mjtObj.mjOBJ_BODY, b)
        if name in self._lent:
            body = self.model.spec.body(name)
            R = d["xmat"][b].reshape(3, 3)
            return (body.mass, d["xpos"][b] + R @ np.asarray(body.com, dtype=float),
                    R @ body.inertia_matrix @ R.T)
        Ri = d["ximat"][b].reshape(3, 3)
        I = self._wm("body_inertia")[b]
        return float(self._wm("body_mass")[b]), d["xipos"][b].copy(), Ri @ np.diag(I) @ Ri.T

    def _neutral_kinematics(self) -> dict[str, _F]:
        """{xpos, xmat, xipos, ximat (nbody, …), xanchor, xaxis (njnt, 3)} of
        mujoco_warp.kinematics at the canonical neutral q, widened to float64."""
        d = self._kinematics(self.layout.neutral()[None])
        self._neutral_d = {k: getattr(d, k).numpy()[0].astype(float).reshape(
            getattr(d, k).shape[1], -1) for k in ("xpos", "xmat", "xipos", "ximat",
                                                  "xanchor", "xaxis")}
        return self._neutral_d

    def group_inertias(self) -> dict[str, _F]:
        """{joint: (10,) [kg, m, kg·m²]} at neutral, from the warp model and kinematics."""
        self._neutral_kinematics()
        return self._grouped_inertias()

    def readback(self) -> dict[str, Any]:
        """The model as MuJoCo Warp holds it (float32 Model arrays), at the canonical
        neutral q (mujoco_warp.kinematics), world axes; format of
        harness/stages/diagnosis/__init__.py. Joint equalities are none: the parity model
        has its constraints disabled."""
        m, obj = self._m, mujoco.mjtObj
        d = self._neutral_kinematics()
        name = lambda kind, i: mujoco.mj_id2name(m, kind, i) or f"#{i}"  # noqa: E731

        def pose(b: int) -> _F:
            X = np.eye(4)
            X[:3, :3], X[:3, 3] = d["xmat"][b].reshape(3, 3), d["xpos"][b]
            return X

        bodies: dict[str, Any] = {}
        for b in range(1, m.nbody):
            mass, com_W, I_W = self._body_inertial(b)
            bodies[name(obj.mjOBJ_BODY, b)] = {
                "mass": mass, "com_W": com_W, "I_W": I_W, "X_WB": pose(b),
                "parent": name(obj.mjOBJ_BODY, m.body_parentid[b]) if m.body_parentid[b]
                else ""}
        spec = self.model.spec
        for c in (b.name for b in spec.bodies if b.name in self._folded):
            F = self.frame_pose(self.layout.neutral(), c)
            X = np.eye(4)
            X[:3, :3], X[:3, 3] = F[3:].reshape(3, 3), F[:3]
            bodies[c] = {"mass": 0.0, "com_W": F[:3], "I_W": np.zeros((3, 3)), "X_WB": X,
                         "parent": spec.parent_joint(c).parent}
        child = {j.name: j.child for j in spec.joints}
        joints = {s.name: self._joint_readback(s, qa, da, d, pose, bodies, child)
                  for s, qa, da in self._slots}
        return {"engine": self.name, "api": "mujoco_warp Model (float32): body_mass, "
                "body_inertia, jnt_range, dof_damping, dof_frictionloss, dof_armature, "
                "jnt_stiffness, qpos_spring; mujoco_warp.kinematics: xpos/xmat/xipos/"
                "ximat, xaxis/xanchor", "bodies": bodies, "joints": joints,
                "couplings": {}, "nq_native": int(m.nq), "nv_native": int(m.nv),
                "notes": ["float32 model arrays, widened to float64"]}

    def _joint_readback(self, s: Any, qa: int, da: int, d: dict[str, _F],
                        pose: Callable[[int], _F], bodies: dict[str, Any],
                        child: dict[str, str]) -> dict[str, Any]:
        """One canonical joint's read-back entry (``readback``) from the warp model."""
        m = self._m
        jid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, s.name)
        b, jt = int(m.jnt_bodyid[jid]), int(m.jnt_type[jid])
        X = pose(b)
        if child.get(s.name) in self._folded:
            X[:3, :3] = bodies[child[s.name]]["X_WB"][:3, :3]
        if jt == mujoco.mjtJoint.mjJNT_FREE:
            kind, axis = "free", np.zeros(3)
            native = ("p_WB, quat w x y z", "v_WB (world axes), ω_B (body axes)")
        elif jt == mujoco.mjtJoint.mjJNT_BALL:
            kind, axis, X[:3, 3] = "ball", np.zeros(3), d["xanchor"][jid]
            native = ("quat w x y z", "ω (child body axes)")
        else:
            kind = "revolute" if jt == mujoco.mjtJoint.mjJNT_HINGE else "prismatic"
            axis, X[:3, 3] = d["xaxis"][jid].copy(), d["xanchor"][jid]
            native = ("θ", "θ̇") if kind == "revolute" else ("x", "ẋ")
        limited = bool(m.jnt_limited[jid]) and kind != "free"
        rng = self._wm("jnt_range")[jid]
        lo, hi = (float(rng[0]), float(rng[1])) if limited else (None, None)
        dof = lambda f: float(self._wm(f)[da]) if kind != "free" else 0.0  # noqa: E731
        k = float(self._wm("jnt_stiffness")[jid]) if kind in ("revolute", "prismatic") \
            else 0.0
        return {"type": kind, "body": mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b),
                "axis_W": axis, "X_WJ": X, "lower": lo, "upper": hi,
                "limit_enforced": False, "damping": dof("dof_damping"),
                "damping_applied": dof("dof_damping"), "friction": dof("dof_frictionloss"),
                "friction_applied": 0.0, "armature": dof("dof_armature"),
                "stiffness_applied": k,
                "spring_ref": float(self._wm("qpos_spring")[qa]) if k else 0.0,
                "native_q": native[0], "native_v": native[1], "native_index": qa}

    # ----- native stepping (replay) -------------------------------------------------------
    _WARP_INTEGRATORS = {"Euler": "EULER", "RK4": "RK4"}

    def native_describe(self, settings: dict[str, Any] | None = None
                        ) -> tuple[dict[str, Any], str]:
        """(settings, one-line statement) of ``native_rollout``: ``integrator`` (Euler or
        RK4) and ``dt`` [s], the largest step."""
        s: dict[str, Any] = {"integrator": "RK4", "dt": 1e-3}
        s.update(settings or {})
        if s["integrator"] not in self._WARP_INTEGRATORS or set(s) != {"integrator", "dt"}:
            raise ValueError(f"mujoco_warp native settings: integrator one of "
                             f"{sorted(self._WARP_INTEGRATORS)} and dt, got {s}")
        return s, (f"mujoco_warp.step in float32 with opt.integrator={s['integrator']}, "
                   f"opt.timestep = each grid interval / ceil(interval / {s['dt']:g} s), "
                   f"constraints disabled; τ enters as qfrc_applied = T(q) τ, held over "
                   f"each step; joint damping by MuJoCo Warp")

    def native_rollout(self, q0: _F, v0: _F, t: _F, controls: Callable[[int, float], _F],
                       settings: dict[str, Any] | None = None) -> tuple[_F, _F]:
        """(Q (N, nq), V (N, nv)) on the knots t (N,) [s] stepped by mujoco_warp.step in
        one world; controls(k, t) → τ (nv,) canonical, read at each step's start."""
        s, _ = self.native_describe(settings)
        mjm = mujoco.MjModel.from_xml_string(self.model.mjcf)
        mjm.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
        mjm.opt.integrator = int(getattr(mujoco.mjtIntegrator,
                                         "mjINT_" + self._WARP_INTEGRATORS[s["integrator"]]))
        t = np.asarray(t, dtype=float)
        Q, V = np.empty((t.size, self.nq)), np.empty((t.size, self.nv))
        Q[0], V[0] = q0, v0
        mws: dict[float, Any] = {}  # timestep -> warp Model
        with wp.ScopedDevice(self._dev):
            d = mjw.make_data(mjm, nworld=1)
        q, v = np.asarray(q0, dtype=float)[None], np.asarray(v0, dtype=float)[None]
        self._set(d, q, self._to_mj(v, self._R(q)))
        for k in range(t.size - 1):
            n = max(1, int(np.ceil((t[k + 1] - t[k]) / s["dt"] - 1e-9)))
            h = (t[k + 1] - t[k]) / n
            if h not in mws:
                mjm.opt.timestep = h
                with wp.ScopedDevice(self._dev):
                    mws[h] = mjw.put_model(mjm)
            for i in range(n):
                qn = self._get_q(d.qpos.numpy()[0].astype(float))[None]
                tau = np.asarray(controls(k, t[k] + i * h), dtype=float)[None]
                d.qfrc_applied.assign(self._to_mj(tau, self._R(qn)).astype(np.float32))
                self._launch("step", lambda: mjw.step(mws[h], d))
            qn = self._get_q(d.qpos.numpy()[0].astype(float))
            Q[k + 1] = qn
            V[k + 1] = self._from_mj(d.qvel.numpy().astype(float), self._R(qn[None]))[0]
        return Q, V

    # ----- what MuJoCo Warp does not have -------------------------------------------------
    def forward_dynamics_derivatives(self, q: _F, v: _F, tau: _F) -> tuple[_F, _F, _F]:
        """(nv, nv) ×3: NotProvided (module constant _NOT_DERIV says why)."""
        raise NotProvided(self.name, "forward dynamics derivatives", _NOT_DERIV)

    def inverse_dynamics_derivatives(self, q: _F, v: _F, vdot: _F) -> tuple[_F, _F, _F]:
        """(nv, nv) ×3: NotProvided (module constant _NOT_DERIV says why)."""
        raise NotProvided(self.name, "inverse dynamics derivatives", _NOT_DERIV)

    def ablated(self, changes: dict[str, Any]) -> MujocoAdapter:
        """ValueError: no ablations of the warp model (the diagnosis reads MuJoCo's)."""
        raise ValueError("mujoco_warp: no ablations (the diagnosis reads MuJoCo's)")

    def naive_dynamics(self, q: _F, v: _F, tau: _F) -> tuple[_F, _F] | None:
        """None: the diagnosis's unconverted hand-over is MuJoCo's (as-is files only)."""
        return None

    def frame_jacobian_drift(self, q: _F, v: _F, frames: Sequence[str]) -> tuple[_F, _F]:
        """(J (k, 6, nv), a (k, 6)) of k frames at (q, v): J_WF [linear of F's origin; ω]
        world axes (``batch_frame_jacobians``) and the drift J̇_WF v [m/s², rad/s²], the
        frame's classical acceleration at v̇ = 0 without gravity. MuJoCo Warp exports no
        J̇; its RNE pass after the constraint solver (mujoco_warp.rne_postconstraint)
        gives every body's com-based spatial acceleration cacc = [α; a] from qacc = 0,
        which the kernel seeds with −g at the world body. At the origin p of the frame
        (on a body of root subtree com c, velocity cvel = [ω; u]):
        J̇v = [a + α × (p − c) + ω × (u + ω × (p − c)) + g; α], as mj_objectAcceleration
        does. Fixed-base models whose frames MuJoCo holds (a frame folded into the body
        below it, or a free root, would add its own derivative terms)."""
        if self._free is not None:
            raise ValueError("mujoco_warp frame_jacobian_drift: fixed-base models only")
        folded = [f for f in frames if f in self._folded]
        if folded:
            raise NotProvided(self.name, "frame Jacobian drift", f"frame {folded[0]} sits "
                              "on a massless body folded into the body below it, whose "
                              "acceleration MuJoCo Warp does not hold")
        Q = np.asarray(q, dtype=float)[None]
        J = self.batch_frame_jacobians(Q, frames)[0]
        d = self._world(1)
        self._set(d, Q, self._to_mj(np.asarray(v, dtype=float)[None], None), None,
                  np.zeros((1, self._m.nv)))
        mw = self._mw

        def run() -> None:
            mjw.kinematics(mw, d)
            mjw.com_pos(mw, d)
            mjw.com_vel(mw, d)
            mjw.rne_postconstraint(mw, d)
        self._launch("drift", run)
        cacc = d.cacc.numpy()[0].astype(float)
        cvel = d.cvel.numpy()[0].astype(float)
        com = d.subtree_com.numpy()[0].astype(float)
        g = np.asarray(self._m.opt.gravity, dtype=float)
        a = np.empty((len(frames), 6))
        for n, f in enumerate(frames):
            kind, i = self._frame(f)
            p, _ = self._pose_arrays(d, kind, i)
            body = i if kind == "body" else int(self._m.site_bodyid[i])
            r = p[0] - com[int(self._m.body_rootid[body])]
            al, lin = cacc[body, 0:3], cacc[body, 3:6]
            w, u = cvel[body, 0:3], cvel[body, 3:6]
            a[n, 0:3] = lin + np.cross(al, r) + np.cross(w, u + np.cross(w, r)) + g
            a[n, 3:6] = al
        return J, a

    NATIVE_EQ_ENGINE = "MuJoCo Warp"  # as native_constrained's refusals name it

    def _native_coupling_refusal(self, couplings: Sequence[Coupling]) -> str:
        """Why the equality row is refused for ``couplings`` ('' when it is not): any
        non-linear coupling (MuJoCo's refuses only those that are no quartic)."""
        if any(k.function for k in couplings):
            return "a non-linear coupling (MuJoCo's joint equality is a quartic polynomial)"
        return ""

    def native_constrained(self, problem: Any) -> list[dict[str, Any]]:
        """Stage-3 native row: MuJoCo Warp's soft equality constraints (mujoco_warp.forward
        with constraints enabled on the equality model MuJoCo's row uses, limits and
        contacts disabled; qfrc_applied = τ; v̇ = qacc) on the problem's N states in one
        batch of N worlds, float32. Not exact (MuJoCo's soft law): informational. The
        exceptions are MuJoCo's (a free root, a line constraint, a non-linear coupling)."""
        self._native_constrained_refusal(problem)
        m, _ = self._native_eq_model()
        Q = np.asarray(problem.Q, dtype=float)
        with wp.ScopedDevice(self._dev):
            mw = mjw.put_model(m)
            d = mjw.make_data(m, nworld=Q.shape[0])
        self._set(d, Q, self._to_mj(np.asarray(problem.V, dtype=float), None),
                  self._to_mj(np.asarray(problem.TAU, dtype=float), None))
        self._launch("forward (equality)", lambda: mjw.forward(mw, d))
        vd = self._from_mj(d.qacc.numpy().astype(float), None)
        law = self.native_constrained_law().replace("MuJoCo soft equality constraints "
                                                    "(mj_forward", "MuJoCo Warp's soft "
                                                    "equality constraints in float32 "
                                                    "(mujoco_warp.forward")
        return [{"solver": "equality", "exact": False, "vdot": vd, "lam": None, "law": law}]

    def native_contact(self, scene: ContactScene, q0: _F, v0: _F, t_end: float,
                       force_W: Callable[[float], _F],
                       settings: dict[str, Any] | None = None) -> dict[str, Any]:
        """{"t" (N,) [s], "q" (N, 7), "v" (N, 6), …}: MuJoCo Warp's soft contact (float32)
        on the declared contact geometry, the MJCF MuJoCo's native row builds
        (engines/mujoco.py ``native_contact``), stepped by mujoco_warp.step in one world
        from canonical (q0 (7,), v0 (6,)) over [0, t_end] [s]; force_W(t) → (3,) [N] at
        the body origin through xfrc_applied, read at each step's start."""
        s, statement = self.native_contact_statement(settings)
        m = mujoco.MjModel.from_xml_string(_native_contact_mjcf(self.model, scene, s))
        with wp.ScopedDevice(self._dev):
            mw, d = mjw.put_model(m), mjw.make_data(m, nworld=1)
        q0, v0 = np.asarray(q0, dtype=float), np.asarray(v0, dtype=float)
        qpos = np.concatenate([q0[:3], [q0[6], q0[3], q0[4], q0[5]]])[None]
        qvel = np.concatenate([quat_xyzw_to_matrix(q0[3:7]) @ v0[:3], v0[3:6]])[None]
        d.qpos.assign(qpos.astype(np.float32))
        d.qvel.assign(qvel.astype(np.float32))
        n = int(round(t_end / s["dt"]))
        T, Q, V = s["dt"] * np.arange(n + 1.0), np.empty((n + 1, 7)), np.empty((n + 1, 6))
        xfrc = np.zeros((1, m.nbody, 6), dtype=np.float32)

        def grab(k: int) -> None:
            qp, qv = d.qpos.numpy()[0].astype(float), d.qvel.numpy()[0].astype(float)
            quat = quat_wxyz_to_xyzw(qp[3:7])
            Q[k, :3], Q[k, 3:] = qp[:3], quat
            V[k, :3] = quat_xyzw_to_matrix(quat).T @ qv[:3]
            V[k, 3:] = qv[3:6]

        grab(0)
        for k in range(n):
            xfrc[0, 1, :3] = force_W(T[k])
            d.xfrc_applied.assign(xfrc)
            self._launch("contact step", lambda: mjw.step(mw, d))
            grab(k + 1)
        return {"t": T, "q": Q, "v": V, "settings": s,
                "statement": statement.replace("MuJoCo soft contact", "MuJoCo Warp's soft "
                                               "contact in float32").replace(
                                                   "mj_step", "mujoco_warp.step")}

