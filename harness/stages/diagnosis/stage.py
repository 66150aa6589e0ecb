"""Diagnose engine disagreements: load a user's model as each engine would by default
(*as-is*), read back what every engine compiled, name the known causes of their
differences, and measure each cause's share by removing it alone (ablation).

Engine-blind: engines are reached only through their adapters (``readback``,
``ablated``, ``naive_dynamics``, ``as_is_joints`` in engines/*.py).

As-is loading (``load_as_is``). The user's URDF or MJCF goes to every engine's own parser
with that engine's defaults (MuJoCo: fusestatic, inertiafromgeom auto, limits, mimic
equalities and frictionloss as soft constraints; Pinocchio: pin.aba ignores damping and
friction, mimic tags ignored; Drake: damping applied, MJCF armature not parsed). What the
harness still does, and says so: (1) a URDF's ``<visual>`` elements and its mesh
``<collision>`` elements are removed (``package://`` meshes cannot be resolved; primitive
collision geometry is kept because MuJoCo derives inertia from it); (2) the base is the
declared one (``--floating``: a free root named ``root_joint``; otherwise the root is
welded — Drake alone would make an unattached root floating); (3) MuJoCo contacts are
disabled (stages 0-2 are contact-free); (4) Drake's coupler constraints (from mimic tags)
are removed, because a continuous-time plant refuses every constraint. The declared model
(the reference) is the file as the harness parses it (harness/model/urdf_import.py, with mimic
joints kept as moving joints and the mimic relation recorded; friction recorded).
Quantities are still exchanged in canonical coordinates (harness/core/conventions.py).

Read-back (``adapter.readback()``; format below) feeds stage 0 element by element
(harness/stages/identity.py) and the cause catalogue here.

    {"engine": str, "api": str, "notes": [str], "nq_native": int, "nv_native": int,
     "bodies": {name: {"mass" kg, "com_W" (3) m, "I_W" (3x3) kg·m² about the com,
                       "X_WB" (4x4)}},                     # bodies the engine keeps
     "joints": {canonical joint: {"type", "axis_W" (3), "X_WJ" (4x4), "lower", "upper"
                (None if unbounded), "limit_enforced", "damping", "damping_applied",
                "friction", "friction_applied", "armature", "native_q", "native_v",
                "native_index"}},
     "couplings": {follower joint: leader joint}}           # enforced in the dynamics

all at the canonical neutral q, world axes; "held" values (damping, friction) are what the
engine stores, "applied" what its dynamics use.

Cause catalogue (``CATALOGUE``): each cause has the read-back evidence that detects it
and the ablation that removes it; its share of a difference between two engines is
``1 − |diff without the cause| / |diff as-is|`` with |·| the record's max_abs (the largest
element difference over the sampled states), computed from stored records only.
``harness verify`` recomputes every record behind a share.
"""
from __future__ import annotations

import dataclasses
import itertools
import json
import math
from dataclasses import dataclass, field

import numpy as np

from harness.core.errors import EngineUnavailable, ModelRejected, NotProvided
from harness.core.records import compare
from harness.core.tolerances import lookup
from harness.model.as_is import AsIsModel
from harness.model.prepared import PreparedModel

NAME = "diagnosis"
AS_IS = "as-is"
NAIVE = "naive"
ALL = "without:all"
QUANTITIES = ("mass_matrix", "bias_forces", "forward_dynamics", "inverse_dynamics")
UNITS = {"mass_matrix": "kg·m² | kg", "bias_forces": "N·m | N",
         "forward_dynamics": "rad/s² | m/s²", "inverse_dynamics": "N·m | N"}

# cause key -> (title, what removing it means)
CATALOGUE = {
    "damping": ("joint damping", "damping set to 0 in every engine that applies it"),
    "armature": ("armature (reflected rotor inertia)", "armature set to 0 in every "
                 "engine that has it"),
    "friction": ("joint friction", "Coulomb friction (e.g. an MJCF frictionloss) set to 0 in "
                 "every engine that applies it"),
    "limits": ("joint limits as constraints", "limit constraints disabled in every engine "
               "that enforces them"),
    "couplings": ("coupled (mimic) joints", "the coupling constraints disabled in every "
                  "engine that enforces them"),
    "fused": ("fused static bodies and their inertial rotation", "the fused body's "
              "inertia set to the declared merge of the bodies fused into it"),
    "geometry": ("inertia from geometry", "the body's inertia set to the declared one "
                 "(the file's <inertial>, or none)"),
    "dropped": ("dropped or merged joints", "the joint locked (made fixed) in every "
                "engine that has it"),
    "conventions": ("quaternion and velocity conventions", "the harness's conversion to "
                    "and from each engine's coordinates (the measured 'before' is the "
                    "same arrays handed over unconverted)"),
    "precision": ("precision lost in a file round trip", "the body placements and "
                  "inertias set to the declared full-precision values"),
    "other": ("other differences in the compiled model", "not in the catalogue: no "
              "ablation"),
}


