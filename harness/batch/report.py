"""The survey report (index.html of a survey folder): answer first, then one table row per
model (× stage verdicts) or per capture (× summary metrics). Jinja2, autoescaped, tables
only (no figures, no scripts, no network); template templates/survey.html.j2.

Units: as in the column titles (survey.SWING_COLUMNS); relative errors dimensionless;
wall times s.
"""
from __future__ import annotations

from typing import Any

import jinja2

from harness.batch import survey
from harness.report import banner

ENV = jinja2.Environment(loader=jinja2.ChoiceLoader([
    jinja2.PackageLoader("harness.batch", "templates"),
    jinja2.PackageLoader("harness.report", "templates")]),  # the shared banner
                         autoescape=jinja2.select_autoescape(default=True,
                                                             default_for_string=True),
                         undefined=jinja2.StrictUndefined)
BAD_FIRST = {"error": 0, "crashed": 1, "timeout": 2, "failed": 3, "qualified": 4}
CELL = {"passed": "pass", "failed": "FAIL", "error": "ERROR", "not_scored": "not scored",
        "unconverged": "unconverged", "not_provided": "n/a", "informational": "info",
        "absent": "—"}


def ordered_rows(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows with the ones that did not qualify first (errors, crashes, timeouts, then
    failures), each group in input order."""
    return sorted(doc["rows"], key=lambda r: BAD_FIRST[r["status"]])


def _num(v, fmt="{:.3g}") -> str:
    if v is None:
        return "—"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        return fmt.format(v)
    return str(v)


def headline(doc: dict[str, Any]) -> dict[str, Any]:
    """{passed, text}: the answer, how many rows qualified."""
    c, n = doc["counts"], len(doc["rows"])
    word = ("model" if doc["of"] == "models" else "capture") + ("s" if n != 1 else "")
    if n and c["qualified"] == n:
        return {"passed": True, "text": f"all {n} {word} qualified" if n > 1 else
                f"the {word} qualified"}
    bad = ", ".join(f"{c[s]} {s}" for s in ("failed", "error", "crashed", "timeout") if c[s])
    return {"passed": False, "text": f"{c['qualified']} of {n} {word} qualified; {bad}"}


ERROR_SHOWN = 160  # [characters] of a row's error shown before the rest is folded


def error_cell(row: dict[str, Any]) -> dict[str, str]:
    """{short, rest} of a row's error as its table cell shows it: without the model's or
    capture's path where the message names it first (the row's first column shows it;
    elsewhere the path is written as the row's name), the first ERROR_SHOWN characters,
    and the rest (folded; empty if nothing is left). survey.json keeps the whole text."""
    text = row.get("error") or ""
    if row.get("path") and row.get("name"):
        text = text.replace(f": {row['path']}: ", ": ", 1)
        text = text.replace(row["path"], row["name"])
    if len(text) <= ERROR_SHOWN:
        return {"short": text, "rest": ""}
    cut = text.rfind(" ", 0, ERROR_SHOWN)
    cut = cut if cut > ERROR_SHOWN // 2 else ERROR_SHOWN
    return {"short": text[:cut], "rest": text[cut:]}


def render(doc: dict[str, Any]) -> str:
    """index.html of the survey ``doc`` (survey.json's document)."""
    answer = headline(doc)
    return ENV.get_template("survey.html.j2").render(
        doc=doc, rows=ordered_rows(doc), answer=answer, cell=CELL, num=_num,
        banner=banner.for_survey(doc, answer),
        row_statuses=survey.ROW_STATUSES, error_cell=error_cell)
