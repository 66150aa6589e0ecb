"""Measuring each cause: the dynamics of every engine as-is, without each cause alone and
without all of them, on shared seeded states, as records (stage ``diagnosis``).

Dimension legend: N states; nq, nv canonical (engine layouts may lack dropped joints).
M kg·m² | kg, h and τ N·m | N, v̇ rad/s² | m/s².
"""
from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from harness.core.conventions import Layout
from harness.core.errors import EngineUnavailable, ModelRejected, NotProvided
from harness.core.records import Record, compare
from harness.core.tolerances import lookup
from harness.model import registry
from harness.model.as_is import AsIsModel
from harness.model.prepared import PreparedModel
from harness.model.protocol import EngineAdapter
from harness.stages import dynamics as conditioning
from harness.stages.base import Inputs, fixture_rng
from harness.stages.diagnosis.causes import (
    ALL,
    AS_IS,
    NAIVE,
    NAME,
    QUANTITIES,
    Finding,
    detect,
    merge_changes,
)
from harness.stages.diagnosis.summary import summarise
from harness.stages.identity import declared_readback


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


def evaluate(adapters: dict[str, EngineAdapter], inputs: Inputs, full_layout: Layout
             ) -> tuple[dict[str, dict[str, NDArray[np.float64]]], dict[str, dict[str, str]],
                        list[str]]:
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


def evaluate_naive(adapters: dict[str, EngineAdapter],
                   inputs: Inputs) -> dict[str, dict[str, NDArray[np.float64]]]:
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


def _load(model: AsIsModel, engines: list[str], classes: dict[str, type],
          notes: list[str]) -> tuple[dict[str, EngineAdapter], dict[str, list[str]],
                                     dict[str, str]]:
    """(adapters, missing {engine: spec joints it lacks}, failed {engine: why}): every
    engine that reads the file as-is, on the declared model without the joints it lacks;
    an engine that reads no file of this kind, or could not load it, gets a note."""
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
        except NotProvided as err:  # the engine reads no file of this kind: not in the run
            notes.append(f"{e} is not part of the as-is diagnosis: {err.why}")
        except (ModelRejected, EngineUnavailable, RuntimeError, ValueError) as err:
            failed[e] = str(err)
            notes.append(f"{e} could not load the model as-is: {err}")
    return adapters, missing, failed


def _limits_sampled(findings: list[Finding], n_out: int, samples: int,
                    notes: list[str]) -> None:
    """A limits finding says how many of the sampled states lie beyond a limit, or, when
    none does (limit constraints act only there: nothing to measure), becomes a note."""
    for f in list(findings):
        if f.cause == "limits":
            if n_out:
                f.evidence += f"; {n_out} of {samples} sampled states lie beyond a limit"
            else:
                findings.remove(f)
                notes.append(f"{f.evidence}; all {samples} sampled states are inside the "
                             "limits (--beyond-limits FRACTION samples beyond them)")


def _variant_adapters(model: AsIsModel, adapters: dict[str, EngineAdapter],
                      classes: dict[str, type], fs: list[Finding]
                      ) -> tuple[dict[str, EngineAdapter], dict[str, str]]:
    """({engine: adapter}, {engine: why not}) with the causes of the findings ``fs``
    removed: their joints locked (a new adapter on the locked model) and their changes
    applied (adapter.ablated)."""
    changes, lock = {}, []
    for f in fs:
        for e, ch in f.changes.items():
            merge_changes(changes.setdefault(e, {}), ch)
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


@dataclass
class _Recorder:
    """The records and arrays of one model's diagnosis (fixture ``fx``; N = len(labels)
    states, one label each)."""

    fx: str
    engines: list[str]
    labels: NDArray[np.str_]
    records: list[Record] = field(default_factory=list)
    arrays: dict[str, NDArray] = field(default_factory=dict)

    @property
    def lkey(self) -> str:
        return f"labels/{self.fx}/{NAME}"

    def variant(self, variant: str, outs: dict[str, dict[str, NDArray[np.float64]]]) -> None:
        """Store ``outs`` {quantity: {engine: (N, ...) array}} of one variant and a record
        per engine pair with the same shape (v̇ scored against a bound that grows with
        cond(M) where every engine's M is there)."""
        fx, arrays = self.fx, self.arrays
        for qty, per in outs.items():
            tol = lookup(NAME, qty)
            for e, arr in per.items():
                arrays[f"out/{fx}/{NAME}/{variant}/{qty}/{e}"] = arr
            score = compare
            matrix = conditioning.CONDITIONED.get(qty)
            mats = [m for _, m in sorted(outs.get(matrix, {}).items())] if matrix else []
            if mats and all(m.shape == mats[0].shape and m.size for m in mats):
                ckey = conditioning.cond_key(f"out/{fx}/{NAME}/{variant}/{qty}/-", qty)
                arrays[ckey] = conditioning.condition_numbers(mats)

                def score(*args: Any,  # v̇ carries cond(M)·eps
                          _c: NDArray[np.float64] = arrays[ckey]) -> Record:
                    return conditioning.conditioned_compare(*args, _c)
            for a, b in itertools.combinations([e for e in self.engines if e in per], 2):
                if per[a].shape != per[b].shape or per[a].size == 0:
                    continue  # no common dofs (e.g. a model without moving joints)
                self.records.append(score(
                    f"{fx}/{NAME}/{qty}/{a}~{b}/{variant}", NAME, fx, qty, a, b,
                    per[a], per[b], tol, f"out/{fx}/{NAME}/{variant}/{qty}/{a}",
                    f"out/{fx}/{NAME}/{variant}/{qty}/{b}", self.labels, self.lkey))


