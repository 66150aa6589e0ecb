"""HTML report of an evidence bundle, rendered with Jinja2 with autoescaping on, so names
from user models (joints, frames, files) always render as text. Charts are interactive
plotly.js charts (harness.core.figures: a JSON description per chart, drawn by the
browser); the page loads ``plotly.min.js`` from its own folder (a bundle holds a copy) or,
as a stand-alone file, embeds it. Nothing is fetched from a network.

Sections: a contents list (``<nav id="contents">``, links to every section and to the
bundle's files); summary verdict and headline (harness.core.verdict) with, right under it,
what the harness changed in the model (the fixtures' notes) and the ``harness diagnose``
command; a diagnose bundle's explanation; the stage ladder (fixture × stage × engine pair:
verdict, the quantity that decided it and that quantity's own error, linked to that
record's row); per-stage small multiples of every record's max_rel against its tolerance
(one chart per quantity, over the fixtures that have it); per-stage
records, the rows that did not pass open and the rest folded; what each engine computed
each quantity with; provenance.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from harness.core import figures
from harness.core.records import Record, unit_of
from harness.core.verdict import judge
from harness.evidence.baseline import FLOOR, GROWTH, Diff
from harness.evidence.bundle import Bundle
from harness.model import registry
from harness.report import banner as banner_mod
from harness.report.matrix import (
    VERDICT_ORDER,
    engine_matrix,
    ladder,
    record_anchor,
)
from harness.report.stage_charts import stage_plot

# a cell's verdict mark: the record's own status, never judged again here
MARKS = {"passed": "✓", "failed": "✗ FAIL", "error": "✗ ERROR", "not_scored": "not scored",
         "not_provided": "n/a", "unconverged": "unconverged", "informational": "info"}
ATTENTION = ("failed", "error", "not_scored", "unconverged")
SHORT = {"passed": "pass", "failed": "FAIL", "not_scored": "not scored",
         "not_provided": "n/a", "error": "ERROR", "unconverged": "unconverged",
         "informational": "info"}


def api_rows(fixtures: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (engine, quantity, engine API) over the fixtures' ``provides``, in the
    order first met: ``fixtures`` the fixtures it applies to, or None for every one."""
    rows: dict[tuple[str, str, str], list[str]] = {}
    for f in fixtures:
        for e, apis in f["provides"].items():
            for q, api in apis.items():
                rows.setdefault((e, q, str(api)), []).append(f["name"])
    every = [f["name"] for f in fixtures]
    return [{"engine": e, "quantity": q, "api": api,
             "fixtures": None if fx == every else fx} for (e, q, api), fx in rows.items()]


def compact_records(recs: Sequence[Record],
                    tag: Callable[[Record], dict[str, str] | None] | None = None) -> str:
    """Records as the compact JSON the page draws a record table from when it is opened
    (report.html.j2, ``records-more``): string tables ``q`` (quantities), ``u`` (their
    units), ``f`` (fixtures), ``e`` (engines: ``a ~ b`` or one engine), ``s`` (statuses)
    ``t`` ([atol, rtol] pairs) and one row per record [q, f, e, s, max_abs, max_rel ("z":
    a check against zero), t, samples, worst sample, reason, the run ``tag(record)``
    ({"kind", "label"} or null: a stage's row tag)], numbers to 3 significant digits (the
    tables show 3); every ``<`` written ``\u003c`` so that no text can close the script
    element that holds it."""
    tables: dict[str, list[Any]] = {"q": [], "u": [], "f": [], "e": [], "s": [], "t": []}
    index: dict[str, dict[str, int]] = {k: {} for k in tables}

    def at(k: str, v: Any) -> int:
        if v not in index[k]:
            index[k][v] = len(tables[k])
            tables[k].append(v)
        return index[k][v]

    def num(x: float | None) -> float | int | None:
        return None if x is None else 0 if x == 0 else float(f"{x:.3g}")

    rows = []
    for r in recs:
        qi = at("q", r.quantity)
        if qi == len(tables["u"]):
            tables["u"].append(unit_of(r.stage, r.quantity))
        rows.append([qi, at("f", r.fixture),
                     at("e", f"{r.engine_a} ~ {r.engine_b}" if r.engine_b else r.engine_a),
                     at("s", r.status), num(r.max_abs),
                     "z" if against_zero(r) else num(r.max_rel),
                     at("t", (num(r.atol), num(r.rtol))), r.n_samples, r.worst_label,
                     r.reason, tag(r) if tag else None])
    doc = json.dumps({**tables, "rows": rows}, separators=(",", ":"), allow_nan=False)
    return doc.replace("<", "\\u003c")


