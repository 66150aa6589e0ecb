"""Command-line interface: argparse and printing over harness/api.py.

``harness engines | parity | diagnose | qualify | replay | synth | report | verify |
capture | swing | sweep | fit | osim-export | track`` (also ``python -m harness``;
``harness --version``).

Exit codes: 0 every scored comparison passed (or the command succeeded); 1 a comparison
failed, an engine raised, or a stage could not be scored; 2 bad input or an engine
unavailable (unless ``--allow-missing ENGINE``); 3 an internal error. Errors are one line
on stderr; set HARNESS_DEBUG=1 to see tracebacks. Warnings raised while a command runs
(Python ``warnings``, and ``logging`` records at WARNING or above) are printed once each at
the end, on stderr, with how many times they occurred; ``--quiet`` prints only their number.
``--json FILE`` (every command that runs something) writes a summary of the run.
"""
from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any, NoReturn, Sequence

from fixtures.golfers import CLUB_CHOICES, GRIPS, SHAFTS
from harness import api
from harness.batch import run as batch_run
from harness.core.errors import BadInput, HarnessError
from harness.core.io import check_output_file, write_json_atomic
from harness.core.records import error_text
from harness.core.strict import check_workers
from harness.core.version import __version__


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2
        sub = self.prog.split()[-1]
        hint = "harness --help" if sub == "harness" else f"harness {sub} --help"
        sys.stderr.write(f"harness: error: {message} (see {hint})\n")
        sys.exit(2)


def _err(msg: str):
    sys.stderr.write(f"harness: error: {msg}\n")


