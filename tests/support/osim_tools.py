"""Run in an `harness osim-export` folder (its working directory) by the export's tests:
OpenSim loads golfer.osim and external_loads.xml, runs its own InverseKinematicsTool
(ik_setup.xml) and InverseDynamicsTool (id_setup.xml) from the setup files as written,
and prints one line ``RESULT {json}``: what OpenSim said while loading (its warnings),
the ExternalForces (name, body, frames), each IK frame's distance [m] between the two
frames named on the command line (the grip loop's points: BODY_A FRAME_A BODY_B
FRAME_B), the coordinates' worst excursion outside their ranges [rad or m], the IK
marker errors (total squared [m²] per frame) and OpenSim's ID (time [s], columns,
values [N, N·m]). A separate interpreter: the tools need the folder as working directory,
and OpenSim's SWIG types stay out of the test process."""
from __future__ import annotations

import json
import sys

import numpy as np
import opensim as osim


def _loading() -> tuple[list[str], list[list[str]]]:
    """(OpenSim's warning lines while loading the model and the loads, the ExternalForces)."""
    log = "load.log"
    osim.Logger.removeFileSink()
    osim.Logger.addFileSink(log)
    m = osim.Model("golfer.osim")
    m.initSystem()
    el = osim.ExternalLoads("external_loads.xml", True)
    forces = [[el.get(i).getName(), el.get(i).get_applied_to_body(),
               el.get(i).get_force_expressed_in_body(), el.get(i).get_point_expressed_in_body()]
              for i in range(el.getSize())]
    osim.Logger.removeFileSink()
    with open(log) as f:
        warn = [x.strip() for x in f if "[warning]" in x.lower() or "[error]" in x.lower()]
    return warn, forces


def _ik(frames: list[str]) -> dict:
    """OpenSim's IK from ik_setup.xml, then the grip gap and range excursion per frame."""
    tool = osim.InverseKinematicsTool("ik_setup.xml")
    ok = bool(tool.run())
    m = osim.Model("golfer.osim")
    s = m.initSystem()
    sto = osim.Storage(tool.get_output_motion_file())
    m.getSimbodyEngine().convertDegreesToRadians(sto)
    lab = sto.getColumnLabels()
    cols = [lab.get(i) for i in range(1, lab.getSize())]
    cs = m.getCoordinateSet()
    a = osim.PhysicalFrame.safeDownCast(m.getBodySet().get(frames[0]).getComponent(frames[1]))
    b = osim.PhysicalFrame.safeDownCast(m.getBodySet().get(frames[2]).getComponent(frames[3]))
    gap, outside = [], -np.inf
    for k in range(sto.getSize()):
        row = sto.getStateVector(k).getData()
        for i, name in enumerate(cols):
            c = cs.get(name)
            x = row.get(i)
            outside = max(outside, c.getRangeMin() - x, x - c.getRangeMax())
            c.setValue(s, x, False)
        m.realizePosition(s)
        pa, pb = a.getPositionInGround(s), b.getPositionInGround(s)
        gap.append(float(np.linalg.norm([pa.get(i) - pb.get(i) for i in range(3)])))
    err = osim.TimeSeriesTable(f"{tool.getName()}_ik_marker_errors.sto")
    sq = err.getDependentColumn("total_squared_error").to_numpy()
    return {"ok": ok, "gap": gap, "outside": float(outside), "rows": sto.getSize(),
            "sq": [float(x) for x in sq]}


def _id() -> dict:
    """OpenSim's ID from id_setup.xml: its generalized forces."""
    tool = osim.InverseDynamicsTool("id_setup.xml")
    ok = bool(tool.run())
    out = osim.TimeSeriesTable(tool.getOutputGenForceFileName())
    return {"ok": ok, "t": list(out.getIndependentColumn()),
            "columns": list(out.getColumnLabels()),
            "values": out.getMatrix().to_numpy().tolist()}


if __name__ == "__main__":
    warnings, forces = _loading()
    print("RESULT " + json.dumps({"warnings": warnings, "forces": forces,
                                  "ik": _ik(sys.argv[1:5]), "id": _id()}))