# ----- findings ---------------------------------------------------------------------------
@dataclass
class Finding:
    """One cause found in the read-backs. ``changes`` {engine: adapter.ablated(**)} or
    ``lock`` (joints) define its ablation; ``variant`` names the records measuring it."""

    cause: str
    engines: list
    elements: list
    evidence: str
    changes: dict = field(default_factory=dict)
    lock: list = field(default_factory=list)
    first: str = ""
    structural: bool = False  # a difference in structure only (e.g. an exact fusion)

    @property
    def variant(self) -> str:
        if self.cause == "conventions":
            return NAIVE
        return f"without:{self.cause}" if (self.changes or self.lock) else ""

    def to_json(self) -> dict:
        return {"cause": self.cause, "title": CATALOGUE[self.cause][0],
                "removal": CATALOGUE[self.cause][1], "engines": list(self.engines),
                "elements": list(self.elements), "evidence": self.evidence,
                "variant": self.variant, "first": self.first,
                "structural": self.structural}


def _merge_changes(into: dict, ch: dict):
    """Merge ablation changes: per-body dicts (inertials, placements) are united."""
    for k, v in ch.items():
        if isinstance(v, dict):
            into.setdefault(k, {}).update(v)
        else:
            into[k] = v


def _g(x) -> str:
    return f"{x:.3g}"


def _unit(kind: str, what: str) -> str:
    lin = kind == "prismatic"
    return {"damping": "N·s/m" if lin else "N·m·s/rad", "friction": "N" if lin else "N·m",
            "armature": "kg" if lin else "kg·m²"}[what]


def _join(names, n=4) -> str:
    names = list(names)
    return ", ".join(names[:n]) + (f" and {len(names) - n} more" if len(names) > n else "")


