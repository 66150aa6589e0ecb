"""HTML report of an evidence bundle: one self-contained file (inline CSS and SVG, no
scripts, no network), rendered with Jinja2 with autoescaping on, so names from user
models (joints, frames, files) always render as text.

Sections: summary verdict; the stage ladder (fixture × stage × engine pair, worst
relative error and verdict); per-stage plots of every record's max_rel against its
tolerance; per-quantity records; what each engine computed each quantity with;
not-provided and not-scored rows with their reasons; provenance.
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

from harness.core.verdict import judge
from harness.evidence.baseline import FLOOR, GROWTH

VERDICT_ORDER = ("error", "failed", "unconverged", "not_scored", "passed", "informational",
                 "not_provided")


def _cell(records):
    """Verdict and worst error for the records of one ladder cell. The worst error is
    taken over the pair's own comparisons only; single-engine rows (not provided,
    errors, replay refinement and energy balance) contribute their verdict, not their
    number (an energy residual compared with 0 has relative error 1 by construction)."""
    statuses = {r.status for r in records}
    for s in VERDICT_ORDER:
        if s in statuses:
            verdict = s
            break
    rels = [r.max_rel for r in records if r.max_rel is not None and r.engine_b != ""]
    worst = max(rels) if rels else None
    return {"verdict": verdict, "worst": worst, "n": len(records),
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
    html = ENV.get_template("report.html.j2").render(
        title=title, manifest=manifest, cols=cols, rows=rows, counts=v.counts,
        qualified=v.qualified, worst=v.worst_rel, n_scored=v.n_scored,
        stages=by_stage, fixtures=manifest["fixtures"], replay=ctx.get("replay", []),
        diagnosis=ctx.get("diagnosis", []), baseline=baseline,
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
    return title, timings
