"""The banner every report opens with, right under its title (templates/banner.html.j2):
the run line (harness version, git commit, the command that wrote the page) and the
answer, whose words follow from the command's exit code, the worst disagreement (or the
worst check against its threshold) with its unit and the engines involved, and the scope
it was scored over.

One builder per report kind; each takes the exit code from the same data and function
that decide the command's exit code (``Verdict.exit_code`` for parity, qualify and replay;
the diagnosis rule for diagnose; the swing checks' ``exit_code``; the fit problem's
``summary``; the sweep's verdict; survey.json's ``exit_code``), never a rule of its own.

Dimensions: none of its own; every number is written with its unit.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.core.records import Record, unit_of
from harness.core.verdict import Verdict


@dataclass(frozen=True)
class Banner:
    """``exit_code``: the command's (0 pass; 1 not qualified / checks not met);
    ``words``: the answer; ``worst``: the worst disagreement or check with its unit;
    ``scope``: what it was scored over; ``command``, ``version``, ``commit``: the run
    line; ``details``: more of the run line (seed, timing …)."""

    exit_code: int
    words: str
    worst: str
    scope: str
    command: str
    version: str
    commit: str
    details: str = ""

    @property
    def passed(self) -> bool:
        """The pass colours and words: exit code 0 only."""
        return self.exit_code == 0


def _u(unit: str) -> str:
    """" UNIT" to follow a number, "" for a dimensionless one."""
    return "" if unit in ("", "1", "-", "–") else f" {unit}"


def _cmd(command_line: Sequence[str] | str) -> str:
    return command_line if isinstance(command_line, str) else " ".join(map(str, command_line))


# ----- evidence bundles: parity, qualify, replay, diagnose --------------------------------
def _engines(r: Record) -> str:
    if not r.engine_b:
        return f"{r.engine_a} alone"
    if r.engine_a == "declared":
        return f"the declared model vs {r.engine_b}"
    return f"{r.engine_a} vs {r.engine_b}"


def _ratio(r: Record) -> float:
    """How far a row is from passing: its max_rel / rtol, else max_abs / atol (−1: no
    number)."""
    if r.max_rel is not None and r.rtol:
        return r.max_rel / r.rtol
    if r.max_abs is not None:
        return r.max_abs / r.atol if r.atol else r.max_abs
    return -1.0


def worst_disagreement(records: Sequence[Record], verdict: Verdict) -> str:
    """One sentence: the row that failed worst (by its error over its tolerance), else the
    verdict's headline row (the largest relative error), with its quantity, stage,
    fixture, engines, relative error [–], |Δ| with its unit and its tolerance."""
    failed = [r for r in records if r.status == "failed"]
    non_finite = [r for r in failed if r.max_abs is None]
    if non_finite:
        r = non_finite[0]
        return (f"Worst: {r.quantity} ({r.stage}, {r.fixture}), {_engines(r)}: non-finite "
                f"values, no number can stand for it ({len(failed)} row(s) failed)")
    if failed:
        r, head = max(failed, key=_ratio), f"Worst of {len(failed)} failed row(s)"
    elif verdict.worst is not None:
        r, head = verdict.worst, "Worst disagreement"
    else:
        scored = [r for r in records if r.status == "passed" and r.max_abs is not None]
        if not scored:
            errs = [r for r in records if r.status == "error"]
            return (f"No comparison was scored ({len(errs)} engine error(s)"
                    + (f"; first: {errs[0].id}: {errs[0].reason}" if errs else "") + ")")
        r, head = max(scored, key=_ratio), "Worst disagreement (checks against zero)"
    u = _u(unit_of(r.stage, r.quantity))
    rel = f"relative error {r.max_rel:.2e} [–], " if r.max_rel is not None else ""
    tol = (f"rtol {r.rtol:.1e}, " if r.rtol else "") + f"atol {r.atol:.1e}{u}" \
        if r.atol is not None else "no tolerance"
    return (f"{head}: {r.quantity} ({r.stage}, {r.fixture}), {_engines(r)}: {rel}"
            f"|Δ| {r.max_abs:.2e}{u} ({tol})" + (", FAILED" if r.status == "failed" else "")
            + ".")


def worst_in_stage(records: Sequence[Record], stage: str) -> str:
    """One sentence: the scored row of ``stage`` farthest from its tolerance (its error
    over its tolerance; engine pairs first), with its engines and |Δ| with its unit; ""
    when none."""
    rows = [r for r in records if r.stage == stage and r.status in ("passed", "failed")
            and r.max_abs is not None]
    pairs = [r for r in rows if r.engine_b and r.engine_a != "declared"]
    if not rows:
        return ""
    r = max(pairs or rows, key=_ratio)
    u = _u(unit_of(r.stage, r.quantity))
    tol = f"atol {r.atol:.1e}{u}" if r.atol is not None else "no tolerance"
    if r.rtol:
        tol = f"rtol {r.rtol:.1e}, " + tol
    return (f" Worst of stage {stage} against its tolerance: {r.quantity} ({r.fixture}), "
            f"{_engines(r)}: |Δ| {r.max_abs:.2e}{u} ({tol})"
            + (", FAILED" if r.status == "failed" else "") + ".")


def _bundle_scope(manifest: Mapping[str, Any], records: Sequence[Record],
                  verdict: Verdict, window: tuple[float, float] | None) -> str:
    fixtures = [f["name"] for f in manifest["fixtures"]]
    stages = list(dict.fromkeys(r.stage for r in records))
    shown = ", ".join(fixtures[:6]) + (f" and {len(fixtures) - 6} more" if len(fixtures) > 6
                                       else "")
    s = (f"{verdict.n_scored} scored comparisons of {len(records)} rows; "
         f"{len(fixtures)} model(s) ({shown}); {manifest['samples']} sampled states per "
         f"model (seed {manifest['seed']}); engines {', '.join(manifest['engines'])}; "
         f"stages {', '.join(stages)}")
    if window is not None:
        s += f"; replays run over t = {window[0]:.4g}–{window[1]:.4g} s"
    return s


def for_bundle(manifest: Mapping[str, Any], records: Sequence[Record], verdict: Verdict, *,
               unverified: Sequence[str] = (), explained: bool | None = None,
               window: tuple[float, float] | None = None, last_stage: str = "") -> Banner:
    """The banner of an evidence bundle: ``records`` the judged rows and ``verdict`` their
    ``judge`` (the exit code of parity, qualify and replay); ``unverified``: the problems
    ``verify`` found (exit 1, never a pass); ``explained``: for a ``harness diagnose``
    bundle, the diagnosis rule (its exit code) instead; ``window``: the replays' time
    span [s] when the bundle has replays; ``last_stage``: the last stage run, whose worst
    row is named too when the headline row is of another stage."""
    cmd = list(manifest["command_line"])
    kind = cmd[1] if len(cmd) > 1 else "parity"
    c = verdict.counts
    bad = ", ".join(f"{c[k]} {w}" for k, w in (("failed", "failed"), ("error", "engine errors"),
                                               ("not_scored", "not scored"),
                                               ("unconverged", "unconverged")) if c[k])
    if unverified:
        code, words = 1, (f"not qualified: this bundle does not verify ({len(unverified)} "
                          "problem(s); harness verify lists them)")
    elif explained is not None:
        code = 0 if explained else 1
        words = ("diagnosis: every difference is explained by a named cause" if explained
                 else "not qualified: a difference is not explained by a named cause")
        words += (" (parity of the files as written: " + ("passed)" if verdict.qualified
                                                           else f"not qualified, {bad})"))
    else:
        code = verdict.exit_code
        what = {"qualify": "qualified", "replay": "replay qualified"}.get(kind, "passed")
        words = (f"{what}: every one of the {verdict.n_scored} scored comparisons passed"
                 if code == 0 else
                 "not qualified: " + (bad or "no comparison was scored"))
    worst = worst_disagreement(records, verdict)
    head = verdict.worst.stage if verdict.worst is not None else ""
    if last_stage and last_stage != head and not any(r.status == "failed" for r in records):
        worst += worst_in_stage(records, last_stage)
    return Banner(code, words, worst,
                  _bundle_scope(manifest, records, verdict, window), _cmd(cmd),
                  str(manifest.get("harness_version", "")), str(manifest.get("git_commit", "")),
                  f"created {manifest.get('created', '')} · tolerance table "
                  f"{manifest.get('tolerance_table_version', '')}")


# ----- swing ----------------------------------------------------------------------------
def for_swing(rows: Sequence[Mapping[str, Any]], exit_code: int, scope: str,
              prov: Mapping[str, Any]) -> Banner:
    """The banner of a swing page: ``rows`` the checks table and ``exit_code`` its
    ``exit_code(rows)``; ``scope`` the capture, fitted window and the replay's scored
    window in words; ``prov`` the run's provenance."""
    scored = [r for r in rows if r["ok"] is not None]
    bad = [r for r in scored if r["ok"] is False]
    if exit_code == 0:
        words = f"swing qualified: every one of the {len(scored)} scored checks met"
        worst = ("Checks: " + "; ".join(f"{r['name']}: {r['value']} (target {r['target']})"
                                        for r in scored[:2])
                 + (f"; {len(scored) - 2} more in the table below" if len(scored) > 2
                    else ""))
    else:
        words = f"checks not met: {len(bad)} of the {len(scored)} scored checks"
        first = bad[0] if bad else {"name": "", "value": "", "target": ""}
        worst = (f"Not met: {first['name']}: {first['value']} (target {first['target']})"
                 + ("; also not met: " + "; ".join(r["name"] for r in bad[1:])
                    + " (the table below gives each value against its target)"
                    if len(bad) > 1 else ""))
    return Banner(exit_code, words, worst, scope, _cmd(prov["command_line"]),
                  str(prov["harness_version"]), str(prov["git_commit"]))


