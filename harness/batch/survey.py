"""The survey document (``survey.json``), its strict reader and the survey folder's kind.

Dimension legend: M rows (one per model and base, or per capture); S stages. Units are in
the field names (``wall_s`` [s], ``*_mm`` [mm], ``*_mps`` [m/s], ``*_N`` [N], ``*_Nm``
[N·m]); relative errors are dimensionless.

``survey.json`` (SURVEY_SCHEMA_VERSION): kind "survey", ``of`` models | captures, command
(parity | swing), command line, harness version, git commit, versions, input (path,
folder | list, base, skipped files), options (what every task ran with), backend
(executor's description and its text), timing (started, wall_s), stages (models: the S
stages, in order, that wrote rows for some model) or columns ([{key, title}]: captures),
counts (rows per status), qualified (every row qualified), exit_code (0 iff qualified),
and M rows:

* every row: slug, name (path relative to the batch root), path, kind (urdf | mjcf | c3d),
  base (fixed | floating | null), status (qualified | failed | error | crashed | timeout:
  its task's outcome), error (one line, "" if none), folder (``models/SLUG`` or
  ``captures/SLUG`` when the task wrote one, else null), wall_s, attempts;
* a model: nq, nv, counts (records per status, diagnosis rows excluded), stages {stage:
  {counts, status}} (the stages that wrote rows for it), worst_rel and worst_id (the
  headline worst relative error), headline, n_warnings;
* a capture: checks {met, not_met, reported}, metrics {column key: value or null} and
  n_warnings.

A row's status is *qualified* only when its task finished and its own verdict says so
(the bundle's: every scored comparison passed; a swing's: every check met); *failed* when
the task finished with a verdict that does not; otherwise the executor's status.
"""
from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.batch.inputs import Batch, Item
from harness.core.errors import BadInput
from harness.core.io import OutputKind
from harness.core.records import STATUSES as RECORD_STATUSES
from harness.core.strict import read_json
from harness.core.version import __version__
from harness.evidence.bundle import git_commit

SURVEY_SCHEMA_VERSION = 1
ROW_STATUSES = ("qualified", "failed", "error", "crashed", "timeout")
OF = {"models": "parity", "captures": "swing"}
DOC_KEYS = {"schema_version", "kind", "of", "command", "command_line", "harness_version",
            "git_commit", "versions", "input", "options", "backend", "timing", "stages",
            "columns", "counts", "qualified", "exit_code", "rows"}
COMMON_ROW_KEYS = {"slug", "name", "path", "kind", "base", "status", "error", "folder",
                   "wall_s", "attempts"}
MODEL_ROW_KEYS = COMMON_ROW_KEYS | {"nq", "nv", "counts", "stages", "worst_rel", "worst_id",
                                    "headline", "n_warnings"}
CAPTURE_ROW_KEYS = COMMON_ROW_KEYS | {"checks", "metrics", "n_warnings"}

# stage status in a survey cell, worst first: the first present status decides
STAGE_ORDER = ("error", "failed", "not_scored", "unconverged", "passed", "not_provided",
               "informational")

def _worst_replay_rms_m(s):
    """The largest engine replay marker RMS [m] (None when not replayed)."""
    vals = [rms for rms, _ in (s.replay.deviation_m.values() if s.replay else ())]
    return max(vals) if vals else None


