"""The swing's steps as typed objects, each passed forward to the next:

    Capture (harness/capture/ingest.py) → SwingEvents (harness/capture/events.py)
      → ScaledGolfer → IKTrack → SwingFit (with its Reintegration) → FittedSwing
      → Assessment (harness/swing/checks.py, over the typed view of fit.json,
        harness/swing/summary.py)

Dimensions: F capture frames; C calibration frames; N fitted frames (the window); K
tracked markers; nq == nv coordinates of the golfer; R replay knots. Positions m, angles
rad, times s, speeds m/s, torques N·m / forces N. The JSON sections some fields hold are
fit.json's (its serialised form), written once by harness/swing/pipeline.py ``document``.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np


@dataclass(frozen=True)
class GroundPlacement:
    """The feet's contact points placed at address: ``floor_z_m`` the floor height [m]
    (scaling.floor_height), ``address_frame`` the calibration frame whose IK pose placed
    them, ``contact_points`` {contact frame: (foot body, xyz (3,) m in the foot frame)}."""

    floor_z_m: float
    address_frame: int
    contact_points: dict

    def to_json(self) -> dict:
        """fit.json's ``ground`` fields of the placement."""
        return {"floor_z_m": self.floor_z_m, "address_frame": self.address_frame,
                "contact_points": {k: {"body": b, "xyz_m": list(x)}
                                   for k, (b, x) in self.contact_points.items()}}


@dataclass(frozen=True)
class ScaledGolfer:
    """The golfer scaled to the capture and its marker offsets calibrated.

    ``dims`` the GolferDims (lengths m, masses kg) with the club's masses;
    ``measured_lengths`` {length name: (value m, how measured)}; ``club`` {club, how,
    length_m, masses_kg} (pipeline.which_club); ``engine_class`` the fit engine's adapter
    class; ``model`` the PreparedModel and ``adapter`` its adapter (contact points and bent
    shaft included when asked); ``labels`` (K,) the tracked markers;
    ``address_frames`` the frames that scaled it; ``calibration_frames`` (C,) the frames
    that calibrated it and ``calibration_q`` (C, nq) [rad | m] their IK poses in the final
    model's coordinates; ``rmse_by_round_m`` the IK RMSE [m] of each calibration round;
    ``calibration_wall_s`` [s]; ``ground`` the contact placement (None without ground
    contact)."""

    dims: object
    measured_lengths: dict
    club: dict
    engine_class: type
    model: object
    adapter: object
    labels: list
    address_frames: np.ndarray
    calibration_frames: np.ndarray
    calibration_q: np.ndarray
    rmse_by_round_m: list
    calibration_wall_s: float
    ground: GroundPlacement | None


@dataclass(frozen=True)
class IKTrack:
    """Marker IK over the fitted window: ``first_frame`` and ``last_frame_asked`` (the
    frame the post-impact time asked for; the window ends at the capture's last frame
    when that is earlier), ``frames`` (N,) the window's capture frames, ``y_m`` (N, K, 3)
    the tracked markers [m], ``q`` (N, nq) the IK poses [rad | m], ``rmse_m`` the IK's
    marker RMSE [m], ``wall_s`` [s]."""

    first_frame: int
    last_frame_asked: int
    frames: np.ndarray
    y_m: np.ndarray
    q: np.ndarray
    rmse_m: float
    wall_s: float

    @property
    def last_frame(self) -> int:
        """The window's last capture frame."""
        return int(self.frames[-1])


@dataclass(frozen=True)
class Reintegration:
    """Open-loop reintegration of the replay torques (pipeline._open_loop and
    _segment_reintegration): ``dev_m`` (R, K) marker deviation from the fitted motion [m]
    (NaN after a stop), ``diverged_at_s`` the stop [s from the window start] or None,
    ``segments`` the per-segment worst deviations (fit.json's form), ``method`` the
    integrator (harness/model/integrators.py Method), ``wall_s`` [s]."""

    dev_m: np.ndarray
    diverged_at_s: float | None
    segments: dict
    method: object
    wall_s: float


@dataclass(frozen=True)
class SwingFit:
    """The dynamic fit and what was measured on it.

    ``problem`` the trajectory.FitProblem and ``result`` its fit; ``act`` (N, nv) the
    joint torques [N·m | N] (the activation fit's when it drives them); ``q_replay``,
    ``v_replay`` (R, nv) the fitted spline at the replay knots; ``in_down`` (N, K) the
    top → impact mask and ``phases`` {phase: (N, K) mask}; ``club_points_m`` (N, k, 3) the
    fitted club-head markers where the capture sees them (NaN elsewhere);
    ``speeds_measured_mps`` (F,) the capture's club-head interval speeds;
    ``ground`` fit.json's ``ground`` section (None without contact) and
    ``per_interval`` its per-interval contact checks (harness/swing/consistency.py);
    ``identifiability`` and ``impact`` fit.json's sections (impact None without it);
    ``reintegration`` the open-loop check; ``figures`` fit.json's ``fit`` section (its
    event_poses and per-phase marker table are FittedSwing's)."""

    problem: object
    result: object
    act: np.ndarray
    q_replay: np.ndarray
    v_replay: np.ndarray
    in_down: np.ndarray
    phases: dict
    club_points_m: np.ndarray
    speeds_measured_mps: np.ndarray
    ground: dict | None
    per_interval: dict | None
    identifiability: dict
    impact: dict | None
    reintegration: Reintegration
    figures: dict


@dataclass(frozen=True)
class FittedSwing:
    """Every step of one capture's fit: the ``capture`` and its ``events``, the
    ``golfer``, the ``track``, the ``fit``; the optional sections (``activation`` with its
    ``activation_series``, ``shaft``), the ``event_poses`` of the stick figures
    (harness/swing/poses.py), ``marker_rmse_by_phase_and_label_m`` {phase: {what, source,
    frames, by_label {label: RMSE m}}} (pipeline._phase_rmse), the
    headline ``headline`` (fit.json's ``summary``), the saved ``candidate_path`` with its
    ``prepared`` model (golfer.urdf), ``arrays`` the report's series, ``settings`` the
    SwingSettings and ``wall_s`` [s] the fit's wall time."""

    capture: object
    events: object
    golfer: ScaledGolfer
    track: IKTrack
    fit: SwingFit
    settings: object
    headline: dict
    activation: dict | None
    activation_series: dict | None
    shaft: dict | None
    event_poses: dict
    marker_rmse_by_phase_and_label_m: dict
    candidate_path: Path
    prepared: object
    arrays: dict
    wall_s: float
