"""Stage runner: samples inputs, calls every adapter with the same inputs, compares every
pair of engines, gates later stages on earlier agreement.

Gating rule: stage k of the pair (a, b) on a fixture is scored only if every record of
that pair at stages < k passed, and neither engine failed against the declared model at
stage 0 (nor failed to load or raised). Otherwise the pair gets ``not_scored`` rows whose
reason names the first failed record. An engine with no API for a quantity gets one
``not_provided`` row (its pairs for that quantity are absent, not passed).

Every failed row says why (``compare``: its worst sample's error against its bound). A
quantity that carries the conditioning of a matrix of the same stage (v̇ and M: harness/
stages/dynamics.py ``CONDITIONED``) is scored against a bound that grows with cond(M),
and cond(M) per state is stored beside it (``cond/<fixture>/mass_matrix``).
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from harness.core.errors import BadInput, EngineUnavailable, ModelRejected, NotProvided
from harness.core.records import Record, compare
from harness.core.tolerances import Tolerance, lookup, precision_class
from harness.core.verdict import DECLARED, block_on, blocked_why
from harness.model import registry
from harness.model.prepared import PreparedModel
from harness.model.protocol import EngineAdapter
from harness.stages import SAMPLED
from harness.stages import dynamics as conditioning

# Inputs and fixture_rng are part of the runner's API too
from harness.stages.base import Inputs, Quantity, Stage, fixture_rng


@dataclass
class FixtureRun:
    name: str
    source: str
    digest: str
    nq: int
    nv: int
    floating: bool
    frames: list
    joints: list
    provides: dict = field(default_factory=dict)  # engine -> {quantity: api}
    notes: list = field(default_factory=list)     # what the model import changed
    # engine -> {device, kernel_cache, compile_s, run_s, …} of an engine that runs on a
    # device (its adapter's ``runtime()``), filled after the fixture's stages
    runtime: dict = field(default_factory=dict)


@dataclass
class RunResult:
    records: list
    arrays: dict
    fixtures: list
    engines: list  # [(name, version)]
    samples: int
    seed: int


def stage_names(selection: Iterable[str | int] | None = None) -> list[str]:
    """'0,1,2' / 'model_identity,dynamics' / None (all but the opt-in stages, e.g.
    derivatives) → ordered names of the stages the runner evaluates."""
    if selection is None:
        return [st.name for st in SAMPLED if not st.opt_in]
    names = [st.name for st in SAMPLED]
    numbers = {st.number: st.name for st in SAMPLED}
    out = []
    for tok in selection:
        tok = str(tok).strip()
        if tok.isdigit() and int(tok) in numbers:
            out.append(numbers[int(tok)])
        elif tok in names:
            out.append(tok)
        else:
            raise BadInput("--stages", f"unknown stage {tok!r} (stages: "
                                       f"{', '.join(str(i) for i in sorted(numbers))} "
                                       f"or {', '.join(names)})")
    return [n for n in names if n in out]


def _load(model: PreparedModel, engines: list[str], classes: dict[str, type]
          ) -> tuple[dict[str, EngineAdapter], dict[str, str], dict[str, str]]:
    """(adapters, load_fail {engine: why}, unread {engine: why}) of ``model``: the engines
    that loaded it, those that failed to, and those with no reader of its kind."""
    adapters, load_fail, unread = {}, {}, {}
    for e in engines:
        try:
            adapters[e] = classes[e](model)
        except NotProvided as err:  # no reader of this kind of model (e.g. as-is files)
            unread[e] = err.why
        except (ModelRejected, EngineUnavailable, RuntimeError, ValueError) as err:
            load_fail[e] = str(err)
    return adapters, load_fail, unread


def _fixture_run(model: PreparedModel, adapters: dict[str, EngineAdapter]) -> FixtureRun:
    """What the bundle says of a fixture: its source, digest, sizes, frames and joints,
    what each engine provides, and what the model import changed."""
    return FixtureRun(model.name, model.source, model.digest, model.layout.nq,
                      model.layout.nv, model.spec.floating, list(model.frames),
                      model.layout.joint_names,
                      {e: dict(a.provides) for e, a in adapters.items()},
                      list(model.notes) + model.layout.sampling_notes()
                      + [c.note for c in model.spec.couplings  # a coupling is always said
                         if not any(n.startswith(c.note) for n in model.notes)])


def _engine_row(fx: str, stage: str, quantity: str, engine: str, status: str,
                reason: str) -> Record:
    """A row of one engine alone (its load or a quantity it cannot compute)."""
    return Record(id=f"{fx}/{stage}/{quantity}/{engine}", stage=stage, fixture=fx,
                  quantity=quantity, engine_a=engine, engine_b="", status=status,
                  reason=reason)


@dataclass
class _FixtureStages:
    """The sampled stages of one fixture: ``model`` loaded in ``adapters`` (of
    ``engines``), on the N shared ``inputs``; every output goes to ``arrays``.
    ``blocked_pair`` {(a, b): why} and ``blocked_engine`` {engine: why} gate the later
    stages (filled by ``block_on`` after each stage)."""

    model: PreparedModel
    engines: list[str]
    adapters: dict[str, EngineAdapter]
    inputs: Inputs
    arrays: dict[str, NDArray]
    blocked_pair: dict[tuple[str, str], str]
    blocked_engine: dict[str, str]

    def stage(self, st: Stage, samples: int, seed: int,
              progress: Callable[[str], None] | None) -> list[Record]:
        """The rows of one stage: its own runner's (states of its own, e.g. stage 3 on the
        constraint manifold), then those of each of its quantities."""
        stage_records = []
        if st.run is not None:
            stage_records = st.run(
                self.model, self.adapters, self.engines, samples,
                fixture_rng(seed, f"{self.model.name}/{st.name}"), self.arrays,
                self.blocked_pair, self.blocked_engine, progress)
        stage_outs = {}  # quantity -> {engine: array}, for the conditioning of v̇
        for qty in st.quantities:
            stage_records += self.quantity(st.name, qty, stage_outs)
        return stage_records

    def quantity(self, stage: str, qty: Quantity,
                 stage_outs: dict[str, dict[str, NDArray[np.float64]]]) -> list[Record]:
        """The rows of one quantity ((N, ...) per engine, stored in ``stage_outs``): what an
        engine could not compute, each engine against the declared value and against its
        own reference, then every engine pair (not scored where gated)."""
        fx = self.model.name
        tol = lookup(stage, qty.name)
        labels = np.array(qty.labels(self.model, self.inputs))
        lkey = f"labels/{fx}/{qty.name}"
        self.arrays[lkey] = labels
        outs, records = self.outputs(stage, qty)
        stage_outs[qty.name] = outs
        score = self.scorer(qty.name, stage_outs)
        if qty.declared is not None:
            dkey = f"out/{fx}/{qty.name}/{DECLARED}"
            self.arrays[dkey] = np.asarray(qty.declared(self.model), dtype=float)
            for e in outs:
                cls = precision_class(self.adapters[e])
                records.append(compare(
                    f"{fx}/{stage}/{qty.name}/{DECLARED}~{e}", stage, fx, qty.name + cls,
                    DECLARED, e, self.arrays[dkey], outs[e],
                    lookup(stage, qty.name + cls) if cls else tol, dkey,
                    f"out/{fx}/{qty.name}/{e}", labels, lkey))
        if qty.reference is not None:  # each engine vs its own reference
            records += self.references(stage, qty, outs, labels, lkey)
        records += self.pairs(stage, qty, outs, tol, score, labels, lkey)
        return records

    def outputs(self, stage: str, qty: Quantity
                ) -> tuple[dict[str, NDArray[np.float64]], list[Record]]:
        """({engine: (N, ...) array} of every loaded, unblocked engine, the rows of those
        that could not compute it: not_provided or error)."""
        fx = self.model.name
        outs, records = {}, []
        for e in self.engines:
            if e not in self.adapters or e in self.blocked_engine:
                continue
            try:
                outs[e] = np.asarray(qty.compute(self.adapters[e], self.inputs), dtype=float)
                self.arrays[f"out/{fx}/{qty.name}/{e}"] = outs[e]
            except NotProvided as np_:
                records.append(_engine_row(fx, stage, qty.name, e, "not_provided", np_.why))
            except Exception as err:  # an engine raised: recorded, never hidden
                records.append(_engine_row(fx, stage, qty.name, e, "error",
                                           f"{type(err).__name__}: {err}"))
        return outs, records

    def scorer(self, name: str, stage_outs: dict[str, dict[str, NDArray[np.float64]]]
               ) -> Callable[..., Record]:
        """``compare``, or for a quantity that carries the conditioning of a matrix of the
        stage (e.g. v̇: cond(M)·eps) a comparison against a bound that grows with cond(M),
        cond(M) per state stored beside it."""
        if name in conditioning.TERMS:  # h: a floor from the round-off of its terms
            fx = self.model.name
            tkey = conditioning.terms_key(f"out/{fx}/{name}/-", name)
            self.arrays[f"terms/{fx}/model"] = conditioning.model_terms(self.model)
            self.arrays[tkey] = conditioning.terms_magnitude(self.arrays[f"terms/{fx}/model"],
                                                             self.inputs.v)

            def floored(*args: Any, _t: NDArray[np.float64] = self.arrays[tkey]) -> Record:
                return conditioning.terms_compare(*args, _t)
            return floored
        matrix = conditioning.CONDITIONED.get(name)
        if not (matrix and stage_outs.get(matrix)):
            return compare
        ckey = conditioning.cond_key(f"out/{self.model.name}/{name}/-", name)
        self.arrays[ckey] = conditioning.condition_numbers(
            [stage_outs[matrix][e] for e in sorted(stage_outs[matrix])])

        self.arrays[conditioning.backward_key(ckey)] = self.model.layout.damping

        def score(*args: Any, _c: NDArray[np.float64] = self.arrays[ckey]) -> Record:
            back = conditioning.pair_backward(self.arrays, args[9], args[10], name)
            return conditioning.conditioned_compare(*args, _c, back)
        return score

    def references(self, stage: str, qty: Quantity, outs: dict[str, NDArray[np.float64]],
                   labels: NDArray[np.str_], lkey: str) -> list[Record]:
        """Each engine's (N, ...) output against its own reference (its lower-level API),
        or an error row where the reference raised."""
        fx, ref, records = self.model.name, qty.reference_name, []
        for e in list(outs):
            rkey = f"out/{fx}/{qty.name}/{ref}:{e}"
            try:
                self.arrays[rkey] = np.asarray(qty.reference(self.adapters[e], self.inputs),
                                               dtype=float)
            except Exception as err:
                records.append(Record(
                    id=f"{fx}/{stage}/{qty.name}/{ref}~{e}", stage=stage,
                    fixture=fx, quantity=qty.name, engine_a=ref, engine_b=e,
                    status="error", reason=f"{type(err).__name__}: {err}"))
                continue
            qn = qty.name + (qty.variant(self.adapters[e], None) if qty.variant else "")
            records.append(compare(
                f"{fx}/{stage}/{qty.name}/{ref}~{e}", stage, fx, qn, ref,
                e, self.arrays[rkey], outs[e], lookup(stage, qn), rkey,
                f"out/{fx}/{qty.name}/{e}", labels, lkey))
        return records

    def pairs(self, stage: str, qty: Quantity, outs: dict[str, NDArray[np.float64]],
              tol: Tolerance, score: Callable[..., Record], labels: NDArray[np.str_],
              lkey: str) -> list[Record]:
        """Every pair of loaded engines: not_scored where an earlier stage blocks it, none
        where an engine has no output (its own row says why), else ``score``d against the
        pair's tolerance (of the pair's methods, for a quantity with variants)."""
        fx, records = self.model.name, []
        for a, b in itertools.combinations([e for e in self.engines if e in self.adapters], 2):
            rid = f"{fx}/{stage}/{qty.name}/{a}~{b}"
            why = blocked_why(a, b, self.blocked_engine, self.blocked_pair)
            if why:
                records.append(Record(id=rid, stage=stage, fixture=fx, quantity=qty.name,
                                      engine_a=a, engine_b=b, status="not_scored",
                                      reason=why))
                continue
            if a not in outs or b not in outs:
                continue  # not_provided / error row already explains it
            qn, ptol = qty.name, tol
            if qty.variant is not None:  # tolerance of the pair's methods
                qn = qty.name + qty.variant(self.adapters[a], self.adapters[b])
                ptol = lookup(stage, qn)
            cls = precision_class(self.adapters[a], self.adapters[b])
            if cls:  # a single-precision engine: the float32 class of the table
                qn += cls
                ptol = lookup(stage, qn)
            records.append(score(
                rid, stage, fx, qn, a, b, outs[a], outs[b], ptol,
                f"out/{fx}/{qty.name}/{a}", f"out/{fx}/{qty.name}/{b}", labels, lkey))
        return records


def run(models: Sequence[PreparedModel], engines: list[str],
        stages: Sequence[str] | None = None, samples: int = 10, seed: int = 0,
        progress: Callable[[str], None] | None = None) -> RunResult:
    """Run the selected stages on every model with every engine.

    models: list of PreparedModel; engines: list of engine names (all available — the
    caller checks); stages: list of stage names (default all but the opt-in ones);
    samples: N states per fixture, drawn from ``seed``."""
    stages = stage_names(stages)
    classes = {e: registry.adapter_class(e) for e in engines}
    versions = [(e, registry.probe(e).version) for e in engines]
    records, arrays, fixtures = [], {}, []
    for model in models:
        fx = model.name
        if progress:
            progress(f"{fx}: loading into {', '.join(engines)}")
        adapters, load_fail, unread = _load(model, engines, classes)
        fixtures.append(_fixture_run(model, adapters))
        for status, whys in (("error", load_fail), ("not_provided", unread)):
            records += [_engine_row(fx, "model_identity", "load", e, status, why)
                        for e, why in whys.items()]
        inputs = Inputs.sample(model, samples, fixture_rng(seed, fx))
        for k, v in inputs.arrays().items():
            arrays[f"in/{fx}/{k}"] = v
        # blocked_pair[(a, b)] = reason; blocked_engine[e] = reason (failed vs declared/errors)
        fixture = _FixtureStages(model, engines, adapters, inputs, arrays, {},
                                 {e: f"failed to load: {w}" for e, w in load_fail.items()})
        for st in SAMPLED:
            if st.name not in stages:
                continue
            if st.applies is not None and not st.applies(model):
                continue  # e.g. contact: only fixtures with declared contact geometry
            if progress:
                progress(f"{fx}: stage {st.name}")
            stage_records = fixture.stage(st, samples, seed, progress)
            # gate the next stages on this one
            block_on(stage_records, fixture.blocked_engine, fixture.blocked_pair)
            records += stage_records
        fixtures[-1].runtime = {e: a.runtime() for e, a in adapters.items()
                                if callable(getattr(a, "runtime", None))}
    return RunResult(records, arrays, fixtures, versions, samples, seed)
