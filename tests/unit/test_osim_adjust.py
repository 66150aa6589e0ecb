"""harness/model/osim_adjust.py: the adjusted model's text edits on a small file in both
OpenSim layouts (4's ``<inertia>``, 3's ``<inertia_xx>`` …), comments and every other byte
kept, relative file references made absolute."""
from __future__ import annotations

import os

import pytest

from harness.model.osim_adjust import adjusted_osim

TEXT = b"""<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="30000">
  <!-- <Body name="torso"><mass>9</mass></Body> a comment is not a body -->
  <Model name="m">
    <BodySet><objects>
      <Body name="ground"><mass>0</mass><mass_center>0 0 0</mass_center>
        <inertia_xx>0</inertia_xx></Body>
      <Body name="thigh">
        <mass>8.25</mass> <!-- <mass>1</mass> -->
        <mass_center>0 -0.2 0</mass_center>
        <inertia_xx>0.125</inertia_xx><inertia_yy>0.03</inertia_yy><inertia_xy>0</inertia_xy>
      </Body>
      <Body name="torso">
        <mass>33.5</mass>
        <mass_center>-0.03 0.35 0</mass_center>
        <inertia>1.5 0.75 1.25 0 0 0</inertia>
        <attached_geometry><Mesh name="g"><mesh_file>hat.vtp</mesh_file></Mesh></attached_geometry>
      </Body>
    </objects></BodySet>
    <ForceSet file="forces.xml"/>
    <ControllerSet file="/abs/c.xml"/>
  </Model>
</OpenSimDocument>
"""


def test_masses_inertias_and_one_mass_centre_edited_everything_else_kept(tmp_path):
    s = 1.0625  # exact in binary: the expected texts below are exact
    out, notes = adjusted_osim(TEXT, str(tmp_path), s, "torso", [0.01, 0.375, -0.5])
    want = (TEXT
            .replace(b"<mass>8.25</mass>", f"<mass>{8.25 * s!r}</mass>".encode())
            .replace(b"<inertia_xx>0.125</inertia_xx>",
                     f"<inertia_xx>{0.125 * s!r}</inertia_xx>".encode())
            .replace(b"<inertia_yy>0.03</inertia_yy>",
                     f"<inertia_yy>{0.03 * s!r}</inertia_yy>".encode())
            .replace(b"<mass>33.5</mass>", f"<mass>{33.5 * s!r}</mass>".encode())
            .replace(b"<mass_center>-0.03 0.35 0</mass_center>",
                     b"<mass_center>0.01 0.375 -0.5</mass_center>")
            .replace(b"<inertia>1.5 0.75 1.25 0 0 0</inertia>",
                     f"<inertia>{1.5 * s!r} {0.75 * s!r} {1.25 * s!r} 0 0 0</inertia>".encode())
            .replace(b'file="forces.xml"',
                     f'file="{os.path.join(str(tmp_path), "forces.xml")}"'.encode()))
    assert out == want
    assert notes == [f"file='forces.xml' made absolute: {tmp_path / 'forces.xml'}"]


def test_a_mass_centre_body_not_in_the_file_is_refused(tmp_path):
    with pytest.raises(ValueError, match="pelvis"):
        adjusted_osim(TEXT, str(tmp_path), 1.0, "pelvis", [0, 0, 0])
