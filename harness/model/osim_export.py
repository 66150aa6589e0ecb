"""A finished swing fit exported for OpenSim: golfer.osim (the fitted golfer with its
MarkerSet), swing.mot (the fitted coordinates) and markers.trc (the measured markers).

Units: the model SI (m, kg, kg·m², rad); swing.mot time [s], rotations in degrees
(``inDegrees=yes``, as OpenSim expects), translations in m; markers.trc in mm. Times are
the capture's (the fitted window's frames). Engine-blind: the three files are written by
the adapter whose class provides ``write_osim_swing`` (OpenSim builds and prints the
model), reached through the registry; here the swing folder is read and checked.

Read from a ``harness swing … --out D`` folder: D/fit/fit.json (capture rate, tracked
markers), D/fit/candidate.json (its model, D/fit/golfer.urdf: the named frames come back
from their massless links), D/fit/trajectory.npz (t (N,), q (N, nq) at the fitted
frames, labels (K,), y (N, K, 3) m the measured markers, NaN where a marker is missing).
"""
from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from harness.core.conventions import Layout
from harness.core.errors import BadInput
from harness.core.io import OutputKind, claims_output, swap_in, temp_folder
from harness.core.spec import FixtureSpec, Frame
from harness.core.strict import read_json
from harness.model import candidate, registry

FILES = ("golfer.osim", "swing.mot", "markers.trc")
# the frame links of an exported URDF (fixtures/export.py FRAME_JOINT_SUFFIX)
_FRAME_SUFFIX = "__frame"


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


def read_swing(swing_dir: str | os.PathLike[str],
               doc: dict[str, Any] | None = None) -> dict[str, Any]:
    """{"spec", "t" (N,) s, "q" (N, nq), "labels" [K], "y" (N, K, 3) m, "rate_hz"} of a
    finished swing output folder (``doc``: its fit.json document when it is not yet
    written, as for the studies of a run in progress); BadInput naming the file and the
    problem."""
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
            labels = [str(x) for x in z["labels"]]
            y = np.asarray(z["y"], float)
    except (KeyError, ValueError, OSError) as e:
        raise BadInput(str(tp), f"unreadable trajectory ({e})") from None
    cand = candidate.load(fit / "candidate.json")
    spec = frames_from_links(cand.model.spec)

    n, nq = len(t), Layout.from_spec(spec).nq
    if q.shape != (n, nq) or y.shape != (n, len(labels), 3) or labels != tracked \
            or not np.all(np.isfinite(q)) or not np.all(np.isfinite(t)):
        raise BadInput(str(tp), "t, q, labels and y do not match each other or fit.json")
    return {"spec": spec, "t": t, "q": q, "labels": labels, "y": y, "rate_hz": rate}


@claims_output(OUTPUT)  # the --out rule checked and the folder locked first
def export_swing(swing_dir: str | os.PathLike[str], *, out: Path) -> dict[str, Any]:
    """Write golfer.osim, swing.mot and markers.trc for the swing in ``swing_dir`` to
    ``out`` (replaced whole, atomically); returns {"model", "motion", "markers": path,
    "coordinates": [names], "frames": N, "markers_count": K}."""
    data = read_swing(swing_dir)
    writer = registry.adapter_class(registry.providing("write_osim_swing")[0])
    tmp = temp_folder(out)
    try:
        res: dict[str, Any] = writer.write_osim_swing(
            data["spec"], data["t"], data["q"], data["labels"], data["y"], str(tmp),
            data["rate_hz"])
        swap_in(tmp, out, OUTPUT)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    paths = {k: str(Path(out) / Path(res[k]).name) for k in ("model", "motion", "markers")}
    return paths | {"coordinates": res["coordinates"], "frames": len(data["t"]),
                    "markers_count": len(data["labels"])}