# captures: (key, column title with its unit, the figure of the swing's typed fit.json
# (harness/swing/summary.py SwingSummary, read by attribute), scale)
SWING_COLUMNS = (
    ("marker_rmse_mm", "marker RMSE, whole window [mm]", lambda s: s.fit.marker_rmse_m, 1e3),
    ("marker_rmse_top_impact_mm", "marker RMSE, top → impact [mm]",
     lambda s: s.fit.marker_rmse_top_to_impact_m, 1e3),
    ("ik_rmse_mm", "IK marker RMSE [mm]", lambda s: s.ik_rmse_m, 1e3),
    ("defects_max_rel", "torque interpolation defects [relative]",
     lambda s: s.fit.defects_max_rel, 1.0),
    ("reintegration_rms_mm", "open-loop reintegration RMS [mm]",
     lambda s: s.reintegration.whole_window_rms_m, 1e3),
    ("reintegration_within_s", "reintegration within the marker RMSE for [s]",
     lambda s: s.reintegration.within_marker_rmse_until_s, 1.0),
    ("impact_speed_fitted_mps", "club-head speed at impact, fitted [m/s]",
     lambda s: s.fit.club_head_speed_fitted_mps, 1.0),
    ("impact_speed_measured_mps", "club-head speed at impact, measured [m/s]",
     lambda s: s.fit.club_head_speed_measured_mps, 1.0),
    ("pelvis_residual_force_N", "pelvis residual peak |F| [N]",
     lambda s: s.fit.pelvis_residual_force_N, 1.0),
    ("pelvis_residual_moment_Nm", "pelvis residual peak |M| [N·m]",
     lambda s: s.fit.pelvis_residual_moment_Nm, 1.0),
    ("grip_closure_mm", "grip closure, fit [mm]", lambda s: s.fit.closure_max_m, 1e3),
    ("replay_worst_rms_mm", "worst engine replay marker RMS [mm]", _worst_replay_rms_m, 1e3),
    ("fit_iterations", "fit iterations [count]", lambda s: s.fit.iterations, 1),
    ("swing_wall_s", "swing wall time [s]", lambda s: s.wall_s, 1.0),
)


def swing_metrics(summary: Any) -> dict[str, Any]:
    """{column key: value in the column's unit, or None when not finite} from a swing's
    typed fit.json ``summary`` (harness/swing/summary.py SwingSummary; SWING_COLUMNS; typed
    Any here because harness/batch may not import harness/swing, not even for its types)."""
    out = {}
    for key, _, figure, scale in SWING_COLUMNS:
        v = figure(summary)
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) and v == v \
            and abs(v) != float("inf")
        out[key] = (v * scale if isinstance(scale, float) else v) if ok else None
    return out


def stage_status(counts: dict) -> str:
    """A stage's status in a survey cell from its record counts: the worst status present
    (STAGE_ORDER), "absent" when the stage has no row."""
    for s in STAGE_ORDER:
        if counts.get(s):
            return s
    return "absent"


# ----- rows -------------------------------------------------------------------------------
def _base_row(item, exec_row: dict, folder_written: bool, of: str) -> dict:
    m = exec_row.get("metrics") or {}
    status = exec_row["status"]
    if status == "ok":
        status = "qualified" if m.get("qualified") is True else "failed"
    error = exec_row.get("reason") or ""
    if exec_row["status"] == "ok" and m.get("error"):
        error = m["error"]
    return {"slug": item.slug, "name": item.name, "path": item.path, "kind": item.kind,
            "base": item.base, "status": status, "error": error,
            "folder": f"{of}/{item.slug}" if folder_written else None,
            "wall_s": float(exec_row.get("wall_s") or 0.0),
            "attempts": int(exec_row.get("attempts") or 1)}


def model_row(item: Item, exec_row: dict[str, Any], stages: list[str],
              folder_written: bool) -> dict[str, Any]:
    """A model's survey row from its executor row (metrics: the task's flat scalars
    ``count:STATUS``, ``stage:STAGE:STATUS``, nq, nv, qualified, worst_rel, ...)."""
    m = exec_row.get("metrics") or {}
    row = _base_row(item, exec_row, folder_written, "models")
    ran = exec_row["status"] == "ok"
    counts = {s: int(m.get(f"count:{s}", 0)) for s in RECORD_STATUSES} if ran else None
    st = {}
    if ran:  # the stages that wrote rows for this model (3 and 4 run on their own fixtures)
        for name in stages:
            c = {s: int(m.get(f"stage:{name}:{s}", 0)) for s in RECORD_STATUSES}
            if any(c.values()):
                st[name] = {"counts": c, "status": stage_status(c)}
    row.update(nq=m.get("nq"), nv=m.get("nv"), counts=counts, stages=st,
               worst_rel=m.get("worst_rel"), worst_id=m.get("worst_id"),
               headline=m.get("headline", ""), n_warnings=int(m.get("n_warnings", 0)))
    return row