def matrix_table(records: Sequence[Record], engines: Sequence[str],
                 key: Callable[[Record], tuple[str, ...]], heads: Sequence[str], sub: str,
                 table_id: str = "") -> Markup:
    """The engine matrix (harness.report.matrix.engine_matrix) of ``records`` as an HTML
    ``<table class="matrix">``: one row per ``key(record)`` (its parts in the columns
    ``heads``), "compared with", one column per engine with a record, "all records". Each
    cell: the deciding record's verdict mark (its own status), its error and, under it,
    its ``sub`` ("fixture" or "quantity"), linked to the record's row."""
    cols, rows = engine_matrix(records, engines, key)
    return Markup(ENV.get_template("matrix.html.j2").render(
        mcols=cols, mrows=rows, heads=list(heads), sub=sub, table_id=table_id,
        marks=MARKS, short=SHORT))


def cache_dir() -> Path | None:
    """The folder of the report's compiled templates: ``$XDG_CACHE_HOME/parity-harness``
    (``~/.cache/parity-harness`` without it; ``%LOCALAPPDATA%`` on Windows), or None
    when that is not an absolute path (no home folder): never a folder relative to where
    the command runs, so never the bundle's folder nor the repository."""
    base = os.environ.get("XDG_CACHE_HOME") or (
        os.environ.get("LOCALAPPDATA") if os.name == "nt" else None)
    folder = Path(base or Path(os.path.expanduser("~")) / ".cache") / "parity-harness"
    return folder if folder.is_absolute() else None


class TemplateCache(jinja2.FileSystemBytecodeCache):
    """Jinja's compiled templates kept in ``cache_dir()`` between commands: compiling the
    report's templates took about 0.2 s of every ``harness report``. An entry is used only
    while its template's source and Jinja's and Python's versions are those it was compiled
    from (Jinja checks them); a cache that cannot be read or written (no home, a read-only
    disk, a damaged entry) is passed over and the template compiled as before."""

    def __init__(self, folder: Path, pattern: str) -> None:
        super().__init__(str(folder), pattern)

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:  # noqa: BLE001 - any damaged or unreadable entry: compile instead
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            os.makedirs(self.directory, mode=0o700, exist_ok=True)
            super().dump_bytecode(bucket)
        except OSError:  # unwritable: the next command compiles the template again
            pass


_CACHE = cache_dir()
# the report's own templates; a stage's folder is added when a report first shows it. The
# compiled code depends on the environment's options (autoescape): the cache's file
# pattern names this environment, and must change with its options.
ENV = jinja2.Environment(
    loader=jinja2.ChoiceLoader([jinja2.PackageLoader("harness.report.render", "templates")]),
    autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
    undefined=jinja2.StrictUndefined,
    bytecode_cache=None if _CACHE is None else
    TemplateCache(_CACHE, "report-autoescape-strict-%s.cache"))


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


def against_zero(r: Record) -> bool:
    """Whether a record is a check against zero (|Δ| and atol only: relative undefined)."""
    return r.max_rel is None and r.max_abs is not None


def _rel_cell(r):
    """The ``<td>`` of a record's relative error: ``class="num rel"``, and for a check
    against zero ``data-against-zero="1"`` with the text "undefined (against 0)"."""
    zero = ' data-against-zero="1"' if against_zero(r) else ""
    return Markup(f'<td class="num rel"{zero}>{escape(_rel_text(r))}</td>')


def rel_value_cell(value: float | None, against_zero_: bool = False) -> Markup:
    """A relative-error ``<td>`` for a bare number (None: "—"; ``against_zero_``: the
    reference is exactly zero, so no relative error is shown)."""
    if against_zero_:
        return Markup('<td class="num rel" data-against-zero="1">undefined (against 0)</td>')
    return Markup(f'<td class="num rel">{escape(_fmt(value))}</td>')


ENV.filters["abs_text"] = _abs_text
ENV.filters["anchor"] = record_anchor
ENV.filters["rel_text"] = _rel_text
ENV.filters["rel_cell"] = _rel_cell
ENV.filters["rel_value_cell"] = rel_value_cell


