"""Command-line interface: ``harness engines | parity | report | verify | qualify | replay |
synth``.

Exit codes: 0 every scored comparison passed (or the command succeeded); 1 a comparison
failed, an engine raised, or a stage could not be scored; 2 bad input or an engine
unavailable (unless ``--allow-missing ENGINE``). Errors are one line on stderr; set
HARNESS_DEBUG=1 to see tracebacks.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from pathlib import Path

from harness.errors import BadInput, EngineUnavailable, HarnessError

PROFILES = {"ci": {"samples": 10},
            # full adds the opt-in derivatives stage (MuJoCo finite-difference rows)
            "full": {"samples": 100, "extra": ("derivatives",)}}


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2
        sys.stderr.write(f"harness: error: {message} (see harness {self.prog.split()[-1]} --help)\n")
        sys.exit(2)


def _err(msg: str):
    sys.stderr.write(f"harness: error: {msg}\n")


def _progress(quiet):
    start = time.monotonic()

    def say(msg):
        if not quiet:
            sys.stderr.write(f"[{time.monotonic() - start:6.1f}s] {msg}\n")
            sys.stderr.flush()
    return say


# ----- model selection ------------------------------------------------------------------
def _models(args):
    from fixtures import catalog
    from harness.model import PreparedModel, prepare_fixture

    if getattr(args, "as_is", False):
        return _as_is_models(args)
    if getattr(args, "engine_file", None) or getattr(args, "beyond_limits", 0.0):
        raise BadInput("parity", "--engine-file and --beyond-limits need --as-is")
    models = []
    for text in args.fixture or []:
        names = (catalog.names() if text == "all" else catalog.constraint_names()
                 if text == "constrained" else
                 [t.strip() for t in text.split(",") if t.strip()])
        for n in names:
            if n not in catalog.all_names():
                raise BadInput("--fixture", f"unknown fixture {n!r} (known: "
                                            f"{', '.join(catalog.all_names())}, all (the tree "
                                            "fixtures), constrained (the loop fixtures))")
            models.append(prepare_fixture(n))
    for path in args.urdf or []:
        from fixtures.urdf_import import load_urdf_with_notes

        spec, notes = load_urdf_with_notes(path, args.floating, args.repair_inertia)
        models.append(PreparedModel(spec, str(path), _sha256_file(path), tuple(notes)))
    for path in args.mjcf or []:
        from fixtures.mjcf_import import load_mjcf_with_notes

        spec, notes = load_mjcf_with_notes(path, floating=args.floating)
        models.append(PreparedModel(spec, str(path), _sha256_file(path), tuple(notes)))
    if not models:
        raise BadInput("parity", "name a model: --fixture NAME|all, --urdf PATH or --mjcf PATH")
    names = [m.name for m in models]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise BadInput("parity", f"two models are both named {dup[0]!r}")
    return models


def _as_is_models(args):
    """--as-is: the user's files loaded by every engine with its own defaults
    (harness/diagnose.py); ``--engine-file ENGINE=PATH`` gives one engine its own file."""
    from harness import diagnose

    if args.fixture:
        raise BadInput("--as-is", "needs a user model (--urdf or --mjcf), not --fixture: "
                                  "built-in fixtures are declared, not loaded as-is")
    paths = list(args.urdf or []) + list(args.mjcf or [])
    if not paths:
        raise BadInput("--as-is", "name a model: --urdf PATH or --mjcf PATH")
    files = {}
    for item in args.engine_file or []:
        engine, sep, path = item.partition("=")
        if not sep or not engine.strip() or not path.strip():
            raise BadInput("--engine-file", f"expected ENGINE=PATH, got {item!r}")
        files[engine.strip()] = path.strip()
    if files and len(paths) > 1:
        raise BadInput("--engine-file", "applies to one model; name one --urdf or --mjcf")
    bl = args.beyond_limits
    if not (bl == bl and 0.0 <= bl <= 10.0):
        raise BadInput("--beyond-limits", f"must be between 0 and 10, got {bl}")
    models = [diagnose.load_as_is(p, args.floating, files,
                                  getattr(args, "repair_inertia", False)) for p in paths]
    names = [m.name for m in models]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise BadInput("parity", f"two models are both named {dup[0]!r}")
    return models


def _sha256_file(path) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError as e:
        raise BadInput(str(path), e.strerror or str(e))


def _engines(args):
    """(engines to run, {unavailable engine: reason}) or raise for a missing engine."""
    from harness import registry

    wanted = registry.parse_engines(args.engines)
    allowed = set(registry.parse_engines(",".join(args.allow_missing))) if args.allow_missing else set()
    run, missing = [], {}
    for e in wanted:
        info = registry.probe(e)
        if info.available:
            run.append(e)
        elif e in allowed:
            missing[e] = f"{info.reason} (allowed by --allow-missing)"
        else:
            raise EngineUnavailable(e, f"{info.reason}; pass --allow-missing {e} to run without it")
    if len(run) < 2:
        raise BadInput("--engines", "parity needs at least two available engines")
    return run, missing


def _check_numbers(args):
    if not 1 <= args.samples <= 100000:
        raise BadInput("--samples", f"must be between 1 and 100000, got {args.samples}")
    if args.seed < 0:
        raise BadInput("--seed", f"must be >= 0, got {args.seed}")


def _out_dir(text) -> Path:
    out = Path(text)
    if out.exists() and not out.is_dir():
        raise BadInput(str(out), "exists and is not a folder")
    if out.exists() and any(out.iterdir()) and not (out / "manifest.json").exists():
        raise BadInput(str(out), "is a non-empty folder that is not an evidence bundle; "
                                 "refusing to replace it")
    return out


def _run_and_write(args, models, title, replay_cases=None):
    """Stages 0-2 on ``models``; then, if given, the replay cases (stage 5, gated on the
    earlier stages of each engine pair); one bundle with both."""
    from harness import evidence, report
    from harness.stages import runner

    engines, missing = _engines(args)
    stages = runner.stage_names(args.stages.split(",") if args.stages else None)
    _check_numbers(args)
    out = _out_dir(args.out)
    say = _progress(args.quiet)
    result = runner.run(models, engines, stages, samples=args.samples, seed=args.seed,
                        progress=say)
    # analytic contact fixtures and native contact (harness/contact_report.py, ~1 min with
    # four engines): only when the contact stage is asked for by name or number, not in the
    # default all-stages run (qualify), which runs the contact stage itself
    if "contact" in stages and args.stages:
        from harness import contact_report

        crec, carr = contact_report.run(models, engines, progress=say)
        result.records += crec
        result.arrays.update(carr)
    as_is = [m for m in models if callable(getattr(m, "as_is_file", None))]
    if as_is:  # why the engines disagree: harness/diagnose.py (stage "diagnosis")
        from harness import diagnose

        dr = diagnose.run(as_is, engines, samples=args.samples, seed=args.seed,
                          beyond_limits=getattr(args, "beyond_limits", 0.0), progress=say)
        result.records += dr.records
        result.arrays.update(dr.arrays)
    replay_info, extra = None, {}
    if replay_cases:
        import json

        from harness import replay

        cases = replay_cases() if callable(replay_cases) else replay_cases
        rr = replay.run(cases, engines, result.records, progress=say)
        result.records += rr.records
        result.arrays.update(rr.arrays)
        replay_info = rr.info
        extra["timings.json"] = json.dumps(rr.timings, indent=1).encode()  # not evidence
    manifest = evidence.build_manifest(result, missing, ["harness", *sys.argv[1:]],
                                       replay_info)
    html = report.render(manifest, result.records, title=title, arrays=result.arrays,
                         timings=(rr.timings if replay_cases else None))
    path = evidence.write_bundle(out, result, missing, ["harness", *sys.argv[1:]], html=html,
                                 replay=replay_info, extra_files=extra)
    if getattr(args, "junit", None):
        from harness.junit import write_junit

        write_junit(args.junit, result.records, missing)
    return path, result


def _summarise(result, path, diagnosis_only=False) -> int:
    from collections import Counter

    diag = [r for r in result.records if r.stage == "diagnosis"]
    records = [r for r in result.records if r.stage != "diagnosis"]
    if diag:  # explanatory comparisons: shown as the diagnosis, never counted as verdicts
        rc = _print_diagnosis(result, records, brief=diagnosis_only)
        if diagnosis_only:
            print(f"report: {Path(path) / 'index.html'}")
            return rc
    c = Counter(r.status for r in records)
    scored = [r for r in records if r.max_rel is not None]
    # replay rows carry absolute errors of trajectories (relative error of a near-zero
    # energy change is meaningless): they get their own line
    # excluded from the headline: contact rows against closed forms (engine_a "analytic"/
    # "finite_difference": quantities that are zero by the closed form), stage 3's
    # diagnostics against 0, informational rows (soft native solvers), derivatives (own line)
    worst = max((r for r in scored if r.stage not in ("replay", "derivatives")
                 and r.status != "informational"
                 and r.engine_a not in ("analytic", "finite_difference")
                 and not (r.stage == "constrained" and r.engine_a == "declared")),
                key=lambda r: r.max_rel, default=None)
    # derivatives (issue 8): finite-difference rows have their own bound: own line
    der = [r for r in scored if r.stage == "derivatives"]
    traj = [r for r in scored if r.stage == "replay" and r.quantity == "trajectory"]
    print(f"records: {c.get('passed', 0)} passed, {c.get('failed', 0)} failed, "
          f"{c.get('error', 0)} errors, {c.get('not_scored', 0)} not scored, "
          f"{c.get('not_provided', 0)} not provided"
          + (f", {c['unconverged']} unconverged" if c.get("unconverged") else "")
          + (f", {c['informational']} informational (measured, no verdict)"
             if c.get("informational") else ""))
    if worst is not None:
        print(f"worst relative error: {worst.max_rel:.3e} ({worst.id})")
    if der:
        # relative error only where the difference exceeds the absolute floor: a block
        # that is structurally zero has max_rel ~1 from round-off on both sides
        rel = [r for r in der if r.max_abs is not None and r.atol is not None
               and r.max_abs > r.atol] or der
        w = max(rel, key=lambda r: r.max_rel)
        exact = [r for r in rel if "/" not in r.quantity]
        print(f"derivatives: worst relative error {w.max_rel:.3e} ({w.id}, tolerance "
              f"class {w.quantity.partition('/')[2] or 'exact'}; rows whose difference "
              f"exceeds their atol)"
              + (f"; exact-method pairs {max(r.max_rel for r in exact):.3e}" if exact else ""))
    if traj:
        w = max(traj, key=lambda r: r.max_abs)
        print(f"replay: worst engine-pair trajectory error {w.max_abs:.3e} ({w.id})")
    from harness.diagnose import first_differing

    first = {r.id: label for r, label in first_differing(records, result.arrays)}
    for r in records:
        if r.status in ("failed", "error", "not_scored", "unconverged"):
            print(f"  {r.status.upper():11s} {r.id}"
                  + (f"  max_rel {r.max_rel:.3e}" if r.max_rel is not None else "")
                  + (f"  first differing: {first[r.id]}" if r.id in first else "")
                  + (f"  ({r.reason})" if r.reason else ""))
    print(f"report: {Path(path) / 'index.html'}")
    bad = c.get("failed", 0) + c.get("error", 0) + c.get("not_scored", 0) + \
        c.get("unconverged", 0)
    return 1 if bad or not scored else 0


def _print_diagnosis(result, records, brief=False) -> int:
    """Print the diagnosis of the as-is models; 0 if every difference is explained by a
    named cause and every engine loaded, else 1."""
    from harness import diagnose

    rc = 0
    firsts = diagnose.first_differing(records, result.arrays)
    for s in diagnose.summarise(result.records, result.arrays):
        if firsts:
            print(f"{s['fixture']}: stage 0, first differing element per record:")
            for r, label in firsts:
                if r.fixture == s["fixture"] and (not brief or r.engine_a == "declared"):
                    print(f"  {r.quantity:17s} {r.engine_a}~{r.engine_b}: {label}")
        for line in diagnose.format_summary(s):
            print(line)
        if s["unexplained"] or s["failed"]:
            rc = 1
    return rc


# ----- commands ---------------------------------------------------------------------------
def cmd_engines(args) -> int:
    from harness import registry

    for info in registry.probe_all():
        state = "available" if info.available else f"UNAVAILABLE ({info.reason})"
        print(f"{info.name:10s} {info.version or '-':10s} {state}")
    return 0


def cmd_parity(args) -> int:
    models = _models(args)
    path, result = _run_and_write(args, models, "Engine parity report")
    return _summarise(result, path)


def cmd_diagnose(args) -> int:
    """``harness diagnose MODEL``: ``parity --as-is`` on one file, printing why the engines
    disagree (exit 0: every difference explained by a named cause; 1: something is not)."""
    args.fixture, args.urdf, args.mjcf, args.as_is, args.stages = None, [args.model], None, \
        True, None
    models = _models(args)
    path, result = _run_and_write(args, models, f"Why the engines disagree: {args.model}")
    return _summarise(result, path, diagnosis_only=True)


def cmd_qualify(args) -> int:
    from fixtures import catalog
    from harness.model import prepare_fixture

    prof = PROFILES[args.profile]
    if args.samples is None:
        args.samples = prof["samples"]
    from harness.stages import OPT_IN, STAGES

    # every stage but the opt-in ones (derivatives: see PROFILES), every fixture (the loop
    # fixtures of stage 3 included)
    stages = [s[0] for s in STAGES if s[0] not in OPT_IN or s[0] in prof.get("extra", ())]
    args.stages = ",".join(stages)
    models = [prepare_fixture(n) for n in catalog.all_names()]
    from harness import replay

    path, result = _run_and_write(args, models, f"Qualification ({args.profile} profile)",
                                  lambda: replay.qualify_cases(coarse=args.coarse_replay))
    return _summarise(result, path)


def _floats(text, what):
    if text is None:
        return None
    try:
        vals = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise BadInput(what, f"must be a comma-separated list of numbers, got {text!r}")
    if not vals or not all(map(lambda x: x == x and abs(x) != float("inf"), vals)):
        raise BadInput(what, f"must be finite numbers, got {text!r}")
    return vals


def _positive(x, what):
    if x is None:
        return None
    if not (x > 0 and x != float("inf")):
        raise BadInput(what, f"must be a finite number > 0, got {x}")
    return x


def cmd_replay(args) -> int:
    from harness import candidate, replay
    from harness.integrators import Method

    cand = candidate.load(args.candidate)
    if args.method == "dop853":
        m = Method("dop853", rtol=_positive(args.rtol, "--rtol"),
                   atol=_positive(args.atol, "--atol"))
    else:
        m = Method(args.method, dt=_positive(args.dt, "--dt"))
    case = replay.Case(replay.safe_case_name(cand.model.name), cand, args.score, m,
                       native=not args.no_native)
    args.stages = None
    path, result = _run_and_write(args, [cand.model], f"Replay of {args.candidate}", [case])
    return _summarise(result, path)


def cmd_synth(args) -> int:
    from fixtures import catalog
    from harness import candidate, registry, replay
    from harness.model import prepare_fixture

    if args.fixture not in catalog.names():
        raise BadInput("FIXTURE", f"unknown fixture {args.fixture!r} (known: "
                                  f"{', '.join(catalog.names())})")
    if args.engine is not None:
        registry.adapter_class(args.engine)  # raises for unknown / unavailable engines
    model = prepare_fixture(args.fixture)
    q0, v0 = _floats(args.q0, "--q0"), _floats(args.v0, "--v0")
    for vals, n, what in ((q0, model.layout.nq, "--q0"), (v0, model.layout.nv, "--v0")):
        if vals is not None and len(vals) != n:
            raise BadInput(what, f"needs {n} numbers for {args.fixture}, got {len(vals)}")
    cand = replay.synthesize(model, args.law, duration=_positive(args.duration, "--duration"),
                             grid_dt=_positive(args.grid_dt, "--grid-dt"),
                             interpolation=args.interp, seed=args.seed, engine=args.engine,
                             q0=q0, v0=v0)
    path = candidate.save(cand, args.out)
    print(f"candidate: {path} (+ {path.with_suffix('.npz').name}), {cand.t.size} knots, "
          f"{cand.provenance['solver']['law']}")
    return 0


def cmd_report(args) -> int:
    from harness import evidence, report

    b = evidence.read_bundle(args.bundle)
    changes = None
    if args.baseline:
        from harness import baseline

        changes = baseline.diff(b, evidence.read_bundle(args.baseline), str(args.baseline))
    html = report.render_bundle(b, baseline=changes)
    target = Path(args.out) if args.out else Path(args.bundle) / "index.html"
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    tmp.write_text(html)
    os.replace(tmp, target)
    print(f"report: {target}")
    if changes is not None:
        print(f"since {args.baseline}: {len(changes.regressions)} new failures, "
              f"{len(changes.still_failing)} still failing, {len(changes.fixed)} fixed, "
              f"{len(changes.grown)} with grown error, {len(changes.added)} added, "
              f"{len(changes.removed)} removed")
        for c in changes.regressions:
            print(f"  NEW FAILURE {c.id}: {c.old} -> {c.new}")
    return 0


def cmd_verify(args) -> int:
    from harness import evidence

    problems = evidence.verify(args.bundle)
    if problems:
        for p in problems:
            print(f"MISMATCH {p}")
        print(f"verify: {len(problems)} problem(s) in {args.bundle}")
        return 1
    b = evidence.read_bundle(args.bundle)
    print(f"verify: {len(b.records)} records recomputed from {len(b.arrays)} arrays, "
          f"all identical ({args.bundle})")
    return 0


def _common(p, out_default=None):
    p.add_argument("--engines", help="comma-separated engines (default: all four)")
    p.add_argument("--allow-missing", action="append", metavar="ENGINE", default=[],
                   help="run without ENGINE if it is unavailable (repeatable)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sampled states (default 0)")
    p.add_argument("--out", required=out_default is None, default=out_default,
                   help="bundle folder to write (replaced atomically)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--junit", metavar="FILE",
                   help="also write JUnit XML, one test case per record")


def _as_is_options(p, with_flag: bool):
    if with_flag:
        p.add_argument("--as-is", action="store_true",
                       help="load --urdf/--mjcf with each engine's own defaults (no parity "
                            "preparation) and diagnose why the engines disagree")
    p.add_argument("--engine-file", action="append", metavar="ENGINE=PATH", default=[],
                   help="as-is: ENGINE loads PATH instead (e.g. mujoco=robot.xml next to "
                        "robot.urdf; repeatable)")
    p.add_argument("--beyond-limits", type=float, default=0.0, metavar="FRACTION",
                   help="as-is: sample joint positions up to FRACTION × range beyond each "
                        "limit (limit constraints act only there; default 0: inside)")


def cmd_capture(args) -> int:
    """``harness capture FILE.c3d``: ingest a capture (units, axes, gaps, rejected markers,
    optional filter) and detect the swing events; prints a summary, --json writes it all."""
    from harness.capture import events as cap_events
    from harness.capture.ingest import ingest

    cap = ingest(args.capture, up=args.up, cutoff_hz=args.cutoff)
    ev = cap_events.detect(cap)
    rep = cap.report()
    rep["events"] = ev.to_json()
    print(f"{cap.source}: {cap.n_frames} frames at {cap.rate_hz:g} Hz "
          f"({cap.n_frames / cap.rate_hz:.3f} s), units {cap.units_in_file!r}, up axis "
          f"{cap.up_axis} ({cap.up_source}) → +z")
    for label, why in cap.rejected.items():
        print(f"  rejected {label}: {why}")
    for label, g in cap.gaps.items():
        if g.missing_fraction > 0 and label not in cap.rejected:
            print(f"  gaps {label}: {100 * g.missing_fraction:.1f}% missing, {g.n_gaps} gaps, "
                  f"longest {1000 * g.longest_gap_s:.0f} ms")
    print(f"  events: address {ev.address_s:.3f} s, takeaway {ev.takeaway_s:.3f} s, top "
          f"{ev.top_s:.3f} s, impact {ev.impact_s:.4f} s; club head {ev.impact_speed_mps:.1f} "
          f"m/s at impact (peak {ev.peak_speed_mps:.1f} m/s)")
    if args.json:
        from harness.evidence import write_json_atomic

        print(write_json_atomic(Path(args.json), rep))
    return 0


def cmd_swing(args) -> int:
    """``harness swing CAPTURE.c3d --out DIR``: ingest → IK → fit → candidate → replay in
    every engine → DIR/index.html. Exit 0 if every swing check is met and the replay's
    records pass, 1 otherwise, 2 for bad input."""
    import argparse as _ap
    import shutil
    import tempfile

    from harness.swing import pipeline
    from harness.swing import report as swing_report
    from harness.tolerances import lookup

    out = Path(args.out).resolve()
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and
                                              not (out / "fit" / "fit.json").exists())):
        raise BadInput(str(out), "exists and is not a swing output folder; refusing to "
                                 "replace it")
    say = _progress(args.quiet)
    settings = pipeline.QUICK if args.quick else pipeline.SwingSettings()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-{os.getpid()}-", dir=out.parent))
    try:
        summary, cpath, model, arrays, joints = pipeline.fit_capture(
            args.capture, tmp, settings, up=args.up, cutoff_hz=args.cutoff, say=say)
        replay_records = []
        ok_replay = True
        if not args.no_replay:
            from harness import candidate, replay
            from harness.evidence import write_json_atomic

            cand = candidate.load(cpath)
            case = replay.Case(replay.safe_case_name(cand.model.name), cand, "horizon",
                               pipeline.reintegration_method(settings), native=False)
            rargs = _ap.Namespace(engines=args.engines, allow_missing=args.allow_missing,
                                  stages=None, samples=4, seed=0, out=str(tmp / "replay"),
                                  quiet=args.quiet, junit=None)
            _, result = _run_and_write(rargs, [cand.model], f"Replay of the swing fit "
                                       f"({args.capture})", [case])
            replay_records = [r for r in result.records if r.stage == "replay"]
            ok_replay = all(r.status == "passed" for r in result.records
                            if r.status not in ("not_provided",))
            arrays["engine_markers"] = pipeline.engine_markers(result.arrays, case.name,
                                                               arrays["markers_replay"])
            engine_dev = pipeline.engine_replay_deviation(arrays["engine_markers"],
                                                          arrays["markers_replay"])
            grip = pipeline.engine_grip_closure(
                result.arrays, case.name, list(cand.model.frames),
                [(a, b) for a, b, _ in pipeline.GRIP_PAIRS])
            summary["replay"] = {"method": case.method.settings(),
                                 "grip_closure_max_m": grip,
                                 "engine_marker_deviation_m": {
                                     e: {"rms": r_, "max": m_}
                                     for e, (r_, m_) in engine_dev.items()}}
            write_json_atomic(tmp / "fit" / "fit.json", pipeline._finite(summary))
        f = summary["fit"]
        rmse = f["marker_rmse_by_phase_m"]["top_to_impact"]
        checks = [
            {"name": "marker RMSE, top → impact (tracked markers)",
             "value": f"{1e3 * rmse:.1f} mm", "target": f"≤ {1e3 * lookup('swing', 'marker_rmse').atol:.0f} mm",
             "ok": rmse <= lookup("swing", "marker_rmse").atol},
            {"name": "torque interpolation defects (relative)",
             "value": f"{f['defects']['max_rel']:.2e} ({f['defects']['worst_joint']})",
             "target": f"≤ {lookup('swing', 'defects').rtol:g}",
             "ok": f["defects"]["max_rel"] <= lookup("swing", "defects").rtol},
            {"name": "open-loop reintegration within the marker RMSE",
             "value": (f"diverged (a marker {pipeline.DIVERGED_M:g} m off) at "
                       f"{summary['reintegration']['diverged_at_s']:.3f} s; "
                       if summary["reintegration"]["diverged_at_s"] is not None else
                       f"RMS {1e3 * summary['reintegration']['whole_window_rms_m']:.3g} mm; ")
                      + f"within the marker RMSE for the first "
                      f"{summary['reintegration']['within_marker_rmse_until_s']:.3f} s; "
                      f"per {summary['reintegration']['segments']['frames_per_segment']}-frame "
                      f"segment worst {1e3 * summary['reintegration']['segments']['max_m']:.3g} mm",
             "target": f"≤ {1e3 * rmse:.1f} mm over the window",
             "ok": summary["reintegration"]["whole_window_rms_m"] <= rmse},
            {"name": "fit wall time (calibration + IK + fit)",
             "value": f"{summary['calibration']['wall_s'] + summary['ik']['wall_s'] + f['wall_s']:.0f} s",
             "target": f"≤ {lookup('swing', 'fit_wall_s').atol:.0f} s",
             "ok": summary["calibration"]["wall_s"] + summary["ik"]["wall_s"] + f["wall_s"]
             <= lookup("swing", "fit_wall_s").atol},
            {"name": "club-head speed at impact, fitted vs measured",
             "value": f"{f['club_head_speed_at_impact_mps']['fitted']:.1f} vs "
                      f"{f['club_head_speed_at_impact_mps']['measured']:.1f} m/s",
             "target": "reported, no threshold", "ok": None},
        ]
        if not args.no_replay:
            dev = summary["replay"]["engine_marker_deviation_m"]
            checks.append({"name": "each engine's open-loop replay within the marker RMSE "
                                   "over the whole window",
                           "value": "; ".join(f"{e} RMS {1e3 * d['rms']:.3g} mm (max "
                                              f"{1e3 * d['max']:.3g})" for e, d in dev.items())
                           or "no engine replayed",
                           "target": f"RMS ≤ {1e3 * rmse:.1f} mm",
                           "ok": bool(dev) and all(d["rms"] <= rmse for d in dev.values())})
            fit_closure = summary["fit"]["closure_max_m"]
            checks.append({"name": "grip closure (right hand on the club) in each engine's "
                                   "replay; kinematic in the fit, no constraint force",
                           "value": "; ".join(f"{e} {1e3 * g:.1f} mm" for e, g in grip.items())
                           + f" (fit {1e3 * fit_closure:.1f} mm)",
                           "target": "reported, no threshold", "ok": None})
            pr = summary["fit"]["pelvis_residual_peak"]
            checks.append({"name": "feet: not modelled; the pelvis residual wrench stands for "
                                   "the legs",
                           "value": f"peak |F| {pr['force_N']:.0f} N (vertical "
                                    f"{pr['vertical_force_N']:.0f} N), |M| "
                                    f"{pr['moment_Nm']:.0f} N·m",
                           "target": "reported, no threshold", "ok": None})
            checks.append({"name": "replay records of every engine pair pass",
                           "value": f"{sum(r.status == 'passed' for r in replay_records)} of "
                                    f"{len(replay_records)} replay rows pass",
                           "target": "all", "ok": ok_replay})
        html = swing_report.render(summary, arrays, joints, checks, replay_records,
                                   title=f"Swing fit: {args.capture}")
        (tmp / "index.html").write_text(html)
        if out.exists():
            old = out.with_name(f".{out.name}.old-{os.getpid()}")
            os.rename(out, old)
            os.rename(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    word = {True: "met     ", False: "NOT met ", None: "reported"}
    for c in checks:
        print(f"  {word[c['ok']]} {c['name']}: {c['value']} ({c['target']})")
    print(f"report: {out / 'index.html'}")
    return 0 if all(c["ok"] is not False for c in checks) else 1

# ---- harness fit (in-house collocation fitter, harness/fit/) ---------------------------
def cmd_fit(args) -> int:
    from harness.fit import bundle as fit_bundle

    fit_bundle.check_out(args.out)  # before the fit, not after it
    result = fit_bundle.run(args.problem, method=args.method, n=args.n, seed=args.seed,
                            p0=args.p0, process_noise=args.process_noise)
    out = fit_bundle.write(args.out, result)
    d = result["json"]
    params = ", ".join(f"{k}={v['value']:.6g} ({100 * v['rel_error']:+.2f}%)"
                       for k, v in d["parameters"].items())
    print(f"fit {d['problem']}: {d['ipopt']['message']} in {d['ipopt']['iterations']} "
          f"iterations, {d['ipopt']['solve_time_s']:.3f} s; {params}; bundle {out}")
    return 0 if d["converged"] else 1


def _add_fit_parser(sub):
    from harness.fit.collocation import METHODS

    ft = sub.add_parser("fit", help="identify a benchmark problem by direct collocation "
                                    "(IPOPT) and write a fit bundle")
    ft.add_argument("--problem", required=True, choices=["pendulum", "balance"])
    ft.add_argument("--method", choices=list(METHODS), default="midpoint")
    ft.add_argument("--n", type=int, default=None,
                    help="nodes (default 1000 pendulum, 6000 balance)")
    ft.add_argument("--seed", type=int, default=0, help="noise seed (default 0)")
    ft.add_argument("--p0", type=float, default=None,
                    help="pendulum: initial guess of p [1/s²] (default 10)")
    ft.add_argument("--process-noise", action="store_true",
                    help="balance: add torque noise to the simulated data")
    ft.add_argument("--out", required=True, help="fit bundle folder (replaced atomically)")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="harness", description="Multi-engine rigid-body parity harness.")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    sub.add_parser("engines", help="list engines, versions and availability")
    par = sub.add_parser("parity", help="run stages 0-2 on fixtures or user models")
    par.add_argument("--fixture", action="append",
                     help="fixture name, comma list, 'all' (tree fixtures) or 'constrained' "
                          "(loop fixtures, stage 3)")
    par.add_argument("--urdf", action="append", help="a URDF file (repeatable)")
    par.add_argument("--mjcf", action="append", help="an MJCF file (repeatable)")
    par.add_argument("--floating", action="store_true", help="add a free root joint")
    par.add_argument("--repair-inertia", action="store_true",
                     help="replace non-physical URDF inertias by the nearest physical ones "
                          "(noted in the report) instead of rejecting the file")
    par.add_argument("--stages", help="comma list of stages: 0,1,2,3,4,6 or names (default: "
                     "all but 'derivatives' (6, opt-in); 3 = constrained and 4 = contact run "
                     "on their own fixtures only)")
    par.add_argument("--samples", type=int, default=10, help="random states per model")
    _as_is_options(par, with_flag=True)
    _common(par, out_default="reports/parity")
    dg = sub.add_parser("diagnose", help="load a URDF/MJCF as each engine would (as-is) and "
                                         "explain why the engines disagree")
    dg.add_argument("model", metavar="MODEL", help="a URDF or MJCF file")
    dg.add_argument("--floating", action="store_true", help="add a free root joint")
    dg.add_argument("--samples", type=int, default=10, help="random states (default 10)")
    _as_is_options(dg, with_flag=False)
    _common(dg, out_default="reports/diagnose")
    q = sub.add_parser("qualify", help="all fixtures, all stages; exit 0 only if all pass")
    q.add_argument("--profile", choices=sorted(PROFILES), default="ci")
    q.add_argument("--samples", type=int, default=None, help="override the profile's samples")
    q.add_argument("--coarse-replay", action="store_true",
                   help="replay chain7 with a deliberately too coarse step (RK4, dt 1e-2): "
                        "the refinement gate must mark it unconverged and qualify exit 1")
    _common(q)
    rp = sub.add_parser("replay", help="replay a candidate in every engine (stages 0-2 on "
                                       "its model first)")
    rp.add_argument("candidate", help="candidate manifest (.json, arrays in the .npz beside it)")
    rp.add_argument("--method", choices=["rk4", "semi_implicit_euler", "dop853"],
                    default="rk4", help="harness integrator (default rk4)")
    rp.add_argument("--dt", type=float, default=1e-3, help="largest step [s] (default 1e-3)")
    rp.add_argument("--rtol", type=float, default=1e-10, help="dop853 rtol (default 1e-10)")
    rp.add_argument("--atol", type=float, default=1e-12, help="dop853 atol (default 1e-12)")
    rp.add_argument("--score", choices=["agreement", "horizon"], default="agreement",
                    help="agreement over the whole run, or only over the predictability "
                         "window with the agreement horizon reported (chaotic motions)")
    rp.add_argument("--no-native", action="store_true",
                    help="skip the engines' own stepping (mj_step, Drake Simulator, "
                         "Crocoddyl integrated action models)")
    rp.add_argument("--samples", type=int, default=10, help="states per stage 0-2 check")
    _common(rp, out_default="reports/replay")
    sy = sub.add_parser("synth", help="write a candidate from a known control law")
    sy.add_argument("fixture", metavar="FIXTURE")
    sy.add_argument("--out", required=True, help="candidate manifest to write (.json)")
    sy.add_argument("--law", choices=["pd", "zero"], default=None,
                    help="pd: PD tracking of a sinusoid (fixed base, default); zero: free "
                         "motion (default for a free root)")
    sy.add_argument("--duration", type=float, default=2.0, help="[s] (default 2)")
    sy.add_argument("--grid-dt", type=float, default=0.01, help="knot spacing [s] (0.01)")
    sy.add_argument("--interp", choices=["zoh", "linear", "cubic"], default="zoh")
    sy.add_argument("--q0", help="initial q, comma-separated (canonical order)")
    sy.add_argument("--v0", help="initial v, comma-separated (write --v0=-1,2 when it starts "
                                 "with a minus sign)")
    sy.add_argument("--seed", type=int, default=0)
    sy.add_argument("--engine", help="engine that evaluates the control law (default: the "
                                     "first available)")
    r = sub.add_parser("report", help="render a bundle's HTML report")
    r.add_argument("bundle")
    r.add_argument("--out", help="HTML file to write (default BUNDLE/index.html)")
    r.add_argument("--baseline", metavar="OLD",
                   help="an older bundle: show what changed (new failures first)")
    v = sub.add_parser("verify", help="recompute every record of a bundle from its arrays")
    v.add_argument("bundle")
    sw = sub.add_parser("swing", help="fit a golf-swing capture and replay it in every engine")
    sw.add_argument("capture", metavar="CAPTURE.c3d")
    sw.add_argument("--out", required=True, help="output folder (replaced atomically)")
    sw.add_argument("--quick", action="store_true", help="fewer calibration frames/rounds "
                    "and iterations (make run; the checks still apply)")
    sw.add_argument("--up", default="auto", help="the file's up axis (default auto)")
    sw.add_argument("--cutoff", type=float, default=None, metavar="HZ",
                    help="low-pass the markers first [Hz] (default: no filter)")
    sw.add_argument("--no-replay", action="store_true", help="stop after the fit")
    sw.add_argument("--engines", default=None, help="comma list (default: all four)")
    sw.add_argument("--allow-missing", action="append", default=[], metavar="ENGINE")
    sw.add_argument("--quiet", action="store_true")
    cp = sub.add_parser("capture", help="ingest a C3D capture: units, axes, gaps, rejected "
                                        "markers, swing events")
    cp.add_argument("capture", metavar="CAPTURE.c3d")
    cp.add_argument("--up", default="auto", help="the file's up axis: auto (inferred from "
                    "head and toe markers), +y, +z, ... (default auto)")
    cp.add_argument("--cutoff", type=float, default=None, metavar="HZ",
                    help="zero-phase Butterworth low-pass cut-off [Hz] (default: no filter)")
    cp.add_argument("--json", metavar="FILE", help="write the full ingestion report as JSON")
    _add_sweep_parser(sub)

    _add_fit_parser(sub)
    return p


# ----- harness sweep NAME (harness/sweep.py, harness/sweep_report.py) ---------------------
SWEEPS = {"contact": "harness.contact_sweep"}  # name -> module with grid, run_case, crash_case


def cmd_sweep(args) -> int:
    """``harness sweep NAME --out DIR``: every case of the named sweep through the local or
    Dask backend; exit 0 when every case finished as expected, 1 when any crashed, raised
    or timed out unexpectedly (the sweep still finishes and is written), 2 bad input."""
    import importlib

    from harness.sweep_report import run_named_sweep

    try:
        mod = importlib.import_module(SWEEPS[args.name])
    except ImportError as e:
        raise BadInput(f"sweep {args.name}", f"module {SWEEPS[args.name]} is not available "
                                             f"({type(e).__name__}: {e})")
    code, _, _ = run_named_sweep(
        args.name, mod.grid, mod.run_case, getattr(mod, "crash_case", None), out=args.out,
        backend=args.backend, workers=args.workers, scheduler=args.scheduler,
        quick=args.quick, quiet=args.quiet, include_crash=args.include_crash,
        timeout_s=args.timeout, aggregate=args.aggregate,
        axes=[a.strip() for a in args.axes.split(",")] if args.axes else None,
        command_line=["harness", *sys.argv[1:]])
    return code


def _add_sweep_parser(sub):
    sw = sub.add_parser("sweep", help="run a parameter sweep (crash-tolerant, local "
                                      "processes or Dask) and write sweep.json + index.html")
    sw.add_argument("name", choices=sorted(SWEEPS), help="the sweep to run")
    sw.add_argument("--out", required=True, help="sweep folder to write (replaced atomically)")
    sw.add_argument("--backend", choices=["local", "dask"], default=None,
                    help="local processes (default) or Dask distributed (default with "
                         "--scheduler)")
    g = sw.add_mutually_exclusive_group()
    g.add_argument("--workers", type=int, default=None,
                   help="worker processes (local), or a LocalCluster of N workers (dask); "
                        "default: CPU count")
    g.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="connect to a running Dask scheduler (e.g. tcp://host:8786)")
    sw.add_argument("--timeout", type=float, default=None, metavar="S",
                    help="per-case time limit [s] (default 600); the case's process is killed")
    sw.add_argument("--quick", action="store_true", help="the sweep's reduced grid")
    sw.add_argument("--include-crash", action="store_true",
                    help="add the sweep's known crashing case (expected: crashed)")
    sw.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    sw.add_argument("--axes", metavar="X,Y", default=None,
                    help="heat-map axes (default: speed_mps,angle_deg when present)")
    sw.add_argument("--aggregate", choices=["max", "min", "mean"], default="max",
                    help="heat-map aggregation over the other inputs (default max: worst case)")


COMMANDS = {"engines": cmd_engines, "parity": cmd_parity, "qualify": cmd_qualify,
            "report": cmd_report, "verify": cmd_verify, "replay": cmd_replay,
            "diagnose": cmd_diagnose,
            "synth": cmd_synth, "capture": cmd_capture,
            "swing": cmd_swing}
COMMANDS["sweep"] = cmd_sweep


def cmd_report_or_sweep(args) -> int:
    """``harness report DIR``: a sweep folder (sweep.json, no manifest.json) gets its
    index.html re-rendered from sweep.json (heat maps included); bundles as before."""
    folder = Path(args.bundle)
    if (folder / "sweep.json").is_file() and not (folder / "manifest.json").exists():
        from harness.sweep_report import rerender

        if args.baseline:
            raise BadInput("--baseline", "compares evidence bundles; DIR is a sweep")
        print(f"report: {rerender(folder, args.out)}")
        return 0
    return cmd_report(args)


COMMANDS["report"] = cmd_report_or_sweep
COMMANDS["fit"] = cmd_fit


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.cmd](args)
    except HarnessError as e:
        _err(str(e))
        return e.exit_code
    except KeyboardInterrupt:
        _err("interrupted")
        return 130
    except Exception as e:  # never a traceback for the user unless asked
        if os.environ.get("HARNESS_DEBUG"):
            raise
        _err(f"internal error: {type(e).__name__}: {' '.join(str(e).split())} "
             "(set HARNESS_DEBUG=1 for a traceback)")
        return 3


if __name__ == "__main__":
    sys.exit(main())
