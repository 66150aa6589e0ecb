"""The cause catalogue and the findings: which known cause of an engine disagreement the
read-backs show, and the ablation that removes it.

Units: masses kg, lengths m, inertias kg·m² (world axes, about the centre of mass),
damping N·m·s/rad | N·s/m, friction N·m | N.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from harness.core.conventions import combine_inertias
from harness.core.tolerances import lookup
from harness.model.as_is import AsIsModel
from harness.stages.identity import body_row, compared_bodies

NAME = "diagnosis"


AS_IS = "as-is"


NAIVE = "naive"


ALL = "without:all"


QUANTITIES = ("mass_matrix", "bias_forces", "forward_dynamics", "inverse_dynamics")


UNITS = {"mass_matrix": "kg·m² or kg", "bias_forces": "N·m or N",
         "forward_dynamics": "rad/s² or m/s²", "inverse_dynamics": "N·m or N"}


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
    "nonphysical": ("non-physical inertia in the file", "the engine's inertia of the link "
                    "set to the declared one (the nearest physical inertia, "
                    "--repair-inertia)"),
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


def merge_changes(into: dict[str, Any], ch: dict[str, Any]) -> None:
    """Merge ablation changes: per-body dicts (inertials, placements) are united."""
    for k, v in ch.items():
        if isinstance(v, dict):
            into.setdefault(k, {}).update(v)
        else:
            into[k] = v


def fmt_g(x: float) -> str:
    """``x`` in three significant digits."""
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


class _Findings(dict):
    """{cause: Finding}, in the order the causes were first found; ``add`` merges one
    observation into its cause's finding."""

    def add(self, cause: str, engine: str | None, elements: list[str], text: str,
            changes: dict | None = None, lock: Sequence[str] = (),
            structural: bool = False) -> None:
        """Merge one observation of ``cause``: ``engine`` (None: set by the caller) and
        ``elements`` are added once each, ``text`` is appended to the evidence, ``changes``
        {engine: adapter.ablated(**)} and ``lock`` (joints) to the ablation; the finding
        stays structural only while every observation is."""
        f = self.setdefault(cause, Finding(cause, [], [], "", structural=True))
        f.structural = f.structural and structural
        if engine and engine not in f.engines:
            f.engines.append(engine)
        for e in elements:
            if e not in f.elements:
                f.elements.append(e)
        f.evidence = (f.evidence + "; " if f.evidence else "") + text
        for e, ch in (changes or {}).items():
            merge_changes(f.changes.setdefault(e, {}), ch)
        f.lock += [j for j in lock if j not in f.lock]
        if not f.first and elements:
            f.first = elements[0]


def _declared_merge(declared: dict, members: list[str]) -> tuple:
    """(mass kg, com (3,) m, inertia (3, 3) kg·m² about the com, world axes) of the
    declared bodies ``members`` merged."""
    return _combine_world([(declared["bodies"][b]["mass"], declared["bodies"][b]["com_W"],
                            declared["bodies"][b]["I_W"]) for b in members])


def _merged_row(merge: tuple, X_WB: NDArray[np.float64]) -> NDArray[np.float64]:
    """(10,) body row (identity.body_row) of a merge (mass, com, inertia) held in the body
    whose frame is ``X_WB`` (4, 4)."""
    return body_row({"mass": merge[0], "com_W": merge[1], "I_W": merge[2], "X_WB": X_WB})


