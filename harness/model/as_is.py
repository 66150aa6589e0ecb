"""As-is loading: a user's URDF or MJCF as each engine's own parser reads it with that
engine's defaults, next to the declared model (the file as the harness parses it).

What the harness still does, and says so in the model's notes: (1) a URDF's ``<visual>``
elements and its mesh ``<collision>`` elements are removed (``package://`` meshes cannot
be resolved; primitive collision geometry is kept because some engines derive inertia
from it); (2) the base is the declared one (``floating``: a free root named
``root_joint``; otherwise the root is welded); (3) adapters disable contacts and remove
constraints their continuous-time dynamics refuse (each adapter states which). Mimic
joints are kept as moving joints in the declared model, with the relation recorded.
Units: SI; friction in N·m (revolute) or N (prismatic).
"""
from __future__ import annotations

import atexit
import dataclasses
import math
import os
import re
import shutil
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from harness.core.conventions import rpy_to_matrix
from harness.core.errors import BadInput
from harness.core.spec import WORLD_BODY, inertia_problem
from harness.model import registry
from harness.model.import_common import read_model_file
from harness.model.mjcf_import import load_mjcf_with_notes
from harness.model.prepared import PreparedModel
from harness.model.urdf_import import load_urdf_with_notes


# ----- as-is models -----------------------------------------------------------------------
@dataclass(frozen=True)
class AsIsFile:
    """A model file an engine loads as-is: ``path``, ``kind`` ('urdf' | 'mjcf') and the
    ``text`` it parses (a URDF without visuals and mesh collisions; an MJCF verbatim, read
    from ``path`` so its assets resolve)."""

    path: str
    kind: str
    text: str


_TMP: list[str] = []

# (follower, leader, multiplier [1], offset [rad | m]) of a URDF <mimic> (names as written)
Mimic = tuple[str | None, str | None, float, float]
# (link, I (9,) [kg·m²] about the com in the link frame, line of its <inertial>)
Nonphysical = tuple[str | None, tuple[float, ...], int]


def _tmpdir() -> str:
    if not _TMP:
        _TMP.append(tempfile.mkdtemp(prefix="harness-asis-"))
        atexit.register(shutil.rmtree, _TMP[0], True)
    return _TMP[0]


@dataclass(frozen=True)
class AsIsModel(PreparedModel):
    """A user's model loaded as-is. ``spec`` is the declared model (the file as the
    harness parses it: layout, reference values); ``files`` ((engine | '*', AsIsFile), …)
    what each engine parses; ``declared_friction`` ((joint, N·m | N), …) and ``mimic``
    ((follower, leader, multiplier, offset), …) what the file declares beyond the spec;
    ``geometry`` links carrying primitive collision geometry; ``nonphysical`` ((link,
    I (9,) kg·m² about the com in the link frame, line of its <inertial> in the file), …)
    the file's own non-physical inertias, which the declared model repaired
    (``repair_inertia``) and which every engine parses as written."""

    files: tuple[tuple[str, AsIsFile], ...] = ()
    declared_friction: tuple[tuple[str | None, float], ...] = ()
    mimic: tuple[Mimic, ...] = ()
    geometry: tuple[str | None, ...] = ()
    nonphysical: tuple[Nonphysical, ...] = ()

    @cached_property
    def frames(self) -> list[str]:
        """The frames compared in stage 1 but the harness's own world body ``world_`` (the
        root it keeps when the file's world carries a joint): in the file that is each
        engine's world, fixed at the identity, with the engine's own name for it."""
        return [f for f in self.spec.all_frame_names() if f != WORLD_BODY]

    def as_is_file(self, engine: str) -> AsIsFile | None:
        """The file ``engine`` parses: its own, else the one every engine parses."""
        d = dict(self.files)
        return d.get(engine) or d.get("*")

    @cached_property
    def digest(self) -> str:
        import hashlib

        h = hashlib.sha256(self.spec.digest().encode())
        for e, f in self.files:
            h.update(f"{e}|{f.kind}|".encode())
            h.update(f.text.encode())
        return h.hexdigest()

    def without_joints(self, joints: Collection[str]) -> "AsIsModel":
        """The same files, declared model with ``joints`` fixed (for an engine that lacks
        them: its layout)."""
        spec = dataclasses.replace(self.spec, joints=tuple(
            dataclasses.replace(j, type="fixed", lower=None, upper=None, damping=0.0,
                                armature=0.0) if j.name in joints else j
            for j in self.spec.joints))
        return dataclasses.replace(self, spec=spec)

    def with_joints_locked(self, joints: Collection[str]) -> "AsIsModel":
        """Every file edited so that ``joints`` are fixed (URDF type="fixed"; MJCF joint
        element removed: its body is welded), and the declared model likewise."""
        files: list[tuple[str, AsIsFile]] = []
        for e, f in self.files:
            text = f.text
            for j in joints:
                if f.kind == "urdf":
                    text = re.sub(r'(<joint\b[^>]*\bname\s*=\s*["\']' + re.escape(j) +
                                  r'["\'][^>]*\btype\s*=\s*["\'])[^"\']*(["\'])',
                                  r"\1fixed\2", text)
                    text = re.sub(r'(<joint\b[^>]*\btype\s*=\s*["\'])[^"\']*(["\'][^>]*\bname'
                                  r'\s*=\s*["\']' + re.escape(j) + r'["\'])', r"\1fixed\2",
                                  text)
                else:
                    text = re.sub(r'<joint\b[^>]*\bname\s*=\s*["\']' + re.escape(j) +
                                  r'["\'][^>]*?(/>|>.*?</joint>)', "", text, flags=re.S)
            path = f.path
            if f.kind == "mjcf" and text != f.text:
                path = os.path.join(_tmpdir(), f"locked-{abs(hash(text))}-"
                                    f"{os.path.basename(f.path)}")
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(text)
            files.append((e, AsIsFile(path, f.kind, text)))
        m = self.without_joints(joints)
        return dataclasses.replace(m, files=tuple(files))