def capture_row(item: Item, exec_row: dict[str, Any], folder_written: bool) -> dict[str, Any]:
    """A capture's survey row from its executor row (metrics: met, not_met, reported,
    qualified and the SWING_COLUMNS keys)."""
    m = exec_row.get("metrics") or {}
    row = _base_row(item, exec_row, folder_written, "captures")
    ran = exec_row["status"] == "ok"
    row["checks"] = {k: int(m.get(k, 0)) for k in ("met", "not_met", "reported")} \
        if ran else None
    row["metrics"] = {key: m.get(key) for key, *_ in SWING_COLUMNS} if ran else {}
    row["n_warnings"] = int(m.get("n_warnings", 0))
    return row


def task_metrics_of_bundle(summary: dict, manifest: dict, records: list,
                           stage_order: list, n_warnings: int) -> dict:
    """The flat JSON scalars a parity task returns: nq, nv, qualified, the headline,
    ``count:STATUS`` and ``stage:STAGE:STATUS``. ``summary``: the verdict as data
    (counts, qualified, headline, worst_rel, worst_id); records: [(stage, status)] of the
    non-diagnosis rows."""
    fx = (manifest.get("fixtures") or [{}])[0]
    out = {"nq": fx.get("nq"), "nv": fx.get("nv"), "qualified": bool(summary["qualified"]),
           "worst_rel": summary.get("worst_rel"), "worst_id": summary.get("worst_id"),
           "headline": summary.get("headline", ""), "n_warnings": int(n_warnings),
           "n_records": len(records)}
    for s, n in summary["counts"].items():
        out[f"count:{s}"] = int(n)
    for stage, status in records:
        if stage in stage_order:
            key = f"stage:{stage}:{status}"
            out[key] = out.get(key, 0) + 1
    return out


# ----- the document ------------------------------------------------------------------------
def build_document(of: str, batch: Batch, rows: list[dict[str, Any]], *,
                   stages: Sequence[str] | None = None, options: dict[str, Any] | None = None,
                   backend: dict[str, Any] | None = None, started: str = "",
                   wall_s: float = 0.0, command_line: Sequence[str] | None = None,
                   versions: dict[str, Any] | None = None) -> dict[str, Any]:
    """survey.json's content (rows in the batch's input order)."""
    counts = {s: sum(r["status"] == s for r in rows) for s in ROW_STATUSES}
    qualified = bool(rows) and counts["qualified"] == len(rows)
    # models: the stages run that wrote a row for some model (3 and 4 run on their own
    # fixtures only: no column for them in a survey of user models)
    stages = [s for s in (stages or []) if any(s in (r.get("stages") or {}) for r in rows)]
    return {
        "schema_version": SURVEY_SCHEMA_VERSION, "kind": "survey", "of": of,
        "command": OF[of],
        "command_line": list(command_line if command_line is not None else sys.argv),
        "harness_version": __version__, "git_commit": git_commit(),
        "versions": dict(versions or {}),
        "input": {"path": batch.source, "type": batch.source_type, "root": batch.root,
                  "skipped": list(batch.skipped)},
        "options": dict(options or {}), "backend": dict(backend or {}),
        "timing": {"started": started, "wall_s": float(wall_s)},
        "stages": stages if of == "models" else [],
        "columns": [{"key": k, "title": t} for k, t, *_ in SWING_COLUMNS]
        if of == "captures" else [],
        "counts": counts, "qualified": qualified, "exit_code": 0 if qualified else 1,
        "rows": rows,
    }