def _measure(model: AsIsModel, adapters: dict[str, EngineAdapter], classes: dict[str, type],
             findings: list[Finding], inputs: Inputs, rec: _Recorder, notes: list[str],
             say: Callable[[str], None]) -> list[str]:
    """Record M, h, v̇ and τ on the N sampled ``inputs`` as-is, without each measured cause
    alone, without all of them (when more than one) and, for the conventions, with the
    canonical arrays handed over unconverted; returns the joints common to every engine."""
    say(f"{rec.fx}: as-is dynamics")
    outs, why, common = evaluate(adapters, inputs, model.layout)
    rec.variant(AS_IS, outs)
    for e, w in why.items():
        for qty, r in w.items():
            if not r.startswith("not provided"):
                notes.append(f"{e} {qty} as-is: {r}")
    measured = [f for f in findings if f.variant and f.variant != NAIVE]
    variants = [(f.variant, [f]) for f in measured]
    if len(measured) > 1:
        variants.append((ALL, measured))
    for name, fs in variants:
        say(f"{rec.fx}: {name}")
        vad, vwhy = _variant_adapters(model, adapters, classes, fs)
        for e, r in vwhy.items():
            notes.append(f"{e} cannot be changed for {name}: {r}")
        o, _, _ = evaluate(vad, inputs, model.layout)
        rec.variant(name, o)
    if any(f.cause == "conventions" for f in findings):
        rec.variant(NAIVE, evaluate_naive(adapters, inputs))
    return common


def diagnose_model(model: AsIsModel, engines: list[str], samples: int = 10, seed: int = 0,
                   beyond_limits: float = 0.0, progress: Callable[[str], None] | None = None
                   ) -> tuple[list[Record], dict[str, NDArray]]:
    """(records, arrays) of one as-is model (see ``run``): N = ``samples`` seeded states
    (limits widened by ``beyond_limits`` × their range per side), the findings of the
    engines' read-backs, and the records of every variant that measures them."""
    fx = model.name
    say = progress or (lambda m: None)
    notes = list(model.notes)
    classes = {e: registry.adapter_class(e) for e in engines}
    adapters, missing, failed = _load(model, engines, classes, notes)
    say(f"{fx}: read back {', '.join(adapters)}")
    rbs = {e: a.readback() for e, a in adapters.items()}
    for e, rb in rbs.items():
        notes += [f"{e}: {n}" for n in rb["notes"]]
    declared = declared_readback(model)
    findings = detect(model, declared, rbs, {e: missing[e] for e in adapters}, failed)
    inputs = Inputs.sample(_sampling_model(model, beyond_limits), samples,
                           fixture_rng(seed, fx))
    _limits_sampled(findings, _outside(inputs, model), samples, notes)
    rec = _Recorder(fx, engines, np.array([f"state {i}" for i in range(samples)]))
    for k, v in inputs.arrays().items():
        rec.arrays[f"in/{fx}/{NAME}/{k}"] = v
    rec.arrays[rec.lkey] = rec.labels
    common = _measure(model, adapters, classes, findings, inputs, rec, notes, say)
    arrays = rec.arrays
    arrays[f"diag/{fx}/findings"] = _strings([json.dumps(f.to_json(), ensure_ascii=False)
                                              for f in findings])
    arrays[f"diag/{fx}/notes"] = _strings(notes)
    arrays[f"diag/{fx}/engines"] = _strings(list(adapters))
    arrays[f"diag/{fx}/failed"] = _strings([f"{e}: {' '.join(w.split())[:300]}"
                                            for e, w in failed.items()])
    full = {s.name: s for s in model.layout.slots}
    arrays[f"diag/{fx}/dofs"] = _strings([n for n in common for _ in range(full[n].nv)])
    return rec.records, arrays


def _strings(items) -> np.ndarray:
    """A unicode array (the evidence format holds no objects), shape (0,) when empty."""
    return np.array(list(items), dtype=str) if items else np.zeros(0, dtype="<U1")


def run(models: Sequence[AsIsModel], engines: list[str], samples: int = 10, seed: int = 0,
        beyond_limits: float = 0.0,
        progress: Callable[[str], None] | None = None) -> DiagnosisResult:
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
