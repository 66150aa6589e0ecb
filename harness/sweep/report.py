"""Sweep output: a folder with ``sweep.json`` and ``index.html``, written atomically.

Dimension legend: C cases; X, Y the distinct values of the two heat-map axes.

``sweep.json`` (schema SWEEP_SCHEMA_VERSION, validated strictly by ``read_sweep``):
kind "sweep", name, harness version, git commit, versions (Python and packages), the
grid (C cases as given, the axes with their distinct values), per-case rows (case_id,
status ok|error|crashed|timeout, inputs, metrics, reason, wall_s, attempts), counts,
expected outcomes (case_id → status, e.g. the deliberate crash case), unexpected
case_ids, backend (name, workers, scheduler, timeout_s, ...), timing (started, wall_s,
cases_per_s), heat-map settings, command line, and ``scoring`` (null for a sweep module
without verdicts): the scoring module, its ``method()`` (engine, law statement,
integrator, metric definitions with their tolerance entries, the qualified domain), one
verdict per case (passed | failed | outside | not_scored, with its checks or why it is
outside), counts, the failed case_ids and the worst scored value per metric.

Verdicts are computed from the stored inputs and metrics by the sweep module's
``score(inputs, metrics)`` against harness/core/tolerances.py, never read back: the
report (a first render or ``harness report DIR``) recomputes them and says so where
sweep.json's stored verdicts differ.

``index.html`` (Jinja2, autoescaped, template ``sweep.html.j2``; interactive plotly charts
drawn from JSON descriptions by the ``plotly.min.js`` written beside it, nothing fetched
from a network): counts; a metric with the same value in every finished case is one line
of text ("metric = value for every finished case"); every other numeric metric gets a
heat map over the two chosen axes with the other axes aggregated (the aggregation is
stated: by default the maximum over them, the worst case for error-like metrics) and,
when the grid varies the step ``dt_s``, a chart of the metric against dt (log axis) with
one line per value of the other heat-map axis; a cell that holds a crashed, error or
timeout case carries a red ×n; then the list of every case that did not finish ok, with
its inputs and reason; with verdicts, the method, the qualified domain, the verdict
counts, the worst value per metric against its bound, and every failed case with the
checks it failed (cells holding failed cases carry an orange !n).
"""
from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, TextIO

from harness.core import figures
from harness.core.errors import BadInput
from harness.core.io import (
    OutputKind,
    claims_output,
    write_bytes_atomic,
    write_folder_atomic,
    write_text_atomic,
)
from harness.core.tolerances import TABLE_VERSION
from harness.core.version import __version__
from harness.evidence.bundle import git_commit
from harness.model import registry
from harness.report import banner
from harness.sweep.executor import (
    DEFAULT_TIMEOUT_S,
    STATUSES,
    ProgressPrinter,
    SweepResult,
    _sort_key,
    run_sweep,
    to_json_bytes,
    validate_cases,
    versions,
)

SWEEP_SCHEMA_VERSION = 2  # 2: ``scoring`` (verdicts); version 1 is read as scoring null
AGGREGATES = {"max": max, "min": min, "mean": lambda xs: sum(xs) / len(xs)}
AGGREGATE_TEXT = {"max": "maximum (worst case for error-like metrics)",
                  "min": "minimum", "mean": "mean"}
SWEEP_KEYS = {"schema_version", "kind", "name", "harness_version", "git_commit", "versions",
              "grid", "cases", "counts", "expected", "unexpected", "backend", "timing",
              "heatmap", "command_line", "scoring"}
ROW_KEYS = {"case_id", "status", "inputs", "metrics", "reason", "wall_s", "attempts"}
SCORING_KEYS = {"module", "method", "verdicts", "counts", "failed", "worst"}
VERDICTS = ("passed", "failed", "outside", "not_scored")
# sweep modules whose score() a sweep.json may name (re-rendering imports it)
SCORING_MODULES = ("harness.sweep.contact",)


def grid_axes(cases: Iterable[dict[str, Any]]) -> dict[str, list[Any]]:
    """{input: sorted distinct values} for every input key except case_id."""
    keys = []
    for c in cases:
        for k in c:
            if k != "case_id" and k not in keys:
                keys.append(k)
    return {k: sorted({c.get(k) for c in cases if c.get(k) is not None}, key=_sort_value)
            for k in keys}


def _sort_value(v):
    return (0, v, "") if isinstance(v, (int, float)) and not isinstance(v, bool) else \
        (1, 0, str(v))


