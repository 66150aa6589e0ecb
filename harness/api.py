"""The public Python API and the one composition root of the harness.

Every command of the CLI is a function here, returning typed results the CLI only
prints; ``import harness`` exposes them (``harness.parity``, ``harness.qualify``, ...).
This module is the only place that joins the stages to the evidence layer and the report:
it hands the evidence layer the stages' recompute hooks and the report the stages'
sections, so neither imports a stage.

Units: SI throughout (s, m, kg, rad, N, N·m); tolerances come from the versioned table
(harness/core/tolerances.py).
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence, cast

from fixtures import catalog as fixture_catalog
from harness import stages as stage_list_mod
from harness.batch import inputs, survey
from harness.batch import run as batch_run
from harness.capture import events as cap_events
from harness.capture.ingest import ingest
from harness.core import figures
from harness.core.errors import BadInput, EngineUnavailable
from harness.core.io import (
    check_output_file,
    claims_output,
    output_folder,
    write_bytes_atomic,
    write_text_atomic,
)
from harness.core.records import Record
from harness.core.strict import check_run_size, check_workers, is_int
from harness.core.verdict import Verdict, judge
from harness.evidence import baseline as baseline_mod
from harness.evidence import bundle as evidence
from harness.evidence.junit import write_junit
from harness.fit import bundle as fit_bundle
from harness.fit import catalog
from harness.model import candidate as cd
from harness.model import registry
from harness.model.as_is import load_as_is
from harness.model.integrators import Method
from harness.model.mjcf_import import load_mjcf_with_notes
from harness.model.osim_export import export_swing
from harness.model.osim_import import load_osim_with_notes
from harness.model.prepared import PreparedModel, prepare_fixture
from harness.model.sdf_import import load_sdf_with_notes
from harness.model.urdf_import import load_urdf_with_notes
from harness.report import fit as fit_report
from harness.report import render as report_render
from harness.stages import BY_NAME, STAGES, in_headline, judged, runner
from harness.stages.constrained import stage as constrained_stage
from harness.stages.contact import stage as contact_stage
from harness.stages.contact import suite as contact_suite_mod
from harness.stages.diagnosis import ablation
from harness.stages.diagnosis import summary as diagnosis_summary
from harness.stages.replay import cases as replay_cases_mod
from harness.stages.replay import run as replay_run
from harness.stages.replay.cases import Case, ReplayResult, safe_case_name
from harness.stages.replay.run import blocked_by
from harness.stages.replay.synth import qualify_cases, synthesize
from harness.sweep.executor import (
    DEFAULT_TIMEOUT_S,
    engine_preload,
    run_sweep,
    start_forkserver,
    versions,
)
from harness.sweep.report import rerender, run_named_sweep
from harness.track import run as track_run

if TYPE_CHECKING:
    from contextlib import AbstractContextManager
    from multiprocessing.connection import Connection
    from multiprocessing.context import ForkServerContext, SpawnContext
    from multiprocessing.process import BaseProcess
    from threading import Thread

    from numpy.typing import ArrayLike

    from harness.batch.run import SurveyOutcome
    from harness.capture.events import SwingEvents
    from harness.capture.ingest import Capture
    from harness.fit.fitproblem import FitProblem
    from harness.model.as_is import AsIsModel
    from harness.stages.diagnosis.ablation import DiagnosisResult
    from harness.sweep.executor import SweepResult
    from harness.swing.run import SwingOutcome

# a path argument, as text or a path object
PathArg = str | os.PathLike[str]

# full adds the opt-in stages (the derivatives, finite-difference rows included)
PROFILES = {"ci": {"samples": 10, "opt_in": False},
            "full": {"samples": 100, "opt_in": True}}
Progress = Callable[[str], None]


def _quiet(msg: str) -> None:
    return None


# ----- what a run returns -------------------------------------------------------------
@dataclass
class Outcome:
    """A run of the staged comparison written as an evidence bundle at ``path``:
    its ``records``, the ``arrays`` they were computed from, the ``manifest`` and the
    ``verdict`` (diagnosis rows excluded: they explain, they do not judge). ``missing``:
    engines allowed to be unavailable, with why."""

    path: Path
    records: list[Record]
    arrays: evidence.Arrays
    manifest: evidence.Json
    verdict: Verdict
    missing: dict[str, str] = field(default_factory=dict)
    timings: evidence.Json | None = None

    @property
    def exit_code(self) -> int:
        """0 when every scored comparison passed, else 1 (the bundle's own verdict)."""
        return self.verdict.exit_code

    @property
    def report(self) -> Path:
        return self.path / "index.html"


@dataclass
class Diagnosis(Outcome):
    """The outcome of ``diagnose``: a bundle whose job is to explain differences, so its
    exit code follows the diagnosis rule (``explained``), not the parity verdict."""

    @property
    def explained(self) -> bool:
        """True when every row of the bundle that failed, raised or went unscored —
        stages 0-2 and the diagnosis's as-is rows — is explained by a named cause (an
        unscored row: by the causes of the rows that blocked it), and every engine loaded
        the file."""
        return explained(self.records, self.arrays)

    @property
    def exit_code(self) -> int:
        """0 when ``explained``, else 1."""
        return 0 if self.explained else 1


def explained(records: Sequence[Record], arrays: evidence.Arrays) -> bool:
    """The diagnosis rule ``harness diagnose`` exits with (0 only when True): the bundle
    has a diagnosis and every as-is model's differences are explained by a named cause
    (harness/stages/diagnosis/summary.py ``is_explained``)."""
    sums = diagnosis_summary.summarise(records, arrays)
    return bool(sums) and all(diagnosis_summary.is_explained(s) for s in sums)


def _replay_window(arrays: evidence.Arrays | None) -> tuple[float, float] | None:
    """The time span [s] of the bundle's replay cases (their ``replay/CASE/t`` knots), or
    None without replays."""
    ts = [arrays[k] for k in arrays or {}
          if k.startswith("replay/") and k.count("/") == 2 and k.endswith("/t")
          and len(arrays[k])] if arrays is not None else []
    if not ts:
        return None
    return float(min(t[0] for t in ts)), float(max(t[-1] for t in ts))


def evidence_hooks() -> evidence.Hooks:
    """The stages' recompute hooks and manifest-section checks, for the evidence layer."""
    return evidence.Hooks(
        recompute={s.name: s.recompute for s in STAGES if s.recompute is not None},
        compared_plainly={s.name: s.compared_plainly for s in STAGES
                          if s.recompute is not None and s.compared_plainly is not None},
        sections={s.manifest_key: s.manifest_problem for s in STAGES
                  if s.manifest_key and s.manifest_problem is not None},
        thresholds={s.manifest_key: tuple((s.name, q) for q in s.thresholds)
                    for s in STAGES if s.manifest_key},
        stages=tuple(s for s in STAGES if s.sampled),  # in the runner's order
        reason_stated=frozenset(s.name for s in STAGES if s.reason_stated))


def stage_views(manifest: evidence.Json, records: list[Record], arrays: evidence.Arrays | None,
                timings: evidence.Json | None = None) -> list[report_render.StageView]:
    """A ``report.render.StageView`` per stage, in report order, with the section each
    stage builds from the bundle's parts (none without arrays)."""
    views = []
    for s in STAGES:
        ctx = s.report_section(manifest, records, arrays, timings) \
            if s.report_section is not None and arrays is not None else None
        views.append(report_render.StageView(
            s.name, judged=s.judged, plot_rows=s.plot_rows, records_note=s.records_note,
            row_tag=s.row_tag, template_dir=s.template_dir,
            section=(s.template, ctx) if ctx else None, title=s.title,
            before_ladder=s.before_ladder, summary_template=s.summary_template))
    return views


def judged_records(records: Iterable[Record]) -> list[Record]:
    """The rows that enter a verdict (a stage whose rows explain, such as the diagnosis of
    as-is files, is left out)."""
    return [r for r in records if judged(r)]


def stage_summary_lines(records: Iterable[Record]) -> list[str]:
    """The lines the command line prints under the headline, one per stage that has one
    (the judged rows with a relative error)."""
    return stage_list_mod.summary_lines([r for r in judged_records(records)
                                         if r.max_rel is not None])


def coupling_summary_lines(o: Outcome) -> list[str]:
    """The lines the command line prints when a model has coupled joints (URDF mimic, MJCF
    joint equality) or joints an import froze: what they are and how stage 3 compared
    them."""
    return constrained_stage.coupling_summary_lines(o.manifest, o.records)


def judge_records(records: Iterable[Record]) -> Verdict:
    """The verdict of ``records`` by every stage's headline rule (explanatory rows left
    out)."""
    return judge(judged_records(records), in_headline)


# ----- engines and models ---------------------------------------------------------------
def command_process() -> None:
    """Process-wide settings of a harness command (MuJoCo's renderer off unless the user
    set MUJOCO_GL); not applied on ``import harness``."""
    registry.command_process()


def engines() -> list[registry.EngineInfo]:
    """Every known engine with its version and availability (and why not)."""
    return registry.probe_all()


def select_engines(names: str | Sequence[str] | None = None,
                   allow_missing: Sequence[str] = (),
                   minimum: int = 2) -> tuple[list[str], dict[str, str]]:
    """(engines to run, {unavailable engine: reason}); ``names`` None: every engine.
    EngineUnavailable for a missing engine not in ``allow_missing``."""
    text = names if names is None or isinstance(names, str) else ",".join(names)
    wanted = registry.parse_engines(text)
    allowed = set(registry.parse_engines(",".join(allow_missing), "--allow-missing")) \
        if allow_missing else set()
    run: list[str]
    missing: dict[str, str]
    run, missing = [], {}
    for e in wanted:
        info = registry.probe(e)
        if info.available:
            run.append(e)
        elif e in allowed:
            missing[e] = f"{info.reason} (allowed by --allow-missing)"
        else:
            raise EngineUnavailable(e, f"{info.reason}; pass --allow-missing {e} to run "
                                       "without it")
    if len(run) < minimum:
        raise BadInput("--engines", "parity needs at least two available engines")
    return run, missing


def _sha256_file(path: PathArg) -> str:
    import hashlib

    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError as e:
        raise BadInput(str(path), e.strerror or str(e))


def _unique(models: list[PreparedModel]) -> list[PreparedModel]:
    names = [m.name for m in models]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise BadInput("parity", f"two models are both named {dup[0]!r}")
    return models


def load_models(fixtures: Sequence[str] = (), urdf: Sequence[str] = (),
                mjcf: Sequence[str] = (), floating: bool = False,
                repair_inertia: bool = False, sdf: Sequence[str] = (),
                drop_springs: bool = False, osim: Sequence[str] = ()) -> list[PreparedModel]:
    """Prepared models: catalog fixtures by name ("all": the tree fixtures, ball-joint ones
    included, "constrained":
    the loop fixtures; comma lists allowed) and the user's URDF/MJCF/SDF files
    (``drop_springs``: an SDF's joint springs set aside, with a note)."""


    models = []
    for text in fixtures:
        names = (fixture_catalog.names() + fixture_catalog.joint_names() if text == "all" else
                 fixture_catalog.constraint_names()
                 if text == "constrained" else
                 [t.strip() for t in text.split(",") if t.strip()])
        for n in names:
            if n not in fixture_catalog.all_names():
                known = ", ".join(fixture_catalog.all_names())
                raise BadInput("--fixture", f"unknown fixture {n!r} (known: {known}, all (the "
                                            "tree fixtures), constrained (the loop fixtures))")
            models.append(prepare_fixture(n))
    for path in urdf:
        spec, notes = load_urdf_with_notes(path, floating, repair_inertia)
        models.append(PreparedModel(spec, str(path), _sha256_file(path), tuple(notes)))
    for path in mjcf:
        spec, notes = load_mjcf_with_notes(path, floating=floating)
        models.append(PreparedModel(spec, str(path), _sha256_file(path), tuple(notes)))
    if drop_springs and not sdf:
        raise BadInput("--drop-springs", "applies to --sdf files only")
    for path in sdf:

        spec, notes = load_sdf_with_notes(path, floating, drop_springs)
        models.append(PreparedModel(spec, str(path), _sha256_file(path), tuple(notes)))
    for path in osim:

        spec, notes = load_osim_with_notes(path, floating, repair_inertia)
        models.append(PreparedModel(spec, str(path), _sha256_file(path), tuple(notes)))
    if not models:
        raise BadInput("parity", "name a model: --fixture NAME|all, --urdf PATH, --mjcf PATH, "
                                 "--sdf PATH or --osim PATH")
    return _unique(models)


def load_as_is_models(paths: Sequence[str], floating: bool = False,
                      engine_files: dict[str, str] | None = None,
                      repair_inertia: bool = False) -> list[PreparedModel]:
    """The user's files loaded by every engine with its own defaults; ``engine_files``
    {engine: path} gives one engine its own file (one model only)."""
    if not paths:
        raise BadInput("--as-is", "name a model: --urdf PATH or --mjcf PATH")
    if engine_files and len(paths) > 1:
        raise BadInput("--engine-file", "applies to one model; name one --urdf or --mjcf")
    return _unique([load_as_is(p, floating, engine_files or {}, repair_inertia)
                    for p in paths])


# ----- the staged comparison ------------------------------------------------------------
def _run_choices(engines: str | Sequence[str] | None, allow_missing: Sequence[str],
                 stages: Sequence[str] | None, samples: int,
                 seed: int) -> tuple[list[str], dict[str, str], list[str]]:
    """(engines to run, missing engines, stage names) of a parity run, its sample count
    and seed checked (BadInput naming the option)."""
    for name, value in (("samples", samples), ("seed", seed)):
        if not is_int(value):  # an API caller's 1.5 or True: refused before any stage runs
            raise BadInput(name, f"must be an integer, got {value!r} "
                                 f"({type(value).__name__})")
    run_engines, missing = select_engines(engines, allow_missing)
    stage_list = runner.stage_names(list(stages) if stages else None)
    if not 1 <= samples <= 100000:
        raise BadInput("--samples", f"must be between 1 and 100000, got {samples}")
    if seed < 0:
        raise BadInput("--seed", f"must be >= 0, got {seed}")
    return run_engines, missing, stage_list


@claims_output(evidence.OUTPUT)  # the --out rule checked and the folder locked first
def run(models: list[PreparedModel], *, out: PathArg, title: str = "Engine parity report",
        engines: str | Sequence[str] | None = None, allow_missing: Sequence[str] = (),
        stages: Sequence[str] | None = None, samples: int = 10, seed: int = 0,
        contact_suite: bool = False,
        replay_cases: Sequence[Case] | Callable[[], Sequence[Case]] | None = None,
        beyond_limits: float = 0.0,
        junit: str | None = None, command_line: Sequence[str] | None = None,
        progress: Progress | None = None, diagnosis_rule: bool = False) -> Outcome:
    """Run the sampled stages on ``models`` (then the analytic and native contact suite if
    ``contact_suite``, the diagnosis of as-is models, and the ``replay_cases``, each gated
    on the earlier stages of every engine pair) and write one bundle to ``out``;
    ``diagnosis_rule``: the run is a ``diagnose`` (its report's banner follows the
    diagnosis rule, as its exit code does)."""
    say = progress or _quiet
    run_engines, missing, stage_list = _run_choices(engines, allow_missing, stages, samples,
                                                    seed)
    if not (beyond_limits == beyond_limits and 0.0 <= beyond_limits <= 10.0):
        raise BadInput("--beyond-limits", f"must be between 0 and 10, got {beyond_limits}")
    check_run_size(models, len(run_engines), samples,
                   any(BY_NAME[s].large_arrays for s in stage_list))
    if junit:
        check_output_file(junit, "--junit")
    command_line = list(command_line) if command_line is not None else \
        ["harness", *sys.argv[1:]]
    as_is = [m for m in models if callable(getattr(m, "as_is_file", None))]
    contact: _ContactSuite | None = None
    if contact_suite and contact_stage.NAME in stage_list:  # it needs no stage: it starts first
        contact = _ContactSuite(models, run_engines, say, beside=bool(replay_cases))
    diagnosis = rr = None
    try:
        result = runner.run(models, run_engines, stage_list, samples=samples, seed=seed,
                            progress=say)
        cases = (replay_cases() if callable(replay_cases) else list(replay_cases)) \
            if replay_cases else []
        if contact is not None and contact.running:
            # the second process also replays the last case when the gate needs nothing
            # more than the stages' records (no diagnosis): the two shares then balance
            contact.hand_over(cases[-1:] if len(cases) >= 2 and not as_is else [],
                              result.records)
        if as_is:  # why the engines disagree (stage "diagnosis")

            # the models with an as_is_file are the as-is models (harness/model/as_is.py)
            diagnosis = ablation.run(cast("list[AsIsModel]", as_is), run_engines,
                                     samples=samples, seed=seed,
                                     beyond_limits=beyond_limits, progress=say)
        rr = _replays(cases, run_engines, result, contact, diagnosis, say)
    except BaseException:
        if contact is not None:
            contact.close()  # the second process ends with the run
        raise
    if contact is not None:  # the order of a serial run: stages, contact, diagnosis, replay
        result.records += contact.records()
        result.arrays.update(contact.arrays())
    if diagnosis is not None:
        result.records += diagnosis.records
        result.arrays.update(diagnosis.arrays)
    replay_info, extra, timings = None, {}, None
    if rr is not None:
        result.records += rr.records
        result.arrays.update(rr.arrays)
        replay_info, timings = rr.info, rr.timings
        extra["timings.json"] = json.dumps(rr.timings, indent=1).encode()  # not evidence
    hooks = evidence_hooks()
    sections = {BY_NAME[replay_cases_mod.NAME].manifest_key: replay_info} if replay_info \
        else {}
    manifest = evidence.build_manifest(result, missing, command_line, hooks, sections,
                                       "diagnose" if diagnosis_rule else "parity")
    html = render_report(manifest, result.records, result.arrays, timings, title=title,
                         progress=say, diagnosis_rule=diagnosis_rule)
    path = evidence.write_bundle(out, result, missing, command_line, hooks, html=html,
                                 extra_files=extra, manifest=manifest)
    if junit:

        write_junit(junit, result.records, missing)
    return Outcome(Path(path), result.records, result.arrays, manifest,
                   judge_records(result.records), missing, timings)


def _replays(cases: Sequence[Case], engines: list[str], result: runner.RunResult,
             contact: _ContactSuite | None, diagnosis: DiagnosisResult | None,
             say: Progress) -> ReplayResult | None:
    """The replays of a run (None without cases), gated as the serial run gates them: on
    the stages', the contact suite's and the diagnosis's records. The cases the second
    process replayed (``contact.tail``) are put after this process's, in case order."""
    if not cases:
        return None

    diag = diagnosis.records if diagnosis else []
    if contact is None or not contact.running:
        crec = contact.records() if contact is not None else []
        return replay_run.run(cases, engines, result.records + crec + diag, progress=say)
    head = cases[:len(cases) - len(contact.tail)]
    rr = replay_run.run(head, engines, result.records + diag, progress=say)
    if contact.gates(contact.records()):
        # a contact record failed: every replay runs again, gated as in a serial run
        say("replay: again, gated on the contact records")
        return replay_run.run(cases, engines, result.records + contact.records() + diag,
                              progress=say)
    # with a tail, its replays ran (in the second process or here)
    return _joined(rr, cast(ReplayResult, contact.tail_replays())) if contact.tail else rr


def _joined(a: ReplayResult, b: ReplayResult) -> ReplayResult:
    """One replay result of two, the cases of ``a`` first (the per-case records, arrays,
    manifest sections and wall times of a run over all of them, in that order)."""

    return ReplayResult(a.records + b.records, {**a.arrays, **b.arrays},
                        {"cases": {**a.info["cases"], **b.info["cases"]}},
                        {**a.timings, **b.timings})


def contact_suite_task(conn: Connection, models: list[PreparedModel],
                       engines: list[str]) -> None:
    """Runs in the second process of _ContactSuite: the contact suite of ``models`` on
    ``engines``, then the replays of the cases it receives (``tail``, gated on the
    ``earlier`` records it receives with them); sends ("ok", ((records, arrays), the replay
    result or None)) or ("raised", the exception), and what the engines logged or
    warned."""
    import logging
    import warnings


    # what the engines warned, re-emitted by the run's own process (_said_again)
    said: list[tuple[str, str, int, str]] = []

    class _Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            said.append(("log", record.name, record.levelno, record.getMessage()))

    logging.getLogger().addHandler(_Keep(logging.WARNING))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out: tuple[str, object]
        try:
            suite = contact_suite_mod.run(models, engines)
            tail, earlier = conn.recv()  # after the stages: the cases to replay here
            replayed = replay_run.run(list(tail), engines, list(earlier)) if tail else None
            out = ("ok", (suite, replayed))
        except Exception as e:  # raised again in the run's own process
            out = ("raised", e)
    said += [("warning", w.category.__name__, 0, str(w.message)) for w in caught]
    try:
        conn.send((*out, said))
    finally:
        conn.close()


def _said_again(said: Iterable[tuple[str, str, int, str]]) -> None:
    """Re-emit here what the second process's engines logged or warned, so that the command
    counts and shows them as its own (one line per distinct message)."""
    import logging
    import warnings

    for kind, name, level, msg in said:
        if kind == "log":
            logging.getLogger(name).log(level, msg)
        else:
            warnings.warn(f"{name}: {msg}", RuntimeWarning, stacklevel=2)


class _ContactSuite:
    """The contact suite of a run (harness/stages/contact/suite.py), in a second process
    while this one replays when ``beside`` and the machine has a second core; else here, at
    once. Its records and arrays are those of the serial run: the suite depends only on
    the models and engines, and the replays' gate is checked against its records
    afterwards (``gates``), the replays run again when a contact record would have blocked
    one. Measured on the qualification (two cores): 38-40 s serial, 22-24 s so (the second
    process also replays the last case: ``hand_over``). The process is a daemon (it ends
    with the run's own); one that cannot start or dies before it answered makes the suite
    run here; an exception in the suite is raised here."""

    tail: list[Case]
    earlier: list[Record]
    _tail_result: ReplayResult | None
    _sender: Thread | None
    _result: tuple[list[Record], evidence.Arrays] | None
    _proc: BaseProcess | None
    _conn: Connection | None

    def __init__(self, models: list[PreparedModel], engines: Iterable[str], say: Progress,
                 beside: bool) -> None:
        self.models, self.engines, self.say = models, list(engines), say
        self.tail, self.earlier = [], []
        self._tail_result, self._sender = None, None
        self._result, self._proc, self._conn = None, None, None
        self.running = False  # whether the suite was handed to a second process
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
            (os.cpu_count() or 1)
        if beside and cores >= 2:
            try:
                import multiprocessing as mp
                import pickle

                pickle.dumps((models, self.engines))  # what cannot be sent runs here
                method = "forkserver" if "forkserver" in mp.get_all_start_methods() \
                    else "spawn"
                # the context of that method (typeshed: only a BaseContext, without Process)
                ctx = cast("ForkServerContext | SpawnContext", mp.get_context(method))
                self._conn, child = ctx.Pipe(duplex=True)
                self._proc = ctx.Process(target=contact_suite_task,
                                         args=(child, models, self.engines), daemon=True)
                self._proc.start()
                child.close()
                self.running = True
                say("contact: analytic and native contact fixtures, in a second process "
                    "beside the stages and the replays")
                return
            except Exception:  # no second process here: the suite runs in this one
                self.close()
                self.running = False
        self.tail = []  # the replays all run in this process
        self._run_here()

    def _run_here(self) -> None:
        self._result = contact_suite_mod.run(self.models, self.engines, progress=self.say)

    def close(self) -> None:
        """End the second process (if any) and forget it."""
        if self._proc is not None:
            if self._proc.is_alive():
                self._proc.kill()
            self._proc.join()
            self._proc = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _wait(self) -> tuple[list[Record], evidence.Arrays]:
        if self._result is None:
            if self._sender is None:  # nothing handed over: the process replays nothing
                self.hand_over([], [])
            cast("Thread", self._sender).join()  # set by hand_over
            try:
                # the pipe of the second process (running: _result is None)
                kind, payload, said = cast("Connection", self._conn).recv()
                _said_again(said)
            except (EOFError, OSError):
                kind, payload = "died", None
            finally:
                self.close()
            if kind == "raised":
                raise payload
            if kind == "died":
                self.say("contact: the second process ended without its records; the suite "
                         "runs here")
                self._run_here()
                if self.tail:

                    self._tail_result = replay_run.run(self.tail, self.engines, self.earlier,
                                                       progress=self.say)
            else:
                self._result, self._tail_result = payload
                self.say(f"contact: {len(self._result[0])} records from the second process")
        # set: here (_run_here) or by the second process
        return cast("tuple[list[Record], evidence.Arrays]", self._result)

    def records(self) -> list[Record]:
        return self._wait()[0]

    def hand_over(self, tail: Iterable[Case], earlier: Iterable[Record]) -> None:
        """Give the second process the replay ``tail`` (cases; may be empty) to run after the
        suite, gated on the ``earlier`` records (the stages')."""
        import threading

        # the gate reads only failed and error records (``gates``): those are sent
        self.tail, self.earlier = list(tail), [r for r in earlier if self.gates([r])]

        def send() -> None:  # from a thread: the process reads it only once its suite is done
            try:
                cast("Connection", self._conn).send((self.tail, self.earlier))  # running
            except (OSError, ValueError):  # the process is gone: _wait runs it all here
                pass

        self._sender = threading.Thread(target=send, daemon=True)
        self._sender.start()
        if self.tail:
            self.say(f"replay {', '.join(c.name for c in self.tail)}: in the second process")

    def tail_replays(self) -> ReplayResult | None:
        """The replay result of the ``tail`` cases (gated on ``earlier``)."""
        self._wait()
        return self._tail_result

    def arrays(self) -> evidence.Arrays:
        return self._wait()[1]

    @staticmethod
    def gates(records: Iterable[Record]) -> bool:
        """Whether any of ``records`` is one the replays' gate blocks on (the replay
        stage's own rule, harness/stages/replay/run.py ``blocked_by``)."""

        return any(blocked_by(records))


def parity(fixtures: Sequence[str] = (), urdf: Sequence[str] = (), mjcf: Sequence[str] = (),
           *, out: PathArg = "reports/parity", floating: bool = False,
           repair_inertia: bool = False, as_is: bool = False,
           engine_files: dict[str, str] | None = None, beyond_limits: float = 0.0,
           sdf: Sequence[str] = (), drop_springs: bool = False, osim: Sequence[str] = (),
           **kw: Any) -> Outcome:  # kw: run's keywords, of their own types
    """Stages 0–2 (or ``stages=[...]``) on fixtures or the user's URDF/MJCF files.

    ``as_is``: every engine parses the user's files with its own defaults, and the
    diagnosis explains their differences. Other keywords: as for ``run``."""
    if isinstance(fixtures, str):
        fixtures = [fixtures]
    if isinstance(urdf, (str, Path)):
        urdf = [str(urdf)]
    if isinstance(mjcf, (str, Path)):
        mjcf = [str(mjcf)]
    if isinstance(sdf, (str, Path)):
        sdf = [str(sdf)]
    if isinstance(osim, (str, Path)):
        osim = [str(osim)]
    if as_is and osim:
        raise BadInput("--as-is", "applies to --urdf/--mjcf files (an .osim goes through the "
                                  "canonical model only)")
    if as_is and sdf:
        raise BadInput("--as-is", "applies to --urdf/--mjcf files (an SDF goes through the "
                                  "canonical model only)")
    if as_is:
        if fixtures:
            raise BadInput("--as-is", "needs a user model (--urdf or --mjcf), not --fixture: "
                                      "built-in fixtures are declared, not loaded as-is")
        models = load_as_is_models(list(urdf) + list(mjcf), floating, engine_files,
                                   repair_inertia)
    else:
        if engine_files or beyond_limits:
            raise BadInput("parity", "--engine-file and --beyond-limits need --as-is")
        models = load_models(fixtures, urdf, mjcf, floating, repair_inertia, sdf,
                             drop_springs, osim)
    kw.setdefault("title", "Engine parity report")
    kw["contact_suite"] = bool(kw.get("stages"))
    return run(models, out=out, beyond_limits=beyond_limits, **kw)


def diagnose(model: str, *, out: PathArg = "reports/diagnose", floating: bool = False,
             engine_files: dict[str, str] | None = None, beyond_limits: float = 0.0,
             repair_inertia: bool = False,
             **kw: Any) -> Outcome:  # kw: run's keywords, of their own types
    """``parity(urdf=model, as_is=True)`` on one file: why the engines disagree. The
    exit code is the diagnosis's (``Diagnosis.explained``): 0 only when every difference in
    the bundle has a named cause and no row went unscored for any other reason."""
    models = load_as_is_models([str(model)], floating, engine_files, repair_inertia)
    kw.setdefault("title", f"Why the engines disagree: {model}")
    o = run(models, out=out, beyond_limits=beyond_limits, diagnosis_rule=True, **kw)
    return Diagnosis(o.path, o.records, o.arrays, o.manifest, o.verdict, o.missing,
                     o.timings)


def qualify(profile: str = "ci", *, out: PathArg, samples: int | None = None,
            coarse_replay: bool = False,
            **kw: Any) -> Outcome:  # kw: run's keywords, of their own types
    """Every catalog fixture through every stage of ``profile`` ("ci", or "full" with the
    opt-in derivatives and 100 samples), plus the qualification replay cases."""


    if profile not in PROFILES:
        raise BadInput("--profile", f"unknown profile {profile!r} (known: "
                                    f"{', '.join(sorted(PROFILES))})")
    prof = PROFILES[profile]
    stage_list = [s.name for s in STAGES if s.sampled and (not s.opt_in or prof["opt_in"])]
    models = [prepare_fixture(n) for n in fixture_catalog.all_names()]
    return run(models, out=out, title=f"Qualification ({profile} profile)",
               stages=stage_list, samples=prof["samples"] if samples is None else samples,
               contact_suite=True,
               replay_cases=lambda: qualify_cases(coarse=coarse_replay), **kw)


def replay(candidate: cd.Candidate | PathArg, *, out: PathArg = "reports/replay",
           method: str = "rk4", dt: float = 1e-3, rtol: float = 1e-10, atol: float = 1e-12,
           score: str = "agreement", native: bool = True,
           **kw: Any) -> Outcome:  # kw: run's keywords, of their own types
    """Replay a candidate (its .json manifest, or a loaded Candidate) in every engine,
    after stages 0–2 on its model; ``method``: rk4 | semi_implicit_euler (step ``dt`` [s])
    or dop853 (``rtol``, ``atol``)."""

    cand = candidate if isinstance(candidate, cd.Candidate) else cd.load(candidate)
    if method == "dop853":
        m = Method("dop853", rtol=_positive(rtol, "--rtol"), atol=_positive(atol, "--atol"))
    else:
        m = Method(method, dt=_positive(dt, "--dt"))
    case = Case(safe_case_name(cand.model.name), cand, score, m, native=native)
    kw.setdefault("title", f"Replay of {cand.path or cand.model.name}")
    return run([cand.model], out=out, replay_cases=[case], **kw)


def _positive(x: float | None, what: str) -> float | None:
    if x is None:
        return None
    if not (x > 0 and x != float("inf")):
        raise BadInput(what, f"must be a finite number > 0, got {x}")
    return x


def _given(x: float | None) -> float:
    """``x``, which the caller passed as a number (a None here is a harness bug)."""
    if x is None:
        raise TypeError("a number was expected")
    return x


def synth(fixture: str, out: PathArg, *, law: str | None = None, duration: float = 2.0,
          grid_dt: float = 0.01, interpolation: str = "zoh", seed: int = 0,
          engine: str | None = None, q0: Sequence[float] | None = None,
          v0: Sequence[float] | None = None) -> tuple[Path, cd.Candidate]:
    """A candidate of a catalog fixture driven by a known control law, written to ``out``
    (.json + .npz); returns (path, candidate)."""


    if fixture not in fixture_catalog.names():
        raise BadInput("FIXTURE", f"unknown fixture {fixture!r} (known: "
                                  f"{', '.join(fixture_catalog.names())})")
    cd.check_save_target(out, "--out")  # before any work: writable, replaces only ours
    if engine is not None:
        registry.adapter_class(engine)  # raises for unknown / unavailable engines
    model = prepare_fixture(fixture)
    for vals, n, what in ((q0, model.layout.nq, "--q0"), (v0, model.layout.nv, "--v0")):
        if vals is not None and len(vals) != n:
            raise BadInput(what, f"needs {n} numbers for {fixture}, got {len(vals)}")
    cand = synthesize(model, law, duration=_given(_positive(duration, "--duration")),
                      grid_dt=_given(_positive(grid_dt, "--grid-dt")),
                      interpolation=interpolation,
                      seed=seed, engine=engine, q0=q0, v0=v0)
    return cd.save(cand, out), cand


def make_candidate(model: PreparedModel, q0: ArrayLike, v0: ArrayLike, t: ArrayLike,
                   tau: ArrayLike, *, interpolation: str = "zoh",
                   provenance: dict[str, Any] | None = None, markers: Sequence[cd.Marker] = (),
                   parameters: dict[str, Any] | None = None) -> cd.Candidate:
    """A candidate from your own fitter, validated as a file would be. Dimensions: N knots;
    q0 (nq,) and v0 (nv,) canonical (joints in ``model.layout.joint_names`` order), t (N,)
    [s] strictly increasing, tau (N, nv) generalized forces [N·m | N];
    ``interpolation``: zoh | linear | cubic | lobatto<P>; ``provenance``: any of producer,
    created, solver (dict), status, notes (the rest is filled in)."""

    return cd.from_arrays(model, q0, v0, t, tau, interpolation, tuple(markers), provenance,
                          parameters)


def save_candidate(cand: cd.Candidate, path: PathArg) -> Path:
    """Write ``cand`` as ``path`` (.json manifest) and the .npz arrays beside it, atomically;
    ``harness replay PATH`` replays it in every engine."""

    return cd.save(cand, path)


# ----- bundles: read, verify, report ----------------------------------------------------
def read_bundle(path: PathArg) -> evidence.Bundle:
    """An evidence bundle read and validated strictly (BadInput on any problem)."""
    return evidence.read_bundle(path, evidence_hooks())


def verify(path: PathArg) -> list[str]:
    """Recompute every record of the bundle at ``path`` from its arrays; the list of
    one-line problems (empty: the bundle is consistent). A fit or sweep folder is bad
    input that says what the folder is: verify checks evidence bundles only."""
    folder = Path(path)
    if not (folder / "manifest.json").exists():
        for name, what in (("fit.json", "a fit bundle (harness fit)"),
                           ("sweep.json", "a sweep folder (harness sweep)")):
            if (folder / name).is_file():
                raise BadInput(str(path), f"is {what}, not an evidence bundle: verify checks "
                               "evidence bundles (manifest.json, records.json and arrays.npz "
                               "of parity, qualify, diagnose or replay); harness report "
                               f"{path} re-renders its page")
    return evidence.verify(path, evidence_hooks())


def render_report(manifest: evidence.Json, records: list[Record], arrays: evidence.Arrays | None,
                  timings: evidence.Json | None = None, title: str = "Engine parity report",
                  baseline: baseline_mod.Diff | None = None, *, scripts: str = "file",
                  progress: Progress | None = None, unverified: Sequence[str] = (),
                  diagnosis_rule: bool = False) -> str:
    """The HTML report of a bundle's parts, with every stage's own section. ``scripts``:
    ``"file"`` (the page loads plotly.min.js from its folder) or ``"inline"`` (stand-alone
    file); ``progress``: one line per report step; ``diagnosis_rule``: a ``diagnose`` run
    (also read from the manifest's command line), whose banner follows ``explained``."""
    say = progress or _quiet
    say("report: stage sections")
    # a diagnose bundle's banner follows the diagnosis rule, as its exit code does
    diagnosis_rule = diagnosis_rule or report_render.is_diagnosis(manifest)
    why = explained(records, arrays) if arrays is not None and diagnosis_rule else None
    return report_render.render(
        manifest, records, title=title, arrays=arrays, baseline=baseline,
        stages=stage_views(manifest, records, arrays, timings), in_headline=in_headline,
        scripts=scripts, progress=say, unverified=unverified, explained=why,
        window=_replay_window(arrays))


def report(bundle: PathArg, out: PathArg | None = None, baseline: PathArg | None = None,
           progress: Progress | None = None, problems: list[str] | None = None
           ) -> tuple[Path, baseline_mod.Diff | None]:
    """Re-render the index.html of an evidence bundle, a sweep folder or a fit bundle, with
    plotly.min.js beside it (or ``out``, one stand-alone file with the chart library
    inside); with ``baseline`` (an older evidence bundle) the changes since it. An evidence
    bundle is verified first (``verify``): one that does not verify is reported as such,
    never with a pass banner, and its problems are appended to ``problems`` when given.
    Returns (path written, changes or None)."""

    if out:
        check_output_file(out, "--out")
    folder = Path(bundle)
    if (folder / "sweep.json").is_file() and not (folder / "manifest.json").exists():

        if baseline:
            raise BadInput("--baseline", "compares evidence bundles; DIR is a sweep")
        return rerender(folder, None if out is None else Path(out)), None
    target = Path(out) if out else folder / "index.html"
    if (folder / "fit.json").is_file() and not (folder / "manifest.json").exists():


        if baseline:
            raise BadInput("--baseline", "compares evidence bundles; DIR is a fit bundle")
        doc, arrays = fit_bundle.read(folder)
        html = fit_report.render(doc, arrays, mode="inline" if out else "file")
        if not out:
            _write_chart_library(folder)
        return write_text_atomic(target, html), None
    b = read_bundle(folder)
    changes = None
    if baseline:
        changes = baseline_mod.diff(b, read_bundle(baseline), str(baseline))
    say = progress or _quiet
    say("report: verifying the bundle")
    # the records shown must recompute from the arrays: the bundle read above is verified
    # (read once: the same bytes, checked as `harness verify` checks them)
    found = evidence.verify_read(b, evidence_hooks())
    if problems is not None:
        problems.extend(found)
    title, timings = report_render.bundle_title_and_timings(b)
    html = render_report(b.manifest, b.records, b.arrays, timings, title=title,
                         baseline=changes, scripts="inline" if out else "file",
                         progress=say, unverified=found)
    if not out:  # the page loads the chart library from its own folder
        _write_chart_library(folder)
    say(f"report: writing {target}")
    return write_text_atomic(target, html), changes


def _write_chart_library(folder: Path) -> None:
    """plotly.min.js beside a re-rendered report (its page loads it from there), unless the
    file there already is a regular file with the installed copy's bytes (writing and
    syncing its 4.8 MB again cost a re-render more than its own page on a busy disk)."""

    data = figures.plotly_js()
    dest = folder / figures.ASSET
    if dest.is_file() and not dest.is_symlink() and dest.stat().st_size == len(data) \
            and dest.read_bytes() == data:
        return
    write_bytes_atomic(dest, data)


# ----- diagnosis summaries (printed by the CLI, shown in the report) ---------------------
def first_differing(outcome: Outcome) -> list[tuple[Record, str]]:
    """[(record, label of its first differing element)] of stage 0 rows that differ."""

    return diagnosis_summary.first_differing(judged_records(outcome.records), outcome.arrays)


def diagnosis_summaries(outcome: Outcome) -> list[dict[str, Any]]:
    """Per as-is model: the differences, their named causes and shares, every row of the
    bundle that differs with its causes (``rows``), and lines to print (``lines``);
    ``explained`` is False when a difference or a row has no named cause, or an engine
    could not load the file."""

    out = []
    for s in diagnosis_summary.summarise(outcome.records, outcome.arrays):
        out.append({**s, "lines": list(diagnosis_summary.format_summary(s)),
                    "explained": diagnosis_summary.is_explained(s)})
    return out


# ----- summaries (the CLI's --json) ------------------------------------------------------
def plain(x: object) -> object:
    """``x`` as JSON data: paths as text, tuples as lists, non-finite floats as None."""
    import math

    if isinstance(x, dict):
        return {str(k): plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, Path):
        return str(x)
    if hasattr(x, "item") and callable(x.item) and getattr(x, "ndim", 1) == 0:
        x = x.item()  # a numpy scalar
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def verdict_summary(v: Verdict) -> dict[str, Any]:
    """A verdict as data: records per status, qualified, the number of scored rows, the
    headline sentence, and the headline row (id and worst relative error, or None)."""
    return {"counts": dict(v.counts), "qualified": v.qualified, "n_scored": v.n_scored,
            "headline": v.headline, "worst_rel": plain(v.worst_rel),
            "worst_id": v.worst.id if v.worst is not None else None}


def outcome_summary(o: Outcome) -> dict[str, Any]:
    """What a staged run wrote: the bundle and report paths, the engines run (with their
    versions) and missing, the number of records in the bundle (diagnosis rows included;
    ``verdict.counts`` leave them out), the verdict, the worst engine-pair replay
    trajectory error [the state's units], for a diagnosis whether every difference is
    explained, and the coupled or frozen joints' lines when there are any."""
    traj = [r for r in o.records if r.stage == replay_cases_mod.NAME
            and r.quantity == "trajectory" and r.max_abs is not None]
    d = {"bundle": str(o.path), "report": str(o.report), "n_records": len(o.records),
         "engines": dict(o.manifest.get("engines", {})), "missing_engines": dict(o.missing),
         "verdict": verdict_summary(o.verdict)}
    if traj:
        w = max(traj, key=lambda r: cast(float, r.max_abs))  # None filtered out
        d["replay_worst_trajectory"] = {"id": w.id, "max_abs": plain(w.max_abs)}
    sums = diagnosis_summaries(o) if any(not judged(r) for r in o.records) else []
    if sums:
        d["diagnosis"] = [{"fixture": s["fixture"], "explained": s["explained"],
                           "lines": s["lines"]} for s in sums]
    if isinstance(o, Diagnosis):
        d["explained"] = o.explained
    couplings = coupling_summary_lines(o)
    if couplings:  # the coupled and frozen joints, as the command line prints them
        d["couplings"] = couplings
    return d


# ----- fitter, capture, swing, sweeps -----------------------------------------------------
def fit_problems() -> tuple[FitProblem, ...]:
    """Every problem `harness fit` runs (``FitProblem``, harness/fit/catalog.py), in the
    order listed."""
    return catalog.problems()


def fit(problem: str, *, out: PathArg, method: str = "midpoint", n: int | None = None,
        seed: int = 0, p0: float | None = None, process_noise: bool = False,
        study: str | None = None, knot_frames: str | float | None = None,
        w_effort: str | float | None = None, w_smooth: str | float | None = None,
        w_prior: str | float | None = None,
        events: Sequence[str] = (), solver: str | None = None) -> tuple[Path, dict[str, Any]]:
    """Run the fit problem called ``problem`` (one of ``fit_problems()``: the benchmarks
    by direct collocation, the bounce's candidate contact schedules, the dimension's
    candidate chains …) and write a fit bundle; returns (path, fit.json document).
    ``study`` "resolution" adds the knot density and weight study (docs/resolution.md)
    over the grid axes ``knot_frames`` [frames per knot], ``w_effort`` [s⁴/rad²],
    ``w_smooth`` [s⁶/rad²], ``w_prior`` [–] (each a value, a comma-separated list, or
    None for the default axis). ``events``: observed events, each
    "NAME=TIME±SIGMA:LABEL" (harness/fit/observed_events.py; a measured one is scored and
    checked against the data). ``solver``: "sqp" (the banded SQP, the collocation
    problems' default) or "ipopt" (harness/fit/collocation.py ``solve``)."""


    # the --out rule checked before the fit, and the folder locked until it is written
    with output_folder(out, fit_bundle.OUTPUT) as out:
        result = fit_bundle.run(problem, method=method, n=n, seed=seed, p0=p0,
                                process_noise=process_noise, study=study,
                                grid={"knot_frames": knot_frames, "w_effort": w_effort,
                                      "w_smooth": w_smooth, "w_prior": w_prior},
                                events=tuple(events), solver=solver)
        result["json"]["provenance"] = fit_bundle.provenance(evidence.git_commit())
        html = fit_report.render(result["json"], result["arrays"])
        return fit_bundle.write(out, result, html), result["json"]


def capture(path: PathArg, *, up: str = "auto",
            cutoff_hz: float | None = None) -> tuple[Capture, SwingEvents, dict[str, Any]]:
    """A C3D capture ingested (units, axes, gaps, rejected markers, optional low-pass) and
    its swing events; returns (capture, events, report dict)."""


    cap = ingest(path, up=up, cutoff_hz=cutoff_hz)
    ev = cap_events.detect(cap)
    rep = cap.report()
    rep["events"] = ev.to_json()
    return cap, ev, rep


def swing(capture_path: PathArg, *, out: PathArg, quick: bool = False, up: str = "auto",
          cutoff_hz: float | None = None, club: str = "auto", replay: bool = True,
          engines: str | Sequence[str] | None = None, allow_missing: Sequence[str] = (),
          progress: Progress | None = None, study: bool = False, dimension: bool = False,
          joint_limits: bool = True, activation: bool = False, grip: str = "weld",
          shaft: str = "rigid",
          club_masses: str | tuple[float, float] | None = None,
          loft_deg: float | None = None, impulse_prior: str = "law",
          ring: bool = True) -> SwingOutcome:
    """Fit a golf-swing capture and replay the fitted candidate in every engine; returns
    the swing outcome (path, checks, exit code). ``study``: also choose the knot density,
    smoothness and effort weights on a synthetic truth from the fit (harness/swing/study.py);
    ``dimension``: also compare the golfer with and without the wrists' deviation on
    held-out frames (harness/swing/dimension.py); ``joint_limits``: the dynamic fit holds
    the golfer's joint limits (default; False releases them; the IK always holds them);
    ``activation``: also refit with the upper body's actuators activation-driven and
    report what that changes
    (harness/swing/activation.py); ``grip``: the club "weld"-ed to the lead hand or on a
    "hinge" in its grip; ``shaft``: the club "rigid" or bending at one point ("flex")
    (fixtures/golfers.py, docs/swing.md); ``club``: "driver", "iron"
    or "auto" (inferred from the club's length measured at address), for the
    smash-factor band and the club's masses; ``club_masses``: a weighed club's (whole
    club, head) [kg], "TOTAL,HEAD" or a pair, in place of the club's typical masses;
    ``loft_deg``: the face's loft [deg] for the ball's collision law (None: the club's
    typical one, harness/fit/collision.py); ``impulse_prior``: "law", the fit's impulse
    held to the collision law's within the spread the restitution prior gives it, or
    "free", about zero (docs/swing/impact.md); ``ring``: the fit tries the club head
    ringing on the shaft after contact beside none (default; docs/swing/impact.md)."""
    # harness.swing imported on use: its 19 modules cost every other command ~40 ms to import
    from harness.swing import run as swing_run

    def replay_fn(cases: Sequence[tuple[str | None, cd.Candidate, str]], method: Method,
                  folder: PathArg, title: str = "Replay of the swing fit"
                  ) -> tuple[list[str], Outcome]:
        made = [Case(name or safe_case_name(cand.model.name), cand, mode, method,
                     native=False) for name, cand, mode in cases]
        o = run([made[0].candidate.model], out=folder, title=f"{title} ({capture_path})",
                engines=engines, allow_missing=allow_missing, samples=4, seed=0,
                replay_cases=made, progress=progress)
        return [c.name for c in made], o

    return swing_run.swing(capture_path, out=out, quick=quick, up=up, cutoff_hz=cutoff_hz,
                           club=club, replay_fn=replay_fn if replay else None,
                           progress=progress, study=study, dimension=dimension,
                           joint_limits=joint_limits, activation=activation, grip=grip,
                           shaft=shaft, club_masses=club_masses, loft_deg=loft_deg,
                           impulse_prior=impulse_prior, ring=ring)


def osim_export(swing_dir: PathArg, *, out: PathArg | None = None) -> dict[str, Any]:
    """A finished swing folder exported for OpenSim (harness/model/osim_export.py FILES:
    the model, its motion, markers, foot forces as ExternalLoads, the harness's inverse
    dynamics, IK and ID setups, notes) written to ``out``
    (default: the folder ``<swing_dir>_osim`` beside it; the swing folder holds only what
    the swing writes). Returns the paths, coordinate names and counts (docs/osim.md)."""
    # harness.swing imported on use: its 19 modules cost every other command ~40 ms to import
    from harness.swing import run as swing_run

    d = Path(swing_dir)
    if (d / "fit" / "fit.json").is_file():  # a swing summary this harness writes, or refused
        swing_run.recognise_summary(d / "fit" / "fit.json")
    return export_swing(d, out=out if out is not None else d.parent / f"{d.name}_osim")


def track(model_path: PathArg, markers_path: PathArg, *, out: PathArg,
          loads_path: PathArg | None = None, ik_setup: PathArg | None = None,
          start: float | None = None, end: float | None = None, engine: str | None = None,
          lowpass_hz: float | None = None, scale_setup: PathArg | None = None,
          progress: Progress | None = None) -> track_run.TrackOutcome:
    """Marker IK (joint limits held) and inverse dynamics with the measured external loads
    of an OpenSim model, beside OpenSim's own IK and ID tools run live on the same inputs,
    then the motion replayed open loop in every double engine (harness/track/replay.py);
    summary.json, ik.mot, id.sto and index.html written to ``out`` (harness/track/run.py;
    times ``start``, ``end`` in s; ``lowpass_hz`` [Hz]: the IK's coordinates low-passed
    before the ID, on both sides; ``scale_setup``: an OpenSim ScaleTool setup carried out
    on the model first, harness/track/scale.py). Exit code in the outcome: 1 while any
    check is not met or not run."""
    return track_run.track(str(model_path), str(markers_path), out=out,
                           loads_path=None if loads_path is None else str(loads_path),
                           ik_setup=None if ik_setup is None else str(ik_setup),
                           start=start, end=end, engine=engine, lowpass_hz=lowpass_hz,
                           scale_setup=None if scale_setup is None else str(scale_setup),
                           command_line=["harness", *sys.argv[1:]], progress=progress)


def backend_text(name: str | None, workers: int | None, scheduler: str | None = None) -> str:
    """Which backend runs a sweep, in words: "backend local (2 processes)", "Dask
    LocalCluster (2 workers)" or "Dask scheduler ADDRESS (N workers)". ``workers`` None:
    the default, one per CPU (a remote scheduler's own workers are counted after it ran)."""
    import os

    if scheduler is not None or name == "dask":
        n = workers if workers is not None else max(1, os.cpu_count() or 1)
        if scheduler is not None:
            return f"Dask scheduler {scheduler}" + (f" ({n} workers)" if workers else "")
        return f"Dask LocalCluster ({n} worker{'s' if n != 1 else ''})"
    n = workers if workers is not None else max(1, os.cpu_count() or 1)
    return f"backend local ({n} process{'es' if n != 1 else ''})"


# name -> module with grid, run_case, crash_case and scorer (the module judging its cases)
SWEEPS = {"contact": "harness.sweep.contact"}


def sweep(name: str, *, out: PathArg, backend: str | None = None, workers: int | None = None,
          scheduler: str | None = None, quick: bool = False, quiet: bool = False,
          include_crash: bool = False, timeout_s: float | None = None,
          axes: Sequence[str] | None = None, aggregate: str = "max",
          command_line: Sequence[str] | None = None) -> tuple[int, Path, dict[str, Any]]:
    """Run the named sweep (local processes or Dask) and write its folder; returns (exit
    code, path, sweep document)."""

    if name not in SWEEPS:
        raise BadInput("sweep", f"unknown sweep {name!r} (known: {', '.join(SWEEPS)})")
    if workers is not None:
        check_workers(workers)  # before the backend is described or started
    try:
        mod = registry.named_module(SWEEPS[name])
    except ImportError as e:
        raise BadInput(f"sweep {name}", f"module {SWEEPS[name]} is not available "
                                        f"({type(e).__name__}: {e})")
    return run_named_sweep(
        name, mod.grid, mod.run_case, getattr(mod, "crash_case", None), out=out,
        backend=backend, workers=workers, scheduler=scheduler, quick=quick, quiet=quiet,
        include_crash=include_crash, timeout_s=timeout_s, aggregate=aggregate,
        axes=list(axes) if axes else None, scorer=getattr(mod, "scorer", None),
        command_line=list(command_line) if command_line else ["harness", *sys.argv[1:]])


# ----- batches: many models or captures, one Dask task each (harness/batch/) --------------
BATCH_DEFAULT_WORKERS = 2


def _warning_counter() -> AbstractContextManager[list[str]]:
    """A context manager counting Python warnings and logged warnings (root logger) while
    a batch task runs in a worker, instead of printing them there; yields a list whose
    length is the count."""
    import logging
    import warnings
    from contextlib import contextmanager

    @contextmanager
    def counting() -> Iterator[list[str]]:
        seen: list[str] = []

        class _Count(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                seen.append(record.getMessage())

        handler = _Count(logging.WARNING)
        root = logging.getLogger()
        root.addHandler(handler)
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = lambda message, *a, **k: seen.append(str(message))
            try:
                yield seen
            finally:
                root.removeHandler(handler)
    return counting()


def batch_parity_task(case: dict[str, Any]) -> dict[str, Any]:
    """One model of ``harness parity --batch`` (runs in a worker): the normal parity run of
    ``case`` (path, kind urdf|mjcf, floating, out, stages, samples, seed, engines,
    allow_missing, repair_inertia, command_line as JSON) writing its bundle to ``out``;
    returns the survey's JSON scalars (harness/batch/survey.py task_metrics_of_bundle)."""

    model = [case["path"]]
    with _warning_counter() as seen:
        o = parity(urdf=model if case["kind"] == "urdf" else [],
                   mjcf=model if case["kind"] == "mjcf" else [], out=case["out"],
                   floating=bool(case["floating"]),
                   repair_inertia=bool(case["repair_inertia"]),
                   stages=case["stages"].split(",") if case["stages"] else None,
                   samples=int(case["samples"]), seed=int(case["seed"]),
                   engines=case["engines"] or None,
                   allow_missing=[a for a in case["allow_missing"].split(",") if a],
                   command_line=json.loads(case["command_line"]))
    rows = judged_records(o.records)
    m = survey.task_metrics_of_bundle(verdict_summary(o.verdict), o.manifest,
                                      [(r.stage, r.status) for r in rows],
                                      [s.name for s in STAGES], len(seen))
    first = next((r for r in rows if r.status == "error"), None)
    m["error"] = f"{first.id}: {first.reason}"[:500] if first is not None else ""
    return m


def batch_swing_task(case: dict[str, Any]) -> dict[str, Any]:
    """One capture of ``harness swing --batch`` (runs in a worker): the normal swing run of
    ``case`` (path, out, quick, up, cutoff_hz, replay, engines, allow_missing) writing its
    output folder to ``out``; returns the checks' counts, qualified and the survey's
    metrics (harness/batch/survey.py swing_metrics of the typed fit.json)."""

    with _warning_counter() as seen:
        o = swing(case["path"], out=case["out"], quick=bool(case["quick"]), up=case["up"],
                  cutoff_hz=case["cutoff_hz"], replay=bool(case["replay"]),
                  engines=case["engines"] or None,
                  allow_missing=[a for a in case["allow_missing"].split(",") if a])
    not_met = [c["name"] for c in o.checks if c["ok"] is False]
    return {"qualified": o.exit_code == 0, "met": sum(c["ok"] is True for c in o.checks),
            "not_met": len(not_met), "reported": sum(c["ok"] is None for c in o.checks),
            "n_warnings": len(seen),
            "error": ("not met: " + "; ".join(not_met)) if not_met else "",
            **survey.swing_metrics(o.figures)}


def _batch_common(workers: int | None, scheduler: str | None, timeout_s: float | None
                  ) -> tuple[int | None, Callable[..., SweepResult], dict[str, Any]]:
    """(workers, execute, versions) of a batch: the Dask executor of harness/sweep/executor.py
    (a LocalCluster of ``workers``, or the cluster of ``scheduler``); BadInput first."""

    if scheduler is None:
        workers = BATCH_DEFAULT_WORKERS if workers is None else workers
        check_workers(workers)
    timeout_s = DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s
    if not (isinstance(timeout_s, (int, float)) and 0 < timeout_s < float("inf")):
        raise BadInput("--timeout", f"must be a finite number of seconds > 0, got {timeout_s!r}")

    def execute(task: Callable[[dict[str, Any]], dict[str, Any]],
                cases: list[dict[str, Any]],
                progress: Callable[[dict[str, Any]], None] | None) -> SweepResult:
        import multiprocessing

        import dask
        import distributed  # noqa: F401  its config defaults loaded first: a set() of a
        # key under "distributed" before that would, on exit, delete the whole section

        # the LocalCluster's worker processes forked from a forkserver (that Dask preloads
        # with its own imports) instead of spawned: measured start 0.9-1.2 s and close
        # 0.03 s against 1.4-2.0 s and 0.4-0.7 s (2 workers), a fixed cost of every batch
        method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() \
            else "spawn"
        with dask.config.set({"distributed.worker.multiprocessing-method": method}):
            return run_sweep(task, cases, backend="dask", workers=workers,
                             scheduler=scheduler, progress=progress,
                             timeout_s=float(timeout_s))
    return workers, execute, versions()


def _warm_workers(engines: str | Sequence[str] | None, scheduler: str | None,
                  extra: Sequence[str] = ()) -> None:
    """On a LocalCluster (no ``scheduler``): start the forkserver its workers fork from,
    preloaded with the task's modules and the named engines, before this process probes
    the engines: the workers then start with the engines imported, and those imports run
    beside this process's own. Nothing if the command's launcher started it already."""
    if scheduler is None:

        start_forkserver(engine_preload(engines, ("harness.api", *extra)))


def _batch_backend_text(b: dict[str, Any]) -> str:
    return backend_text(b.get("name"), b.get("workers"), b.get("scheduler"))


def parity_batch(path: PathArg, *, out: PathArg = "reports/survey", base: str = "fixed",
                 workers: int | None = None, scheduler: str | None = None,
                 timeout_s: float | None = None, stages: Sequence[str] | None = None,
                 samples: int = 10, seed: int = 0,
                 engines: str | Sequence[str] | None = None, allow_missing: Sequence[str] = (),
                 repair_inertia: bool = False, command_line: Sequence[str] | None = None,
                 progress: Progress | None = None) -> SurveyOutcome:
    """``harness parity --batch PATH``: every URDF/MJCF of a folder (recursively; each with
    ``base`` fixed | floating | both) or of a list file, one Dask task each running the
    normal parity run into OUT/models/SLUG/, then OUT/survey.json and OUT/index.html, the
    whole folder swapped in atomically. Returns harness.batch.run.SurveyOutcome (exit code
    0 iff every model qualified). Bad input raises BadInput before anything is written."""


    batch = inputs.collect(path, "models", base)
    _warm_workers(engines, scheduler)
    run_engines, _, stage_list = _run_choices(engines, allow_missing, stages, samples, seed)
    workers, execute, vers = _batch_common(workers, scheduler, timeout_s)
    eng_text = engines if engines is None or isinstance(engines, str) else ",".join(engines)
    options: dict[str, Any]  # the case's JSON scalars
    options = {"stages": ",".join(stages) if stages else "", "samples": int(samples),
               "seed": int(seed), "engines": eng_text or "",
               "allow_missing": ",".join(allow_missing), "repair_inertia": bool(repair_inertia)}
    kind = survey.output_kind("models", evidence.OUTPUT)
    with output_folder(out, kind) as target:

        def case_of(item: inputs.Item, folder: str) -> dict[str, Any]:
            final = target / "models" / item.slug
            argv = ["harness", "parity", f"--{item.kind}", item.path, "--out", str(final)]
            argv += ["--floating"] if item.base == "floating" else []
            argv += ["--stages", options["stages"]] if options["stages"] else []
            argv += ["--samples", str(samples), "--seed", str(seed)]
            argv += ["--engines", options["engines"]] if options["engines"] else []
            argv += [x for a in allow_missing for x in ("--allow-missing", a)]
            argv += ["--repair-inertia"] if repair_inertia else []
            return {"case_id": item.slug, "path": item.path, "kind": item.kind,
                    "floating": item.base == "floating", "out": folder, **options,
                    "command_line": json.dumps(argv)}

        return batch_run.run_batch(
            batch, out=target, kind=kind, of="models", entry=evidence.OUTPUT,
            task=batch_parity_task, case_of=case_of, execute=execute,
            start_line=f"parity batch: {backend_text('dask', workers, scheduler)}",
            stages=[s for s in (st.name for st in STAGES) if s in stage_list],
            options={**options, "engines_run": ",".join(run_engines), "base": base,
                     "workers": workers, "scheduler": scheduler or ""},
            command_line=list(command_line) if command_line is not None else
            ["harness", *sys.argv[1:]], versions=vers,
            backend_text=_batch_backend_text, say=progress)


def swing_batch(path: PathArg, *, out: PathArg, workers: int | None = None,
                scheduler: str | None = None,
                timeout_s: float | None = None, quick: bool = False, up: str = "auto",
                cutoff_hz: float | None = None, replay: bool = True,
                engines: str | Sequence[str] | None = None, allow_missing: Sequence[str] = (),
                command_line: Sequence[str] | None = None,
                progress: Progress | None = None) -> SurveyOutcome:
    """``harness swing --batch PATH``: every C3D capture of a folder (recursively) or of a
    list file, one Dask task each running the normal swing run into OUT/captures/SLUG/,
    then OUT/survey.json (captures × the swing summary's metrics) and OUT/index.html,
    swapped in atomically. Returns harness.batch.run.SurveyOutcome."""
    # harness.swing imported on use: its 19 modules cost every other command ~40 ms to import
    from harness.swing import run as swing_run

    batch = inputs.collect(path, "captures")
    _warm_workers(engines if replay else [], scheduler, ("harness.swing.run",))
    if replay:
        select_engines(engines, allow_missing)
    if cutoff_hz is not None and not (0 < cutoff_hz < float("inf")):
        raise BadInput("--cutoff", f"must be a finite frequency > 0 [Hz], got {cutoff_hz}")
    workers, execute, vers = _batch_common(workers, scheduler, timeout_s)
    eng_text = engines if engines is None or isinstance(engines, str) else ",".join(engines)
    options = {"quick": bool(quick), "up": up, "cutoff_hz": cutoff_hz, "replay": bool(replay),
               "engines": eng_text or "", "allow_missing": ",".join(allow_missing)}
    kind = survey.output_kind("captures", swing_run.OUTPUT)
    with output_folder(out, kind) as target:

        def case_of(item: inputs.Item, folder: str) -> dict[str, Any]:
            return {"case_id": item.slug, "path": item.path, "out": folder, **options}

        return batch_run.run_batch(
            batch, out=target, kind=kind, of="captures", entry=swing_run.OUTPUT,
            task=batch_swing_task, case_of=case_of, execute=execute,
            start_line=f"swing batch: {backend_text('dask', workers, scheduler)}",
            options={**options, "workers": workers, "scheduler": scheduler or ""},
            command_line=list(command_line) if command_line is not None else
            ["harness", *sys.argv[1:]], versions=vers,
            backend_text=_batch_backend_text, say=progress)


__all__ = ["BY_NAME", "PROFILES", "Diagnosis", "Outcome", "backend_text", "capture", "diagnose",
           "diagnosis_summaries", "engines", "evidence_hooks", "first_differing", "fit",
           "judge_records", "load_as_is_models", "load_models", "make_candidate",
           "outcome_summary", "parity", "parity_batch", "plain",
           "qualify", "read_bundle", "render_report", "replay", "report", "run", "save_candidate",
           "select_engines", "sweep", "swing", "swing_batch", "synth", "verdict_summary",
           "verify"]
