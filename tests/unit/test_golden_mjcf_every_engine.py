"""The repository's own MJCF exports (fixtures/export.py ``to_mjcf``) are read by every
engine's MJCF parser with its own defaults: a fixed, massless root is written as the world
(its children and frames in ``<worldbody>``), since Pinocchio's parser refuses a body with
no inertial and Drake's one with mass 0. Units: SI.

Independent checks: the as-is diagnosis loads the committed golden file in all four
engines that read MJCF and they agree with one another on M, h, v̇ and τ (exit 0); the
exported dynamics are the fixture's (each engine's mass matrix of the file against the
fixture's closed-form pendulum M = I_yy + m·|c|², and the round trip through the importer
gives back the fixture's bodies, frames and names)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from conftest import tol_kw

from fixtures import catalog
from fixtures.export import to_mjcf
from harness import api
from harness.model.mjcf_import import load_mjcf_with_notes

GOLDEN = Path(__file__).resolve().parents[2] / "fixtures" / "golden"


def test_golden_pendulum_mjcf_diagnoses_in_every_engine(tmp_path):
    o = api.diagnose(str(GOLDEN / "pendulum.xml"), out=tmp_path / "d", samples=2)
    (s,) = api.diagnosis_summaries(o)
    assert not any("NOT LOADED" in line for line in s["lines"]), s["lines"]
    assert o.exit_code == 0, s["lines"]
    engines = {r.engine_b for r in o.records if r.stage == "dynamics" and r.engine_b}
    engines |= {r.engine_a for r in o.records if r.stage == "dynamics" and r.engine_a}
    assert {"mujoco", "pinocchio", "crocoddyl", "drake"} <= engines
    # M of the one hinge (axis y) against the fixture's closed form I_yy + m (c_x² + c_z²)
    link = catalog.get("pendulum").body("link")
    want = link.inertia_matrix[1, 1] + link.mass * (link.com[0] ** 2 + link.com[2] ** 2)
    rows = [r for r in o.records if r.stage == "dynamics" and r.quantity == "mass_matrix"]
    assert rows
    arrays = dict(np.load(tmp_path / "d" / "arrays.npz"))
    for r in rows:
        for k in (r.key_a, r.key_b):
            np.testing.assert_allclose(arrays[k].reshape(-1), want,
                                       **tol_kw("dynamics", "mass_matrix"))


def test_fixed_massless_root_is_the_world_and_comes_back(tmp_path):
    spec = catalog.get("four_bar")  # a fixed, massless root with two children
    assert not spec.floating and spec.body(spec.root).mass == 0
    text = to_mjcf(spec)
    assert f"<body name=\"{spec.root}\"" not in text
    assert f"<site name=\"{spec.root}\" pos=\"0 0 0\" euler=\"0 0 0\"/>" in text
    path = tmp_path / "four_bar.xml"
    path.write_text(text)
    back, notes = load_mjcf_with_notes(str(path))
    assert not any("world" in n for n in notes) and back.root == spec.root, notes
    assert [b.name for b in back.bodies] == [b.name for b in spec.bodies]
    assert sorted(f.name for f in back.frames) == sorted(f.name for f in spec.frames)