# ----- fit bundles ----------------------------------------------------------------------
def for_fit(doc: Mapping[str, Any], lines: Sequence[str], code: int,
            window: tuple[float, float] | None = None) -> Banner:
    """The banner of a fit page: ``lines`` and ``code`` its problem's ``summary(doc, "")``
    (the sentences the CLI prints and the exit code it exits with); ``window`` the span
    [s] of the fitted samples (None: the problem has no single time axis)."""
    said = "; ".join(re.sub(r";? ?bundle $", "", line) for line in lines)
    said = said[0].upper() + said[1:] if said else "No summary"
    words = (f"passed: fit {doc['problem']} converged and its checks are met" if code == 0
             else f"checks not met: fit {doc['problem']} " +
             ("did not converge" if not doc.get("converged") else "converged, a check failed"))
    parts = ([f"{doc['N']} nodes"] if "N" in doc else []) + \
        [f"{k} {doc[k]}" for k in ("method", "seed") if k in doc]
    if window is not None:
        parts.append(f"t = {window[0]:.4g}–{window[1]:.4g} s")
    pv = doc.get("provenance") or {}
    return Banner(code, words, said, ", ".join(parts) or "the problem's own data",
                  "harness " + " ".join(map(str, doc.get("command_line") or ["fit"])),
                  str(pv.get("harness_version", "not recorded")),
                  str(pv.get("git_commit", "")))


