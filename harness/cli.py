"""Command-line interface: ``harness engines | parity | report | verify | qualify``.

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

PROFILES = {"ci": {"samples": 10}, "full": {"samples": 100}}


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

    models = []
    for text in args.fixture or []:
        names = catalog.names() if text == "all" else [t.strip() for t in text.split(",") if t.strip()]
        for n in names:
            if n not in catalog.names():
                raise BadInput("--fixture", f"unknown fixture {n!r} (known: "
                                            f"{', '.join(catalog.names())}, all)")
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


def _run_and_write(args, models, title):
    from harness import evidence, report
    from harness.stages import runner

    engines, missing = _engines(args)
    stages = runner.stage_names(args.stages.split(",") if args.stages else None)
    _check_numbers(args)
    out = _out_dir(args.out)
    say = _progress(args.quiet)
    result = runner.run(models, engines, stages, samples=args.samples, seed=args.seed,
                        progress=say)
    manifest = evidence.build_manifest(result, missing, ["harness", *sys.argv[1:]])
    html = report.render(manifest, result.records, title=title)
    path = evidence.write_bundle(out, result, missing, ["harness", *sys.argv[1:]], html=html)
    return path, result


def _summarise(result, path) -> int:
    from collections import Counter

    c = Counter(r.status for r in result.records)
    scored = [r for r in result.records if r.max_rel is not None]
    worst = max(scored, key=lambda r: r.max_rel) if scored else None
    print(f"records: {c.get('passed', 0)} passed, {c.get('failed', 0)} failed, "
          f"{c.get('error', 0)} errors, {c.get('not_scored', 0)} not scored, "
          f"{c.get('not_provided', 0)} not provided")
    if worst is not None:
        print(f"worst relative error: {worst.max_rel:.3e} ({worst.id})")
    for r in result.records:
        if r.status in ("failed", "error", "not_scored"):
            print(f"  {r.status.upper():11s} {r.id}"
                  + (f"  max_rel {r.max_rel:.3e}" if r.max_rel is not None else "")
                  + (f"  ({r.reason})" if r.reason else ""))
    print(f"report: {Path(path) / 'index.html'}")
    bad = c.get("failed", 0) + c.get("error", 0) + c.get("not_scored", 0)
    return 1 if bad or not scored else 0


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


def cmd_qualify(args) -> int:
    from fixtures import catalog
    from harness.model import prepare_fixture

    prof = PROFILES[args.profile]
    if args.samples is None:
        args.samples = prof["samples"]
    args.stages = None
    models = [prepare_fixture(n) for n in catalog.names()]
    path, result = _run_and_write(args, models, f"Qualification ({args.profile} profile)")
    return _summarise(result, path)


def cmd_report(args) -> int:
    from harness import evidence, report

    b = evidence.read_bundle(args.bundle)
    html = report.render_bundle(b)
    target = Path(args.out) if args.out else Path(args.bundle) / "index.html"
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    tmp.write_text(html)
    os.replace(tmp, target)
    print(f"report: {target}")
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


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="harness", description="Multi-engine rigid-body parity harness.")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    sub.add_parser("engines", help="list engines, versions and availability")
    par = sub.add_parser("parity", help="run stages 0-2 on fixtures or user models")
    par.add_argument("--fixture", action="append", help="fixture name, comma list or 'all'")
    par.add_argument("--urdf", action="append", help="a URDF file (repeatable)")
    par.add_argument("--mjcf", action="append", help="an MJCF file (repeatable)")
    par.add_argument("--floating", action="store_true", help="add a free root joint")
    par.add_argument("--repair-inertia", action="store_true",
                     help="replace non-physical URDF inertias by the nearest physical ones "
                          "(noted in the report) instead of rejecting the file")
    par.add_argument("--stages", help="comma list of stages: 0,1,2 or names (default all)")
    par.add_argument("--samples", type=int, default=10, help="random states per model")
    _common(par, out_default="reports/parity")
    q = sub.add_parser("qualify", help="all fixtures, all stages; exit 0 only if all pass")
    q.add_argument("--profile", choices=sorted(PROFILES), default="ci")
    q.add_argument("--samples", type=int, default=None, help="override the profile's samples")
    _common(q)
    r = sub.add_parser("report", help="render a bundle's HTML report")
    r.add_argument("bundle")
    r.add_argument("--out", help="HTML file to write (default BUNDLE/index.html)")
    v = sub.add_parser("verify", help="recompute every record of a bundle from its arrays")
    v.add_argument("bundle")
    return p


COMMANDS = {"engines": cmd_engines, "parity": cmd_parity, "qualify": cmd_qualify,
            "report": cmd_report, "verify": cmd_verify}


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