def choose_axes(axes: dict[str, list[Any]], x: str | None = None,
                y: str | None = None) -> tuple[str | None, str | None]:
    """(x, y) heat-map axes: the given names, else speed_mps × angle_deg when present,
    else the two varied inputs with the most distinct values."""
    varied = [k for k, vals in axes.items() if len(vals) > 1]
    for name, what in ((x, "x"), (y, "y")):
        if name is not None and name not in axes:
            raise BadInput("--axes", f"{what} axis {name!r} is not an input of the grid "
                                                    f"(inputs: {', '.join(axes)})")
    if x is None or y is None:
        pref = [k for k in ("speed_mps", "angle_deg") if k in varied]
        rest = sorted((k for k in varied if k not in pref), key=lambda k: -len(axes[k]))
        order = [k for k in pref + rest if k not in (x, y)]
        if x is None:
            x = order.pop(0) if order else None
        if y is None:
            y = order.pop(0) if order else None
    return x, y


def meets(expected: str, status: str) -> bool:
    """Whether a case's status is its expected outcome: an expected crash is met by a
    crash, whatever way it came (signal, abort, exit code, or an exception of an
    isolated case, all ``crashed``); otherwise the status itself."""
    return status == expected


def scoring_module(name: str) -> ModuleType:
    """The sweep module that judges a sweep (one of SCORING_MODULES; BadInput for any
    other name): ``method()`` (engine, law, integrator and the criteria), ``criteria()``
    (metric definitions and bounds, qualified domain, tolerance-table version: what
    ``score`` uses) and ``score(inputs, metrics)`` (one case's verdict)."""
    if name not in SCORING_MODULES:
        raise BadInput("sweep.json", f"scoring module {name!r} is not one of "
                                     f"{', '.join(SCORING_MODULES)}")
    return registry.named_module(name)


def score_rows(scorer: ModuleType, rows: list[dict[str, Any]],
               expected: dict[int | str, str]) -> dict[str, Any]:
    """Verdicts of the rows (recomputed from inputs and metrics): {verdicts, counts, failed,
    worst}. A case with an expected outcome or one that did not finish ok is not_scored
    (its status decides); the others get ``scorer.score``. worst: per metric checked
    against a bound (kind "bound"), the value closest to (or furthest past) it among
    cases inside the domain, as {case_id, value, bound, ratio = |value| / bound}."""
    verdicts, worst = [], {}
    for r in rows:
        cid = r["case_id"]
        if cid in expected or r["status"] != "ok":
            why = (f"expected {expected[cid]}" if cid in expected else
                   f"status {r['status']}")
            verdicts.append({"case_id": cid, "verdict": "not_scored", "outside": [],
                             "checks": [], "note": why})
            continue
        v = scorer.score(dict(r["inputs"]), dict(r["metrics"]))
        verdicts.append({"case_id": cid, "verdict": v["verdict"], "outside": v["outside"],
                         "checks": v["checks"], "note": ""})
        for c in v["checks"]:
            val, bound = c["value"], c["bound"]
            if c.get("kind") != "bound" or isinstance(val, bool) or \
                    not isinstance(val, (int, float)) or not isinstance(bound, (int, float)):
                continue
            ratio = abs(val) / bound if bound > 0 else (0.0 if val == 0 else math.inf)
            w = worst.get(c["metric"])
            if w is None or ratio > w["ratio"]:
                worst[c["metric"]] = {"case_id": cid, "value": val, "bound": bound,
                                      "ratio": ratio}
    for w in worst.values():  # JSON has no inf: a value past a zero bound
        w["ratio"] = w["ratio"] if math.isfinite(w["ratio"]) else None
    counts = {k: sum(v["verdict"] == k for v in verdicts) for k in VERDICTS}
    return {"verdicts": verdicts, "counts": counts,
            "failed": [v["case_id"] for v in verdicts if v["verdict"] == "failed"],
            "worst": worst}


def scoring_section(scorer: ModuleType, rows: list[dict[str, Any]],
                    expected: dict[int | str, str]) -> dict[str, Any]:
    """doc["scoring"] of a run judged by ``scorer`` (a module of SCORING_MODULES)."""
    return {"module": scorer.__name__, "method": scorer.method(),
            **score_rows(scorer, rows, expected)}