class _Warnings(logging.Handler):
    """Every Python warning and every logging record at WARNING or above that reaches the
    root logger while a command runs, counted by its one-line text (in order of first
    occurrence). Nothing here knows which library warned."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.counts: Counter = Counter()

    def add(self, text: object) -> None:
        self.counts[" ".join(str(text).split())] += 1

    def emit(self, record: logging.LogRecord) -> None:
        try:
            msg = record.getMessage()
        except Exception:  # a malformed record: its raw text
            msg = str(record.msg)
        self.add(msg if record.name == "root" else f"{record.name}: {msg}")

    def _show(self, message, category, filename, lineno, file=None, line=None):
        self.add(f"{category.__name__}: {message}")

    def __enter__(self):
        self._caught = warnings.catch_warnings()
        self._caught.__enter__()
        # every occurrence is counted: actions that show a warning once become "always"
        warnings.filters[:] = [("always", *f[1:]) if f[0] in ("default", "module", "once")
                               else f for f in warnings.filters]
        warnings.simplefilter("always", append=True)  # the default action, counted too
        warnings.showwarning = self._show
        logging.getLogger().addHandler(self)
        return self

    def __exit__(self, *exc):
        logging.getLogger().removeHandler(self)
        self._caught.__exit__(*exc)
        return False

    def print(self, quiet: bool) -> None:
        """Each distinct warning once with its count, on stderr; ``quiet``: one line with
        their number only."""
        if not self.counts:
            return
        if quiet:
            n = sum(self.counts.values())
            sys.stderr.write(f"harness: {n} warning{'s' if n != 1 else ''} "
                             f"({len(self.counts)} distinct) not shown (--quiet)\n")
            return
        for text, n in self.counts.items():
            sys.stderr.write(f"harness: warning: {text} (×{n})\n")

    def summary(self) -> list[str]:
        return [{"message": text, "count": n} for text, n in self.counts.items()]


def _progress(quiet):
    start = time.monotonic()

    def say(msg: str) -> None:
        if not quiet:
            sys.stderr.write(f"[{time.monotonic() - start:6.1f}s] {msg}\n")
            sys.stderr.flush()
    return say


def _cmdline() -> list:
    return ["harness", *sys.argv[1:]]


def _run_kw(args) -> dict:
    """The keywords every staged run shares, from the common options."""
    return {"engines": args.engines, "allow_missing": args.allow_missing, "seed": args.seed,
            "junit": getattr(args, "junit", None), "command_line": _cmdline(),
            "progress": _progress(args.quiet)}


def _engine_files(items) -> dict:
    files = {}
    for item in items or []:
        engine, sep, path = item.partition("=")
        if not sep or not engine.strip() or not path.strip():
            raise BadInput("--engine-file", f"expected ENGINE=PATH, got {item!r}")
        files[engine.strip()] = path.strip()
    return files


# ----- printing -----------------------------------------------------------------------------
_DEVICE_HELP = ("the device of engines that run on one (MuJoCo Warp): cpu or cuda (default: "
                "cuda when present, else cpu); recorded in the manifest")


def _runtime_lines(manifest: dict[str, Any]) -> list[str]:
    """One line per engine that ran on a device: the device, kernel compile (first launch)
    time apart from run time [s], summed over fixtures, and the kernel cache."""
    tot: dict[str, dict[str, Any]] = {}
    for f in manifest.get("fixtures", []):
        for e, rt in f.get("runtime", {}).items():
            t = tot.setdefault(e, {"device": rt.get("device"), "cache": rt.get("kernel_cache"),
                                   "compile": 0.0, "run": 0.0})
            t["compile"] += sum(rt.get("compile_s", {}).values())
            t["run"] += sum(rt.get("run_s", {}).values())
    return [f"{e}: device {t['device']}, kernels compiled or loaded {t['compile']:.2f} s, "
            f"run {t['run']:.2f} s (kernel cache {t['cache']})" for e, t in tot.items()]


def _summarise(o: api.Outcome, diagnosis_only: bool = False) -> int:
    """Print the verdict of a run (and its diagnosis); return the exit code."""
    records = api.judged_records(o.records)
    if len(records) < len(o.records):  # explanatory rows: the diagnosis of as-is files
        rc = _print_diagnosis(o, brief=diagnosis_only)
        if diagnosis_only:
            print(f"report: {o.report}")
            return rc
    v = o.verdict
    c = v.counts
    print(f"records: {c['passed']} passed, {c['failed']} failed, {c['error']} errors, "
          f"{c['not_scored']} not scored, {c['not_provided']} not provided"
          + (f", {c['unconverged']} unconverged" if c["unconverged"] else "")
          + (f", {c['informational']} informational (measured, no verdict)"
             if c["informational"] else ""))
    if v.n_scored:
        print(v.headline)
    for line in api.stage_summary_lines(records):
        print(line)
    for line in api.coupling_summary_lines(o):
        print(line)
    for line in _runtime_lines(o.manifest):
        print(line)
    first = {r.id: label for r, label in api.first_differing(o)}
    for r in records:
        if r.status in ("failed", "error", "not_scored", "unconverged"):
            err = error_text(r, 3) if r.max_abs is not None else ""
            print(f"  {r.status.upper():11s} {r.id}"
                  + (f"  {'' if r.max_rel is None else 'max_rel '}{err}" if err else "")
                  + (f"  first differing: {first[r.id]}" if r.id in first else "")
                  + (f"  ({r.reason})" if r.reason else ""))
    print(f"report: {o.report}")
    return o.exit_code


def _print_diagnosis(o: api.Outcome, brief: bool = False) -> int:
    """Print the diagnosis of the as-is models; 0 if every difference is explained by a
    named cause and every engine loaded, else 1 (``api.Diagnosis.explained``)."""
    rc = 0
    firsts = api.first_differing(o)
    for s in api.diagnosis_summaries(o):
        mine = [(r, label) for r, label in firsts if r.fixture == s["fixture"]
                and (not brief or r.engine_a == "declared")]
        if mine:
            print(f"{s['fixture']}: stage 0, first differing element per record (tree "
                  "order; the record's largest difference where it is elsewhere):")
            for r, label in mine:
                worst = f" (largest at {r.worst_label})" if r.worst_label != label else ""
                print(f"  {r.quantity:17s} {r.engine_a}~{r.engine_b}: {label}{worst}")
        for line in s["lines"]:
            print(line)
        if not s["explained"]:
            rc = 1
    return rc


# ----- commands ---------------------------------------------------------------------------
def cmd_engines(args: argparse.Namespace) -> int:
    infos = api.engines()
    args.summary = {"engines": [{"name": i.name, "version": i.version,
                                 "available": i.available, "reason": i.reason or None}
                                for i in infos]}
    for info in infos:
        state = "available" if info.available else f"UNAVAILABLE ({info.reason})"
        print(f"{info.name:10s} {info.version or '-':10s} {state}")
    return 0


def cmd_parity(args: argparse.Namespace) -> int:
    if args.batch is not None:
        return _cmd_parity_batch(args)
    for opt, given in (("--base", args.base), ("--workers", args.workers),
                       ("--scheduler", args.scheduler), ("--timeout", args.timeout)):
        if given is not None:
            raise BadInput(opt, "applies to --batch PATH only")
    o = api.parity(args.fixture or [], args.urdf or [], args.mjcf or [],
                   sdf=args.sdf or [], drop_springs=args.drop_springs,
                   osim=args.osim or [], out=args.out or "reports/parity",
                   floating=args.floating, repair_inertia=args.repair_inertia,
                   as_is=args.as_is, engine_files=_engine_files(args.engine_file),
                   beyond_limits=args.beyond_limits,
                   stages=args.stages.split(",") if args.stages else None,
                   samples=args.samples, **_run_kw(args))
    if args.json:  # computed only when asked for
        args.summary = api.outcome_summary(o)
    return _summarise(o)


def cmd_diagnose(args: argparse.Namespace) -> int:
    """``harness diagnose MODEL``: ``parity --as-is`` on one file, printing why the engines
    disagree (exit 0: every difference explained by a named cause; 1: something is not)."""
    o = api.diagnose(args.model, out=args.out, floating=args.floating,
                     repair_inertia=args.repair_inertia,
                     engine_files=_engine_files(args.engine_file),
                     beyond_limits=args.beyond_limits, samples=args.samples, **_run_kw(args))
    if args.json:
        args.summary = api.outcome_summary(o)
    _print_diagnosis(o, brief=True)
    print(f"report: {o.report}")
    return o.exit_code


def cmd_qualify(args: argparse.Namespace) -> int:
    o = api.qualify(args.profile, out=args.out, samples=args.samples,
                    coarse_replay=args.coarse_replay, **_run_kw(args))
    if args.json:
        args.summary = {"profile": args.profile, **api.outcome_summary(o)}
    return _summarise(o)


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


def cmd_replay(args: argparse.Namespace) -> int:
    o = api.replay(args.candidate, out=args.out, method=args.method, dt=args.dt,
                   rtol=args.rtol, atol=args.atol, score=args.score,
                   native=not args.no_native, samples=args.samples,
                   title=f"Replay of {args.candidate}", **_run_kw(args))
    if args.json:
        args.summary = {"candidate": args.candidate, **api.outcome_summary(o)}
    return _summarise(o)


def cmd_synth(args: argparse.Namespace) -> int:
    path, cand = api.synth(args.fixture, args.out, law=args.law, duration=args.duration,
                           grid_dt=args.grid_dt, interpolation=args.interp, seed=args.seed,
                           engine=args.engine, q0=_floats(args.q0, "--q0"),
                           v0=_floats(args.v0, "--v0"))
    args.summary = {"candidate": str(path), "arrays": str(path.with_suffix(".npz")),
                    "knots": int(cand.t.size), "duration_s": float(cand.t[-1] - cand.t[0]),
                    "law": cand.provenance["solver"]["law"], "verdict": None}
    print(f"candidate: {path} (+ {path.with_suffix('.npz').name}), {cand.t.size} knots, "
          f"{cand.provenance['solver']['law']}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    problems: list[str] = []
    path, changes = api.report(args.bundle, args.out, args.baseline,
                               progress=_progress(args.quiet), problems=problems)
    if args.json:  # the bundle's verdict (a sweep folder has none of its own here)
        evidence = (Path(args.bundle) / "manifest.json").is_file()
        args.summary = {
            "bundle": args.bundle, "report": str(path),
            "verdict": api.verdict_summary(api.judge_records(
                api.read_bundle(args.bundle).records)) if evidence else None,
            "changes": None if changes is None else {
                k: len(getattr(changes, k)) for k in ("regressions", "still_failing", "fixed",
                                                      "grown", "added", "removed")}}
    print(f"report: {path}")
    if changes is not None:
        print(f"since {args.baseline}: {len(changes.regressions)} new failures, "
              f"{len(changes.still_failing)} still failing, {len(changes.fixed)} fixed, "
              f"{len(changes.grown)} with grown error, {len(changes.added)} added, "
              f"{len(changes.removed)} removed")
        for c in changes.regressions:
            print(f"  NEW FAILURE {c.id}: {c.old} -> {c.new}")
    if problems:  # the page says so too; never a pass for a bundle that does not verify
        args.summary["problems"] = problems
        if isinstance(args.summary.get("verdict"), dict):
            args.summary["verdict"]["qualified"] = False  # as the exit code says
        print(f"report: the bundle does not verify ({len(problems)} problem(s); "
              f"harness verify {args.bundle} lists them)")
        return 1
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    problems = api.verify(args.bundle)
    args.summary = {"bundle": args.bundle, "problems": list(problems)}
    if problems:
        for p in problems:
            print(f"MISMATCH {p}")
        print(f"verify: {len(problems)} problem(s) in {args.bundle}")
        return 1
    b = api.read_bundle(args.bundle)
    args.summary.update({"n_records": len(b.records), "n_arrays": len(b.arrays),
                         "verdict": api.verdict_summary(api.judge_records(b.records))})
    print(f"verify: {len(b.records)} records recomputed from {len(b.arrays)} arrays, "
          f"all identical ({args.bundle})")
    return 0


def cmd_capture(args: argparse.Namespace) -> int:
    """``harness capture FILE.c3d``: ingest a capture (units, axes, gaps, rejected markers,
    optional filter) and detect the swing events; prints a summary, --json writes it all."""
    if args.json:  # before any work
        check_output_file(args.json, "--json")
    cap, ev, rep = api.capture(args.capture, up=args.up, cutoff_hz=args.cutoff)
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
          f"{ev.top_s:.3f} s, impact {ev.impact_s:.4f} ± {ev.impact_sigma_s:.4f} s (measured); "
          f"club head {ev.clubhead_speed_pre_impact_mps:.1f} m/s before impact, "
          f"{ev.clubhead_speed_post_impact_mps:.1f} after "
          f"({ev.clubhead_speed_across_impact_mps:.1f} over the frame interval holding the "
          f"contact; peak {ev.peak_speed_mps:.1f} m/s; speeds over one frame interval)")
    if args.json:
        print(write_json_atomic(Path(args.json), rep))
    return 0


def cmd_swing(args: argparse.Namespace) -> int:
    """``harness swing CAPTURE.c3d --out DIR``: ingest → IK → fit → candidate → replay in
    every engine → DIR/index.html. Exit 0 if every swing check is met and the replay's
    records pass, 1 otherwise, 2 for bad input."""
    for opt, given in (("--study", args.study), ("--dimension", args.dimension),
                       ("--no-joint-limits", not args.joint_limits),
                       ("--activation", args.activation),
                       ("--grip", args.grip != "weld"),
                       ("--shaft", args.shaft != "rigid"),
                       ("--club-masses", args.club_masses is not None),
                       ("--loft", args.loft is not None),
                       ("--impulse-prior", args.impulse_prior != "law"),
                       ("--no-ring", not args.ring)):
        if given and args.batch is not None:
            raise BadInput(opt, "applies to one capture, not to --batch")
    if args.batch is not None:
        return _cmd_swing_batch(args)
    for opt, given in (("--workers", args.workers), ("--scheduler", args.scheduler),
                       ("--timeout", args.timeout)):
        if given is not None:
            raise BadInput(opt, "applies to --batch PATH only")
    if args.capture is None:
        raise BadInput("swing", "name a capture (CAPTURE.c3d) or a batch (--batch PATH)")
    o = api.swing(args.capture, out=args.out, quick=args.quick, up=args.up,
                  cutoff_hz=args.cutoff, club=args.club, replay=not args.no_replay,
                  engines=args.engines, study=args.study, dimension=args.dimension,
                  joint_limits=args.joint_limits, activation=args.activation,
                  grip=args.grip, shaft=args.shaft, club_masses=args.club_masses,
                  loft_deg=args.loft, impulse_prior=args.impulse_prior, ring=args.ring,
                  allow_missing=args.allow_missing, progress=_progress(args.quiet))
    word = {True: "met     ", False: "NOT met ", None: "reported"}
    args.summary = {"output": str(o.path), "report": str(o.report),
                    "checks": api.plain(o.checks),
                    "counts": {k: sum(c["ok"] is v for c in o.checks)
                               for k, v in (("met", True), ("not_met", False),
                                            ("reported", None))},
                    "replay": api.plain(o.summary.get("replay"))}
    for key in ("study", "dimension", "activation"):
        if o.summary.get(key):
            args.summary[key] = api.plain(o.summary[key])
    for c in o.checks:
        print(f"  {word[c['ok']]} {c['name']}: {c['value']} ({c['target']})")
    print(f"report: {o.report}")
    return o.exit_code


def cmd_track(args: argparse.Namespace) -> int:
    """``harness track MODEL.osim MARKERS.trc [--loads XML] --out DIR``: IK and ID beside
    OpenSim's tools. Exit 0 only when every check is met, 1 when one is not met or not
    run, 2 for bad input."""
    o = api.track(args.model, args.markers, out=args.out, loads_path=args.loads,
                  ik_setup=args.ik_setup, start=args.start, end=args.end,
                  engine=args.engine, lowpass_hz=args.lowpass_hz,
                  scale_setup=args.scale, progress=_progress(args.quiet))
    args.summary = api.plain(o.summary)
    word = {True: "met    ", False: "NOT met", None: "NOT run"}
    s = o.summary
    if s.get("scale"):
        print(f"scale: {len(s['scale']['scale_factors'])} bodies scaled, total mass "
              f"{s['scale']['mass_total_kg']:.3f} kg, {s['scale']['wall_s']:.2f} s; written "
              f"{', '.join(s['scale']['files'])}")
    print(f"track: {s['frames']} frames, marker RMSE {s['marker_rmse_mm']:.2f} mm "
          f"(engine {s['engine']})")
    if s.get("contact_label"):
        print(f"  contact {s['contact_label']}: {s['contact_label_reason']}")
    for c in o.checks:
        if c["ok"] is None:
            print(f"  {word[None]} {c['name']}: {c['why']}")
        else:
            value = "no value" if c["value"] is None else f"{c['value']:.4g}"
            why = f" ({c['why']})" if c["ok"] is False and c.get("why") else ""
            print(f"  {word[c['ok']]} {c['name']}: {value} (target {c['target']}){why}")
    print(f"report: {o.report}")
    return o.exit_code


def cmd_osim_export(args: argparse.Namespace) -> int:
    """``harness osim-export SWING_OUT_DIR [--out DIR]``: a finished swing for OpenSim
    (docs/osim.md). Exit 0 when written, 2 for bad input."""
    r = api.osim_export(args.swing_dir, out=args.out)
    args.summary = api.plain(r)
    print(f"osim-export: {r['frames']} frames, {len(r['coordinates'])} coordinates, "
          f"{r['markers_count']} markers → {r['model']}, {r['motion']}, {r['markers']}, "
          f"{r['loads']}, {r['inverse_dynamics']}, ik_setup.xml, id_setup.xml")
    print(f"  {len(r['notes'])} notes (what was changed or left out, and why) in "
          f"{Path(r['model']).parent / 'notes.txt'}")
    return 0


def cmd_fit(args: argparse.Namespace) -> int:
    """``harness fit --problem NAME --out DIR``: the problem's fit bundle and its summary
    line (the problem's own, harness/fit/fitproblem.py); exit code the problem's."""
    out, d = api.fit(args.problem, out=args.out, method=args.method, n=args.n,
                     seed=args.seed, p0=args.p0, process_noise=args.process_noise,
                     study=args.study, knot_frames=args.knot_frames, w_effort=args.w_effort,
                     w_smooth=args.w_smooth, w_prior=args.w_prior, events=args.event or (),
                     solver=args.solver)
    prob = {p.name: p for p in api.fit_problems()}[d["problem"]]
    fields, lines, code = prob.summary(d, out)
    args.summary = {"bundle": str(out), "report": str(Path(out) / "index.html"),
                    "problem": d["problem"], "converged": d["converged"],
                    **api.plain(fields)}
    for line in lines:
        print(line)
    print(f"report: {Path(out) / 'index.html'}")
    return code


def cmd_sweep(args: argparse.Namespace) -> int:
    """``harness sweep NAME --out DIR``: every case of the named sweep through the local or
    Dask backend; exit 0 when every case finished as expected, 1 when any crashed, raised
    or timed out unexpectedly (the sweep still finishes and is written), 2 bad input."""
    backend = "dask" if args.scheduler else (args.backend or "local")
    if args.workers is not None:
        check_workers(args.workers)  # before the backend is named or started
    ran = api.backend_text(backend, args.workers, args.scheduler)
    if not args.quiet:  # the first progress line: which backend runs
        sys.stderr.write(f"sweep {args.name}: {ran}\n")
    code, path, doc = api.sweep(
        args.name, out=args.out, backend=args.backend, workers=args.workers,
        scheduler=args.scheduler, quick=args.quick, quiet=args.quiet,
        include_crash=args.include_crash, timeout_s=args.timeout, aggregate=args.aggregate,
        axes=[a.strip() for a in args.axes.split(",")] if args.axes else None,
        command_line=_cmdline())
    b = doc["backend"]
    sc = doc.get("scoring")
    args.summary = {"sweep": str(path), "report": str(Path(path) / "index.html"),
                    "backend": api.backend_text(b["name"], b["workers"], b.get("scheduler")),
                    "backend_detail": api.plain(b), "n_cases": len(doc["cases"]),
                    "counts": dict(doc["counts"]), "unexpected": api.plain(doc["unexpected"]),
                    "scoring": None if sc is None else {
                        "counts": dict(sc["counts"]), "failed": api.plain(sc["failed"]),
                        "worst": api.plain(sc["worst"])}}
    return code


# ----- batches (harness/batch/) ----------------------------------------------------------------
def _batch_done(args, o) -> int:

    args.summary = batch_run.summary(o)
    batch_run.print_summary(o)
    return o.exit_code


def _cmd_parity_batch(args) -> int:
    """``harness parity --batch PATH``: one Dask task per model (and base); exit 0 only if
    every model qualified, 1 otherwise (survey.json says which), 2 bad input."""
    for opt, given in (("--fixture", args.fixture), ("--urdf", args.urdf),
                       ("--mjcf", args.mjcf), ("--sdf", args.sdf), ("--osim", args.osim),
                       ("--drop-springs", args.drop_springs), ("--as-is", args.as_is),
                       ("--engine-file", args.engine_file), ("--beyond-limits",
                                                             args.beyond_limits),
                       ("--junit", args.junit)):
        if given:
            raise BadInput(opt, "does not apply with --batch (the batch names the models)")
    if args.floating:
        raise BadInput("--floating", "with --batch, use --base floating (or both)")
    o = api.parity_batch(args.batch, out=args.out or "reports/survey",
                         base=args.base or "fixed", workers=args.workers,
                         scheduler=args.scheduler, timeout_s=args.timeout,
                         stages=args.stages.split(",") if args.stages else None,
                         samples=args.samples, seed=args.seed, engines=args.engines,
                         allow_missing=args.allow_missing,
                         repair_inertia=args.repair_inertia, command_line=_cmdline(),
                         progress=_progress(args.quiet))
    return _batch_done(args, o)


def _cmd_swing_batch(args) -> int:
    """``harness swing --batch PATH --out DIR``: one Dask task per capture; exit 0 only if
    every capture qualified, 1 otherwise, 2 bad input."""
    if args.capture is not None:
        raise BadInput("CAPTURE.c3d", "name a capture or --batch PATH, not both")
    o = api.swing_batch(args.batch, out=args.out, workers=args.workers,
                        scheduler=args.scheduler, timeout_s=args.timeout, quick=args.quick,
                        up=args.up, cutoff_hz=args.cutoff, replay=not args.no_replay,
                        engines=args.engines, allow_missing=args.allow_missing,
                        command_line=_cmdline(), progress=_progress(args.quiet))
    return _batch_done(args, o)


def _batch_options(p, what: str, files: str, out: str):
    p.add_argument("--batch", metavar="PATH", default=None,
                   help=f"run every {what} ({files}) of PATH, one Dask task each: a folder "
                        "(searched recursively) or a list file (one path per line, # "
                        "comments, relative to the list's folder"
                        + ("; optional second word fixed|floating|both" if what == "model"
                           else "") + f"); writes one folder per {what} and survey.json + "
                        f"index.html to --out ({out})")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--workers", type=int, default=None, metavar="N",
                   help="--batch: a Dask LocalCluster of N single-threaded worker processes "
                        "(default 2)")
    g.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="--batch: connect to a running Dask scheduler (e.g. tcp://host:8786) "
                        "instead of a LocalCluster")
    p.add_argument("--timeout", type=float, default=None, metavar="S",
                   help="--batch: per-task time limit [s] (default 600); its worker is killed")


# ----- parser -------------------------------------------------------------------------------
def _json(p):
    p.add_argument("--json", metavar="FILE",
                   help="also write a JSON summary of the run to FILE (atomically): command, "
                        "exit code, the paths written, the verdict's counts and headline, and "
                        "the command's own figures; refused before any work if FILE is a "
                        "folder")


def _common(p, out_default=None):
    p.add_argument("--engines", help="comma-separated engines (default: the five double-"
                                     "precision ones: mujoco, pinocchio, crocoddyl, drake, "
                                     "opensim); 'all' adds the opt-in mujoco_warp (float32)")
    p.add_argument("--allow-missing", action="append", metavar="ENGINE", default=[],
                   help="run without ENGINE if it is unavailable (repeatable)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sampled states (default 0)")
    p.add_argument("--out", required=out_default is None, default=out_default,
                   help="bundle folder to write (replaced atomically; "
                        + (f"default {out_default})" if out_default else "required)"))
    p.add_argument("--quiet", action="store_true",
                   help="no progress lines on stderr; warnings only as a one-line count")
    p.add_argument("--junit", metavar="FILE",
                   help="also write JUnit XML, one test case per record")
    _json(p)


def _as_is_options(p, with_flag: bool):
    if with_flag:
        p.add_argument("--as-is", action="store_true",
                       help="load --urdf/--mjcf with each engine's own defaults (no parity "
                            "preparation) and diagnose why the engines disagree")
    p.add_argument("--engine-file", action="append", metavar="ENGINE=PATH", default=[],
                   help="as-is: ENGINE loads PATH instead (e.g. an MJCF next to the URDF the "
                        "other engines read; repeatable)")
    p.add_argument("--beyond-limits", type=float, default=0.0, metavar="FRACTION",
                   help="as-is: sample joint positions up to FRACTION × range beyond each "
                        "limit (limit constraints act only there; default 0: inside)")


def _add_fit_parser(sub: Any) -> None:
    """The ``fit`` command's options (its problems and methods from the fit catalog)."""
    problems = api.fit_problems()
    methods = tuple(dict.fromkeys(m for p in problems for m in p.methods))
    ft = sub.add_parser("fit", help="identify a benchmark problem by direct collocation "
                                    "(IPOPT) and write a fit bundle",
                        description="Identify a benchmark problem by direct collocation "
                                    "(IPOPT) and write a fit bundle (fit.json, arrays, "
                                    "index.html) to --out (no default folder).")
    ft.add_argument("--problem", required=True, choices=[p.name for p in problems],
                    help="; ".join(f"{p.name}: {p.help}" for p in problems) + " (required)")
    ft.add_argument("--method", choices=methods, default="midpoint",
                    help="; ".join(["collocation scheme (default midpoint)"]
                                   + [f"{p.name}: {p.method_help}" for p in problems
                                      if p.method_help]))
    ft.add_argument("--n", type=int, default=None,
                    help="nodes (default 1000 pendulum, 6000 balance)")
    ft.add_argument("--seed", type=int, default=0, help="noise seed (default 0)")
    ft.add_argument("--p0", type=float, default=None,
                    help="pendulum: initial guess of p [1/s²] (default 5; the truth is 10)")
    ft.add_argument("--process-noise", action="store_true",
                    help="balance: add torque noise to the simulated data")
    ft.add_argument("--study", choices=list(dict.fromkeys(st for p in problems
                                                          for st in p.studies)), default=None,
                    help="pendulum: also choose knot density and weights by held-out "
                         "prediction (docs/resolution.md)")
    for flag, what in (("--knot-frames", "frames per spline knot"),
                       ("--w-effort", "effort weight [s⁴/rad²]"),
                       ("--w-smooth", "smoothness weight [s⁶/rad²]"),
                       ("--w-prior", "prior weight [–]")):
        ft.add_argument(flag, default=None, metavar="V[,V...]",
                        help=f"with --study: {what}, one value or a comma-separated grid "
                             "axis (default: the study's grid)")
    ft.add_argument("--event", action="append", default=None, metavar="NAME=TIME±SIGMA:LABEL",
                    help="an observed event (repeatable): NAME the problem's event and index "
                         "(bounce: impact1, impact2, …), TIME and SIGMA [s] (+- for ±), "
                         "LABEL measured|inferred|assumed; a measured event is scored, and "
                         "one beyond 3σ of the data is a conflict (exit 1)")
    solvers = list(dict.fromkeys(s for p in problems for s in p.solvers))
    ft.add_argument("--solver", choices=solvers, default=None,
                    help="pendulum and balance: sqp (default; the banded SQP solver, "
                         "docs/fitter.md) or ipopt")
    ft.add_argument("--out", required=True,
                    help="fit bundle folder (replaced atomically; required)")
    _json(ft)


def _add_engines_parser(sub: Any) -> None:
    """The ``engines`` command's options."""
    en = sub.add_parser("engines", help="list engines, versions and availability")
    _json(en)


def _add_parity_parser(sub: Any) -> None:
    """The ``parity`` command's options."""
    par = sub.add_parser("parity", help="run stages 0-2 on fixtures or user models",
                         description="Run stages 0-2 on fixtures or user models; the bundle "
                                     "goes to --out (default reports/parity).")
    par.add_argument("--fixture", action="append",
                     help="fixture name, comma list, 'all' (tree fixtures, ball-joint ones "
                          "included) or 'constrained' "
                          "(loop fixtures, stage 3)")
    par.add_argument("--urdf", action="append", metavar="PATH",
                     help="a URDF file (repeatable)")
    par.add_argument("--mjcf", action="append", metavar="PATH",
                     help="an MJCF file (repeatable)")
    par.add_argument("--sdf", action="append", metavar="PATH",
                     help="an SDF file, 1.4-1.6 (repeatable); loops closed by ball/fixed "
                          "joints become stage-3 loop constraints")
    par.add_argument("--osim", action="append", metavar="PATH",
                     help="an OpenSim model file, .osim (repeatable); read by OpenSim, "
                          "muscles and wrap objects set aside (docs/osim.md)")
    par.add_argument("--drop-springs", action="store_true",
                     help="--sdf: set aside the joint springs (spring_stiffness), noted in "
                          "the report, and compare the model without them (by default they "
                          "are part of the model: −k (q − q_ref) in h)")
    par.add_argument("--floating", action="store_true",
                     help="add a free root joint to the user's files (default: fixed base)")
    par.add_argument("--repair-inertia", action="store_true",
                     help="replace non-physical URDF and .osim inertias by the nearest "
                          "physical ones (noted in the report) instead of rejecting the file")
    par.add_argument("--stages", help="comma list of stages: 0,1,2,3,4,6 or names (default: "
                     "all but 'derivatives' (6, opt-in); 3 = constrained and 4 = contact run "
                     "on their own fixtures only)")
    par.add_argument("--samples", type=int, default=10,
                     help="random states per model (default 10)")
    par.add_argument("--device", choices=["cpu", "cuda"], default=None, help=_DEVICE_HELP)
    _as_is_options(par, with_flag=True)
    _common(par, out_default="reports/parity")
    par.set_defaults(out=None)  # reports/parity; reports/survey with --batch
    _batch_options(par, "model", "*.urdf, MJCF *.xml", "default reports/survey")
    par.add_argument("--base", choices=["fixed", "floating", "both"], default=None,
                     help="--batch: the base of every model of a folder, and of a list entry "
                          "without its own (default fixed; both: two runs per model)")


def _add_diagnose_parser(sub: Any) -> None:
    """The ``diagnose`` command's options."""
    dg = sub.add_parser("diagnose", help="load a URDF/MJCF as each engine would (as-is) and "
                                         "explain why the engines disagree",
                        description="Load a URDF/MJCF as each engine would (as-is) and "
                                    "explain why the engines disagree; the bundle goes to "
                                    "--out (default reports/diagnose).")
    dg.add_argument("model", metavar="MODEL", help="a URDF or MJCF file")
    dg.add_argument("--floating", action="store_true",
                    help="add a free root joint (default: fixed base)")
    dg.add_argument("--samples", type=int, default=10, help="random states (default 10)")
    dg.add_argument("--repair-inertia", action="store_true",
                    help="replace non-physical URDF inertias by the nearest physical ones in "
                         "the declared model, and report which engine refuses, warns about "
                         "or silently accepts the file's own")
    _as_is_options(dg, with_flag=False)
    _common(dg, out_default="reports/diagnose")


def _add_qualify_parser(sub: Any) -> None:
    """The ``qualify`` command's options."""
    q = sub.add_parser("qualify", help="all fixtures, all stages; exit 0 only if all pass",
                       description="All fixtures through all stages; exit 0 only if all "
                                   "pass. --out is required (no default folder).")
    q.add_argument("--profile", choices=sorted(api.PROFILES), default="ci",
                   help="ci: 10 samples, stages 0-5; full: 100 samples and the opt-in "
                        "derivatives stage (default ci)")
    q.add_argument("--samples", type=int, default=None,
                   help="random states per model (default: the profile's, 10 ci, 100 full)")
    q.add_argument("--device", choices=["cpu", "cuda"], default=None, help=_DEVICE_HELP)
    q.add_argument("--coarse-replay", action="store_true",
                   help="replay chain7 with a deliberately too coarse step (RK4, dt 1e-2): "
                        "the refinement gate must mark it unconverged and qualify exit 1")
    _common(q)


def _add_replay_parser(sub: Any) -> None:
    """The ``replay`` command's options."""
    rp = sub.add_parser("replay", help="replay a candidate in every engine (stages 0-2 on "
                                       "its model first)",
                        description="Replay a candidate in every engine (stages 0-2 on its "
                                    "model first); the bundle goes to --out (default "
                                    "reports/replay).")
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
                    help="skip the engines' own stepping (each adapter's native "
                         "integrator)")
    rp.add_argument("--samples", type=int, default=10,
                    help="random states per stage 0-2 check (default 10)")
    _common(rp, out_default="reports/replay")


