"""OpenSim's console lines inside ``console_as_warnings`` become warnings of one logger;
the "Couldn't find file '….vtp'" lines of meshes that only draw a body become one
warning with their number (the walking trial's model names 20 meshes; none is here)."""
from __future__ import annotations

import logging
import re

from harness.model import registry
from harness.model.binding import console_as_warnings
from tests.conftest import ROOT

GAIT = ROOT / "data" / "opensim_models" / "gait2392_walk1" / "subject01_simbody.osim"


def test_missing_meshes_are_one_warning(caplog):
    registry.probe("opensim")  # the adapter module sets OpenSim's logger up
    import opensim as osim

    meshes = set(re.findall(r"<mesh_file>\s*([^<\s]+)\s*</mesh_file>", GAIT.read_text()))
    assert meshes and not any((GAIT.parent / m).exists() for m in meshes)
    with caplog.at_level(logging.WARNING, logger="t.console"):
        with console_as_warnings("t.console"):
            osim.Model(str(GAIT)).initSystem()
    lines = [r.getMessage() for r in caplog.records if r.name == "t.console"]
    assert not any("Couldn't find" in m for m in lines), lines
    mesh = [m for m in lines if "display mesh file(s) not found" in m]
    assert len(mesh) == 1 and mesh[0].startswith(f"{len(meshes)} "), (len(meshes), lines)