def _rel(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    s = max(np.abs(a).max(initial=0.0), np.abs(b).max(initial=0.0))
    d = np.abs(a - b).max(initial=0.0)
    return 0.0 if d == 0 else (d / s if s > 0 else math.inf)


def _differs(a, b, tol) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    s = max(np.abs(a).max(initial=0.0), np.abs(b).max(initial=0.0))
    return bool(np.abs(a - b).max(initial=0.0) > tol.atol + tol.rtol * s)


def _combine_world(items):
    from harness.core.conventions import combine_inertias

    m, c, I = combine_inertias(items)
    return float(m), np.asarray(c, dtype=float), np.asarray(I, dtype=float)


def _rotation_dropped_merge(model, head, members, declared):
    """The merge a fuser that drops the fixed joints' rotations would compute: each member
    placed at its joint origins' positions but with its frame parallel to ``head``'s."""
    spec = model.spec
    R_head = declared["bodies"][head]["X_WB"][:3, :3]
    items = []
    for b in members:
        body = spec.body(b)
        p = declared["bodies"][b]["X_WB"][:3, 3]
        items.append((body.mass, p + R_head @ np.array(body.com),
                      R_head @ body.inertia_matrix @ R_head.T))
    return _combine_world(items)


def _holder(model, body, held) -> str:
    """The body an engine keeps ``body`` in: ``body`` if held, else the nearest ancestor
    across fixed joints that it holds ('world' past the root)."""
    spec = model.spec
    b = body
    while b not in held:
        j = spec.parent_joint(b)
        if j is None:
            return "world"
        if j.type != "fixed":
            return ""  # a moving joint's child is missing: not a fusion
        b = j.parent
    return b


def detect(model, declared: dict, rbs: dict, missing: dict) -> list:
    """Findings of the catalogue in the read-backs ``rbs`` {engine: readback} against the
    declared read-back and each other; ``missing`` {engine: [spec joints it lacks]}."""
    from harness.stages.identity import body_row, compared_bodies

    findings = {}
    spec, engines = model.spec, list(rbs)
    body_tol = lookup("model_identity", "body_inertia")
    prec = lookup(NAME, "round_trip")

    def add(cause, engine, elements, text, changes=None, lock=(), structural=False):
        f = findings.setdefault(cause, Finding(cause, [], [], "", structural=True))
        f.structural = f.structural and structural
        if engine and engine not in f.engines:
            f.engines.append(engine)
        for e in elements:
            if e not in f.elements:
                f.elements.append(e)
        f.evidence = (f.evidence + "; " if f.evidence else "") + text
        for e, ch in (changes or {}).items():
            _merge_changes(f.changes.setdefault(e, {}), ch)
        f.lock += [j for j in lock if j not in f.lock]
        if not f.first and elements:
            f.first = elements[0]

    # --- joints present in the spec, absent from an engine --------------------------
    lacking = {}
    for e, js in missing.items():
        for j in js:
            lacking.setdefault(j, []).append(e)
    if lacking:
        order = [s.name for s in model.layout.slots]
        js = sorted(lacking, key=order.index)
        have = [e for e in engines if not missing.get(e)]
        for j in js:
            kind = next(x.type for x in spec.joints if x.name == j)
            add("dropped", None, [j], f"{kind} joint {j} is missing from "
                f"{_join(lacking[j])}'s compiled model (present in "
                f"{_join(have) or 'no engine'} and in the file)", lock=[j])
        findings["dropped"].engines = sorted({e for j in js for e in lacking[j]},
                                             key=engines.index)

    # --- per-joint dynamics settings ------------------------------------------------
    slots = [s for s in model.layout.slots if s.type != "free"]
    for what, cause in (("damping", "damping"), ("armature", "armature"),
                        ("friction", "friction")):
        key = "armature" if what == "armature" else f"{what}_applied"
        vals = {e: {s.name: rbs[e]["joints"][s.name][key] for s in slots
                    if s.name in rbs[e]["joints"]} for e in engines}
        dec = {s.name: declared["joints"][s.name][key] for s in slots}
        joints = [s.name for s in slots if len({vals[e][s.name] for e in engines
                                                if s.name in vals[e]}) > 1]
        if not joints:
            continue
        applying = [e for e in engines if any(vals[e].get(j, 0) != 0 for j in joints)]
        ignoring = [e for e in engines if e not in applying]
        kinds = {s.name: s.type for s in slots}
        groups = {}
        for j in joints:
            ref = next((vals[e][j] for e in applying if vals[e].get(j)), dec[j])
            groups.setdefault((ref, _unit(kinds[j], what)), []).append(j)
        desc = "; ".join(f"{_g(v)} {u} on {_join(js)}" for (v, u), js in groups.items())
        held = [e for e in ignoring if any(rbs[e]["joints"][j].get(what, 0) for j in joints
                                           if j in rbs[e]["joints"])]
        text = (f"{what} {desc}: applied by {_join(applying) or 'no engine'}; not by "
                f"{_join(ignoring) or 'any other engine'}")
        if held:
            text += (f" ({_join(held)} hold{'s' if len(held) == 1 else ''} it in the "
                     "compiled model but the dynamics ignore it)")
        diff_apply = [e for e in applying if any(abs(vals[e].get(j, 0) - dec[j]) >
                                                 1e-12 * max(abs(dec[j]), 1e-300)
                                                 for j in joints if j in vals[e])]
        if diff_apply and what != "armature":
            text += f"; {_join(diff_apply)} apply values other than the file's"
        if what == "armature" and any(dec[j] for j in joints):
            missing_arm = [e for e in ignoring]
            if missing_arm:
                text += f" (the file declares it: missing from {_join(missing_arm)})"
        add(cause, None, joints, text, {e: {what: 0.0} for e in applying})
        findings[cause].engines = applying + ignoring

    # --- limits enforced as constraints ----------------------------------------------
    bounded = [s.name for s in slots if s.lower is not None]
    enforcing = [e for e in engines if any(rbs[e]["joints"].get(j, {}).get("limit_enforced")
                                           for j in bounded)]
    if enforcing and len(enforcing) < len(engines):
        js = [j for j in bounded if any(rbs[e]["joints"].get(j, {}).get("limit_enforced")
                                        for e in enforcing)]
        others = _join([e for e in engines if e not in enforcing])
        add("limits", None, js, f"limits of {len(js)} joint(s) ({_join(js)}) act as "
            f"constraints in {_join(enforcing)}; {others} do not enforce them (they act "
            "only on states beyond a limit)",
            {e: {"limits": False} for e in enforcing})
        findings["limits"].engines = list(engines)

    # --- couplings (mimic) -------------------------------------------------------------
    dec_c = declared.get("couplings", {})
    keys = sorted(set(dec_c) | {f for e in engines for f in rbs[e]["couplings"]})
    if keys and len({tuple(sorted(rbs[e]["couplings"].items())) for e in engines}) > 1:
        enf = [e for e in engines if rbs[e]["couplings"]]
        free = [e for e in engines if not rbs[e]["couplings"]]
        def leader(f):
            return dec_c.get(f) or next(rbs[e]["couplings"][f] for e in enf
                                        if f in rbs[e]["couplings"])

        rel = ", ".join(f"{f} follows {leader(f)}" for f in keys)
        add("couplings", None, keys, f"{rel}{' (mimic in the file)' if dec_c else ''}: "
            f"enforced by {_join(enf)} as a constraint; {_join(free)} treat the joints as "
            "independent", {e: {"couplings": False} for e in enf})
        findings["couplings"].engines = list(engines)

    # --- coordinates conventions ---------------------------------------------------------
    conv = []
    for s in model.layout.slots:
        natives = {(rbs[e]["joints"][s.name]["native_q"], rbs[e]["joints"][s.name]["native_v"])
                   for e in engines if s.name in rbs[e]["joints"]}
        if len(natives) > 1:
            conv.append(s.name)
    orders = {e: [rbs[e]["joints"][s.name]["native_index"] for s in model.layout.slots
                  if s.name in rbs[e]["joints"]] for e in engines}
    reordered = [e for e in engines if orders[e] != sorted(orders[e])]
    if conv or reordered:
        parts = []
        for j in conv:
            by = {}
            for e in engines:
                if j in rbs[e]["joints"]:
                    jj = rbs[e]["joints"][j]
                    by.setdefault(f"q = [{jj['native_q']}], v = [{jj['native_v']}]", []).append(e)
            parts.append(f"{j}: " + "; ".join(f"{_join(es)} {k}" for k, es in by.items()))
        if reordered:
            parts.append(f"joint order differs from the canonical one in {_join(reordered)}")
        sizes = {e: (rbs[e]["nq_native"], rbs[e]["nv_native"]) for e in engines}
        if len(set(sizes.values())) > 1:
            parts.append("native nq/nv " + ", ".join(f"{e} {a}/{b}" for e, (a, b) in sizes.items())
                         + " (arrays of different lengths cannot even be exchanged)")
        add("conventions", None, conv, " | ".join(parts) + " — the harness converts them; "
            "the measured effect is what handing the same arrays over unconverted costs")
        findings["conventions"].engines = list(engines)

    # --- bodies: fused, inertia from geometry, precision, other ----------------------------
    names = compared_bodies(model)
    for e in engines:
        held = set(rbs[e]["bodies"])
        groups = {}
        for b in names:
            h = _holder(model, b, held)
            if h:
                groups.setdefault(h, []).append(b)
            elif spec.body(b).mass > 0:
                add("other", e, [b], f"{e}: body {b} is missing from the compiled model")
        for h, members in groups.items():
            if h == "world":
                heavy = [b for b in members if spec.body(b).mass > 0]
                if heavy:
                    add("fused", e, heavy, f"{e} fused {_join(heavy)} into the world (welded "
                        "bodies: no effect on the dynamics of moving joints)", structural=True)
                continue
            fused = [b for b in members if b != h]
            items = [(declared["bodies"][b]["mass"], declared["bodies"][b]["com_W"],
                      declared["bodies"][b]["I_W"]) for b in members]
            want = _combine_world(items)
            X = rbs[e]["bodies"][h]["X_WB"]
            want_row = body_row({"mass": want[0], "com_W": want[1], "I_W": want[2], "X_WB": X})
            got = rbs[e]["bodies"][h]
            got_row = body_row(got)
            heavy = [b for b in fused if spec.body(b).mass > 0]
            Xd = declared["bodies"][h]["X_WB"]
            placement_rel = _rel(X, Xd)
            inertia_diff = _differs(got_row, want_row, body_tol)
            if not inertia_diff and placement_rel <= 1e-12:
                if heavy:
                    add("fused", e, heavy, f"{e} fused {_join(heavy)} into {h}: the merged "
                        f"inertia equals the declared merge (rel. {_g(_rel(got_row, want_row))})",
                        structural=True)
                continue
            target = {h: want}
            rel = _rel(got_row, want_row)
            geom = [b for b in members if spec.body(b).mass == 0 and b in model.geometry]
            if heavy and inertia_diff:
                alt = _rotation_dropped_merge(model, h, members, declared)
                alt_row = body_row({"mass": alt[0], "com_W": alt[1], "I_W": alt[2], "X_WB": X})
                if not _differs(got_row, alt_row, body_tol):
                    add("fused", e, [h] + heavy, f"{e} fused {_join(heavy)} into {h} with the "
                        f"fixed joint's rotation dropped: its inertia equals that wrong "
                        f"merge (com off by {_g(np.linalg.norm(got['com_W'] - want[1]))} m)",
                        {e: {"inertials": target}})
                    continue
            if geom and got["mass"] > want[0]:
                add("geometry", e, [h] + [g for g in geom if g != h],
                    f"{e} gave {h}{' (with ' + _join(fused) + ' fused into it)' if fused else ''} "
                    f"{_g(got['mass'] - want[0])} kg more than declared: {_join(geom)} has no "
                    "<inertial> but collision geometry, and the engine derived mass from it",
                    {e: {"inertials": target}})
                if heavy:
                    add("fused", e, heavy, f"{e} fused {_join(heavy)} into {h}",
                        structural=True)
                continue
            if rel <= prec.atol and placement_rel <= prec.atol:
                digits = -math.log10(max(rel, placement_rel, 1e-17))
                add("precision", e, [h], f"{e}: {h} agrees with the declared values to "
                    f"~{digits:.0f} significant digits (rel. {_g(max(rel, placement_rel))})",
                    {e: {"inertials": target, "placements": {h: Xd}}})
                continue
            add("other", e, [h], f"{e}: body {h} differs from the declared model (inertia "
                f"rel. {_g(rel)}, placement rel. {_g(placement_rel)})")
    # other joint-level differences (axis, placement beyond precision, limits values)
    for e in engines:
        for s in model.layout.slots:
            jj = rbs[e]["joints"].get(s.name)
            if jj is None:
                continue
            dj = declared["joints"][s.name]
            ax = _rel(jj["axis_W"], dj["axis_W"])
            if ax > 1e-10 and not (ax <= prec.atol and "precision" in findings):
                add("other", e, [s.name], f"{e}: joint {s.name} axis differs (rel. {_g(ax)})")
            a, d = (jj["lower"], jj["upper"]), (dj["lower"], dj["upper"])
            lim = (a[0] is None) != (d[0] is None) or (a[0] is not None and _rel(a, d) > 1e-12)
            if lim:
                add("other", e, [s.name], f"{e}: joint {s.name} limits {jj['lower']}, "
                    f"{jj['upper']} (declared {dj['lower']}, {dj['upper']})")
    out = [findings[k] for k in CATALOGUE if k in findings]
    return out


# ----- evaluation -------------------------------------------------------------------------
def _slot_index(layout):
    return {s.name: s for s in layout.slots}


def _to_engine(x, full_layout, layout, which):
    """Canonical full-layout vector → the engine layout's (by joint name)."""
    full = _slot_index(full_layout)
    out = np.empty(layout.nq if which == "q" else layout.nv)
    for s in layout.slots:
        f = full[s.name]
        if which == "q":
            out[s.iq:s.iq + s.nq] = x[f.iq:f.iq + f.nq]
        else:
            out[s.iv:s.iv + s.nv] = x[f.iv:f.iv + f.nv]
    return out


def _common(layouts, full_layout):
    names = [s.name for s in full_layout.slots if all(s.name in _slot_index(l) for l in layouts)]
    return names


def _dof_index(layout, names):
    idx = _slot_index(layout)
    return np.array([i for n in names for i in range(idx[n].iv, idx[n].iv + idx[n].nv)],
                    dtype=np.intp)


def evaluate(adapters: dict, inputs, full_layout):
    """{quantity: {engine: (S, ...) array}} on the dofs common to every adapter's layout,
    plus {engine: {quantity: reason}} for what an engine could not compute."""
    layouts = [a.layout for a in adapters.values()]
    names = _common(layouts, full_layout)
    out = {q: {} for q in QUANTITIES}
    why = {}
    S = inputs.q.shape[0]
    for e, a in adapters.items():
        idx = _dof_index(a.layout, names)
        rows = {q: [] for q in QUANTITIES}
        for k in range(S):
            q = _to_engine(inputs.q[k], full_layout, a.layout, "q")
            v = _to_engine(inputs.v[k], full_layout, a.layout, "v")
            tau = _to_engine(inputs.tau[k], full_layout, a.layout, "v")
            vd = _to_engine(inputs.vdot[k], full_layout, a.layout, "v")
            for qty, fn in (("mass_matrix", lambda: a.mass_matrix(q)[np.ix_(idx, idx)]),
                            ("bias_forces", lambda: a.bias_forces(q, v)[idx]),
                            ("forward_dynamics", lambda: a.forward_dynamics(q, v, tau)[idx]),
                            ("inverse_dynamics", lambda: a.inverse_dynamics(q, v, vd)[idx])):
                if qty in why.get(e, {}):
                    continue
                try:
                    rows[qty].append(np.asarray(fn(), dtype=float))
                except NotProvided as err:
                    why.setdefault(e, {})[qty] = f"not provided: {err.why}"
                except Exception as err:  # an engine raised: kept, never hidden
                    why.setdefault(e, {})[qty] = f"{type(err).__name__}: {err}"
        for qty in QUANTITIES:
            if qty not in why.get(e, {}):
                out[qty][e] = np.stack(rows[qty])
    return out, why, names


def evaluate_naive(adapters: dict, inputs):
    """{quantity: {engine: array}} of M and v̇ with the canonical arrays handed over
    unconverted (adapter.naive_dynamics); engines that cannot take them are absent."""
    out = {"mass_matrix": {}, "forward_dynamics": {}}
    for e, a in adapters.items():
        Ms, As = [], []
        for k in range(inputs.q.shape[0]):
            r = a.naive_dynamics(inputs.q[k], inputs.v[k], inputs.tau[k])
            if r is None:
                break
            Ms.append(r[0])
            As.append(r[1])
        else:
            out["mass_matrix"][e] = np.stack(Ms)
            out["forward_dynamics"][e] = np.stack(As)
    return out


# ----- the run ----------------------------------------------------------------------------
@dataclass
class DiagnosisResult:
    records: list
    arrays: dict
    summaries: list


def _sampling_model(model, beyond: float):
    """The declared model with every limit widened by ``beyond`` × its range per side
    (to sample states beyond the limits); the model itself if beyond == 0."""
    if not beyond:
        return model
    joints = tuple(dataclasses.replace(j, lower=j.lower - beyond * (j.upper - j.lower),
                                       upper=j.upper + beyond * (j.upper - j.lower))
                   if j.lower is not None else j for j in model.spec.joints)
    return PreparedModel(dataclasses.replace(model.spec, joints=joints), model.source)


def _outside(inputs, model) -> int:
    n = 0
    for q in inputs.q:
        if any(s.lower is not None and not (s.lower <= q[s.iq] <= s.upper)
               for s in model.layout.slots):
            n += 1
    return n


def diagnose_model(model: AsIsModel, engines: list, samples: int = 10, seed: int = 0,
                   beyond_limits: float = 0.0, progress=None):
    """(records, arrays, summary) of one as-is model (see ``run``)."""
    from harness.model import registry
    from harness.stages.base import Inputs, fixture_rng
    from harness.stages.identity import declared_readback

    fx = model.name
    say = progress or (lambda m: None)
    arrays, records, notes = {}, [], list(model.notes)
    classes = {e: registry.adapter_class(e) for e in engines}
    adapters, missing, failed = {}, {}, {}
    spec_joints = [j.name for j in model.spec.moving_joints()]
    for e in engines:
        try:
            have = classes[e].as_is_joints(model)
            missing[e] = [j for j in spec_joints if j not in have]
            extra = [j for j in have if j not in spec_joints]
            if extra:
                raise ModelRejected(e, f"joints {', '.join(extra)} are not in the file as "
                                       "the harness reads it")
            adapters[e] = classes[e](model.without_joints(missing[e]) if missing[e]
                                     else model)
        except (ModelRejected, EngineUnavailable, RuntimeError, ValueError) as err:
            failed[e] = str(err)
            notes.append(f"{e} could not load the model as-is: {err}")
    say(f"{fx}: read back {', '.join(adapters)}")
    rbs = {e: a.readback() for e, a in adapters.items()}
    for e, rb in rbs.items():
        notes += [f"{e}: {n}" for n in rb["notes"]]
    declared = declared_readback(model)
    findings = detect(model, declared, rbs, {e: missing[e] for e in adapters})
    inputs = Inputs.sample(_sampling_model(model, beyond_limits), samples,
                           fixture_rng(seed, fx))
    n_out = _outside(inputs, model)
    for f in list(findings):
        if f.cause == "limits":
            if n_out:
                f.evidence += f"; {n_out} of {samples} sampled states lie beyond a limit"
            else:  # limit constraints act only beyond a limit: nothing to measure here
                findings.remove(f)
                notes.append(f"{f.evidence}; all {samples} sampled states are inside the "
                             "limits (--beyond-limits FRACTION samples beyond them)")
    for k, v in inputs.arrays().items():
        arrays[f"in/{fx}/{NAME}/{k}"] = v
    lkey = f"labels/{fx}/{NAME}"
    labels = np.array([f"state {i}" for i in range(samples)])
    arrays[lkey] = labels

    def variant_adapters(fs):
        changes, lock = {}, []
        for f in fs:
            for e, ch in f.changes.items():
                _merge_changes(changes.setdefault(e, {}), ch)
            lock += f.lock
        base = model.with_joints_locked(lock) if lock else None
        out, why = {}, {}
        for e in adapters:
            try:
                if base is not None:
                    a = classes[e](base)
                else:
                    a = adapters[e]
                out[e] = a.ablated(changes[e]) if e in changes else a
            except Exception as err:
                why[e] = f"{type(err).__name__}: {err}"
        return out, why

    def record_variant(variant, outs):
        for qty, per in outs.items():
            tol = lookup(NAME, qty)
            for e, arr in per.items():
                arrays[f"out/{fx}/{NAME}/{variant}/{qty}/{e}"] = arr
            for a, b in itertools.combinations([e for e in engines if e in per], 2):
                if per[a].shape != per[b].shape or per[a].size == 0:
                    continue  # no common dofs (e.g. a model without moving joints)
                records.append(compare(
                    f"{fx}/{NAME}/{qty}/{a}~{b}/{variant}", NAME, fx, qty, a, b,
                    per[a], per[b], tol, f"out/{fx}/{NAME}/{variant}/{qty}/{a}",
                    f"out/{fx}/{NAME}/{variant}/{qty}/{b}", labels, lkey))

    say(f"{fx}: as-is dynamics")
    outs, why, common = evaluate(adapters, inputs, model.layout)
    record_variant(AS_IS, outs)
    for e, w in why.items():
        for qty, r in w.items():
            if not r.startswith("not provided"):
                notes.append(f"{e} {qty} as-is: {r}")
    measured = [f for f in findings if f.variant and f.variant != NAIVE]
    variants = [(f.variant, [f]) for f in measured]
    if len(measured) > 1:
        variants.append((ALL, measured))
    for name, fs in variants:
        say(f"{fx}: {name}")
        vad, vwhy = variant_adapters(fs)
        for e, r in vwhy.items():
            notes.append(f"{e} cannot be changed for {name}: {r}")
        o, _, _ = evaluate(vad, inputs, model.layout)
        record_variant(name, o)
    if any(f.cause == "conventions" for f in findings):
        record_variant(NAIVE, evaluate_naive(adapters, inputs))
    arrays[f"diag/{fx}/findings"] = _strings([json.dumps(f.to_json(), ensure_ascii=False)
                                              for f in findings])
    arrays[f"diag/{fx}/notes"] = _strings(notes)
    arrays[f"diag/{fx}/engines"] = _strings(list(adapters))
    arrays[f"diag/{fx}/failed"] = _strings([f"{e}: {' '.join(w.split())[:300]}"
                                            for e, w in failed.items()])
    full = {s.name: s for s in model.layout.slots}
    arrays[f"diag/{fx}/dofs"] = _strings([n for n in common for _ in range(full[n].nv)])
    return records, arrays


def _strings(items) -> np.ndarray:
    """A unicode array (the evidence format holds no objects), shape (0,) when empty."""
    return np.array(list(items), dtype=str) if items else np.zeros(0, dtype="<U1")


def run(models, engines, samples: int = 10, seed: int = 0, beyond_limits: float = 0.0,
        progress=None) -> DiagnosisResult:
    """Diagnose every as-is model: read-backs, findings, and records of the stage-2
    quantities (M, h, v̇, τ) of every engine pair as-is, without each cause alone, and
    without all of them (stage ``diagnosis``; arrays under ``out/<fx>/diagnosis/…``, the
    findings under ``diag/<fx>/…``)."""
    records, arrays = [], {}
    for m in models:
        r, a = diagnose_model(m, engines, samples, seed, beyond_limits, progress)
        records += r
        arrays.update(a)
    return DiagnosisResult(records, arrays, summarise(records, arrays))


# ----- summary (from stored records and arrays only) --------------------------------------
def _share(before, after):
    if before is None or after is None or not before > 0:
        return None
    return 1.0 - after / before


def summarise(records, arrays) -> list:
    """Per diagnosed model: its findings, each with the measured effect on every engine
    pair and quantity that differs as-is (share = 1 − after / before of the records'
    max_abs), its verdict ('explains' ≥ 1 − rtol of the table's explained_share,
    'contributes', 'no measured effect'), and what no cause explains."""
    thr = lookup(NAME, "explained_share")
    out = []
    fixtures = sorted({k.split("/")[1] for k in arrays if k.startswith("diag/")
                       and k.endswith("/findings")})
    by = {}
    for r in records:
        if r.stage == NAME:
            variant = r.id.rsplit("/", 1)[1]
            by[(r.fixture, r.quantity, r.engine_a, r.engine_b, variant)] = r
    for fx in fixtures:
        findings = [json.loads(s) for s in arrays[f"diag/{fx}/findings"] if s]
        diffs = [(q, a, b) for (f, q, a, b, v), r in by.items()
                 if f == fx and v == AS_IS and r.status == "failed"]
        diffs.sort(key=lambda t: (QUANTITIES.index(t[0]), t[1], t[2]))
        for fd in findings:
            effects = []
            v = fd["variant"]
            if v == NAIVE:
                for (f, q, a, b, vv), r in by.items():
                    if f == fx and vv == NAIVE and r.max_abs is not None:
                        base = by.get((fx, q, a, b, AS_IS))
                        after = base.max_abs if base is not None else None
                        effects.append({"quantity": q, "pair": f"{a}~{b}", "before": r.max_abs,
                                        "after": after, "share": _share(r.max_abs, after)})
            elif v:
                for q, a, b in diffs:
                    r0, r1 = by[(fx, q, a, b, AS_IS)], by.get((fx, q, a, b, v))
                    after = r1.max_abs if r1 is not None else None
                    effects.append({"quantity": q, "pair": f"{a}~{b}", "before": r0.max_abs,
                                    "after": after, "share": _share(r0.max_abs, after)})
            shares = [e["share"] for e in effects if e["share"] is not None]
            if not v and fd.get("structural"):
                verdict = "structure only: no effect on the dynamics"
            elif not v:
                verdict = "not measured (no ablation)"
            elif shares and max(shares) >= 1 - thr.atol:
                verdict = "explains"
            elif shares and max(shares) >= thr.atol:
                verdict = "contributes"
            elif v == NAIVE and "different lengths" in fd["evidence"]:
                verdict = "not measurable where the arrays have different lengths"
            else:
                verdict = "no measured effect"
            fd["effects"] = [e for e in effects if e["share"] is None or e["share"] >= thr.atol
                             or v == NAIVE]
            fd["verdict"] = verdict
        measured = [fd for fd in findings if fd["variant"] and fd["variant"] != NAIVE]
        unexplained = []
        for q, a, b in diffs:
            last = ALL if len(measured) > 1 else (measured[0]["variant"] if measured else None)
            r = by.get((fx, q, a, b, last)) if last else None
            if r is None or r.status != "passed":
                unexplained.append({"quantity": q, "pair": f"{a}~{b}",
                                    "before": by[(fx, q, a, b, AS_IS)].max_abs,
                                    "after": None if r is None else r.max_abs})
        together = []
        if len(measured) > 1:
            for q, a, b in diffs:
                r0, r1 = by[(fx, q, a, b, AS_IS)], by.get((fx, q, a, b, ALL))
                after = r1.max_abs if r1 is not None else None
                together.append({"quantity": q, "pair": f"{a}~{b}", "before": r0.max_abs,
                                 "after": after, "share": _share(r0.max_abs, after)})
        dofs = [str(d) for d in arrays.get(f"diag/{fx}/dofs", [])]
        where = {}
        for q, a, b in diffs:
            r = by[(fx, q, a, b, AS_IS)]
            where[f"{q}|{a}~{b}"] = _where(arrays[r.key_a], arrays[r.key_b], dofs)
        for fd in findings:
            for e in fd["effects"]:
                e["where"] = where.get(f"{e['quantity']}|{e['pair']}", "")
        out.append({"fixture": fx, "findings": findings, "differences": len(diffs),
                    "unexplained": unexplained, "together": together,
                    "failed": [str(e) for e in arrays.get(f"diag/{fx}/failed", [])],
                    "notes": [str(n) for n in arrays.get(f"diag/{fx}/notes", [])],
                    "engines": [str(e) for e in arrays.get(f"diag/{fx}/engines", [])],
                    "causes": [fd for fd in findings if fd["verdict"] in ("explains",
                                                                          "contributes")],
                    "latent": [fd for fd in findings if fd["verdict"] not in (
                        "explains", "contributes")]})
    return out


def _where(a, b, dofs) -> str:
    """'state k, joint J' of the largest element difference (M: 'row J / column K')."""
    d = np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float))
    if not d.size or not np.isfinite(d).all():
        return ""
    idx = np.unravel_index(int(np.argmax(d)), d.shape)
    name = lambda i: dofs[i] if i < len(dofs) else f"dof {i}"  # noqa: E731
    if len(idx) == 3:
        return f"state {idx[0]}, M[{name(idx[1])}, {name(idx[2])}]"
    return f"state {idx[0]}, {name(idx[1])}"