def rescore(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The scoring section recomputed from ``doc``'s stored metrics with the scorer it
    names and this harness's tolerance table (None for a sweep without verdicts), plus
    ``differs``: case_ids whose stored verdict is not the recomputed one, and
    ``table_version``. Its method keeps the run's engine, law and integrator and the
    table version of the run; metrics and domain are this harness's (what the verdicts
    were recomputed with)."""
    sc = doc.get("scoring")
    if not sc:
        return None
    scorer = scoring_module(sc["module"])
    expected = {e["case_id"]: e["status"] for e in doc["expected"]}
    run = sc["method"] if isinstance(sc["method"], dict) else {}
    now = scorer.criteria()
    method = {"engine": run.get("engine", "?"), "law": run.get("law", "?"),
              "integrator": run.get("integrator", "?"),
              "tolerance_table_version": run.get("tolerance_table_version", "?"),
              "metrics": now["metrics"], "domain": now["domain"]}
    fresh = {"module": sc["module"], "method": method,
             **score_rows(scorer, doc["cases"], expected)}
    stored = {v.get("case_id"): v.get("verdict") for v in sc.get("verdicts", [])
              if isinstance(v, dict)}
    fresh["differs"] = [v["case_id"] for v in fresh["verdicts"]
                        if stored.get(v["case_id"]) != v["verdict"]]
    fresh["table_version"] = TABLE_VERSION
    return fresh


def build_document(name: str, cases: list[dict[str, Any]], result: SweepResult,
                   expected: dict[int | str, str] | None = None, x: str | None = None,
                   y: str | None = None, aggregate: str = "max",
                   command_line: Sequence[str] | None = None,
                   scorer: ModuleType | None = None) -> dict[str, Any]:
    """The sweep.json content. expected: {case_id: status} outcomes known in advance (e.g.
    the deliberate crash case); a case whose status does not meet it is listed in
    ``unexpected``, as is every other case that did not finish ok. scorer: the sweep
    module judging the finished cases (``scoring``), or None."""
    if aggregate not in AGGREGATES:
        raise BadInput("aggregate", f"unknown aggregation {aggregate!r} (known: "
                                    f"{', '.join(AGGREGATES)})")
    expected = {cid: st for cid, st in (expected or {}).items()}
    # axes of the grid proper: an added case with a known outcome (the crash case) is
    # listed, and marked on the map only where it lies on the grid's values
    axes = grid_axes([c for c in cases if c["case_id"] not in expected] or cases)
    hx, hy = choose_axes(axes, x, y)
    unexpected = [r["case_id"] for r in result.rows
                  if not meets(expected.get(r["case_id"], "ok"), r["status"])]
    wall = result.wall_s
    return {
        "schema_version": SWEEP_SCHEMA_VERSION,
        "kind": "sweep",
        "name": name,
        "harness_version": __version__,
        "git_commit": git_commit(),
        "versions": versions(),
        "grid": {"n_cases": len(cases), "axes": axes,
                 "cases": sorted(cases, key=lambda c: _sort_key(c["case_id"]))},
        "cases": result.rows,
        "counts": result.counts(),
        "expected": [{"case_id": cid, "status": st} for cid, st in
                     sorted(expected.items(), key=lambda kv: _sort_key(kv[0]))],
        "unexpected": unexpected,
        "backend": dict(result.backend),
        "timing": {"started": result.started, "wall_s": wall,
                   "cases_per_s": len(result.rows) / wall if wall > 0 else None},
        "heatmap": {"x": hx, "y": hy, "aggregate": aggregate,
                    "over": [k for k in axes if k not in (hx, hy)]},
        "command_line": list(command_line if command_line is not None else sys.argv),
        "scoring": (scoring_section(scorer, json.loads(to_json_bytes(result.rows)), expected)
                    if scorer is not None else None),
    }


def metric_names(doc: dict[str, Any]) -> list[str]:
    names = []
    for r in doc["cases"]:
        if r["status"] == "ok":
            for k, v in r["metrics"].items():
                if (isinstance(v, (int, float)) and not isinstance(v, bool)
                        and k not in names):
                    names.append(k)
    return names


def heatmap_cells(doc: dict[str, Any], metric: str | None,
                  verdict_of: dict[int | str, str] | None = None
                  ) -> dict[tuple[Any, Any], dict[str, Any]]:
    """{(x value, y value): {"value": aggregate or None, "value_inside": the aggregate over
    the cases inside the qualified domain or None, "n_ok", "n_bad", "n", "n_failed",
    "n_outside"}}; verdict_of: {case_id: verdict} (recomputed) for the verdict counts and
    the domain (without it every case counts as inside)."""
    hm = doc["heatmap"]
    agg = AGGREGATES[hm["aggregate"]]
    verdict_of = verdict_of or {}
    cells: dict = {}
    for r in doc["cases"]:
        key = (r["inputs"].get(hm["x"]), r["inputs"].get(hm["y"]))
        c = cells.setdefault(key, {"vals": [], "inside": [], "n_bad": 0, "n": 0,
                                   "n_failed": 0, "n_outside": 0})
        c["n"] += 1
        c["n_failed"] += verdict_of.get(r["case_id"]) == "failed"
        out = verdict_of.get(r["case_id"]) == "outside"
        c["n_outside"] += out
        if r["status"] != "ok":
            c["n_bad"] += 1
        elif metric is not None:
            v = r["metrics"].get(metric)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                c["vals"].append(float(v))
                if not out:
                    c["inside"].append(float(v))
    return {k: {"value": agg(c["vals"]) if c["vals"] else None,
                "value_inside": agg(c["inside"]) if c["inside"] else None,
                "n_ok": len(c["vals"]), "n_bad": c["n_bad"], "n": c["n"],
                "n_failed": c["n_failed"], "n_outside": c["n_outside"]}
            for k, c in cells.items()}


# units of grid inputs and metrics named with a unit suffix (the harness's naming rule)
_SUFFIX_UNITS = (("_radps", "rad/s"), ("_mps2", "m/s²"), ("_mps", "m/s"), ("_deg", "deg"),
                 ("_rad", "rad"), ("_Nm", "N·m"), ("_Ns", "N·s"), ("_N", "N"), ("_J", "J"),
                 ("_rel", "–"), ("_m", "m"), ("_s", "s"))
_DIMENSIONLESS_NAMES = {"mu", "count", "steps"}


def unit_of_name(name: str, declared: dict[str, str] | None = None) -> str:
    """The unit of an input or metric: ``declared`` {name: unit} first (a sweep module's
    metric definitions; "1" is dimensionless), else its name's suffix (``speed_mps`` m/s,
    ``angle_deg`` deg, ``*_rel`` dimensionless ...), else "unit not stated"."""
    u = (declared or {}).get(name)
    if u:
        return figures.DIMENSIONLESS if u in ("1", "bool") else u
    for suffix, unit in _SUFFIX_UNITS:
        if name.endswith(suffix):
            return unit
    if name in _DIMENSIONLESS_NAMES or name.endswith(("_count", "_steps")):
        return figures.DIMENSIONLESS
    return "unit not stated"


def step_axis(doc: dict[str, Any]) -> str | None:
    """The grid input that is the integrator's step (``dt_s`` or a name ending in ``dt``),
    when it is varied; None otherwise."""
    for k, vals in doc["grid"]["axes"].items():
        if (k == "dt_s" or k.endswith("dt")) and len(vals) > 1:
            return k
    return None


def metric_values(doc: dict[str, Any], metric: str) -> list[float]:
    """The metric's numeric values over the cases that finished ok."""
    return [float(r["metrics"][metric]) for r in doc["cases"] if r["status"] == "ok"
            and isinstance(r["metrics"].get(metric), (int, float))
            and not isinstance(r["metrics"].get(metric), bool)]