def _add_synth_parser(sub: Any) -> None:
    """The ``synth`` command's options."""
    sy = sub.add_parser("synth", help="write a candidate from a known control law",
                        description="Write a candidate (a .json manifest and the .npz "
                                    "arrays beside it) from a known control law to --out "
                                    "(no default).")
    sy.add_argument("fixture", metavar="FIXTURE", help="a catalog fixture (tree fixtures)")
    sy.add_argument("--out", required=True,
                    help="candidate manifest to write (.json; the .npz beside it; required)")
    sy.add_argument("--law", choices=["pd", "zero"], default=None,
                    help="pd: PD tracking of a sinusoid (fixed base, default); zero: free "
                         "motion (default for a free root)")
    sy.add_argument("--duration", type=float, default=2.0,
                    help="length of the motion [s] (default 2)")
    sy.add_argument("--grid-dt", type=float, default=0.01, help="knot spacing [s] (0.01)")
    sy.add_argument("--interp", choices=["zoh", "linear", "cubic"], default="zoh",
                    help="interpolation of the control between knots (default zoh: "
                         "zero-order hold)")
    sy.add_argument("--q0", help="initial q [rad | m], comma-separated (canonical order; "
                                 "default: the law's)")
    sy.add_argument("--v0", help="initial v [rad/s | m/s], comma-separated (write "
                                 "--v0=-1,2 when it starts with a minus sign; default: "
                                 "the law's)")
    sy.add_argument("--seed", type=int, default=0,
                    help="seed of the law's random parts (default 0)")
    sy.add_argument("--engine", help="engine that evaluates the control law (default: the "
                                     "first available)")
    _json(sy)