def _nonphysical(model: AsIsModel, declared: dict, rbs: dict[str, dict],
                 failed: dict[str, str] | None, found: _Findings) -> set[tuple[str, str]]:
    """The file's non-physical inertias (repaired in the declared model): per link, which
    engine refuses the file, which warns about the link (a parser warning on its line or
    naming it) and which accepts it silently, and what each holds; the ablation sets each
    engine's holder body to the declared (repaired) merge. Returns the (engine, holder
    body) pairs it covered."""
    bad = list(getattr(model, "nonphysical", ()) or ())
    if not bad:
        return set()
    body_tol = lookup("model_identity", "body_inertia")
    names = compared_bodies(model)
    parts, changes, covered = [], {}, set()
    for link, I_file, line in bad:
        R = declared["bodies"][link]["X_WB"][:3, :3]
        I_file_W = R @ np.reshape(I_file, (3, 3)) @ R.T
        I_decl = declared["bodies"][link]["I_W"]
        said = []
        for e, rb in rbs.items():
            warned = [w for w in rb.get("warnings", ()) if link in w or (
                "inertia" in w.lower() and (f":{line}:" in w or len(bad) == 1))]
            held = set(rb["bodies"])
            h = _holder(model, link, held)
            if h in ("", "world"):
                holds = "does not hold it (" + ("fused into the world)" if h else "missing)")
            else:
                got = rb["bodies"][h]
                want = _declared_merge(declared, [b for b in names
                                                  if _holder(model, b, held) == h])
                covered.add((e, h))
                if h != link:
                    holds = f"holds it fused into {h}"
                elif _rel(got["I_W"], I_file_W) <= 1e-9:
                    holds = "holds the file's values"
                elif _rel(got["I_W"], I_decl) <= 1e-9:
                    holds = "holds the repaired values"
                else:
                    ev = np.linalg.eigvalsh(0.5 * (got["I_W"] + got["I_W"].T))
                    holds = ("holds values of its own (principal moments "
                             + ", ".join(fmt_g(x) for x in ev) + " kg·m²)")
                if _differs(body_row(got), _merged_row(want, got["X_WB"]), body_tol):
                    merge_changes(changes.setdefault(e, {}), {"inertials": {h: want}})
            own = dict(getattr(model, "files", ())).get(e)
            if own is not None:
                said.append(f"{e} reads its own file ({own.path}) and {holds}")
                continue
            said.append(f"{e} {'warns' if warned else 'accepts it silently'} and {holds}"
                        + (f" (“{warned[0][:160]}”)" if warned else ""))
        for e, why in (failed or {}).items():
            said.append(f"{e} refuses the file (“{' '.join(why.split())[:160]}”)")
        ev = np.linalg.eigvalsh(0.5 * (I_file_W + I_file_W.T))
        parts.append(f"link {link} (principal moments {', '.join(fmt_g(x) for x in ev)} "
                     f"kg·m², line {line}): " + "; ".join(said))
    found.add("nonphysical", None, [b for b, _, _ in bad], " | ".join(parts), changes)
    found["nonphysical"].engines = list(rbs) + list(failed or {})
    return covered


def _dropped(model: AsIsModel, engines: list[str], missing: dict[str, list[str]],
             found: _Findings) -> None:
    """Joints present in the spec, absent from an engine's compiled model (the ablation
    locks them in every engine)."""
    lacking = {}
    for e, js in missing.items():
        for j in js:
            lacking.setdefault(j, []).append(e)
    if not lacking:
        return
    order = [s.name for s in model.layout.slots]
    js = sorted(lacking, key=order.index)
    have = [e for e in engines if not missing.get(e)]
    for j in js:
        kind = next(x.type for x in model.spec.joints if x.name == j)
        found.add("dropped", None, [j], f"{kind} joint {j} is missing from "
                  f"{_join(lacking[j])}'s compiled model (present in "
                  f"{_join(have) or 'no engine'} and in the file)", lock=[j])
    found["dropped"].engines = sorted({e for j in js for e in lacking[j]}, key=engines.index)


def _joint_setting(what: str, slots: list, declared: dict, rbs: dict[str, dict],
                   engines: list[str], found: _Findings) -> None:
    """One per-joint dynamics setting ``what`` (damping, armature or friction; the cause of
    the same name) the engines' dynamics apply differently: which engines apply it, which
    hold it without applying it, and whether the applied values are the file's; the
    ablation sets it to 0 wherever it is applied."""
    key = "armature" if what == "armature" else f"{what}_applied"
    vals = {e: {s.name: rbs[e]["joints"][s.name][key] for s in slots
                if s.name in rbs[e]["joints"]} for e in engines}
    dec = {s.name: declared["joints"][s.name][key] for s in slots}
    joints = [s.name for s in slots if len({vals[e][s.name] for e in engines
                                            if s.name in vals[e]}) > 1]
    if not joints:
        return
    applying = [e for e in engines if any(vals[e].get(j, 0) != 0 for j in joints)]
    ignoring = [e for e in engines if e not in applying]
    kinds = {s.name: s.type for s in slots}
    groups = {}
    for j in joints:
        ref = next((vals[e][j] for e in applying if vals[e].get(j)), dec[j])
        groups.setdefault((ref, _unit(kinds[j], what)), []).append(j)
    desc = "; ".join(f"{fmt_g(v)} {u} on {_join(js)}" for (v, u), js in groups.items())
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
    if what == "armature" and any(dec[j] for j in joints) and ignoring:
        text += f" (the file declares it: missing from {_join(ignoring)})"
    found.add(what, None, joints, text, {e: {what: 0.0} for e in applying})
    found[what].engines = applying + ignoring