def _kind(path: str) -> str:
    raw = read_model_file(path, "model").decode("utf-8-sig", "replace")
    m = re.search(r"<\s*(robot|mujoco)\b", raw)
    if not m:
        raise BadInput(path, "neither a URDF (<robot>) nor an MJCF (<mujoco>) file")
    return "urdf" if m.group(1) == "robot" else "mjcf"


def prepare_urdf_text(text: str) -> str:
    """A URDF's text without ``<visual>`` elements and without ``<collision>`` elements
    whose geometry is a mesh (the one change as-is mode makes to what engines parse)."""
    # keep the line count: engines' messages cite the user's line numbers
    def blank(m: re.Match[str]) -> str:
        return "\n" * m.group(0).count("\n")

    text = re.sub(r"<visual\b[^>]*/>", "", text)
    text = re.sub(r"<visual\b.*?</visual>", blank, text, flags=re.S)

    def drop_mesh(m: re.Match[str]) -> str:
        return blank(m) if re.search(r"<mesh\b", m.group(0)) else m.group(0)

    return re.sub(r"<collision\b.*?</collision>", drop_mesh, text, flags=re.S)


def _nonphysical(raw: str, root: ET.Element) -> tuple[Nonphysical, ...]:
    """((link, I (9,) about the com in the link frame, line of its <inertial>), …) of the
    links whose written inertia is not physical (not PSD, triangle inequality, or rotational
    inertia on a massless link): what --repair-inertia replaced in the declared model."""
    lines = [(raw.count("\n", 0, m.start()) + 1, m.group(1)) for m in
             re.finditer(r"<link\b[^>]*?\bname\s*=\s*[\"']([^\"']*)[\"']", raw)]
    inertia_lines = [raw.count("\n", 0, m.start()) + 1
                     for m in re.finditer(r"<inertial\b", raw)]
    out: list[Nonphysical] = []
    for link in root.findall("link"):
        el = link.find("inertial")
        i = el.find("inertia") if el is not None else None
        if el is None or i is None:
            continue
        try:
            I = np.array([[float(i.get(a, "0")) for a in row] for row in (
                ("ixx", "ixy", "ixz"), ("ixy", "iyy", "iyz"), ("ixz", "iyz", "izz"))])
            m = el.find("mass")
            mass = float(m.get("value", "0")) if m is not None else 0.0
            o = el.find("origin")
            rpy = [float(x) for x in (o.get("rpy") or "0 0 0").split()] if o is not None \
                else [0.0, 0.0, 0.0]
        except (TypeError, ValueError):
            continue  # the importer has named the problem already
        if not (inertia_problem(I) or (mass == 0.0 and np.any(I))):
            continue
        R = rpy_to_matrix(rpy)
        name = link.get("name")
        start = next((ln for ln, n in lines if n == name), 0)
        line = next((ln for ln in inertia_lines if ln >= start), 0)
        out.append((name, tuple(float(x) for x in (R @ I @ R.T).reshape(-1)), line))
    return tuple(out)