def _add_report_parser(sub: Any) -> None:
    """The ``report`` command's options."""
    r = sub.add_parser("report", help="render a bundle's HTML report",
                       description="Render a bundle's (evidence bundle, sweep folder or "
                                   "fit bundle) HTML report to --out (default "
                                   "BUNDLE/index.html).")
    r.add_argument("bundle", metavar="BUNDLE",
                   help="an evidence bundle, a sweep folder or a fit bundle")
    r.add_argument("--out", help="HTML file to write (default BUNDLE/index.html)")
    r.add_argument("--baseline", metavar="OLD",
                   help="an older bundle: show what changed (new failures first)")
    r.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    _json(r)


def _add_verify_parser(sub: Any) -> None:
    """The ``verify`` command's options."""
    v = sub.add_parser("verify", help="recompute every record of a bundle from its arrays",
                       description="Recompute every record of a bundle from its arrays "
                                   "(writes nothing; exit 1 on any mismatch).")
    v.add_argument("bundle", metavar="BUNDLE", help="an evidence bundle folder")
    _json(v)


def _add_swing_parser(sub: Any) -> None:
    """The ``swing`` command's options."""
    sw = sub.add_parser("swing", help="fit a golf-swing capture and replay it in every engine",
                        description="Fit a golf-swing capture and replay it in every engine; "
                                    "writes --out (required, no default folder; make run "
                                    "uses reports/swing).")
    sw.add_argument("capture", metavar="CAPTURE.c3d", nargs="?", default=None,
                    help="the capture (C3D file; or --batch PATH)")
    sw.add_argument("--out", required=True,
                    help="output folder (replaced atomically; required)")
    _batch_options(sw, "capture", "*.c3d", "required")
    sw.add_argument("--quick", action="store_true", help="fewer calibration frames/rounds "
                    "and iterations (make run; the checks still apply)")
    sw.add_argument("--up", default="auto", help="the file's up axis (default auto)")
    sw.add_argument("--cutoff", type=float, default=None, metavar="HZ",
                    help="low-pass the markers first [Hz] (default: no filter)")
    sw.add_argument("--club", choices=CLUB_CHOICES, default="auto",
                    help="the club of the capture, for the smash-factor band and the "
                         "club's masses (default auto: a driver if the club measured at "
                         "address is at least swing/club_length_driver_min long, else an "
                         "iron)")
    sw.add_argument("--club-masses", default=None, metavar="TOTAL,HEAD",
                    help="the weighed club's masses [kg], whole club and head, e.g. "
                         "0.31,0.2 (default: a typical driver's or iron's; "
                         "docs/swing/model.md \"Which club\")")
    sw.add_argument("--loft", type=float, default=None, metavar="DEG",
                    help="the club face's loft [deg] for the ball's collision law (default: "
                         "the club's typical one, driver 10.5, iron 30; "
                         "docs/swing/impact.md \"The collision law\")")
    sw.add_argument("--no-replay", action="store_true", help="stop after the fit")
    sw.add_argument("--study", action="store_true",
                    help="also choose the knot density, smoothness and effort weights on a "
                         "synthetic truth built from this fit (seven more fits; a report "
                         "section)")
    sw.add_argument("--joint-limits", action=argparse.BooleanOptionalAction, default=True,
                    help="the dynamic fit holds the golfer's joint limits (default; the IK "
                         "always does); --no-joint-limits releases them, and the report "
                         "says so and names any joint left outside (exit 1; "
                         "docs/swing/fit.md \"Joint limits\")")
    sw.add_argument("--grip", choices=GRIPS, default="weld",
                    help="the club in the lead hand: welded to it (default) or on a hinge in "
                         "its grip, about the wrist deviation's axis (one more coordinate; "
                         "docs/swing/marker-maximum.md)")
    sw.add_argument("--shaft", choices=SHAFTS, default="rigid",
                    help="the club's shaft: rigid (default) or bending at one point above "
                         "the head (two more coordinates; "
                         "docs/swing/shaft.md)")
    sw.add_argument("--impulse-prior", choices=("law", "free"), default="law",
                    help="the ball's impulse in the fit: held to the collision law's at the "
                         "fitted pre-contact state, within the spread the restitution prior "
                         "gives it (default), or free about zero with the law only read "
                         "after the fit (docs/swing/impact.md)")
    sw.add_argument("--ring", action=argparse.BooleanOptionalAction, default=True,
                    help="the fit tries the club head ringing on the shaft after contact, "
                         "its frequency read off the club-head markers, beside none "
                         "(default); --no-ring keeps the rigid hand-on "
                         "(docs/swing/impact.md \"The head's ringing on the shaft\")")
    sw.add_argument("--dimension", action="store_true",
                    help="also compare the golfer with and without the wrists' radial/ulnar "
                         "deviation on held-out frames (twelve fits of the training frames "
                         "of four folds; a report section)")
    sw.add_argument("--activation", action="store_true",
                    help="also refit with the upper body's joint actuators activation-driven "
                         "(excitation, 10/40 ms activation dynamics, |e| ≤ 1) and report what "
                         "that changes (one more fit; a report section)")
    sw.add_argument("--engines", default=None, help="comma list (default: all five: mujoco, "
                                                    "pinocchio, crocoddyl, drake, opensim)")
    sw.add_argument("--allow-missing", action="append", default=[], metavar="ENGINE",
                    help="run without ENGINE if it is unavailable (repeatable)")
    sw.add_argument("--quiet", action="store_true",
                    help="no progress lines on stderr; warnings only as a one-line count")
    _json(sw)


