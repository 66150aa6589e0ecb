"""What the OpenSim swing export hands its writer (harness/model/osim_export.py builds
it, engines/opensim_swing.py writes it): a fitted swing in OpenSim's axes (y up) and
coordinates. Units: m, kg, kg·m², rad, s, N, N·m."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from harness.core.spec import FixtureSpec

# The name of the ExternalLoads the export writes (external_loads.xml): its provenance,
# read back by `harness track` (harness/track/run.py ``contact_label``), which labels loads
# so named "assumed" (fitted from an assumed contact model, no force plate) and any other
# loads "measured"
ASSUMED_CONTACT = "assumed_contact"
# the comment the export puts in external_loads.xml beside that name, for a reader
ASSUMED_CONTACT_NOTE = ("the foot contact forces of a harness swing fit: fitted from an "
                        "assumed contact model (heel and metatarsal points sticking to the "
                        "floor on an assumed schedule), not measured by a force plate")


@dataclass(frozen=True)
class RootCoordinate:
    """One coordinate of the pelvis's CustomJoint: ``kind`` "rotation" [rad] or
    "translation" [m] about / along ``axis`` (ground axes), range [lower, upper]."""

    name: str
    kind: str
    axis: tuple[float, float, float]
    lower: float
    upper: float


@dataclass(frozen=True)
class SwingExport:
    """What the OpenSim writer gets, all in OpenSim's axes and coordinates. ``spec``: the
    golfer y up, the pelvis its floating root (held by the CustomJoint of ``root``), the
    grip loop a point constraint; t (N,) s the fitted frames; ``names`` (n,) coordinates,
    the root's first, Q (M, n) [rad, m] the fitted motion at t_motion (M,) s (the fitted
    frames and more between them, harness/model/osim_export.py ``motion_times``);
    ``markers`` the model's MarkerSet (every tracked marker);
    ``labels`` (K,) those markers.trc carries, Y (N, K, 3) m (NaN: missing);
    ``contacts`` ((name, body, F (N, 3) N, P (N, 3) m), ...) forces on ``body`` at points
    P, both in ground; tau (N, n) [N, N·m] the harness's inverse dynamics with those
    forces applied, at t; ``ik_hold``: coordinates OpenSim's IK pulls towards swing.mot's
    values with weight ``ik_hold_weight`` (rad⁻²; markers weigh 1 m⁻²); ``notes`` lines
    for notes.txt."""

    spec: FixtureSpec
    root: tuple[RootCoordinate, ...]
    t: NDArray[np.float64]
    names: tuple[str, ...]
    t_motion: NDArray[np.float64]
    Q: NDArray[np.float64]
    markers: tuple[str, ...]
    labels: tuple[str, ...]
    Y: NDArray[np.float64]
    rate_hz: float
    contacts: tuple[tuple[str, str, NDArray[np.float64], NDArray[np.float64]], ...]
    tau: NDArray[np.float64]
    ik_hold: tuple[str, ...]
    ik_hold_weight: float
    ik_accuracy: float
    notes: tuple[str, ...]