# ----- sweeps and surveys -----------------------------------------------------------------
def for_sweep(doc: Mapping[str, Any], verdict: Mapping[str, Any],
              scoring: Mapping[str, Any] | None, units: Mapping[str, str]) -> Banner:
    """The banner of a sweep page: ``verdict`` {passed, text} (``sweep_verdict``, which the
    sweep's exit code follows), ``scoring`` the recomputed verdicts (their worst value per
    metric against its bound), ``units`` {metric: unit}."""
    code = 0 if verdict["passed"] else 1
    words = ("passed: " if code == 0 else "not qualified: ") + verdict["text"]
    worst = "No bounds: this sweep reports its metrics without verdicts"
    if scoring and scoring.get("worst"):
        def ratio(item: tuple[str, Mapping[str, Any]]) -> float:
            w = item[1]
            return abs(w["value"]) / abs(w["bound"]) if w["bound"] else float("inf")
        metric, w = max(scoring["worst"].items(), key=ratio)
        u = _u(units.get(metric, ""))
        worst = (f"Worst against its bound: {metric} = {w['value']:.3g}{u} (bound "
                 f"{w['bound']:.3g}{u}) in case {w['case_id']}")
    axes = " × ".join(f"{k} ({len(v)} values)" for k, v in doc["grid"]["axes"].items())
    scope = f"{len(doc['cases'])} cases over {axes}"
    if scoring:
        c = scoring["counts"]
        scope += (f"; {c['passed'] + c['failed']} inside the qualified domain and scored, "
                  f"{c['outside']} outside it")
    return Banner(code, words, worst, scope, _cmd(doc.get("command_line") or []),
                  str(doc["harness_version"]), str(doc["git_commit"]),
                  f"started {doc['timing']['started']} · {doc['timing']['wall_s']:.1f} s wall")