@dataclass(frozen=True)
class StageView:
    """How the report shows one stage; the composition root builds one per stage, in report
    order, from the stage's own declaration (harness/stages/base.py ``Stage``), so that
    this module names no stage.

    ``judged``: False for a stage whose rows explain rather than judge (kept out of the
    ladder, the verdict and the record tables; its section shows them). ``plot_rows``:
    draw its rows' relative errors against their rtol. ``records_note``: a template shown
    above its record tables. ``row_tag(record)``: the run a row belongs to, as {"kind",
    "label"}, or None. ``template_dir``: the folder of the stage's own templates.
    ``section``: its section's template and context (None: it has no section here);
    ``title``: that section's heading in the contents list; ``before_ladder``: the section
    sits above the stage ladder; ``summary_template``: a banner that replaces the verdict's
    (a stage that judges by its own rule)."""

    name: str
    judged: bool = True
    plot_rows: bool = True
    records_note: str = ""
    row_tag: Callable[[Record], dict[str, str] | None] | None = None
    template_dir: Path | None = None
    section: tuple | None = None  # (template, context)
    title: str = ""
    before_ladder: bool = False
    summary_template: str = ""


def _add_template_dir(folder: Path | None) -> None:
    """Let the report's templates include a stage's own templates from ``folder``."""
    if folder is None:
        return
    loaders = ENV.loader.loaders
    if not any(getattr(x, "searchpath", None) == [str(folder)] for x in loaders):
        loaders.append(jinja2.FileSystemLoader(str(folder)))