def _add_track_parser(sub: Any) -> None:
    """The ``track`` command's options."""
    tr = sub.add_parser("track", help="IK and ID of an OpenSim model's markers and loads, "
                                      "beside OpenSim's own tools",
                        description="Marker inverse kinematics (joint limits held) and "
                                    "inverse dynamics with the measured external loads, "
                                    "beside OpenSim's InverseKinematicsTool and "
                                    "InverseDynamicsTool run on the same inputs, "
                                    "then the motion replayed in every engine "
                                    "(docs/track.md). Exit 1 while any check is not met or "
                                    "not run.")
    tr.add_argument("model", metavar="MODEL.osim", help="the OpenSim model")
    tr.add_argument("markers", metavar="MARKERS.trc|.c3d",
                    help="the marker trajectories (a .c3d in the model's axes, as it is)")
    tr.add_argument("--loads", default=None, metavar="EXTERNAL_LOADS.xml",
                    help="OpenSim ExternalLoads file (its datafile beside it); contact "
                         "labelled assumed when its ExternalLoads is named assumed_contact "
                         "(osim-export's), else measured")
    tr.add_argument("--ik-setup", default=None, metavar="SETUP.xml",
                    help="IK setup whose marker tasks give the weights (default: the one "
                         "beside the .trc that names it, else every marker weight 1)")
    tr.add_argument("--start", type=float, default=None, metavar="S", help="first time [s]")
    tr.add_argument("--end", type=float, default=None, metavar="S", help="last time [s]")
    tr.add_argument("--engine", default=None, help="engine of our IK and ID (default: "
                    "the first available of pinocchio, mujoco, drake)")
    tr.add_argument("--lowpass-hz", type=float, default=None, metavar="HZ",
                    help="low-pass the IK's coordinates (zero-phase Butterworth) before the "
                         "inverse dynamics; the same coordinates go to OpenSim's ID tool "
                         "(default: no filter)")
    tr.add_argument("--scale", default=None, metavar="SETUP_SCALE.xml",
                    help="an OpenSim ScaleTool setup carried out on MODEL first (by the "
                         "harness; OpenSim's ScaleTool beside it): the rest runs on the "
                         "scaled model with its markers placed (docs/track.md, Scaling)")
    tr.add_argument("--out", required=True,
                    help="output folder (replaced atomically; required)")
    tr.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    _json(tr)