def _limits(slots: list, rbs: dict[str, dict], engines: list[str], found: _Findings) -> None:
    """Joint limits some engines (not all) enforce as constraints (the ablation disables
    them)."""
    bounded = [s.name for s in slots if s.lower is not None]
    enforcing = [e for e in engines if any(rbs[e]["joints"].get(j, {}).get("limit_enforced")
                                           for j in bounded)]
    if not (enforcing and len(enforcing) < len(engines)):
        return
    js = [j for j in bounded if any(rbs[e]["joints"].get(j, {}).get("limit_enforced")
                                    for e in enforcing)]
    others = _join([e for e in engines if e not in enforcing])
    found.add("limits", None, js, f"limits of {len(js)} joint(s) ({_join(js)}) act as "
              f"constraints in {_join(enforcing)}; {others} do not enforce them (they act "
              "only on states beyond a limit)", {e: {"limits": False} for e in enforcing})
    found["limits"].engines = list(engines)


def _couplings(declared: dict, rbs: dict[str, dict], engines: list[str],
               found: _Findings) -> None:
    """Coupled (mimic) joints the engines do not all enforce (the ablation disables the
    coupling constraints)."""
    dec_c = declared.get("couplings", {})
    keys = sorted(set(dec_c) | {f for e in engines for f in rbs[e]["couplings"]})
    if not (keys and len({tuple(sorted(rbs[e]["couplings"].items())) for e in engines}) > 1):
        return
    enf = [e for e in engines if rbs[e]["couplings"]]
    free = [e for e in engines if not rbs[e]["couplings"]]

    def leader(f: str) -> str:
        return dec_c.get(f) or next(rbs[e]["couplings"][f] for e in enf
                                    if f in rbs[e]["couplings"])

    rel = ", ".join(f"{f} follows {leader(f)}" for f in keys)
    found.add("couplings", None, keys, f"{rel}{' (mimic in the file)' if dec_c else ''}: "
              f"enforced by {_join(enf)} as a constraint; {_join(free)} treat the joints as "
              "independent", {e: {"couplings": False} for e in enf})
    found["couplings"].engines = list(engines)


def _conventions(model: AsIsModel, rbs: dict[str, dict], engines: list[str],
                 found: _Findings) -> None:
    """Coordinate conventions that differ between engines (native q/v of a joint, joint
    order, native nq/nv); measured by handing the same arrays over unconverted."""
    conv = []
    for s in model.layout.slots:
        natives = {(rbs[e]["joints"][s.name]["native_q"], rbs[e]["joints"][s.name]["native_v"])
                   for e in engines if s.name in rbs[e]["joints"]}
        if len(natives) > 1:
            conv.append(s.name)
    orders = {e: [rbs[e]["joints"][s.name]["native_index"] for s in model.layout.slots
                  if s.name in rbs[e]["joints"]] for e in engines}
    reordered = [e for e in engines if orders[e] != sorted(orders[e])]
    if not (conv or reordered):
        return
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
    found.add("conventions", None, conv, " | ".join(parts) + " — the harness converts them; "
              "the measured effect is what handing the same arrays over unconverted costs")
    found["conventions"].engines = list(engines)


def _held_group(model: AsIsModel, declared: dict, rb: dict, e: str, h: str,
                members: list[str], found: _Findings) -> None:
    """The bodies ``members`` engine ``e`` holds in its body ``h`` (``h`` and the bodies
    fused into it) against their declared merge: an exact fusion (structure only), a
    fusion with the fixed joint's rotation dropped, mass derived from collision geometry,
    precision lost in a file round trip, or another difference."""
    spec = model.spec
    body_tol, prec = lookup("model_identity", "body_inertia"), lookup(NAME, "round_trip")
    fused = [b for b in members if b != h]
    want = _declared_merge(declared, members)
    X = rb["bodies"][h]["X_WB"]
    want_row = _merged_row(want, X)
    got = rb["bodies"][h]
    got_row = body_row(got)
    heavy = [b for b in fused if spec.body(b).mass > 0]
    Xd = declared["bodies"][h]["X_WB"]
    placement_rel = _rel(X, Xd)
    inertia_diff = _differs(got_row, want_row, body_tol)
    if not inertia_diff and placement_rel <= 1e-12:
        if heavy:
            rel = fmt_g(_rel(got_row, want_row))
            found.add("fused", e, heavy, f"{e} fused {_join(heavy)} into {h}: the merged "
                      f"inertia equals the declared merge (rel. {rel})", structural=True)
        return
    target = {h: want}
    rel = _rel(got_row, want_row)
    geom = [b for b in members if spec.body(b).mass == 0 and b in model.geometry]
    if heavy and inertia_diff:
        alt_row = _merged_row(_rotation_dropped_merge(model, h, members, declared), X)
        if not _differs(got_row, alt_row, body_tol):
            found.add("fused", e, [h] + heavy, f"{e} fused {_join(heavy)} into {h} with the "
                      f"fixed joint's rotation dropped: its inertia equals that wrong "
                      f"merge (com off by {fmt_g(np.linalg.norm(got['com_W'] - want[1]))} m)",
                      {e: {"inertials": target}})
            return
    if geom and got["mass"] > want[0]:
        found.add("geometry", e, [h] + [g for g in geom if g != h],
                  f"{e} gave {h}{' (with ' + _join(fused) + ' fused into it)' if fused else ''}"
                  f" {fmt_g(got['mass'] - want[0])} kg more than declared: {_join(geom)} has "
                  "no <inertial> but collision geometry, and the engine derived mass from it",
                  {e: {"inertials": target}})
        if heavy:
            found.add("fused", e, heavy, f"{e} fused {_join(heavy)} into {h}", structural=True)
        return
    if rel <= prec.atol and placement_rel <= prec.atol:
        digits = -math.log10(max(rel, placement_rel, 1e-17))
        found.add("precision", e, [h], f"{e}: {h} agrees with the declared values to "
                  f"~{digits:.0f} significant digits (rel. {fmt_g(max(rel, placement_rel))})",
                  {e: {"inertials": target, "placements": {h: Xd}}})
        return
    found.add("other", e, [h], f"{e}: body {h} differs from the declared model (inertia "
              f"rel. {fmt_g(rel)}, placement rel. {fmt_g(placement_rel)})")