def to_bytes(doc: dict[str, Any]) -> bytes:
    return (json.dumps(doc, indent=1, allow_nan=False) + "\n").encode()


def read_survey(path: str | os.PathLike[str]) -> dict[str, Any]:
    """survey.json read and validated strictly (BadInput naming the file and the first
    problem): the schema's fields and no others, row fields by ``of``, counts and
    exit_code consistent with the rows."""
    p = Path(path)
    doc = read_json(p, "survey (JSON)")
    shown = str(p)
    if not isinstance(doc, dict):
        raise BadInput(shown, "is not a survey (not a JSON object)")
    if doc.get("kind") != "survey":
        raise BadInput(shown, f"kind is {doc.get('kind')!r}, not 'survey'")
    if doc.get("schema_version") != SURVEY_SCHEMA_VERSION:
        raise BadInput(shown, f"schema_version {doc.get('schema_version')!r} is not "
                              f"{SURVEY_SCHEMA_VERSION}")
    keys = set(doc)
    if keys != DOC_KEYS:
        raise BadInput(shown, f"fields differ from the schema (missing "
                              f"{sorted(DOC_KEYS - keys)}, unknown {sorted(keys - DOC_KEYS)})")
    if doc["of"] not in OF:
        raise BadInput(shown, f"of is {doc['of']!r}, not one of {', '.join(OF)}")
    want = MODEL_ROW_KEYS if doc["of"] == "models" else CAPTURE_ROW_KEYS
    if not isinstance(doc["rows"], list) or not doc["rows"]:
        raise BadInput(shown, "rows must be a non-empty list")
    slugs = set()
    for i, r in enumerate(doc["rows"]):
        if not isinstance(r, dict) or set(r) != want:
            raise BadInput(shown, f"row {i}: fields differ from the schema")
        if r["status"] not in ROW_STATUSES:
            raise BadInput(shown, f"row {i}: unknown status {r['status']!r}")
        if r["slug"] in slugs or not isinstance(r["slug"], str) or "/" in r["slug"] \
                or r["slug"].startswith("."):
            raise BadInput(shown, f"row {i}: slug {r['slug']!r} is repeated or not a "
                                  "folder name")
        slugs.add(r["slug"])
        if r["folder"] not in (None, f"{doc['of']}/{r['slug']}"):
            raise BadInput(shown, f"row {i}: folder {r['folder']!r} is not "
                                  f"{doc['of']}/{r['slug']}")
    counts = {s: sum(r["status"] == s for r in doc["rows"]) for s in ROW_STATUSES}
    if doc["counts"] != counts:
        raise BadInput(shown, "counts do not match the rows")
    qualified = counts["qualified"] == len(doc["rows"])
    if doc["qualified"] is not qualified or doc["exit_code"] != (0 if qualified else 1):
        raise BadInput(shown, "qualified / exit_code contradict the rows")
    return doc


def _recognise(path: Path):
    """The output-folder rule's check of a survey folder's marker: survey.json parses
    (read_survey), and every bundle or swing folder beside it is one its rows name."""
    doc = read_survey(path)
    sub = Path(path).parent / doc["of"]
    named = {r["slug"] for r in doc["rows"] if r["folder"]}
    if sub.is_dir():
        extra = sorted(e for e in os.listdir(sub) if e not in named)
        if extra:
            raise BadInput(str(path), f"{doc['of']}/{extra[0]} is not a folder of its rows")
    return doc


def output_kind(of: str, entry: OutputKind) -> OutputKind:
    """The survey folder's kind (the output-folder rule, harness/core/io.py): survey.json
    and index.html, and ``of``/ holding one folder of kind ``entry`` per row (an evidence
    bundle per model, a swing output folder per capture)."""
    container = OutputKind(f"a survey's {of} folder", None, lambda p: None, frozenset(),
                           {"*": entry})
    return OutputKind("a survey", "survey.json", _recognise,
                      frozenset({"survey.json", "index.html"}), {of: container})
