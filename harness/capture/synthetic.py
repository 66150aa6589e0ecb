"""Synthetic captures with known answers, and a C3D writer (ezc3d).

``kinematic_swing`` draws the bundled marker set's labels: body markers at fixed places of
a standing golfer, and a club head moving on a circle of radius R about a hub in a
vertical plane, with closed-form event times:
    address … t0: still;  backswing t0 … t_top: φ = A (1 − cos(π (t − t0)/Tb)) / 2;
    downswing t_top ≤ t ≤ t_c: φ = φ_s(t) = A cos(π (t − t_top) / (2 Td)) (lowest point
    φ = 0 at t_top + Td with speed R·A·π/(2 Td)); speed is zero at t0 and at t_top;
    ball contact at t_c (``contact_s``, default t_top + Td): afterwards
    φ = φ_c + κ (φ_s(t) − φ_c), φ_c = φ_s(t_c), so the club-head velocity drops by the
    factor κ (``speed_ratio``) at t_c with the position continuous. With t_c before
    t_top + Td (φ_c > 0) the head still descends after contact (an iron's divot): the
    lowest point comes after contact.
Heights z = hub_z − R cos φ (m, Z-up); F frames at ``rate_hz``.
"""
from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from harness.capture.ingest import _TO_Z_UP
from harness.capture.markerset import DRIVER_SWING, MarkerSet

_BODY_AT = {  # m, Z-up, golfer facing +x, ball at the origin's +y side
    "Waist": (0.0, -0.6, 1.0), "Back": (-0.15, -0.6, 1.35), "Head": (0.05, -0.55, 1.7),
    "Shoulder": (0.0, -0.6, 1.42), "Elbow": (0.15, -0.6, 1.2), "UArm": (0.08, -0.6, 1.3),
    "Wrist": (0.25, -0.6, 1.05), "Knee": (0.1, -0.6, 0.5), "Toe": (0.15, -0.6, 0.04),
    "Ankle": (0.0, -0.6, 0.08),
}


def _body_position(label: str) -> np.ndarray:
    for key, p in _BODY_AT.items():
        if key in label:
            side = 0.15 if label.startswith(("L", "WaistLeft", "WaistL", "BackLeft")) else -0.15
            if "Right" in label or label.startswith("R") or "WaistR" in label:
                side = -0.15
            return np.array([p[0], p[1] + side, p[2]]) + 0.01 * (hash_label(label) - 0.5)
    raise KeyError(label)


def hash_label(label: str) -> float:
    """Deterministic number in [0, 1) from a label (no Python hash randomisation)."""
    return (sum((i + 1) * ord(c) for i, c in enumerate(label)) % 997) / 997.0


def kinematic_swing(rate_hz: float = 360.0, duration_s: float = 1.8, t0: float = 0.3,
                    Tb: float = 0.8, Td: float = 0.25, A: float = 0.8 * math.pi,
                    R: float = 1.5, hub_z: float = 1.55, markerset: MarkerSet = DRIVER_SWING,
                    contact_s: float | None = None, speed_ratio: float = 0.7
                    ) -> tuple[list[str], NDArray[np.float64], dict[str, float]]:
    """(labels, X (F, M, 3) m Z-up, truth dict) of the swing described in the module doc;
    truth speeds in m/s just before and after contact."""
    F = int(round(duration_s * rate_hz))
    t = np.arange(F) / rate_hz
    t_top = t0 + Tb
    t_imp = t_top + Td if contact_s is None else float(contact_s)
    if not t_top < t_imp:
        raise ValueError("contact must come after the top of the backswing")
    phi_s = A * np.cos(0.5 * np.pi * (t - t_top) / Td)
    phi_c = A * math.cos(0.5 * math.pi * (t_imp - t_top) / Td)
    phi = np.where(t < t0, 0.0, np.where(
        t < t_top, 0.5 * A * (1 - np.cos(np.pi * (t - t0) / Tb)),
        np.where(t <= t_imp, phi_s, phi_c + speed_ratio * (phi_s - phi_c))))
    v_pre = R * A * math.pi / (2 * Td) * abs(math.sin(0.5 * math.pi * (t_imp - t_top) / Td))
    head = np.stack([np.zeros(F), R * np.sin(phi), hub_z - R * np.cos(phi)], axis=1)
    labels = list(markerset.body) + list(markerset.club_head) + list(markerset.shaft)
    X = np.empty((F, len(labels), 3))
    for m, l in enumerate(labels):
        if l in markerset.club_head:
            k = markerset.club_head.index(l) - 1          # −1, 0, +1: mean is the head
            X[:, m] = head + np.array([0.02 * k, 0.0, 0.0])
        elif l in markerset.shaft:
            frac = 0.3 + 0.2 * markerset.shaft.index(l)
            X[:, m] = head + frac * (np.array([0, 0, hub_z]) - head)
        else:
            X[:, m] = _body_position(l)
    truth = {"t0_s": t0, "top_s": t_top, "impact_s": t_imp,
             "speed_pre_impact_mps": v_pre, "speed_post_impact_mps": speed_ratio * v_pre,
             "lowest_s": t_top + Td if phi_c <= 0 else
             t_top + 2 * Td / math.pi * math.acos(phi_c * (1 - 1 / speed_ratio) / A),
             "R_m": R, "A_rad": A,
             "Tb_s": Tb, "Td_s": Td, "hub_z_m": hub_z}
    return labels, X, truth


def write_c3d(path: str | os.PathLike[str], labels: Sequence[str], X_world: np.ndarray,
              rate_hz: float, units: str = "m", up: str = "+y") -> Path:
    """Write X_world (F, M, 3) m, Z-up, as a C3D file whose vertical axis is ``up`` and
    whose numbers are in ``units`` ('m' or 'mm'); NaN samples are written as missing."""
    import ezc3d

    scale = {"m": 1.0, "mm": 1e3}[units]
    R = _TO_Z_UP[up]                      # file → world; world → file is Rᵀ
    Xf = (X_world @ R) * scale            # row vectors: x_file = Rᵀ x_world
    c = ezc3d.c3d()
    c["parameters"]["POINT"]["RATE"]["value"] = [float(rate_hz)]
    c["parameters"]["POINT"]["LABELS"]["value"] = tuple(labels)
    c.add_parameter("POINT", "UNITS", [units])
    pts = np.ones((4, len(labels), X_world.shape[0]))
    pts[:3] = np.moveaxis(Xf, (0, 1, 2), (2, 1, 0))
    c["data"]["points"] = pts
    path = Path(path)
    c.write(str(path))
    return path
