"""A batch run: every item of a batch as one task on an executor, each task writing its own
output folder inside the survey's temporary folder, then survey.json and index.html, and
one atomic swap of the whole survey folder. Units: wall times in s.

The composition root (harness/api.py) supplies the task function (module-level, sent to
the workers by name), the executor (``execute(task, cases, progress) -> result`` with
``rows`` [{case_id, status, metrics, reason, wall_s, attempts}], ``backend``, ``wall_s``,
``started``: harness/sweep/executor.py's run_sweep) and the output folder, already checked
and locked (harness/core/io.py ``output_folder``).
"""
from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from harness.batch import inputs, report, survey
from harness.core.io import OutputKind, swap_in, temp_folder


@dataclass
class SurveyOutcome:
    """``path``: the survey folder; ``doc``: survey.json's document."""

    path: Path
    doc: dict

    @property
    def exit_code(self) -> int:
        """0 when every row qualified, else 1 (survey.json's own exit_code)."""
        return int(self.doc["exit_code"])

    @property
    def report(self) -> Path:
        return self.path / "index.html"


def _say_row(say, of: str, state: dict):
    """One progress line per finished task."""
    if say is None or "row" not in state:
        return
    r = state["row"]
    m = r.get("metrics") or {}
    if r["status"] == "ok":
        if of == "models":
            verdict = "qualified" if m.get("qualified") else "NOT qualified"
            detail = ", ".join(f"{m.get('count:' + s, 0)} {s.replace('_', ' ')}"
                               for s in ("passed", "failed", "error", "not_scored")
                               if m.get("count:" + s) or s == "passed")
        else:
            verdict = "qualified" if m.get("qualified") else "NOT qualified"
            detail = f"{m.get('met', 0)} checks met, {m.get('not_met', 0)} not met"
        text = f"{verdict} ({detail})"
    else:
        text = f"{r['status'].upper()}: {r.get('reason', '')}"
    say(f"{state['done']}/{state['total']} {r['case_id']}: {text} "
        f"[{float(r.get('wall_s') or 0):.1f} s]")


def _clean(sub: Path, slugs: set):
    """Remove what a killed task left in ``sub`` (temporary folders and lock files of the
    atomic writes, named with a leading dot): the tasks are over, nothing is writing."""
    if not sub.is_dir():
        return
    for e in list(sub.iterdir()):
        if e.name.startswith(".") or e.name not in slugs:
            if e.is_dir() and not e.is_symlink():
                shutil.rmtree(e, ignore_errors=True)
            else:
                e.unlink(missing_ok=True)


def run_batch(batch: inputs.Batch, *, out: Path, kind: OutputKind, of: str, entry: OutputKind,
              task: Callable[..., Any],
              case_of: Callable[[inputs.Item, str], dict[str, Any]],
              execute: Callable[..., Any],
              stages: Sequence[str] | None = None, options: dict[str, Any] | None = None,
              command_line: Sequence[str] | None = None,
              versions: dict[str, Any] | None = None,
              backend_text: Callable[[dict[str, Any]], str] | None = None,
              start_line: str | None = None,
              say: Callable[[str], None] | None = None) -> SurveyOutcome:
    """Run every item of ``batch`` (``of`` models | captures) and write the survey folder
    ``out`` (checked and locked by the caller) of ``kind`` atomically. ``case_of(item,
    folder) -> dict`` is the task's case (JSON scalars, ``case_id`` the slug; ``folder``
    where it writes); ``entry``: the kind of each task's folder (its marker says it was
    written). Items are submitted largest first. ``start_line``: said first (which
    backend runs the batch), once the input and the output folder passed their checks."""
    tmp = temp_folder(out)
    if say is not None and start_line:
        say(start_line)
    try:
        sub = tmp / of
        sub.mkdir()
        order = inputs.largest_first(batch.items)
        cases = [case_of(it, str(sub / it.slug)) for it in order]
        result = execute(task, cases, lambda state: _say_row(say, of, state))
        _clean(sub, {it.slug for it in batch.items})
        by_id = {r["case_id"]: r for r in result.rows}
        rows = []
        for it in batch.items:
            written = (sub / it.slug / entry.marker).is_file()
            if not written and (sub / it.slug).exists():
                shutil.rmtree(sub / it.slug, ignore_errors=True)
            er = by_id[it.slug]
            rows.append(survey.model_row(it, er, list(stages or []), written)
                        if of == "models" else survey.capture_row(it, er, written))
        backend = dict(result.backend)
        if backend_text is not None:
            backend["text"] = backend_text(backend)
        doc = survey.build_document(of, batch, rows, stages=stages, options=options,
                                    backend=backend, started=result.started,
                                    wall_s=result.wall_s, command_line=command_line,
                                    versions=versions)
        if not any(sub.iterdir()):
            sub.rmdir()
        (tmp / "survey.json").write_bytes(survey.to_bytes(doc))
        (tmp / "index.html").write_text(report.render(doc), encoding="utf-8")
        swap_in(tmp, out, kind)  # the rule checked again, then one atomic exchange
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return SurveyOutcome(Path(out), doc)


def summary(o: SurveyOutcome) -> dict[str, Any]:
    """The CLI's --json summary of a survey: paths, backend, counts, qualified, and per
    row its slug, status, error and folder."""
    d = o.doc
    return {"survey": str(o.path / "survey.json"), "report": str(o.report),
            "of": d["of"], "n_rows": len(d["rows"]), "counts": dict(d["counts"]),
            "qualified": d["qualified"], "backend": d["backend"].get("text"),
            "backend_detail": d["backend"], "wall_s": d["timing"]["wall_s"],
            "verdict": {"qualified": d["qualified"], "counts": dict(d["counts"])},
            "rows": [{"slug": r["slug"], "status": r["status"], "error": r["error"] or None,
                      "folder": r["folder"]} for r in d["rows"]]}


def print_summary(o: SurveyOutcome, stream: TextIO | None = None) -> None:
    """The lines the CLI prints after a batch: counts, every row that did not qualify
    (with its error), and the report's path."""
    stream = stream or sys.stdout
    d = o.doc
    c = d["counts"]
    n = len(d["rows"])
    word = "models" if d["of"] == "models" else "captures"
    stream.write(f"survey: {c['qualified']} of {n} {word} qualified; {c['failed']} failed, "
                 f"{c['error']} errors, {c['crashed']} crashed, {c['timeout']} timeouts "
                 f"({d['backend'].get('text', d['backend'].get('name'))}, "
                 f"{d['timing']['wall_s']:.1f} s)\n")
    for r in d["rows"]:
        if r["status"] != "qualified":
            why = r["error"] or (r.get("headline") or "") or \
                (json.dumps(r["checks"]) if r.get("checks") else "")
            stream.write(f"  {r['status'].upper():9s} {r['slug']}: {why}\n")
    stream.write(f"report: {o.report}\n")
