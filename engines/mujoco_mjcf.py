"""The MJCF compile step: MuJoCo compiles a user's MJCF file and hands the compiled model
over as plain values (harness/model/mjcf_import.py ``CompiledMjcf``), which the MJCF
importer beside the other importers reads into a FixtureSpec.

Units: SI as MuJoCo compiles them — m, kg, kg·m², rad (an MJCF in degrees is converted by
the compiler), N·m·s/rad (damping), kg·m² (armature); quaternions w x y z as MuJoCo holds
them. The compiled model is read, so the file's compiler settings (inertia from geoms,
``angle``, ``eulerseq``, fusestatic, classes and defaults) have already acted.
"""
from __future__ import annotations

import numpy as np

from harness.core.errors import BadInput
from harness.model.binding import Binding
from harness.model.mjcf_import import COMPILED_ARRAYS, NAMED_KINDS, CompiledMjcf

BINDING = Binding("mujoco")
with BINDING:
    import mujoco


def compile_mjcf(path: str) -> CompiledMjcf:
    """The MJCF at ``path`` compiled by MuJoCo (``MjModel.from_xml_path``) [SI units];
    BadInput(path, problem) if MuJoCo cannot compile it, EngineUnavailable without the
    binding."""
    BINDING.require()
    path = str(path)
    try:
        m = mujoco.MjModel.from_xml_path(path)
    except (ValueError, RuntimeError) as e:
        raise BadInput(path, f"MuJoCo cannot compile it: {e}") from None
    obj = mujoco.mjtObj
    objects = {"body": (obj.mjOBJ_BODY, m.nbody), "joint": (obj.mjOBJ_JOINT, m.njnt),
               "site": (obj.mjOBJ_SITE, m.nsite), "equality": (obj.mjOBJ_EQUALITY, m.neq),
               "tendon": (obj.mjOBJ_TENDON, m.ntendon), "key": (obj.mjOBJ_KEY, m.nkey)}
    names = {kind: [mujoco.mj_id2name(m, objects[kind][0], i) or ""
                    for i in range(objects[kind][1])] for kind in NAMED_KINDS}
    joint = mujoco.mjtJoint
    joint_types = {int(joint.mjJNT_FREE): "free", int(joint.mjJNT_BALL): "ball",
                   int(joint.mjJNT_SLIDE): "slide", int(joint.mjJNT_HINGE): "hinge"}
    eq = mujoco.mjtEq
    equality_types = {int(eq.mjEQ_CONNECT): "connect", int(eq.mjEQ_WELD): "weld",
                      int(eq.mjEQ_JOINT): "joint", int(eq.mjEQ_TENDON): "tendon"}
    disabled = int(m.opt.disableflags)
    return CompiledMjcf(
        model_name=m.names[:m.names.index(b"\0")].decode("utf-8", "replace"),
        names=names,
        joint_types=tuple(joint_types[int(t)] for t in m.jnt_type),
        equality_types=tuple(equality_types.get(int(t), "flex") for t in m.eq_type),
        equality_on_sites=tuple(int(t) == int(obj.mjOBJ_SITE) for t in m.eq_objtype),
        gravity=tuple(float(g) for g in m.opt.gravity),
        gravity_disabled=bool(disabled & int(mujoco.mjtDisableBit.mjDSBL_GRAVITY)),
        damper_disabled=bool(disabled & int(mujoco.mjtDisableBit.mjDSBL_DAMPER)),
        density=float(m.opt.density), viscosity=float(m.opt.viscosity),
        nflex=int(m.nflex), nplugin=int(m.nplugin), nu=int(m.nu),
        arrays={f: np.array(getattr(m, f)) for f in COMPILED_ARRAYS if hasattr(m, f)})