def constant_value(doc: dict[str, Any], metric: str) -> float | None:
    """The metric's value when every finished case has the same one, else None."""
    vals = metric_values(doc, metric)
    return vals[0] if vals and all(v == vals[0] for v in vals) else None


def _wants_log(vals) -> bool:
    """A log axis for non-negative values whose positive ones span over two decades."""
    pos = [v for v in vals if v > 0]
    return bool(pos) and all(v >= 0 for v in vals) and max(pos) > 100 * min(pos)


def heatmap_figure(doc: dict[str, Any], metric: str | None,
                   verdict_of: dict[int | str, str] | None = None,
                   units: dict[str, str] | None = None) -> figures.Figure:
    """The heat map of one metric over the two chosen inputs (the other inputs aggregated,
    the aggregation in the colour bar's title), as a figures.Figure; with ``metric`` None,
    the verdict map (colour: failed cases per cell; text: passed ✓ / failed ✗ / outside
    counts). A cell holding cases that crashed, raised or timed out carries a red ×n; one
    holding cases that failed their bounds an orange !n."""
    hm = doc["heatmap"]
    axes = doc["grid"]["axes"]
    xs = axes.get(hm["x"], [None]) if hm["x"] else [None]
    ys = axes.get(hm["y"], [None]) if hm["y"] else [None]
    cells = heatmap_cells(doc, metric, verdict_of)
    xl, yl = [_fmt(v) for v in xs], [_fmt(v) for v in ys]
    over = ", ".join(hm["over"]) or "nothing"
    Z = [[None] * len(xs) for _ in ys]
    grey: list[list[Any]] = [[None] * len(xs) for _ in ys]  # cells wholly outside the domain
    for (xv, yv), c in cells.items():
        if xv in xs and yv in ys:
            i, j = ys.index(yv), xs.index(xv)
            # a metric's colour is its aggregate over the cases inside the qualified
            # domain; a cell with none inside is grey (its value in the hover)
            Z[i][j] = c["n_failed"] if metric is None else c["value_inside"]
            if metric is not None and c["value_inside"] is None and c["value"] is not None:
                grey[i][j] = c["value"]
    if metric is None:
        title, bar = f"verdicts per cell (over {over})", "failed cases"
    else:  # the metric named once, in the title; the colour bar gives the unit
        title = f"{metric}, {hm['aggregate']} over {over}"
        bar = f"[{unit_of_name(metric, units)}]"
    fig = figures.Figure(title, str(hm["x"]), unit_of_name(str(hm["x"])), str(hm["y"]),
                         unit_of_name(str(hm["y"])), categories=xl, legend="below",
                         height=max(300, 150 + 34 * len(ys)))
    fig.yaxis.update(type="category", categoryorder="array", categoryarray=yl)
    finite = [v for row in Z for v in row if v is not None]
    log = metric is not None and bool(finite) and min(finite) > 0 and \
        max(finite) > 100 * min(finite)
    fig.heatmap(Z, xl, yl, bar, log=log)
    tr = fig.traces[-1]
    if any(v is not None for row in grey for v in row):
        _grey_cells(fig, grey, xl, yl)
    if metric is None:
        tr["colorscale"] = [[0, "#f7f7f7"], [1, "#e66100"]]
        tr["zmin"], tr["zmax"] = 0, max([1] + finite)
        tr["colorbar"]["dtick"] = 1
        text = [["" for _ in xs] for _ in ys]
        for (xv, yv), c in cells.items():
            if xv in xs and yv in ys:
                n_pass = c["n"] - c["n_failed"] - c["n_outside"] - c["n_bad"]
                bad = f"<br>{c['n_bad']} not ok" if c["n_bad"] else ""
                text[ys.index(yv)][xs.index(xv)] = \
                    f"{n_pass}✓ {c['n_failed']}✗<br>{c['n_outside']} out{bad}"
        tr["text"], tr["texttemplate"] = text, "%{text}"
        tr["textfont"] = {"size": 10}
    marks = {"×": ([], [], []), "!": ([], [], [])}
    for (xv, yv), c in cells.items():
        if xv not in xs or yv not in ys:
            continue
        if c["n_bad"] and metric is not None:
            m = marks["×"]
            m[0].append(_fmt(xv)), m[1].append(_fmt(yv)), m[2].append(f"×{c['n_bad']}")
        if c["n_failed"] and metric is not None:
            m = marks["!"]
            m[0].append(_fmt(xv)), m[1].append(_fmt(yv)), m[2].append(f"!{c['n_failed']}")
    for sym, name, colour in (("×", "crashed, raised or timed out (count)", "#d00000"),
                              ("!", "failed their bounds (count)", "#e66100")):
        x_, y_, t_ = marks[sym]
        if x_:
            fig.traces.append({"type": "scatter", "mode": "text", "x": x_, "y": y_,
                               "text": t_, "name": name, "hoverinfo": "text+name",
                               "textfont": {"color": colour, "size": 14}})
    return fig