def _add_osim_export_parser(sub: Any) -> None:
    """The ``osim-export`` command's options."""
    ox = sub.add_parser("osim-export", help="export a finished swing for OpenSim: model, "
                                            "coordinates (.mot), markers (.trc), foot "
                                            "forces, inverse dynamics, tool setups",
                        description="Write golfer.osim (y up, pelvis on ground_pelvis, "
                                    "the grip a PointConstraint, a MarkerSet), swing.mot, "
                                    "markers.trc, grf.mot + external_loads.xml, "
                                    "id_harness.sto, ik_setup.xml, id_setup.xml and "
                                    "notes.txt of a finished `harness swing --out DIR` "
                                    "folder (docs/osim.md).")
    ox.add_argument("swing_dir", metavar="SWING_OUT_DIR",
                    help="the folder a `harness swing ... --out` run wrote")
    ox.add_argument("--out", default=None, help="output folder (replaced atomically; "
                    "default SWING_OUT_DIR_osim beside the swing folder)")
    _json(ox)


def _add_capture_parser(sub: Any) -> None:
    """The ``capture`` command's options."""
    cp = sub.add_parser("capture", help="ingest a C3D capture: units, axes, gaps, rejected "
                                        "markers, swing events")
    cp.add_argument("capture", metavar="CAPTURE.c3d", help="the capture (C3D file)")
    cp.add_argument("--up", default="auto", help="the file's up axis: auto (inferred from "
                    "head and toe markers), +y, +z, ... (default auto)")
    cp.add_argument("--cutoff", type=float, default=None, metavar="HZ",
                    help="zero-phase Butterworth low-pass cut-off [Hz] (default: no filter)")
    cp.add_argument("--json", metavar="FILE",
                    help="write the full ingestion report as JSON (refused before any work "
                         "if FILE is a folder)")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="harness", description="Multi-engine rigid-body parity harness.")
    p.add_argument("--version", action="version", version=f"harness {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    _add_engines_parser(sub)
    _add_parity_parser(sub)
    _add_diagnose_parser(sub)
    _add_qualify_parser(sub)
    _add_replay_parser(sub)
    _add_synth_parser(sub)
    _add_report_parser(sub)
    _add_verify_parser(sub)
    _add_swing_parser(sub)
    _add_osim_export_parser(sub)
    _add_track_parser(sub)
    _add_capture_parser(sub)
    _add_sweep_parser(sub)
    _add_fit_parser(sub)
    return p


# ----- harness sweep NAME (harness/sweep/) -----------------------------------------------
def _add_sweep_parser(sub: Any) -> None:
    """The ``sweep`` command's options."""
    sw = sub.add_parser("sweep", help="run a parameter sweep (crash-tolerant, local "
                                      "processes or Dask) and write sweep.json + index.html",
                        description="Run a parameter sweep and write sweep.json + index.html "
                                    "to --out (required, no default folder). --workers N is "
                                    "N worker processes of the chosen --backend: local "
                                    "processes by default, a Dask LocalCluster of N workers "
                                    "with --backend dask. The first progress line and the "
                                    "summary name the backend that ran.")
    sw.add_argument("name", choices=sorted(api.SWEEPS), help="the sweep to run")
    sw.add_argument("--out", required=True,
                    help="sweep folder to write (replaced atomically; required)")
    sw.add_argument("--backend", choices=["local", "dask"], default=None,
                    help="local: worker processes of this machine (default); dask: Dask "
                         "distributed, a LocalCluster or --scheduler's cluster (default "
                         "with --scheduler)")
    g = sw.add_mutually_exclusive_group()
    g.add_argument("--workers", type=int, default=None, metavar="N",
                   help="N worker processes of the chosen --backend (local: N processes; "
                        "dask: a LocalCluster of N single-threaded worker processes); "
                        "--workers alone does not select Dask; default: CPU count")
    g.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="connect to a running Dask scheduler (e.g. tcp://host:8786)")
    sw.add_argument("--timeout", type=float, default=None, metavar="S",
                    help="per-case time limit [s] (default 600); the case's process is killed")
    sw.add_argument("--quick", action="store_true", help="the sweep's reduced grid")
    sw.add_argument("--include-crash", action="store_true",
                    help="add the sweep's known crashing case (expected: crashed)")
    sw.add_argument("--quiet", action="store_true",
                    help="no progress lines on stderr; warnings only as a one-line count")
    sw.add_argument("--axes", metavar="X,Y", default=None,
                    help="heat-map axes (default: speed_mps,angle_deg when present)")
    sw.add_argument("--aggregate", choices=["max", "min", "mean"], default="max",
                    help="heat-map aggregation over the other inputs (default max: worst case)")
    _json(sw)


