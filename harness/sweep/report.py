"""Sweep output: a folder with ``sweep.json`` and ``index.html``, written atomically.

Dimension legend: C cases; X, Y the distinct values of the two heat-map axes.

``sweep.json`` (schema SWEEP_SCHEMA_VERSION, validated strictly by ``read_sweep``):
kind "sweep", name, harness version, git commit, versions (Python and packages), the
grid (C cases as given, the axes with their distinct values), per-case rows (case_id,
status ok|error|crashed|timeout, inputs, metrics, reason, wall_s, attempts), counts,
expected outcomes (case_id → status, e.g. the deliberate crash case), unexpected
case_ids, backend (name, workers, scheduler, timeout_s, ...), timing (started, wall_s,
cases_per_s), heat-map settings, command line.

``index.html`` (Jinja2, autoescaped, template ``sweep.html.j2``; inline SVG, no scripts,
no network): counts, for every numeric metric a heat map over the two chosen axes with
the other axes aggregated (the aggregation is stated: by default the maximum over them,
the worst case for error-like metrics); a cell that holds a crashed, error or timeout
case is hatched and carries a red × with the count; then the list of every case that did
not finish ok, with its inputs and reason.
"""
from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

from harness.core.errors import BadInput
from harness.core.io import check_output_folder
from harness.core.version import __version__
from harness.sweep.executor import STATUSES, SweepResult, _sort_key, to_json_bytes, versions

SWEEP_SCHEMA_VERSION = 1
AGGREGATES = {"max": max, "min": min, "mean": lambda xs: sum(xs) / len(xs)}
AGGREGATE_TEXT = {"max": "maximum (worst case for error-like metrics)",
                  "min": "minimum", "mean": "mean"}
SWEEP_KEYS = {"schema_version", "kind", "name", "harness_version", "git_commit", "versions",
              "grid", "cases", "counts", "expected", "unexpected", "backend", "timing",
              "heatmap", "command_line"}
ROW_KEYS = {"case_id", "status", "inputs", "metrics", "reason", "wall_s", "attempts"}


def check_out_dir(out) -> Path:
    """BadInput unless ``out`` is absent, empty, or an earlier sweep folder."""
    return check_output_folder(out, "sweep.json", "a sweep")


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


def build_document(name: str, cases: list, result: SweepResult, expected: dict | None = None,
                   x=None, y=None, aggregate: str = "max",
                   command_line: list | None = None) -> dict:
    """The sweep.json content. expected: {case_id: status} outcomes known in advance (e.g.
    the deliberate crash case); a case whose status differs is listed in ``unexpected``,
    as is every other case that did not finish ok."""
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
                  if r["status"] != expected.get(r["case_id"], "ok")]
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


def heatmap_cells(doc, metric: str) -> dict:
    """{(x value, y value): {"value": aggregate or None, "n_ok", "n_bad", "n"}}."""
    hm = doc["heatmap"]
    agg = AGGREGATES[hm["aggregate"]]
    cells: dict = {}
    for r in doc["cases"]:
        key = (r["inputs"].get(hm["x"]), r["inputs"].get(hm["y"]))
        c = cells.setdefault(key, {"vals": [], "n_bad": 0, "n": 0})
        c["n"] += 1
        if r["status"] != "ok":
            c["n_bad"] += 1
        else:
            v = r["metrics"].get(metric)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                c["vals"].append(float(v))
    return {k: {"value": agg(c["vals"]) if c["vals"] else None, "n_ok": len(c["vals"]),
                "n_bad": c["n_bad"], "n": c["n"]} for k, c in cells.items()}