def _grey_cells(fig: figures.Figure, grey: list[list[Any]], xl: list[str],
                yl: list[str]) -> None:
    """A grey layer over the heat-map cells whose cases are all outside the qualified
    domain (their aggregate in the hover, "outside" written on them): no colour of the
    scale, so no value outside the domain reads as a qualified one."""
    fig.traces.append({
        "type": "heatmap", "x": xl, "y": yl, "name": "outside the qualified domain",
        "z": [[None if v is None else 1 for v in row] for row in grey],
        "colorscale": [[0, "#c8c8c8"], [1, "#c8c8c8"]], "showscale": False,
        "hoverongaps": False, "texttemplate": "%{text}", "textfont": {"size": 10},
        "text": [["" if v is None else "outside" for v in row] for row in grey],
        "customdata": [[None if v is None else f"{v:.4g}" for v in row] for row in grey],
        "hovertemplate": "%{x}, %{y}: outside the qualified domain (value %{customdata})"
                         "<extra></extra>"})


def step_figure(doc: dict[str, Any], metric: str, step: str, line_by: str | None,
                units: dict[str, str] | None = None) -> figures.Figure:
    """The metric against the step input (log x), one line per value of ``line_by``, the
    other inputs aggregated as in the heat maps."""
    agg = AGGREGATES[doc["heatmap"]["aggregate"]]
    groups: dict = {}
    for r in doc["cases"]:
        v = r["metrics"].get(metric) if r["status"] == "ok" else None
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            continue
        key = r["inputs"].get(line_by) if line_by else None
        groups.setdefault(key, {}).setdefault(r["inputs"].get(step), []).append(float(v))
    unit = unit_of_name(metric, units)
    others = [k for k in doc["grid"]["axes"] if k not in (step, line_by)]
    fig = figures.Figure(f"{metric} against {step}", step, unit_of_name(step), metric, unit,
                         xlog=True, ylog=_wants_log(metric_values(doc, metric)),
                         legend="below", height=340)
    fig.xaxis["exponentformat"] = "power"
    for c, key in enumerate(sorted(groups, key=_sort_value)):
        pts = sorted((dt, agg(vs)) for dt, vs in groups[key].items()
                     if isinstance(dt, (int, float)))
        name = f"{line_by} = {_fmt(key)}" if line_by else metric
        fig.line([p[0] for p in pts], [p[1] for p in pts], name, markers=True,
                 color_=figures.color(c),
                 hover=[f"{step} = {p[0]:g}: {p[1]:.4g} ({doc['heatmap']['aggregate']} "
                        f"over {', '.join(others) or 'nothing'})" for p in pts])
    return fig


