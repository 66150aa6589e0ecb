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
from dataclasses import dataclass, field

import numpy as np

from harness.core.errors import BadInput, EngineUnavailable, ModelRejected, NotProvided
from harness.core.records import Record, compare
from harness.core.tolerances import lookup
from harness.core.verdict import DECLARED, block_on, blocked_why
from harness.model import registry
from harness.stages import SAMPLED
from harness.stages import dynamics as conditioning
from harness.stages.base import Inputs, fixture_rng  # noqa: F401  (part of the runner's API)


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


@dataclass
class RunResult:
    records: list
    arrays: dict
    fixtures: list
    engines: list  # [(name, version)]
    samples: int
    seed: int


def stage_names(selection=None) -> list:
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


def run(models, engines, stages=None, samples: int = 10, seed: int = 0,
        progress=None) -> RunResult:
    """Run the selected stages on every model with every engine.

    models: list of PreparedModel; engines: list of engine names (all available — the
    caller checks); stages: list of stage names (default all but the opt-in ones)."""
    stages = stage_names(stages)
    classes = {e: registry.adapter_class(e) for e in engines}
    versions = [(e, registry.probe(e).version) for e in engines]
    records, arrays, fixtures = [], {}, []
    for model in models:
        fx = model.name
        if progress:
            progress(f"{fx}: loading into {', '.join(engines)}")
        adapters, load_fail, unread = {}, {}, {}
        for e in engines:
            try:
                adapters[e] = classes[e](model)
            except NotProvided as err:  # no reader of this kind of model (e.g. as-is files)
                unread[e] = err.why
            except (ModelRejected, EngineUnavailable, RuntimeError, ValueError) as err:
                load_fail[e] = str(err)
        run_info = FixtureRun(fx, model.source, model.digest, model.layout.nq, model.layout.nv,
                              model.spec.floating, list(model.frames), model.layout.joint_names,
                              {e: dict(a.provides) for e, a in adapters.items()},
                              list(model.notes) + model.layout.sampling_notes())
        fixtures.append(run_info)
        for e, why in load_fail.items():
            records.append(Record(id=f"{fx}/model_identity/load/{e}", stage="model_identity",
                                  fixture=fx, quantity="load", engine_a=e, engine_b="",
                                  status="error", reason=why))
        for e, why in unread.items():
            records.append(Record(id=f"{fx}/model_identity/load/{e}", stage="model_identity",
                                  fixture=fx, quantity="load", engine_a=e, engine_b="",
                                  status="not_provided", reason=why))
        inputs = Inputs.sample(model, samples, fixture_rng(seed, fx))
        for k, v in inputs.arrays().items():
            arrays[f"in/{fx}/{k}"] = v
        # blocked[(a, b)] = reason; blocked_engine[e] = reason (failed vs declared/errors)
        blocked_pair, blocked_engine = {}, {e: f"failed to load: {w}" for e, w in load_fail.items()}
        for st in SAMPLED:
            stage_name, quantities = st.name, st.quantities
            if stage_name not in stages:
                continue
            if st.applies is not None and not st.applies(model):
                continue  # e.g. contact: only fixtures with declared contact geometry
            if progress:
                progress(f"{fx}: stage {stage_name}")
            stage_records = []
            if st.run is not None:  # e.g. stage 3: states on the constraint manifold
                stage_records = st.run(
                    model, adapters, engines, samples, fixture_rng(seed, f"{fx}/{stage_name}"),
                    arrays, blocked_pair, blocked_engine, progress)
            stage_outs = {}  # quantity -> {engine: array}, for the conditioning of v̇
            for qty in quantities:
                tol = lookup(stage_name, qty.name)
                labels = np.array(qty.labels(model, inputs))
                lkey = f"labels/{fx}/{qty.name}"
                arrays[lkey] = labels
                outs = {}
                for e in engines:
                    if e not in adapters:
                        continue
                    if e in blocked_engine:
                        continue
                    try:
                        outs[e] = np.asarray(qty.compute(adapters[e], inputs), dtype=float)
                        arrays[f"out/{fx}/{qty.name}/{e}"] = outs[e]
                    except NotProvided as np_:
                        stage_records.append(Record(
                            id=f"{fx}/{stage_name}/{qty.name}/{e}", stage=stage_name,
                            fixture=fx, quantity=qty.name, engine_a=e, engine_b="",
                            status="not_provided", reason=np_.why))
                    except Exception as err:  # an engine raised: recorded, never hidden
                        stage_records.append(Record(
                            id=f"{fx}/{stage_name}/{qty.name}/{e}", stage=stage_name,
                            fixture=fx, quantity=qty.name, engine_a=e, engine_b="",
                            status="error", reason=f"{type(err).__name__}: {err}"))
                stage_outs[qty.name] = outs
                score = compare
                matrix = conditioning.CONDITIONED.get(qty.name)
                if matrix and stage_outs.get(matrix):  # e.g. v̇ carries cond(M)·eps
                    ckey = conditioning.cond_key(f"out/{fx}/{qty.name}/-", qty.name)
                    arrays[ckey] = conditioning.condition_numbers(
                        [stage_outs[matrix][e] for e in sorted(stage_outs[matrix])])

                    def score(*args, _c=arrays[ckey]):
                        return conditioning.conditioned_compare(*args, _c)
                if qty.declared is not None:
                    dkey = f"out/{fx}/{qty.name}/{DECLARED}"
                    arrays[dkey] = np.asarray(qty.declared(model), dtype=float)
                    for e in outs:
                        stage_records.append(compare(
                            f"{fx}/{stage_name}/{qty.name}/{DECLARED}~{e}", stage_name, fx,
                            qty.name, DECLARED, e, arrays[dkey], outs[e], tol, dkey,
                            f"out/{fx}/{qty.name}/{e}", labels, lkey))
                if qty.reference is not None:  # each engine vs its own reference
                    for e in list(outs):
                        ref = qty.reference_name
                        rkey = f"out/{fx}/{qty.name}/{ref}:{e}"
                        try:
                            arrays[rkey] = np.asarray(qty.reference(adapters[e], inputs),
                                                      dtype=float)
                        except Exception as err:
                            stage_records.append(Record(
                                id=f"{fx}/{stage_name}/{qty.name}/{ref}~{e}", stage=stage_name,
                                fixture=fx, quantity=qty.name, engine_a=ref, engine_b=e,
                                status="error", reason=f"{type(err).__name__}: {err}"))
                            continue
                        qn = qty.name + (qty.variant(adapters[e], None) if qty.variant else "")
                        stage_records.append(compare(
                            f"{fx}/{stage_name}/{qty.name}/{ref}~{e}", stage_name, fx, qn, ref,
                            e, arrays[rkey], outs[e], lookup(stage_name, qn), rkey,
                            f"out/{fx}/{qty.name}/{e}", labels, lkey))
                for a, b in itertools.combinations([e for e in engines if e in adapters], 2):
                    rid = f"{fx}/{stage_name}/{qty.name}/{a}~{b}"
                    why = blocked_why(a, b, blocked_engine, blocked_pair)
                    if why:
                        stage_records.append(Record(id=rid, stage=stage_name, fixture=fx,
                                                    quantity=qty.name, engine_a=a, engine_b=b,
                                                    status="not_scored", reason=why))
                        continue
                    if a not in outs or b not in outs:
                        continue  # not_provided / error row already explains it
                    qn, ptol = qty.name, tol
                    if qty.variant is not None:  # tolerance of the pair's methods
                        qn = qty.name + qty.variant(adapters[a], adapters[b])
                        ptol = lookup(stage_name, qn)
                    stage_records.append(score(
                        rid, stage_name, fx, qn, a, b, outs[a], outs[b], ptol,
                        f"out/{fx}/{qty.name}/{a}", f"out/{fx}/{qty.name}/{b}", labels, lkey))
            # gate the next stages on this one
            block_on(stage_records, blocked_engine, blocked_pair)
            records += stage_records
    return RunResult(records, arrays, fixtures, versions, samples, seed)