def heatmap_svg(doc, metric: str) -> str:
    """Inline SVG heat map of one metric (deterministic serialisation, no metadata)."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "harness"
    import matplotlib.pyplot as plt
    import numpy as np

    hm = doc["heatmap"]
    axes = doc["grid"]["axes"]
    xs = axes.get(hm["x"], [None]) if hm["x"] else [None]
    ys = axes.get(hm["y"], [None]) if hm["y"] else [None]
    cells = heatmap_cells(doc, metric)
    Z = np.full((len(ys), len(xs)), np.nan)
    for (xv, yv), c in cells.items():
        if xv in xs and yv in ys and c["value"] is not None:
            Z[ys.index(yv), xs.index(xv)] = c["value"]
    fig, ax = plt.subplots(figsize=(min(9.0, 1.6 + 0.55 * len(xs)),
                                    min(6.5, 1.4 + 0.38 * len(ys))))
    try:
        cmap = matplotlib.colormaps["viridis"].with_extremes(bad="#d9d9d9")
        finite = Z[np.isfinite(Z)]
        im = ax.imshow(np.ma.masked_invalid(Z), origin="lower", aspect="auto", cmap=cmap,
                       vmin=finite.min() if finite.size else 0.0,
                       vmax=finite.max() if finite.size else 1.0)
        cb = fig.colorbar(im, ax=ax)
        cb.ax.tick_params(labelsize=7)
        cb.set_label(f"{metric} ({hm['aggregate']} over {', '.join(hm['over']) or 'nothing'})",
                     fontsize=7)
        for (xv, yv), c in cells.items():
            if c["n_bad"] and xv in xs and yv in ys:
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
        ax.set_title(metric, fontsize=9)
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


def render_html(doc) -> str:
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("harness.report.render", "templates"),
                             autoescape=jinja2.select_autoescape(default=True,
                                                                 default_for_string=True))
    metrics = metric_names(doc)
    maps = [{"metric": m, "svg": heatmap_svg(doc, m)} for m in metrics] \
        if doc["heatmap"]["x"] is not None else []
    expected = {e["case_id"]: e["status"] for e in doc["expected"]}
    bad = [dict(r, expected=expected.get(r["case_id"], "ok")) for r in doc["cases"]
           if r["status"] != "ok" or r["case_id"] in expected]
    return env.get_template("sweep.html.j2").render(
        doc=doc, maps=maps, bad=bad, metrics=metrics,
        aggregate_text=AGGREGATE_TEXT[doc["heatmap"]["aggregate"]],
        statuses=STATUSES, markup=_markup)


def _markup(svg: str):
    """An SVG made here by matplotlib (text in it is escaped by matplotlib)."""
    from markupsafe import Markup

    return Markup(svg)


def write_sweep(out, doc) -> Path:
    """Write sweep.json and index.html as folder ``out`` atomically (evidence.py)."""
    from harness.core.io import write_folder_atomic

    blob = to_json_bytes(doc)
    html = render_html(doc).encode()
    return write_folder_atomic(Path(out), {"sweep.json": blob, "index.html": html})


def rerender(folder, out=None) -> Path:
    """Re-render a sweep folder's index.html (or the HTML file ``out``) from its
    sweep.json, validated strictly first; written atomically (temp file + rename)."""
    import os

    doc = read_sweep(folder)
    target = Path(out) if out else Path(folder) / "index.html"
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
    try:
        tmp.write_text(render_html(doc))
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()
    return target


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
    if not isinstance(doc, dict) or set(doc) != SWEEP_KEYS:
        got = set(doc) if isinstance(doc, dict) else set()
        raise BadInput(str(f), f"unknown fields {sorted(got - SWEEP_KEYS)}, missing "
                               f"{sorted(SWEEP_KEYS - got)}")
    if doc["schema_version"] != SWEEP_SCHEMA_VERSION or doc["kind"] != "sweep":
        raise BadInput(str(f), f"schema version {doc['schema_version']!r}, this harness reads "
                               f"{SWEEP_SCHEMA_VERSION}")
    for r in doc["cases"]:
        if not isinstance(r, dict) or set(r) != ROW_KEYS or r["status"] not in STATUSES:
            raise BadInput(str(f), f"case row {str(r)[:60]!r} has unknown or missing fields")
    return doc


# ----- the command's core (harness sweep NAME) -------------------------------------------
def run_named_sweep(name: str, grid, run_case, crash_case=None, *, out, backend="local",
                    workers=None, scheduler=None, quick=False, quiet=False,
                    include_crash=False, timeout_s=None, axes=None, aggregate="max",
                    command_line=None, stream=None, stdout=None) -> tuple:
    """Run the sweep ``name`` (C cases from ``grid(quick)``; with ``include_crash`` plus
    ``crash_case()``, expected to crash) and write the sweep folder ``out`` atomically.
    Returns (exit code, path, document). Exit code: 0 every case finished as expected
    (ok, or crashed where a crash was expected); 1 any case crashed, raised, timed out
    unexpectedly, or an expected crash did not happen. Bad input raises BadInput before
    anything runs (exit 2 in the CLI); nothing is written then. axes: (x, y) inputs of the
    heat maps (default: speed_mps × angle_deg, else the two most varied inputs);
    aggregate: max | min | mean over the other inputs."""
    from harness.sweep.executor import DEFAULT_TIMEOUT_S, ProgressPrinter, run_sweep, validate_cases

    out = check_out_dir(out)
    if scheduler is not None:
        if backend not in (None, "dask"):
            raise BadInput("--scheduler", "connects to a Dask scheduler; it needs --backend "
                                          "dask (or no --backend)")
        backend = "dask"
    backend = backend or "local"
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
                       timeout_s=DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s)
    doc = build_document(name, cases, result, expected, x=x, y=y, aggregate=aggregate,
                         command_line=command_line)
    path = write_sweep(out, doc)
    say = (stdout or sys.stdout).write
    c = doc["counts"]
    say(f"sweep {name}: {len(doc['cases'])} cases on {doc['backend']['name']} "
        f"({doc['backend']['workers']} workers) in {result.wall_s:.1f} s: {c['ok']} ok, "
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
        if r["status"] == st:
            say(f"  expected {st}: case {cid}: {r['reason']}\n")
    say(f"report: {Path(path) / 'index.html'}\n")
    return (1 if doc["unexpected"] else 0), path, doc