def render(manifest: dict[str, Any], records: list[Record], title: str = "Engine parity report",
           arrays: dict[str, Any] | None = None, baseline: Diff | None = None, *,
           stages: Sequence[StageView], in_headline: Callable[[Record], bool],
           scripts: str = "file", progress: Callable[[str], None] | None = None,
           unverified: Sequence[str] = (), explained: bool | None = None,
           window: tuple[float, float] | None = None) -> str:
    """HTML of a bundle (``unverified``: the problems ``verify`` found in it; then it says
    the bundle does not verify, and never shows the pass banner). ``explained``: for a
    ``harness diagnose`` bundle, the diagnosis rule its exit code follows (None: the
    verdict's); ``window``: the replays' time span [s] (None: no replay); both for the
    banner (harness/report/banner.py). ``stages``: a
    ``StageView`` per stage in report order (their sections, notes and rules; this module
    names none); ``in_headline(record)``: whether a row counts in the headline worst
    error; ``scripts``: ``"file"`` (plotly.min.js beside the page, as in a bundle) or
    ``"inline"`` (a stand-alone file); ``progress(message)``: one line per stage
    plotted."""
    say = progress or (lambda msg: None)
    views = {v.name: v for v in stages}
    for v in stages:
        _add_template_dir(v.template_dir)
    explanatory = {v.name for v in stages if not v.judged}
    records = [r for r in records if r.stage not in explanatory]  # their own section
    stage_order = [v.name for v in stages]
    fixtures = [f["name"] for f in manifest["fixtures"]]
    engines = list(manifest["engines"])
    order = figures.engine_order(registry.engine_names(), engines)  # chart styles
    cols, rows = ladder(records, fixtures, engines, stage_order)
    fx_i = {f: i for i, f in enumerate(fixtures)}
    st_i = {st: i for i, st in enumerate(stage_order)}
    ordered = sorted(records, key=lambda r: (fx_i.get(r.fixture, len(fx_i)),
                                             st_i.get(r.stage, len(st_i))))
    ladder_matrix = matrix_table(ordered, engines, lambda r: (r.fixture, r.stage),
                                 ("fixture", "stage"), "quantity", "ladder")
    pair_attention = any(c and c["verdict"] in ATTENTION for row in rows for c in row["cells"])
    # the record rows a table cell links to (drawn in the page; the others on demand)
    linked = set(re.findall(r'href="#(rec-[^"]+)"', ladder_matrix))
    v = judge(records, in_headline)
    # unavailable engines are in a bundle only when the user allowed them (--allow-missing);
    # they are listed prominently but do not by themselves fail the verdict.
    by_stage = []
    present = [st for st in stage_order if any(r.stage == st for r in records)]
    for i, st in enumerate(present, 1):
        recs = [r for r in records if r.stage == st]
        if recs:
            say(f"report: stage {st} ({i}/{len(present)})")
            matrix = matrix_table(recs, engines, lambda r: (r.quantity,), ("quantity",),
                                  "fixture")
            by_stage.append({"name": st, "records_note": views[st].records_note,
                             "matrix": matrix,
                             "plot": stage_plot(recs, st, fixtures, order, engines)
                             if views[st].plot_rows else "",
                             "records": sorted(recs, key=lambda r: (
                                 VERDICT_ORDER.index(r.status), r.quantity, r.fixture, r.id))})
            linked.update(re.findall(r'href="#(rec-[^"]+)"', matrix))

    def row_tag(r: Record) -> dict[str, str] | None:
        view = views.get(r.stage)
        return view.row_tag(r) if view is not None and view.row_tag is not None else None

    for st in by_stage:  # passing rows nothing links to: drawn by the page when opened
        quiet = [r for r in st["records"] if r.status not in ATTENTION]
        st["attention"] = [r for r in st["records"] if r.status in ATTENTION]
        is_linked = [record_anchor(r.id) in linked for r in quiet]
        st["quiet"] = [r for r, k in zip(quiet, is_linked) if k]
        st["n_quiet"] = len(quiet)
        rest = [r for r, k in zip(quiet, is_linked) if not k]
        st["more"] = Markup(compact_records(rest, row_tag)) if rest else ""
        st["n_more"] = len(rest)
    sections = [{"name": sv.name, "template": sv.section[0], "context": sv.section[1],
                 "title": sv.title or sv.name, "before_ladder": sv.before_ladder,
                 "summary_template": sv.summary_template}
                for sv in stages if sv.section is not None and sv.section[1]]
    # a catalog fixture (source "fixture:NAME") is built from its spec, not read from a
    # file: the report names its change but suggests no `harness diagnose` for it
    changed = [{**f, "catalog": str(f["source"]).startswith("fixture:")}
               for f in manifest["fixtures"] if f["notes"]]
    toc = [("baseline", "Changes since baseline")] if baseline else []
    toc += [("summary", "Summary")]
    if changed:
        toc.append(("model-changes", "What the harness changed in the model"))
    toc += [(s["name"], s["title"]) for s in sections if s["before_ladder"]]
    toc.append(("ladder-section", "Stage ladder"))
    toc += [(f"stage-{st['name']}", f"Stage: {st['name']}") for st in by_stage]
    toc += [(s["name"], s["title"]) for s in sections if not s["before_ladder"]]
    toc += [("apis", "What each engine computed"), ("provenance", "Provenance")]

    html = ENV.get_template("report.html.j2").render(
        title=title, manifest=manifest, cols=cols, rows=rows, counts=v.counts,
        ladder_matrix=ladder_matrix, pair_attention=pair_attention,
        qualified=v.qualified and not unverified, headline=v.headline, n_scored=v.n_scored,
        unverified=list(unverified),
        stages=by_stage, fixtures=manifest["fixtures"], sections=sections,
        api_rows=api_rows(manifest["fixtures"]),
        baseline=baseline, toc=toc, changed=changed, row_tag=row_tag,
        growth=GROWTH, floor=FLOOR,
        short=SHORT,
        plot_css=figures.CSS, plot_scripts=figures.scripts(scripts),
        banner=banner_mod.for_bundle(manifest, records, v, unverified=unverified,
                                     explained=explained, window=window,
                                     last_stage=present[-1] if present else ""))
    return html


def is_diagnosis(manifest: dict[str, Any]) -> bool:
    """Whether a bundle is a diagnosis (its verdict follows the diagnosis rule): its
    ``kind`` says so (``harness diagnose`` or ``api.diagnose``), or, in a bundle written
    before the kind did, its command line."""
    cmd = list(manifest.get("command_line") or [])
    return str(manifest.get("kind", "")).split("+")[0] == "diagnose" or \
        cmd[1:2] == ["diagnose"]


def bundle_title_and_timings(bundle: Bundle) -> tuple[str, dict[str, Any] | None]:
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
    elif is_diagnosis(bundle.manifest) and bundle.manifest["fixtures"]:
        title = f"Why the engines disagree: {bundle.manifest['fixtures'][0]['source']}"
    return title, timings