COMMANDS = {"engines": cmd_engines, "parity": cmd_parity, "qualify": cmd_qualify,
            "report": cmd_report, "verify": cmd_verify, "replay": cmd_replay,
            "diagnose": cmd_diagnose, "synth": cmd_synth, "capture": cmd_capture,
            "swing": cmd_swing, "sweep": cmd_sweep, "fit": cmd_fit,
            "osim-export": cmd_osim_export, "track": cmd_track}


class _ReaderGone:
    """sys.stdout / sys.stderr as they were, except that once the reader has gone
    (``harness … | head -1``) the rest of the output goes to /dev/null: the command runs on
    to its own exit code, with no traceback and no internal error."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._to_devnull()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._to_devnull()

    def _to_devnull(self):
        try:
            fd = os.open(os.devnull, os.O_WRONLY)
            os.dup2(fd, self._stream.fileno())
            os.close(fd)
        except (OSError, ValueError, AttributeError):  # no file descriptor: nothing to do
            pass

    def __getattr__(self, name):
        return getattr(self._stream, name)


def main(argv: Sequence[str] | None = None) -> int:
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _ReaderGone(streams[0]), _ReaderGone(streams[1])
    try:
        return _main(argv)
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        sys.stdout, sys.stderr = streams


class _Terminated(KeyboardInterrupt):
    """SIGTERM in the command's own process: unwinds like Ctrl-C, so the writer's lock and
    temporary files are removed on the way out (exit 143)."""


def _on_sigterm(owner: int) -> Any:
    def handler(signum: int, frame: Any) -> None:
        if os.getpid() != owner:  # a forked worker: the default action, nothing unwound
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        raise _Terminated()
    return handler


def _redeliver(hook: Any) -> Any:
    """Python ignores an exception raised inside a finaliser (a `__del__`, a weakref
    callback): a SIGTERM that arrived there would be lost and the command run on to exit 0.
    The signal is sent again a moment later from another thread (sent at once, it would be
    raised inside this hook and ignored again), to be raised in the main thread outside."""
    def unraisable(info: Any) -> None:
        if isinstance(info.exc_value, _Terminated):
            again = threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGTERM))
            again.daemon = True
            again.start()  # 50 ms: after this hook has returned (if not, it comes back here)
            return
        hook(info)
    return unraisable


def _main(argv=None) -> int:
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        return _run(argv)  # someone else's handler (or no way to set one): left as it is
    signal.signal(signal.SIGTERM, _on_sigterm(os.getpid()))
    hook = sys.unraisablehook
    sys.unraisablehook = _redeliver(hook)
    try:
        return _run(argv)
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        sys.unraisablehook = hook


def _run(argv=None) -> int:
    api.command_process()
    args = build_parser().parse_args(argv)
    if getattr(args, "device", None):  # read by the adapters of engines with a device
        os.environ["HARNESS_DEVICE"] = args.device
    # capture --json writes its own ingestion report; every other --json is the summary
    summary_file = getattr(args, "json", None) if args.cmd != "capture" else None
    caught = _Warnings()
    args.summary = {}
    rc, error = 0, None
    try:
        if summary_file:  # refused before any work (a folder, or nowhere to write)
            check_output_file(summary_file, "--json")
    except HarnessError as e:
        _err(str(e))
        return e.exit_code
    try:
        with caught:
            rc = COMMANDS[args.cmd](args)
    except HarnessError as e:
        error, rc = str(e), e.exit_code
    except _Terminated:
        error, rc = "terminated (SIGTERM)", 143
    except KeyboardInterrupt:
        error, rc = "interrupted", 130
    except Exception as e:  # never a traceback for the user unless asked
        if os.environ.get("HARNESS_DEBUG"):
            raise
        error, rc = (f"internal error: {type(e).__name__}: {' '.join(str(e).split())} "
                     "(set HARNESS_DEBUG=1 for a traceback)"), 3
    caught.print(getattr(args, "quiet", False))
    if error:
        _err(error)
    if summary_file:
        doc = {"command": args.cmd, "exit_code": rc, "error": error,
               "harness_version": __version__, "command_line": _cmdline(),
               "warnings": caught.summary(), **api.plain(args.summary)}
        try:
            print(f"summary: {write_json_atomic(Path(summary_file), doc)}")
        except (OSError, ValueError) as e:
            _err(f"--json {summary_file}: not written ({' '.join(str(e).split())})")
            return rc or 3
    return rc


if __name__ == "__main__":
    sys.exit(main())