def _urdf_facts(path: str) -> tuple[str, tuple[Mimic, ...],
                                    tuple[tuple[str | None, float], ...],
                                    tuple[str | None, ...], tuple[Nonphysical, ...]]:
    """(text without mimic tags, mimic relations, friction per joint, links with primitive
    collision geometry, non-physical inertias) of a URDF, read with ElementTree (never
    evaluated)."""
    raw = open(path, "rb").read().decode("utf-8-sig")
    root = ET.fromstring(raw)  # the importer has checked the file (no DTD, well formed)
    mimic: list[Mimic] = []
    friction: list[tuple[str | None, float]] = []
    geometry: list[str | None] = []

    def num(text: Any, what: str) -> float:
        try:
            x = float(text)
        except (TypeError, ValueError):
            raise BadInput(path, f"{what}: {text!r} is not a number") from None
        if not math.isfinite(x):
            raise BadInput(path, f"{what}: {text!r} is not finite")
        return x

    for j in root.findall("joint"):
        mm = j.find("mimic")
        if mm is not None and mm.get("joint"):
            mimic.append((j.get("name"), mm.get("joint"),
                          num(mm.get("multiplier", "1"), f"joint {j.get('name')} mimic"),
                          num(mm.get("offset", "0"), f"joint {j.get('name')} mimic")))
        dyn = j.find("dynamics")
        fr = num(dyn.get("friction", "0") or "0", f"joint {j.get('name')} friction") \
            if dyn is not None else 0.0
        if fr != 0:
            friction.append((j.get("name"), fr))
    for link in root.findall("link"):
        for c in link.findall("collision"):
            g = c.find("geometry")
            if g is not None and any(g.find(k) is not None for k in ("box", "cylinder",
                                                                     "sphere", "capsule")):
                geometry.append(link.get("name"))
                break
    no_mimic = re.sub(r"<mimic\b[^>]*/>", "", raw)
    no_mimic = re.sub(r"<mimic\b.*?</mimic>", "", no_mimic, flags=re.S)
    return no_mimic, tuple(mimic), tuple(friction), tuple(geometry), _nonphysical(raw, root)


def load_as_is(path: str, floating: bool = False,
               engine_files: Mapping[str, str] | None = None,
               repair_inertia: bool = False) -> AsIsModel:
    """The model at ``path`` (URDF or MJCF) for as-is loading by every engine; an
    ``engine_files`` {engine: path} entry gives that engine its own file instead (e.g. the
    MJCF a user keeps for MuJoCo next to the URDF the others read). BadInput on error."""

    path = str(path)
    kind = _kind(path)
    notes = ["as-is: every engine parses the user's file with its own defaults; the "
             "harness removes visuals and mesh collisions from a URDF, declares the base, "
             "disables contacts and removes constraints an engine's continuous-time "
             "dynamics refuse "
             "(harness/model/as_is.py)"]
    mimic: tuple[Mimic, ...] = ()
    friction: tuple[tuple[str | None, float], ...] = ()
    geometry: tuple[str | None, ...] = ()
    nonphysical: tuple[Nonphysical, ...] = ()
    if kind == "urdf":
        load_urdf_with_notes(path, floating, repair_inertia)  # errors name the user's file
        no_mimic, mimic, friction, geometry, nonphysical = _urdf_facts(path)
        tmp = os.path.join(_tmpdir(), f"nomimic-{os.getpid()}-{os.path.basename(path)}")
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(no_mimic)
        try:
            spec, more = load_urdf_with_notes(tmp, floating, repair_inertia)
        except BadInput as e:
            raise BadInput(path, e.problem) from None
        finally:
            os.unlink(tmp)
        spec = dataclasses.replace(spec, source=path)
        notes += [n for n in more]
        if mimic:
            notes.append("mimic joints kept as moving joints in the declared model: "
                         + ", ".join(f"{f} = {m:g}·{l} + {o:g}" for f, l, m, o in mimic))
        text = prepare_urdf_text(open(path, "rb").read().decode("utf-8-sig"))
    else:
        spec, more = load_mjcf_with_notes(path, floating)
        notes += list(more)
        text = open(path, "rb").read().decode("utf-8-sig")
    files = [("*", AsIsFile(path, kind, text))]
    for engine, p in sorted((engine_files or {}).items()):
        registry.probe(engine, "--engine-file")  # BadInput for an unknown engine
        k = _kind(str(p))
        t = open(p, "rb").read().decode("utf-8-sig")
        files.append((engine, AsIsFile(str(p), k, prepare_urdf_text(t) if k == "urdf"
                                       else t)))
        notes.append(f"{engine} loads its own file {p} ({k.upper()})")
    import hashlib

    sha = hashlib.sha256(open(path, "rb").read()).hexdigest()
    return AsIsModel(spec, path, sha, tuple(notes), files=tuple(files),
                     declared_friction=friction, mimic=mimic, geometry=geometry,
                     nonphysical=nonphysical if repair_inertia else ())