def depends_on_step(doc: dict[str, Any], metric: str, step: str,
                    line_by: str | None) -> bool:
    """Whether the metric, aggregated as in ``step_figure``, changes with the step for
    some value of ``line_by`` (a closed-form reference does not: no chart for it)."""
    fig = step_figure(doc, metric, step, line_by)
    return any(len({v for v in t["y"] if v is not None}) > 1 for t in fig.traces)


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _num(v) -> str:
    """A checked value or bound in three significant digits (a float), else as is."""
    return f"{v:.3g}" if isinstance(v, float) else str(v)


def render_html(doc: dict[str, Any], mode: str = "file") -> str:
    """The sweep's index.html (``mode``: "file" loads plotly.min.js beside it, "inline"
    embeds it for a stand-alone file)."""
    import jinja2
    from markupsafe import Markup

    env = jinja2.Environment(loader=jinja2.PackageLoader("harness.report.render", "templates"),
                             autoescape=jinja2.select_autoescape(default=True,
                                                                 default_for_string=True))
    metrics = metric_names(doc)
    scoring = rescore(doc)  # recomputed from the stored metrics, never read back
    verdict_of = {v["case_id"]: v["verdict"] for v in scoring["verdicts"]} if scoring else {}
    units = {m["name"]: m["unit"] for m in scoring["method"]["metrics"]} if scoring else {}
    constant = []
    varying = []
    for m in metrics:
        v = constant_value(doc, m)
        if v is None:
            varying.append(m)
        else:
            u = unit_of_name(m, units)
            constant.append({"metric": m, "value": f"{v:.6g}",
                             "unit": "" if u == figures.DIMENSIONLESS else u,
                             "n": len(metric_values(doc, m))})
    maps = []
    if doc["heatmap"]["x"] is not None:
        if scoring:
            maps.append(heatmap_figure(doc, None, verdict_of))
        maps += [heatmap_figure(doc, m, verdict_of, units) for m in varying]
    step = step_axis(doc)
    hm = doc["heatmap"]
    line_by = None
    if step is not None:
        line_by = next((k for k in (hm["x"], hm["y"]) if k and k != step), None)
    on_step = [m for m in varying if depends_on_step(doc, m, step, line_by)] if step else []
    steps = [step_figure(doc, m, step, line_by, units) for m in on_step]
    expected = {e["case_id"]: e["status"] for e in doc["expected"]}
    bad = [dict(r, expected=expected.get(r["case_id"], "ok")) for r in doc["cases"]
           if r["status"] != "ok" or r["case_id"] in expected]
    rows = {r["case_id"]: r for r in doc["cases"]}
    failed = [dict(v, inputs=rows[v["case_id"]]["inputs"]) for v in scoring["verdicts"]
              if v["verdict"] == "failed"] if scoring else []
    outside = _outside_summary(scoring) if scoring else []
    verdict = sweep_verdict(doc, scoring)  # the exit code's rule (run_named_sweep)
    return env.get_template("sweep.html.j2").render(
        doc=doc, maps=Markup(figures.grid(maps, 440)), n_maps=len(maps), bad=bad,
        metrics=metrics, constant=constant, step=step, line_by=line_by,
        steps=Markup(figures.grid(steps, 440)), n_steps=len(steps),
        step_free=[m for m in varying if m not in on_step], scoring=scoring,
        failed=failed, outside=outside, verdict=verdict, num=_num,
        banner=banner.for_sweep(doc, verdict, scoring, units),
        aggregate_text=AGGREGATE_TEXT[doc["heatmap"]["aggregate"]],
        statuses=STATUSES, css=Markup(figures.CSS), scripts=Markup(figures.scripts(mode)))


def sweep_verdict(doc: dict[str, Any],
                  scoring: dict[str, Any] | None = None) -> dict[str, Any]:
    """{passed, text}: the sweep's verdict from its statuses and (recomputed) verdicts;
    passed iff every case finished as expected and no scored case failed."""
    n_unexp = len(doc["unexpected"])
    n_failed = len(scoring["failed"]) if scoring else 0
    parts = []
    if n_unexp:
        parts.append(f"{n_unexp} case(s) did not finish as expected")
    if n_failed:
        parts.append(f"{n_failed} case(s) failed their bounds")
    if parts:
        return {"passed": False, "text": "; ".join(parts)}
    if scoring:
        c = scoring["counts"]
        return {"passed": True, "text": f"every case finished as expected; {c['passed']} "
                                        f"passed their bounds, {c['outside']} outside the "
                                        "qualified domain"}
    return {"passed": True, "text": "every case finished as expected (no verdicts: this sweep "
                                    "has no bounds)"}


def _outside_summary(scoring) -> list:
    """[(reason kind, count, example)] of the cases outside the domain."""
    kinds: dict = {}
    for v in scoring["verdicts"]:
        if v["verdict"] == "outside" and v["outside"]:
            key = re.sub(r"[-+0-9.e]+", "#", v["outside"][0]).split(";")[0]
            k = kinds.setdefault(key, [0, v["outside"][0], v["case_id"]])
            k[0] += 1
    return [(n, ex, cid) for n, ex, cid in kinds.values()]