def first_differing(records, arrays) -> list:
    """For every failed stage-0 record: the first element (in tree order) whose row
    differs beyond the record's tolerance, from the stored arrays — [(record, label)]."""
    from harness.core.records import measure
    from harness.core.tolerances import Tolerance

    out = []
    for r in records:
        if r.stage != "model_identity" or r.status != "failed" or not r.key_labels:
            continue
        a, b, labels = arrays[r.key_a], arrays[r.key_b], arrays[r.key_labels]
        tol = Tolerance(r.atol, r.rtol, "")
        for k in range(a.shape[0]):
            if not measure(a[k:k + 1], b[k:k + 1], tol)[3]:
                out.append((r, str(labels[k])))
                break
    return out


def format_summary(summary: dict) -> list:
    """Lines of text for the command line (``harness diagnose``)."""
    lines = [f"{summary['fixture']}: {summary['differences']} engine-pair difference(s) in "
             f"M, h, v̇ or τ as-is; engines {', '.join(summary['engines'])}"]
    for f in summary["failed"]:
        lines.append(f"  NOT LOADED {f}")
    if summary["causes"]:
        lines.append("  causes (measured by removing each alone):")
    for fd in summary["causes"]:
        comp = " (compensated: the harness converts)" if fd["variant"] == NAIVE else ""
        lines.append(f"  * {fd['title']} [{fd['verdict']}{comp}]: {fd['evidence']}")
        for e in fd["effects"]:
            if e["share"] is None:
                continue
            tail = ("  (unconverted → converted)" if fd["variant"] == NAIVE else
                    f"  largest at {e['where']}" if e.get("where") else "")
            removed = e["before"] - (e["after"] or 0.0)
            lines.append(f"      {e['pair']:22s} {e['quantity']:17s} {_g(removed)} of "
                         f"{_g(e['before'])} {UNITS[e['quantity']]} ({100 * e['share']:.1f} %)"
                         f"{tail}")
    if summary["latent"]:
        lines.append("  found in the read-back, no measured effect on these states:")
        for fd in summary["latent"]:
            lines.append(f"  - {fd['title']} [{fd['verdict']}]: {fd['evidence']}")
    if summary["unexplained"]:
        lines.append("  NOT explained by the named causes:")
        for u in summary["unexplained"]:
            lines.append(f"      {u['pair']:22s} {u['quantity']:17s} {_g(u['before'])} "
                         f"{UNITS[u['quantity']]} as-is, "
                         f"{'—' if u['after'] is None else _g(u['after'])} left")
    elif summary["differences"]:
        if summary["together"]:
            low = min(t["share"] for t in summary["together"] if t["share"] is not None)
            lines.append(f"  all named causes removed together: {100 * low:.1f} % of every "
                         "difference (the lowest share)")
        lines.append("  every difference is explained by the causes above")
    elif len(summary["engines"]) > 1:
        lines.append("  the engines agree on M, h, v̇ and τ for these states")
    return lines


def report_context(manifest, records, arrays, timings=None) -> list:
    """'Why the engines disagree', computed from the bundle's records and arrays; [] when
    the bundle has no diagnosis."""
    if arrays is None or not any(k.startswith("diag/") for k in arrays):
        return []
    firsts = first_differing(records, arrays)
    out = []
    for s in summarise(records, arrays):
        s = dict(s)
        s["first"] = [{"quantity": r.quantity, "pair": f"{r.engine_a}~{r.engine_b}",
                       "element": label, "max_rel": r.max_rel}
                      for r, label in firsts if r.fixture == s["fixture"]]
        s["records"] = sorted((r for r in records if r.stage == NAME
                               and r.fixture == s["fixture"]), key=lambda r: r.id)
        out.append(s)
    return out