def _bodies(model: AsIsModel, declared: dict, rbs: dict[str, dict], engines: list[str],
            covered: set[tuple[str, str]], found: _Findings) -> None:
    """Per engine, the bodies it holds against the declared ones: missing bodies, bodies
    fused into the world, and every holder body not ``covered`` by a non-physical inertia
    finding (``_held_group``)."""
    names = compared_bodies(model)
    for e in engines:
        held = set(rbs[e]["bodies"])
        groups = {}
        for b in names:
            h = _holder(model, b, held)
            if h:
                groups.setdefault(h, []).append(b)
            elif model.spec.body(b).mass > 0:
                found.add("other", e, [b], f"{e}: body {b} is missing from the compiled model")
        for h, members in groups.items():
            if h == "world":
                heavy = [b for b in members if model.spec.body(b).mass > 0]
                if heavy:
                    found.add("fused", e, heavy, f"{e} fused {_join(heavy)} into the world "
                              "(welded bodies: no effect on the dynamics of moving joints)",
                              structural=True)
            elif (e, h) not in covered:  # else a non-physical inertia: its own finding
                _held_group(model, declared, rbs[e], e, h, members, found)


def _joint_others(model: AsIsModel, declared: dict, rbs: dict[str, dict], engines: list[str],
                  found: _Findings) -> None:
    """Other joint-level differences: an axis (beyond what a precision finding explains)
    and limit values."""
    prec = lookup(NAME, "round_trip")
    for e in engines:
        for s in model.layout.slots:
            jj = rbs[e]["joints"].get(s.name)
            if jj is None:
                continue
            dj = declared["joints"][s.name]
            ax = _rel(jj["axis_W"], dj["axis_W"])
            if ax > 1e-10 and not (ax <= prec.atol and "precision" in found):
                found.add("other", e, [s.name],
                          f"{e}: joint {s.name} axis differs (rel. {fmt_g(ax)})")
            a, d = (jj["lower"], jj["upper"]), (dj["lower"], dj["upper"])
            lim = (a[0] is None) != (d[0] is None) or (a[0] is not None and _rel(a, d) > 1e-12)
            if lim:
                found.add("other", e, [s.name], f"{e}: joint {s.name} limits {jj['lower']}, "
                          f"{jj['upper']} (declared {dj['lower']}, {dj['upper']})")


def detect(model: AsIsModel, declared: dict, rbs: dict[str, dict],
           missing: dict[str, list[str]], failed: dict[str, str] | None = None) -> list[Finding]:
    """Findings of the catalogue in the read-backs ``rbs`` {engine: readback} against the
    declared read-back and each other; ``missing`` {engine: [spec joints it lacks]};
    ``failed`` {engine: why it could not load the file}. In catalogue order."""
    found = _Findings()
    engines = list(rbs)
    slots = [s for s in model.layout.slots if s.type != "free"]
    _dropped(model, engines, missing, found)
    for what in ("damping", "armature", "friction"):
        _joint_setting(what, slots, declared, rbs, engines, found)
    _limits(slots, rbs, engines, found)
    _couplings(declared, rbs, engines, found)
    _conventions(model, rbs, engines, found)
    covered = _nonphysical(model, declared, rbs, failed, found)
    _bodies(model, declared, rbs, engines, covered, found)
    _joint_others(model, declared, rbs, engines, found)
    return [found[k] for k in CATALOGUE if k in found]
