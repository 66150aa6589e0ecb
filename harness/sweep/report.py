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

``index.html`` (Jinja2, autoescaped, template ``sweep.html.j2``; inline SVG, no scripts,
no network): counts, for every numeric metric a heat map over the two chosen axes with
the other axes aggregated (the aggregation is stated: by default the maximum over them,
the worst case for error-like metrics); a cell that holds a crashed, error or timeout
case is hatched and carries a red × with the count; then the list of every case that did
not finish ok, with its inputs and reason; with verdicts, the method, the qualified
domain, the verdict counts, the worst value per metric against its bound, and every failed
case with the checks it failed (cells holding failed cases carry an orange !n).
"""
from __future__ import annotations

import io
import json
import math
import re
import sys
from pathlib import Path

from harness.core.errors import BadInput
from harness.core.io import OutputKind, claims_output, write_folder_atomic, write_text_atomic
from harness.core.version import __version__
from harness.sweep.executor import STATUSES, SweepResult, _sort_key, to_json_bytes, versions

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


def grid_axes(cases) -> dict:
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


def choose_axes(axes: dict, x=None, y=None) -> tuple:
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


def scoring_module(name: str):
    """The sweep module that judges a sweep (one of SCORING_MODULES; BadInput for any
    other name): ``method()`` (engine, law, integrator and the criteria), ``criteria()``
    (metric definitions and bounds, qualified domain, tolerance-table version: what
    ``score`` uses) and ``score(inputs, metrics)`` (one case's verdict)."""
    import importlib

    if name not in SCORING_MODULES:
        raise BadInput("sweep.json", f"scoring module {name!r} is not one of "
                                     f"{', '.join(SCORING_MODULES)}")
    return importlib.import_module(name)


def score_rows(scorer, rows: list, expected: dict) -> dict:
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


def scoring_section(scorer, rows: list, expected: dict) -> dict:
    """doc["scoring"] of a run judged by ``scorer`` (a module of SCORING_MODULES)."""
    return {"module": scorer.__name__, "method": scorer.method(),
            **score_rows(scorer, rows, expected)}


def rescore(doc) -> dict | None:
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
    from harness.core.tolerances import TABLE_VERSION

    fresh["table_version"] = TABLE_VERSION
    return fresh


def build_document(name: str, cases: list, result: SweepResult, expected: dict | None = None,
                   x=None, y=None, aggregate: str = "max",
                   command_line: list | None = None, scorer=None) -> dict:
    """The sweep.json content. expected: {case_id: status} outcomes known in advance (e.g.
    the deliberate crash case); a case whose status does not meet it is listed in
    ``unexpected``, as is every other case that did not finish ok. scorer: the sweep
    module judging the finished cases (``scoring``), or None."""
    from harness.evidence.bundle import git_commit

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


def metric_names(doc) -> list:
    names = []
    for r in doc["cases"]:
        if r["status"] == "ok":
            for k, v in r["metrics"].items():
                if (isinstance(v, (int, float)) and not isinstance(v, bool)
                        and k not in names):
                    names.append(k)
    return names


def heatmap_cells(doc, metric: str, verdict_of: dict | None = None) -> dict:
    """{(x value, y value): {"value": aggregate or None, "n_ok", "n_bad", "n", "n_failed",
    "n_outside"}}; verdict_of: {case_id: verdict} (recomputed) for the verdict counts."""
    hm = doc["heatmap"]
    agg = AGGREGATES[hm["aggregate"]]
    verdict_of = verdict_of or {}
    cells: dict = {}
    for r in doc["cases"]:
        key = (r["inputs"].get(hm["x"]), r["inputs"].get(hm["y"]))
        c = cells.setdefault(key, {"vals": [], "n_bad": 0, "n": 0, "n_failed": 0,
                                   "n_outside": 0})
        c["n"] += 1
        c["n_failed"] += verdict_of.get(r["case_id"]) == "failed"
        c["n_outside"] += verdict_of.get(r["case_id"]) == "outside"
        if r["status"] != "ok":
            c["n_bad"] += 1
        elif metric is not None:
            v = r["metrics"].get(metric)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                c["vals"].append(float(v))
    return {k: {"value": agg(c["vals"]) if c["vals"] else None, "n_ok": len(c["vals"]),
                "n_bad": c["n_bad"], "n": c["n"], "n_failed": c["n_failed"],
                "n_outside": c["n_outside"]} for k, c in cells.items()}


def heatmap_svg(doc, metric: str | None, verdict_of: dict | None = None) -> str:
    """Inline SVG heat map of one metric (deterministic serialisation, no metadata); with
    ``metric`` None, the verdict map: each cell's colour is its number of failed cases and
    its text the passed / failed / outside counts."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "harness"
    import matplotlib.pyplot as plt
    import numpy as np

    hm = doc["heatmap"]
    axes = doc["grid"]["axes"]
    xs = axes.get(hm["x"], [None]) if hm["x"] else [None]
    ys = axes.get(hm["y"], [None]) if hm["y"] else [None]
    cells = heatmap_cells(doc, metric, verdict_of)
    Z = np.full((len(ys), len(xs)), np.nan)
    for (xv, yv), c in cells.items():
        if xv in xs and yv in ys and metric is None:
            Z[ys.index(yv), xs.index(xv)] = c["n_failed"]
        elif xv in xs and yv in ys and c["value"] is not None:
            Z[ys.index(yv), xs.index(xv)] = c["value"]
    fig, ax = plt.subplots(figsize=(min(9.0, 1.6 + 0.55 * len(xs)),
                                    min(6.5, 1.4 + 0.38 * len(ys))))
    try:
        cmap = matplotlib.colormaps["Oranges" if metric is None else "viridis"].with_extremes(
            bad="#d9d9d9")
        finite = Z[np.isfinite(Z)]
        im = ax.imshow(np.ma.masked_invalid(Z), origin="lower", aspect="auto", cmap=cmap,
                       vmin=0.0 if metric is None or not finite.size else finite.min(),
                       vmax=(1.0 if not finite.size else
                             max(finite.max(), 1.0) if metric is None else finite.max()))
        cb = fig.colorbar(im, ax=ax)
        cb.ax.tick_params(labelsize=7)
        cb.set_label(f"failed cases (over {', '.join(hm['over']) or 'nothing'})"
                     if metric is None else
                     f"{metric} ({hm['aggregate']} over {', '.join(hm['over']) or 'nothing'})",
                     fontsize=7)
        for (xv, yv), c in cells.items():
            if xv not in xs or yv not in ys:
                continue
            i, j = xs.index(xv), ys.index(yv)
            if metric is None:
                n_pass = c["n"] - c["n_failed"] - c["n_outside"] - c["n_bad"]
                bad = f"\n{c['n_bad']} not ok" if c["n_bad"] else ""
                ax.text(i, j, f"{n_pass}✓ {c['n_failed']}✗\n{c['n_outside']} out{bad}",
                        ha="center", va="center", fontsize=6,
                        color="red" if c["n_bad"] else "black")
            elif c["n_failed"]:
                ax.add_patch(matplotlib.patches.Rectangle(
                    (i - 0.5, j - 0.5), 1, 1, fill=False, edgecolor="#e66100", lw=2.0))
                ax.text(i, j + 0.3, f"!{c['n_failed']}", color="#e66100", ha="center",
                        va="center", fontsize=7, fontweight="bold")
        for (xv, yv), c in cells.items():
            if c["n_bad"] and xv in xs and yv in ys and metric is not None:
                i, j = xs.index(xv), ys.index(yv)
                ax.add_patch(matplotlib.patches.Rectangle(
                    (i - 0.5, j - 0.5), 1, 1, fill=False, hatch="///", edgecolor="red",
                    lw=1.2))
                ax.text(i, j, f"×{c['n_bad']}", color="red", ha="center", va="center",
                        fontsize=8, fontweight="bold",
                        bbox={"facecolor": "white", "edgecolor": "red", "pad": 1.5})
        ax.set_xticks(range(len(xs)))
        ax.set_xticklabels([_fmt(v) for v in xs], rotation=45, ha="right", fontsize=7)
        ax.set_yticks(range(len(ys)))
        ax.set_yticklabels([_fmt(v) for v in ys], fontsize=7)
        ax.set_xlabel(str(hm["x"]), fontsize=8)
        ax.set_ylabel(str(hm["y"]), fontsize=8)
        ax.set_title("verdicts" if metric is None else metric, fontsize=9)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    finally:
        plt.close(fig)
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]
    return re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _num(v) -> str:
    """A checked value or bound in three significant digits (a float), else as is."""
    return f"{v:.3g}" if isinstance(v, float) else str(v)


def render_html(doc) -> str:
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("harness.report.render", "templates"),
                             autoescape=jinja2.select_autoescape(default=True,
                                                                 default_for_string=True))
    metrics = metric_names(doc)
    scoring = rescore(doc)  # recomputed from the stored metrics, never read back
    verdict_of = {v["case_id"]: v["verdict"] for v in scoring["verdicts"]} if scoring else {}
    maps = [{"metric": m, "svg": heatmap_svg(doc, m, verdict_of)} for m in metrics] \
        if doc["heatmap"]["x"] is not None else []
    if scoring and maps:
        maps.insert(0, {"metric": "verdicts", "svg": heatmap_svg(doc, None, verdict_of)})
    expected = {e["case_id"]: e["status"] for e in doc["expected"]}
    bad = [dict(r, expected=expected.get(r["case_id"], "ok")) for r in doc["cases"]
           if r["status"] != "ok" or r["case_id"] in expected]
    rows = {r["case_id"]: r for r in doc["cases"]}
    failed = [dict(v, inputs=rows[v["case_id"]]["inputs"]) for v in scoring["verdicts"]
              if v["verdict"] == "failed"] if scoring else []
    outside = _outside_summary(scoring) if scoring else []
    return env.get_template("sweep.html.j2").render(
        doc=doc, maps=maps, bad=bad, metrics=metrics, scoring=scoring, failed=failed,
        outside=outside, verdict=sweep_verdict(doc, scoring), num=_num,
        aggregate_text=AGGREGATE_TEXT[doc["heatmap"]["aggregate"]],
        statuses=STATUSES, markup=_markup)


def sweep_verdict(doc, scoring=None) -> dict:
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


def _markup(svg: str):
    """An SVG made here by matplotlib (text in it is escaped by matplotlib)."""
    from markupsafe import Markup

    return Markup(svg)


def write_sweep(out, doc) -> Path:
    """Write sweep.json and index.html as folder ``out`` atomically (harness/core/io.py)."""
    blob = to_json_bytes(doc)
    html = render_html(doc).encode()
    return write_folder_atomic(Path(out), {"sweep.json": blob, "index.html": html}, OUTPUT)


def rerender(folder, out=None) -> Path:
    """Re-render a sweep folder's index.html (or the HTML file ``out``) from its
    sweep.json, validated strictly first; written atomically (temp file + rename)."""
    doc = read_sweep(folder)
    target = Path(out) if out else Path(folder) / "index.html"
    return write_text_atomic(target, render_html(doc))


def read_sweep(path) -> dict:
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
OUTPUT = OutputKind("a sweep", "sweep.json", read_sweep, frozenset({"sweep.json", "index.html"}))


# ----- the command's core (harness sweep NAME) -------------------------------------------
@claims_output(OUTPUT)  # the --out rule checked and the folder locked before anything runs
def run_named_sweep(name: str, grid, run_case, crash_case=None, *, out, backend="local",
                    workers=None, scheduler=None, quick=False, quiet=False,
                    include_crash=False, timeout_s=None, axes=None, aggregate="max",
                    command_line=None, stream=None, stdout=None, scorer=None) -> tuple:
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
    from harness.sweep.executor import DEFAULT_TIMEOUT_S, ProgressPrinter, run_sweep, validate_cases

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
    failed = sc["failed"] if sc is not None else []
    return (1 if doc["unexpected"] or failed else 0), path, doc
