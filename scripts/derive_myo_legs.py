"""Derive data/mjcf_models/myo_legs/ from a checkout of MyoSuite's model repository
(MyoHub/myo_sim) and check that MuJoCo compiles the copy to the same model:

    python scripts/derive_myo_legs.py MYO_SIM_CHECKOUT [--out data/mjcf_models/myo_legs]

The copy keeps the repository's layout under ``OUT/myo_sim/`` (the model's mesh paths are
``../myo_sim/meshes/…`` from ``meshdir=".."``) and MyoSuite's text line for line, less the
lines that only draw: the scene include, the terrain height field and its geom, and every
mesh geom (with its ``<mesh>`` asset) of a body whose ``<inertial>`` is given (MuJoCo then
takes no mass from its geoms). The meshes that give a body its mass (the talus, the toes
and the patella of each leg, bodies without ``<inertial>``) are kept and copied. Each
changed file says so in a comment after its root element (Apache 2.0, section 4b).

Then both are compiled and every array that enters the dynamics or the kinematics the
harness reads is compared exactly (units as MuJoCo compiles them: m, kg, kg·m², rad).
Prints one line per check; exits 1 on a difference, 2 on a bad argument.
"""
from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

import mujoco
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
FILES = ("leg/myolegs.xml", "leg/assets/myolegs_assets.xml", "leg/assets/myolegs_chain.xml",
         "leg/assets/myolegs_tendon.xml", "leg/assets/myolegs_muscle.xml",
         "torso/assets/myotorso_rigid_assets.xml", "torso/assets/myotorso_rigid_chain.xml")
MASS_MESHES = ("r_talus", "l_talus", "r_bofoot", "l_bofoot", "r_patella", "l_patella")
DRAWING = (r'<include file="\.\./scene/', r'<hfield name="terrain"', r'<geom name="terrain"')
COMPARED = ("body_parentid", "body_mass", "body_inertia", "body_ipos", "body_iquat",
            "body_pos", "body_quat", "jnt_type", "jnt_axis", "jnt_pos", "jnt_range",
            "jnt_limited", "jnt_stiffness", "qpos0", "qpos_spring", "dof_damping",
            "dof_armature", "dof_frictionloss", "eq_type", "eq_data", "eq_obj1id",
            "eq_obj2id", "eq_solref", "eq_solimp", "site_bodyid", "site_pos", "site_quat",
            "tendon_stiffness", "tendon_damping", "opt.gravity")
NOTE = ("<!-- Changed for the parity harness (data/mjcf_models/myo_legs/README.md): lines "
        "that only draw removed (scene, terrain, mesh geoms of bodies with an <inertial>). -->")


def _keep(line: str) -> bool:
    """False for a line that only draws: DRAWING, a mesh geom or mesh asset not giving mass."""
    if any(re.search(p, line) for p in DRAWING):
        return False
    m = re.search(r'<geom[^>]*\smesh="([^"]+)"', line) or re.search(
        r'<mesh[^>]*\sname="([^"]+)"', line)
    return m is None or m.group(1) in MASS_MESHES


def derive(src: Path, out: Path) -> list[str]:
    """Write the copy under ``out/myo_sim``; returns the files changed."""
    changed = []
    for rel in FILES:
        lines = (src / rel).read_text().splitlines(keepends=True)
        kept = [x for x in lines if _keep(x)]
        text = re.sub(r"\n\s*<asset>\s*</asset>", "", "".join(kept))  # an emptied block
        if len(kept) < len(lines):
            first = text.index(">", text.index("<mujoco")) + 1
            text = text[:first] + "\n" + NOTE + text[first:]
            changed.append(rel)
        dest = out / "myo_sim" / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text)
    (out / "myo_sim" / "meshes").mkdir(parents=True, exist_ok=True)
    for name in MASS_MESHES:
        shutil.copyfile(src / "meshes" / f"{name}.stl", out / "myo_sim" / "meshes" / f"{name}.stl")
    shutil.copyfile(src / "LICENSE", out / "LICENSE")
    return changed


def compare(a: Path, b: Path) -> list[str]:
    """Differences between MuJoCo's compiled models of ``a`` and ``b`` ([] if none)."""
    ma, mb = mujoco.MjModel.from_xml_path(str(a)), mujoco.MjModel.from_xml_path(str(b))
    bad = []
    for f in COMPARED:
        x, y = ma, mb
        for part in f.split("."):
            x, y = getattr(x, part), getattr(y, part)
        if np.shape(x) != np.shape(y) or not np.array_equal(x, y):
            bad.append(f)
    for kind in ("body", "joint", "equality", "site", "tendon"):
        obj = getattr(mujoco.mjtObj, f"mjOBJ_{kind.upper()}")
        n = getattr(ma, {"body": "nbody", "joint": "njnt", "equality": "neq", "site": "nsite",
                         "tendon": "ntendon"}[kind])
        if [mujoco.mj_id2name(ma, obj, i) for i in range(n)] != \
                [mujoco.mj_id2name(mb, obj, i) for i in range(n)]:
            bad.append(f"{kind} names")
    return bad


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("myo_sim", type=Path)
    p.add_argument("--out", type=Path, default=ROOT / "data" / "mjcf_models" / "myo_legs")
    a = p.parse_args(argv)
    if not (a.myo_sim / FILES[0]).is_file():
        print(f"{a.myo_sim}: not a myo_sim checkout (no {FILES[0]})", file=sys.stderr)
        return 2
    changed = derive(a.myo_sim, a.out)
    print(f"written: {a.out}/myo_sim ({len(FILES)} model files, {len(changed)} changed: "
          f"{', '.join(changed)}; {len(MASS_MESHES)} meshes)")
    bad = compare(a.myo_sim / FILES[0], a.out / "myo_sim" / FILES[0])
    print(f"compiled alike: {len(COMPARED)} arrays and the element names "
          + ("identical" if not bad else f"DIFFER: {', '.join(bad)}"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
