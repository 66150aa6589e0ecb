"""Marker sets: which labels of a capture play which role. Declared once here; a capture
"with the same marker set" is any file carrying these labels (extra labels are kept and
reported, never fitted unless a model attaches them).

Roles: ``club_head`` markers near the club head (their mean is the club-head point used
for swing events), ``shaft`` markers along the shaft, ``body`` markers on the golfer,
``up_top`` / ``up_bottom`` markers whose mean difference points up (to infer the file's
vertical axis), ``required`` the labels without which the capture cannot be used.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MarkerSet:
    name: str
    club_head: tuple
    shaft: tuple
    body: tuple
    up_top: tuple
    up_bottom: tuple

    @property
    def required(self) -> tuple:
        return self.club_head + self.shaft + self.up_top + self.up_bottom

    @property
    def tracked(self) -> tuple:
        return self.body + self.club_head + self.shaft


DRIVER_SWING = MarkerSet(
    name="driver-swing-38",
    club_head=("Marker_2:2:1", "Marker_2:2:2", "Marker_2:2:3"),
    shaft=("Marker_3:3:1", "Marker_3:3:2", "Marker_3:3:3"),
    body=("WaistLeft", "WaistRight", "WaistLBack", "WaistRBack", "BackTop", "BackLeft",
          "BackRight", "HeadTop", "HeadFront", "HeadSide", "LShoulderTop",
          "LShoulderBack", "LElbowOut", "LUArmHigh", "LWristTop", "RShoulderTop",
          "RShoulderBack", "RElbowOut", "RUArmHigh", "RWristTop", "LKneeOut", "LToeIn",
          "LToeOut", "LAnkleOut", "RKneeOut", "RToeIn", "RToeOut", "RAnkleOut"),
    up_top=("HeadTop",),
    up_bottom=("LToeIn", "LToeOut", "RToeIn", "RToeOut"),
)

MARKER_SETS = {DRIVER_SWING.name: DRIVER_SWING}
