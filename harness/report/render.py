"""HTML report of an evidence bundle: one self-contained file (inline CSS and SVG, no
scripts, no network), rendered with Jinja2 with autoescaping on, so names from user
models (joints, frames, files) always render as text.

Sections: a contents list (``<nav id="contents">``, links to every section and to the
bundle's files); summary verdict and headline (harness.core.verdict) with, right under it,
what the harness changed in the model (the fixtures' notes) and the ``harness diagnose``
command; a diagnose bundle's explanation; the stage ladder (fixture × stage × engine pair:
verdict, the quantity that decided it and that quantity's own error, linked to that
record's row); per-stage plots of every record's max_rel against its tolerance; per-stage
records, the rows that did not pass open and the rest folded; what each engine computed
each quantity with; provenance.
"""
from __future__ import annotations

import io
import itertools
import json
import re
from collections import OrderedDict
from pathlib import Path

import jinja2
import numpy as np

from harness.core.records import error_text, unit_of
from harness.core.verdict import judge
from harness.evidence.baseline import FLOOR, GROWTH

VERDICT_ORDER = ("error", "failed", "unconverged", "not_scored", "passed", "informational",
                 "not_provided")


def record_anchor(record_id: str) -> str:
    """The HTML id of a record's row in the report's record tables (a ladder cell links to
    the row that decided it)."""
    return "rec-" + re.sub(r"[^A-Za-z0-9_.:-]", "_", record_id)


def _cell(records):
    """Verdict of one ladder cell, the row that decides it and that row's own error.

    The verdict is the worst status among the cell's records (VERDICT_ORDER). The cell
    names the quantity (and, for a single-engine row, the engine) of the row that decided
    it and shows that row's own error (``error_text``: relative, or |Δ| with its unit for a
    check against zero), never a number taken from other rows: a pair whose trajectories
    agree to 1e-13 but whose energy-balance row failed shows the energy balance and its
    error. Among the rows with the cell's verdict the deciding row is: one with non-finite
    values, else the largest relative error, else the largest |Δ| / atol; a passing cell
    looks at the pair's own comparisons first (single-engine rows, such as a replay's
    refinement and energy balance, decide only a cell they fail)."""
    statuses = {r.status for r in records}
    verdict = next(s for s in VERDICT_ORDER if s in statuses)
    mine = [r for r in records if r.status == verdict]
    pool = ([r for r in mine if r.engine_b != ""] or mine) if verdict == "passed" else mine

    def rank(r):
        if r.max_abs is None:  # non-finite (a compared row) or no numbers at all
            return (2, 0.0) if r.key_a and r.status == "failed" else (-1, 0.0)
        if r.max_rel is not None:
            return (1, r.max_rel)
        return (0, r.max_abs / r.atol if r.atol else r.max_abs)

    row = max(pool, key=rank)
    return {"verdict": verdict, "quantity": row.quantity, "anchor": record_anchor(row.id),
            "who": "" if row.engine_b else row.engine_a, "error": error_text(row),
            "n": len(records), "n_verdict": len(mine),
            "reasons": sorted({r.reason for r in records if r.reason})[:3]}


def ladder(records, fixtures, engines, stage_order):
    pairs = [f"{a}~{b}" for a, b in itertools.combinations(engines, 2)]
    decl = [f"declared~{e}" for e in engines]
    cols = decl + pairs
    rows = []
    for fx in fixtures:
        for st in stage_order:
            recs = [r for r in records if r.fixture == fx and r.stage == st]
            if not recs:
                continue
            cells = []
            for c in cols:
                a, b = c.split("~")
                mine = [r for r in recs if (r.engine_a, r.engine_b) == (a, b)]
                # an engine-only row (not provided / error) shows in every pair with it
                mine += [r for r in recs if r.engine_b == "" and r.engine_a in (a, b)
                         and a != "declared"]
                cells.append(_cell(mine) if mine else None)
            rows.append({"fixture": fx, "stage": st, "cells": cells})
    # drop columns that are empty everywhere
    keep = [i for i in range(len(cols)) if any(r["cells"][i] for r in rows)]
    return [cols[i] for i in keep], [{**r, "cells": [r["cells"][i] for i in keep]} for r in rows]