def for_survey(doc: Mapping[str, Any], answer: Mapping[str, Any]) -> Banner:
    """The banner of a survey page: survey.json's ``exit_code`` (the command's) and
    ``answer`` {passed, text} (how many rows qualified)."""
    code = int(doc["exit_code"])
    words = ("qualified: " if code == 0 else "not qualified: ") + answer["text"]
    rows = doc["rows"]
    if doc["of"] == "models":
        rel = [r for r in rows if r.get("worst_rel") is not None]
        w = max(rel, key=lambda r: r["worst_rel"], default=None)
        worst = (f"Worst relative error [–]: {w['worst_rel']:.2e} in {w['name']} "
                 f"({w['worst_id']})" if w else "No model has a scored relative error")
    else:
        bad = [r for r in rows if (r.get("checks") or {}).get("not_met")]
        worst = ("Checks not met: " + "; ".join(f"{r['name']} {r['checks']['not_met']}"
                                               for r in bad[:3])) if bad else \
            "Every finished capture met its scored checks"
    errs = [r for r in rows if r["status"] in ("error", "crashed", "timeout")]
    if errs:
        worst += f"; {len(errs)} row(s) did not finish (first: {errs[0]['name']})"
    opts = doc.get("options") or {}
    of = doc["of"] if len(rows) != 1 else doc["of"][:-1]
    scope = f"{len(rows)} {of} from {doc['input']['path']}" + "".join(
        f"; {k} {opts[k]}" for k in ("base", "samples", "seed") if opts.get(k) is not None)
    return Banner(code, words, worst, scope, _cmd(doc.get("command_line") or []),
                  str(doc["harness_version"]), str(doc["git_commit"]),
                  f"started {doc['timing']['started']} · {doc['timing']['wall_s']:.1f} s wall")


# ----- track -------------------------------------------------------------------------------
def _value(v: Any) -> str:
    """A check's value in 4 significant digits; "no value" when it has none (None)."""
    return "no value" if v is None else f"{v:.4g}"


def for_track(rows: Sequence[Mapping[str, Any]], exit_code: int, scope: str,
              prov: Mapping[str, Any]) -> Banner:
    """The banner of a `harness track` page: ``rows`` its checks ({name, value, target, ok
    (None: not run), why}) and ``exit_code`` the command's (0 only when every row is met);
    ``scope`` the model, markers and window in words; ``prov`` the run's provenance."""
    bad = [r for r in rows if r["ok"] is False]
    not_run = [r for r in rows if r["ok"] is None]
    met = [r for r in rows if r["ok"] is True]
    if exit_code == 0:
        words = f"tracked: every one of the {len(rows)} checks met"
    else:
        words = (f"checks not met or not run: {len(bad)} not met, {len(not_run)} not run, "
                 f"{len(met)} met")
    parts = ([f"not met: {r['name']}: {_value(r['value'])} (target {r['target']})"
              + (f" ({r['why']})" if r.get("why") else "") for r in bad]
             + [f"not run: {r['name']} ({r['why']})" for r in not_run])
    worst = "; ".join(parts) if parts else "; ".join(
        f"{r['name']}: {_value(r['value'])} (target {r['target']})" for r in met)
    return Banner(exit_code, words, worst, scope, _cmd(prov["command_line"]),
                  str(prov["harness_version"]), str(prov["git_commit"]))