def write_sweep(out: str | Path, doc: dict[str, Any]) -> Path:
    """Write sweep.json, index.html and the plotly.min.js it loads as folder ``out``
    atomically (harness/core/io.py)."""
    blob = to_json_bytes(doc)
    html = render_html(doc).encode()
    return write_folder_atomic(Path(out), {"sweep.json": blob, "index.html": html,
                                           figures.ASSET: figures.plotly_asset()}, OUTPUT)


def rerender(folder: str | Path, out: str | Path | None = None) -> Path:
    """Re-render a sweep folder's index.html (and the plotly.min.js beside it), or the
    stand-alone HTML file ``out`` (plotly.js embedded), from its sweep.json, validated
    strictly first; written atomically (temp file + rename)."""
    doc = read_sweep(folder)
    if out:
        return write_text_atomic(Path(out), render_html(doc, "inline"))
    write_bytes_atomic(Path(folder) / figures.ASSET, figures.plotly_js())
    return write_text_atomic(Path(folder) / "index.html", render_html(doc))


def read_sweep(path: str | Path) -> dict[str, Any]:
    """sweep.json of a sweep folder, validated strictly (unknown or missing fields are
    errors)."""
    p = Path(path)
    f = p / "sweep.json" if p.is_dir() else p
    try:
        doc = json.loads(f.read_text())
    except OSError as e:
        raise BadInput(str(f), e.strerror or str(e))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise BadInput(str(f), f"not valid JSON ({e})")
    version = doc.get("schema_version") if isinstance(doc, dict) else None
    keys = SWEEP_KEYS - {"scoring"} if version == 1 and type(version) is int else SWEEP_KEYS
    if not isinstance(doc, dict) or set(doc) != keys:
        got = set(doc) if isinstance(doc, dict) else set()
        raise BadInput(str(f), f"unknown fields {sorted(got - keys)}, missing "
                               f"{sorted(keys - got)}")
    if type(version) is not int or version not in (1, SWEEP_SCHEMA_VERSION) \
            or doc["kind"] != "sweep":
        raise BadInput(str(f), f"schema version {doc['schema_version']!r}, this harness reads "
                               f"1 and {SWEEP_SCHEMA_VERSION}")
    if version == 1:  # written before verdicts: none to show
        doc["scoring"] = None
    for r in doc["cases"]:
        if not isinstance(r, dict) or set(r) != ROW_KEYS or r["status"] not in STATUSES:
            raise BadInput(str(f), f"case row {str(r)[:60]!r} has unknown or missing fields")
    sc = doc["scoring"]
    if sc is not None:
        if not isinstance(sc, dict) or set(sc) != SCORING_KEYS:
            got = set(sc) if isinstance(sc, dict) else set()
            raise BadInput(str(f), f"scoring has unknown fields {sorted(got - SCORING_KEYS)}, "
                                   f"missing {sorted(SCORING_KEYS - got)}")
        if sc["module"] not in SCORING_MODULES or not isinstance(sc["verdicts"], list):
            raise BadInput(str(f), f"scoring module {sc['module']!r} is not one of "
                                   f"{', '.join(SCORING_MODULES)}")
    return doc


# what a sweep folder may hold (the output-folder rule, harness/core/io.py)
OUTPUT = OutputKind("a sweep", "sweep.json", read_sweep,
                    frozenset({"sweep.json", "index.html", figures.ASSET}))