def stage_plot(records, stage, fixtures) -> str:
    """Inline SVG: max_rel of every compared record of a stage, per quantity."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "harness"
    import matplotlib.pyplot as plt

    recs = [r for r in records if r.stage == stage and r.max_rel is not None
            and r.rtol is not None]  # informational rows (stage 3) have no tolerance
    if not recs:
        return ""
    quantities = list(OrderedDict.fromkeys(r.quantity for r in recs))
    fig, axes = plt.subplots(1, len(quantities), figsize=(3.2 * len(quantities), 2.8),
                             squeeze=False)
    fx_index = {f: i for i, f in enumerate(fixtures)}
    pairs = sorted({f"{r.engine_a}~{r.engine_b}" for r in recs})
    markers = "osD^v<>ph*"
    for ax, qty in zip(axes[0], quantities):
        for k, pair in enumerate(pairs):
            pts = [(fx_index[r.fixture], max(r.max_rel, 1e-18)) for r in recs
                   if r.quantity == qty and f"{r.engine_a}~{r.engine_b}" == pair]
            if pts:
                x, y = zip(*pts)
                ax.scatter(np.array(x) + 0.06 * (k - len(pairs) / 2), y, s=14,
                           marker=markers[k % len(markers)], label=pair)
        tol = max(r.rtol for r in recs if r.quantity == qty)
        ax.axhline(tol, color="crimson", ls="--", lw=1, label=f"rtol {tol:g}")
        ax.set_yscale("log")
        ax.set_ylim(1e-18, max(1.0, 10 * max(r.max_rel for r in recs if r.quantity == qty)))
        ax.set_xlim(-0.6, len(fixtures) - 0.4)
        ax.set_xticks(range(len(fixtures)))
        ax.set_xticklabels(fixtures, rotation=40, ha="right", fontsize=7)
        ax.set_title(qty, fontsize=9)
        ax.tick_params(axis="y", labelsize=7)
    axes[0][0].set_ylabel("max relative error", fontsize=8)
    seen = {}
    for ax in axes[0]:
        for h, l in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(l, h)
    labels, handles = list(seen), list(seen.values())
    fig.legend(handles, labels, fontsize=6, loc="upper center", ncol=min(6, len(labels)),
               bbox_to_anchor=(0.5, 1.08))
    fig.tight_layout()
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]
    return re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)  # RDF boilerplate


ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("harness.report.render", "templates"),
    autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
    undefined=jinja2.StrictUndefined)


def _fmt(x):
    return "—" if x is None else f"{x:.2e}"


ENV.filters["sci"] = _fmt


def _abs_text(r):
    """A record's max_abs with its SI unit (record tables)."""
    unit = unit_of(r.stage, r.quantity) if r.max_abs is not None else ""
    return _fmt(r.max_abs) + (f" {unit}" if unit else "")


def _rel_text(r):
    """A record's max_rel; "undefined (against 0)" for a check against zero."""
    if r.max_rel is None and r.max_abs is not None:
        return "undefined (against 0)"
    return _fmt(r.max_rel)


ENV.filters["abs_text"] = _abs_text
ENV.filters["anchor"] = record_anchor
ENV.filters["rel_text"] = _rel_text


def render(manifest: dict, records: list, title: str = "Engine parity report",
           arrays: dict | None = None, baseline=None, *, sections: dict,
           stage_order: list, in_headline) -> str:
    """HTML of a bundle. ``sections``: {stage name: (template, context)} of the stages'
    own sections (harness.stages.report_sections); ``stage_order``: stage names in report
    order; ``in_headline(record)``: whether a row counts in the headline worst error."""
    records = [r for r in records if r.stage != "diagnosis"]  # explanatory: own section
    fixtures = [f["name"] for f in manifest["fixtures"]]
    engines = list(manifest["engines"])
    cols, rows = ladder(records, fixtures, engines, stage_order)
    v = judge(records, in_headline)
    # unavailable engines are in a bundle only when the user allowed them (--allow-missing);
    # they are listed prominently but do not by themselves fail the verdict.
    by_stage = []
    for st in stage_order:
        recs = [r for r in records if r.stage == st]
        if recs:
            by_stage.append({"name": st, "plot": "" if st == "replay" else
                             stage_plot(records, st, fixtures),
                             "records": sorted(recs, key=lambda r: (
                                 VERDICT_ORDER.index(r.status), r.quantity, r.fixture, r.id))})
    ctx = {name: c for name, (_, c) in sections.items()}
    diagnosis = ctx.get("diagnosis", [])
    changed = [f for f in manifest["fixtures"] if f["notes"]]
    toc = [("baseline", "Changes since baseline")] if baseline else []
    toc += [("summary", "Summary")]
    if changed:
        toc.append(("model-changes", "What the harness changed in the model"))
    if diagnosis:
        toc.append(("diagnosis", "Why the engines disagree"))
    toc.append(("ladder-section", "Stage ladder"))
    toc += [(f"stage-{st['name']}", f"Stage: {st['name']}") for st in by_stage]
    for key, label in (("constrained", "Constrained dynamics"), ("replay", "Replay"),
                       ("contact", "Contact")):
        if ctx.get(key):
            toc.append((key, label))
    toc += [("apis", "What each engine computed"), ("provenance", "Provenance")]
    html = ENV.get_template("report.html.j2").render(
        title=title, manifest=manifest, cols=cols, rows=rows, counts=v.counts,
        qualified=v.qualified, headline=v.headline, n_scored=v.n_scored,
        stages=by_stage, fixtures=manifest["fixtures"], replay=ctx.get("replay", []),
        diagnosis=diagnosis, baseline=baseline, toc=toc, changed=changed,
        growth=GROWTH, floor=FLOOR, contact=ctx.get("contact"),
        short={"passed": "pass", "failed": "FAIL", "not_scored": "not scored",
               "not_provided": "n/a", "error": "ERROR", "unconverged": "unconverged",
               "informational": "info"},
        constrained=ctx.get("constrained", []))
    return html


def bundle_title_and_timings(bundle) -> tuple:
    """The report title a bundle's command line implies, and its timings.json (wall times
    of the replay runs: informational, never evidence) or None."""
    timings = None
    tpath = getattr(bundle, "path", None)
    if tpath is not None and (Path(tpath) / "timings.json").is_file():
        try:  # wall times of the replay runs: informational, never evidence
            timings = json.loads((Path(tpath) / "timings.json").read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            timings = None
    cmd = bundle.manifest["command_line"]
    title = "Engine parity report"
    if len(cmd) > 1 and cmd[1] == "qualify":
        prof = cmd[cmd.index("--profile") + 1] if "--profile" in cmd[:-1] else "ci"
        title = f"Qualification ({prof} profile)"
    elif len(cmd) > 1 and cmd[1] == "diagnose" and bundle.manifest["fixtures"]:
        title = f"Why the engines disagree: {bundle.manifest['fixtures'][0]['source']}"
    return title, timings