# ----- the command's core (harness sweep NAME) -------------------------------------------
@claims_output(OUTPUT)  # the --out rule checked and the folder locked before anything runs
def run_named_sweep(name: str, grid: Callable[..., Sequence[dict[str, Any]]],
                    run_case: Callable[[dict[str, Any]], dict[str, Any]],
                    crash_case: Callable[[], dict[str, Any]] | None = None, *,
                    out: str | Path, backend: str | None = "local",
                    workers: int | None = None, scheduler: str | None = None,
                    quick: bool = False, quiet: bool = False, include_crash: bool = False,
                    timeout_s: float | None = None, axes: Sequence[str] | None = None,
                    aggregate: str = "max", command_line: Sequence[str] | None = None,
                    stream: TextIO | None = None, stdout: TextIO | None = None,
                    scorer: ModuleType | None = None) -> tuple[int, Path, dict[str, Any]]:
    """Run the sweep ``name`` (C cases from ``grid(quick)``; with ``include_crash`` plus
    ``crash_case()``, expected to crash, run isolated: a fresh process, and an exception
    out of it counts as the crash) and write the sweep folder ``out`` atomically.
    Returns (exit code, path, document). Exit code: 0 every case finished as expected
    (ok, or crashed where a crash was expected) and no case inside the qualified domain
    failed its bounds; 1 any case crashed, raised, timed out unexpectedly, an expected
    crash did not happen, or a scored case failed. Bad input raises BadInput before
    anything runs (exit 2 in the CLI); nothing is written then. axes: (x, y) inputs of the
    heat maps (default: speed_mps × angle_deg, else the two most varied inputs);
    aggregate: max | min | mean over the other inputs; scorer: the sweep module whose
    ``method()`` and ``score()`` judge the finished cases (one of SCORING_MODULES), or
    None for a sweep without bounds."""
    if scheduler is not None:
        if backend not in (None, "dask"):
            raise BadInput("--scheduler", "connects to a Dask scheduler; it needs --backend "
                                          "dask (or no --backend)")
        backend = "dask"
    backend = backend or "local"
    if scorer is not None:
        scoring_module(scorer.__name__)  # one that a re-render may import
    cases = validate_cases(grid(quick=quick), where=f"sweep {name}: grid()")
    expected = {}
    if include_crash:
        if crash_case is None:
            raise BadInput("--include-crash", f"sweep {name} has no crash case")
        (crash,) = validate_cases([crash_case()], where=f"sweep {name}: crash_case()")
        if any(c["case_id"] == crash["case_id"] for c in cases):
            raise BadInput(f"sweep {name}: crash_case()", f"case_id {crash['case_id']!r} is "
                                                          "also in the grid")
        cases.append(crash)
        expected[crash["case_id"]] = "crashed"
    if aggregate not in AGGREGATES:
        raise BadInput("--aggregate", f"unknown aggregation {aggregate!r} (known: "
                                      f"{', '.join(AGGREGATES)})")
    if axes and (len(axes) != 2 or axes[0] == axes[1]):
        raise BadInput("--axes", f"needs two different inputs X,Y, got {','.join(axes)!r}")
    x, y = axes if axes else (None, None)
    choose_axes(grid_axes([c for c in cases if c["case_id"] not in expected]), x, y)
    progress = None if quiet else ProgressPrinter(stream, label=f"sweep {name}")
    result = run_sweep(run_case, cases, backend=backend, workers=workers,
                       scheduler=scheduler, progress=progress,
                       timeout_s=DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s,
                       isolate=[cid for cid, st in expected.items() if st == "crashed"])
    doc = build_document(name, cases, result, expected, x=x, y=y, aggregate=aggregate,
                         command_line=command_line, scorer=scorer)
    path = write_sweep(out, doc)
    say = (stdout or sys.stdout).write
    c = doc["counts"]
    b = doc["backend"]
    n, s = b["workers"], "" if b["workers"] == 1 else "s"
    ran = (f"backend local ({n} process{'es' if s else ''})" if b["name"] == "local" else
           f"Dask {b['scheduler'] and 'scheduler ' + b['scheduler'] or 'LocalCluster'} "
           f"({n} worker{s})")
    say(f"sweep {name}: {len(doc['cases'])} cases on {ran} in {result.wall_s:.1f} s: "
        f"{c['ok']} ok, "
        f"{c['crashed']} crashed, {c['error']} errors, {c['timeout']} timeouts; "
        f"{len(doc['unexpected'])} unexpected\n")
    rows = result.by_id()
    for cid in doc["unexpected"][:20]:
        r = rows[cid]
        say(f"  {r['status'].upper():8s} case {cid} "
            f"({', '.join(f'{k}={v}' for k, v in r['inputs'].items())}): "
            f"{r['reason'] or 'expected ' + expected.get(cid, 'ok')}\n")
    if len(doc["unexpected"]) > 20:
        say(f"  ... and {len(doc['unexpected']) - 20} more (see sweep.json)\n")
    for cid, st in expected.items():
        r = rows[cid]
        if meets(st, r["status"]):
            say(f"  expected {st}: case {cid}: {r['reason']}\n")
    sc = doc["scoring"]
    if sc is not None:
        n = sc["counts"]
        say(f"verdicts against harness/core/tolerances.py (table "
            f"{sc['method'].get('tolerance_table_version')}): {n['passed']} passed, "
            f"{n['failed']} failed, {n['outside']} outside the qualified domain, "
            f"{n['not_scored']} not scored\n")
        for metric, w in sc["worst"].items():
            say(f"  worst {metric}: {w['value']:.3g} (bound {w['bound']:.3g}) in case "
                f"{w['case_id']}\n")
        verdicts = {v["case_id"]: v for v in sc["verdicts"]}
        for cid in sc["failed"][:20]:
            bad = [c for c in verdicts[cid]["checks"] if not c["passed"]]
            say(f"  FAILED   case {cid}: " + "; ".join(
                f"{c['metric']} = {_num(c['value'])} (bound {_num(c['bound'])}, "
                f"{c['tolerance'] or 'a requirement'})" for c in bad) + "\n")
        if len(sc["failed"]) > 20:
            say(f"  ... and {len(sc['failed']) - 20} more failed (see sweep.json)\n")
    say(f"report: {Path(path) / 'index.html'}\n")
    return (0 if sweep_verdict(doc, sc)["passed"] else 1), path, doc
