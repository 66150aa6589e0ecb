"""The replay section of the report: per case its charts (harness.core.figures: named
lines, legends and units on every axis; q(t) split by coordinate kind, rad or m) and
tables (run settings as key/value rows), computed from the bundle's arrays and records.
"""
from __future__ import annotations

import itertools
import re
from typing import Any

import numpy as np
from numpy.typing import NDArray

from harness.core import figures
from harness.core.conventions import JointSlot, Layout
from harness.core.records import Record, unit_of
from harness.core.tolerances import lookup
from harness.model import registry
from harness.stages.replay.cases import NAME, array_key
from harness.stages.replay.measures import (
    coordinate_errors,
    coordinate_labels,
    first_time,
    frame_errors,
    growth_rate,
    sample_errors,
    sweep_errors,
    window_length,
)
from harness.stages.replay.run import merge_timings

# ----- report data ---------------------------------------------------------------------------
RUN = re.compile(rf"^[^/]+/{NAME}/([^/]+)/")


def row_tag(r: Record) -> dict[str, str] | None:
    """The run a replay row belongs to, {"kind": "harness" | "native" | "convergence",
    "label": ...} (its id names the run), for the report's record tables; None if the id
    names none."""
    m = RUN.match(r.id)
    if not m:
        return None
    run = m.group(1)
    if run == "native":
        return {"kind": "native", "label": "native stepping (the engine's own integrator)"}
    if r.quantity == "convergence_order":
        return {"kind": "convergence", "label": f"convergence sweep {run}"}
    return {"kind": "harness", "label": f"harness integrator {run} (same for every engine)"}


def summary_line(scored: list[Record]) -> str:
    """The command line's replay line: the worst engine-pair trajectory error among
    ``scored`` rows [the state's units: rad, m, rad/s, m/s], or "" without such rows."""
    traj = [r for r in scored if r.stage == NAME and r.quantity == "trajectory"]
    if not traj:
        return ""
    w = max(traj, key=lambda r: r.max_abs)
    return (f"replay: worst engine-pair trajectory error {w.max_abs:.3e} "
            f"{unit_of(NAME, 'trajectory')} ({w.id})")


def report_context(manifest: dict[str, Any], records: list[Record],
                   arrays: dict[str, NDArray[Any]],
                   timings: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Per case: charts and tables for the report's replay_section.html.j2.
    ``timings``: the bundle's timings.json (wall times), if any."""
    if not manifest.get("replay"):
        return []
    cases = merge_timings(manifest.get("replay") or {}, timings).get("cases", {})
    out = []
    for name, info in cases.items():
        recs = [r for r in records if r.stage == NAME and r.id.startswith(f"{name}/{NAME}/")]
        try:
            ctx = _case_context(name, info, recs, arrays)
        except (KeyError, ValueError, IndexError) as e:
            ctx = {"name": name, "info": info, "plots": [], "pairs": [], "runs": {},
                   "refinement": "", "settings": {}, "error":
                   f"cannot draw this case from the bundle: {type(e).__name__}: {e}"}
        out.append(ctx)
    return out


_MAX_POINTS = 300  # per plotted line (a chart is 400-600 px wide): a light report


def _thin(n, *ys):
    """Indices of at most ~_MAX_POINTS samples of n (first and last kept; for each series
    in ``ys`` the minimum and maximum of every bucket kept, so extremes survive)."""
    if n <= _MAX_POINTS:
        return np.arange(n)
    edges = np.linspace(0, n, _MAX_POINTS // 2 + 1).astype(int)
    keep = {0, n - 1, *edges[:-1].tolist()}
    starts = edges[:-1][edges[1:] > edges[:-1]]  # the buckets that hold samples
    bucket = np.searchsorted(starts, np.arange(n), side="right") - 1
    rows = np.arange(n)[:, None]
    for y in ys:
        y = np.nan_to_num(np.asarray(y, dtype=float).reshape(n, -1), nan=0.0)
        for extreme in (np.minimum, np.maximum):  # each bucket's first extreme per column
            hit = y == extreme.reduceat(y, starts, axis=0)[bucket]
            keep.update(np.minimum.reduceat(np.where(hit, rows, n), starts, axis=0)
                        .ravel().tolist())
    return np.array(sorted(keep))


# settings of a run: units of the keys the replay stage writes
_UNITS = {"dt": "s", "effective_dt": "s", "rtol": "–", "atol": "–", "timestep": "s"}
_LABELS = {"dt": "step dt", "effective_dt": "effective step (the step taken)",
           "steps_per_interval": "steps per knot interval (fewest, most)",
           "order": "order of accuracy"}


def _value_text(v) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, (list, tuple)):
        return ", ".join(_value_text(x) for x in v)
    if isinstance(v, dict):
        return "; ".join(f"{k} {_value_text(x)}" for k, x in v.items())
    return str(v)


def settings_table(settings: dict, refined: dict | None = None) -> list:
    """Rows [(setting, unit, value, refined value)] of a run's settings dicts (the
    manifest's raw form), for a readable key/value table; unit '' where none applies."""
    refined = refined or {}
    rows = []
    for k in list(dict.fromkeys([*settings, *refined])):
        base = k.removeprefix("reference ")
        label = _LABELS.get(base, base.replace("_", " "))
        unit = _UNITS.get(base, "")
        rows.append((label if base == k else f"reference {label}", unit,
                     _value_text(settings[k]) if k in settings else "—",
                     _value_text(refined[k]) if k in refined else "—"))
    return rows


def _coordinate_groups(layout, nq):
    """[(kind title, unit, [(name, column or (cos column, sin column))])] of the q columns:
    angles [rad] (revolute; continuous joints as θ = atan2(sin, cos)), lengths [m]
    (prismatic, a free root's position) and quaternions [–] (a free root's orientation,
    ball joints)."""
    if layout is None or layout.nq != nq:
        return [("coordinates", "rad or m", [(f"q{j}", j) for j in range(nq)])]
    ang, lin, quat, other = [], [], [], []
    for sl in layout.slots:
        if sl.type == "revolute":
            ang.append((sl.name, sl.iq))
        elif sl.type == "continuous":
            ang.append((f"{sl.name} (θ)", (sl.iq, sl.iq + 1)))
        elif sl.type == "prismatic":
            lin.append((sl.name, sl.iq))
        elif sl.type == "free":
            lin += [(f"{sl.name} {c}", sl.iq + i) for i, c in enumerate("xyz")]
            quat += [(f"{sl.name} q{c}", sl.iq + 3 + i) for i, c in enumerate("xyzw")]
        elif sl.type == "ball":
            quat += [(f"{sl.name} q{c}", sl.iq + i) for i, c in enumerate("xyzw")]
        else:  # a kind this report does not know: its coordinates, unit unknown
            other += [(f"{sl.name} q[{i}]", sl.iq + i) for i in range(sl.nq)]
    return [g for g in (("joint angles", "rad", ang), ("positions", "m", lin),
                        ("orientation quaternions (free root, ball joints)", "–", quat),
                        ("other coordinates", "rad or m", other)) if g[2]]


def _column(X, col):
    if isinstance(col, tuple):
        return np.unwrap(np.arctan2(X[:, col[1]], X[:, col[0]]))
    return X[:, col]


def _case_context(name, info, recs, arrays):
    t = arrays[array_key(name, "t")]
    ctx = {"name": name, "info": info, "plots": [], "pairs": [], "error": "",
           "runs": info.get("runs", {}), "refinement": _refinement_chart(name, recs),
           "settings": _run_settings(info.get("runs", {}))}
    if info["mode"] == "convergence":
        ctx["plots"] = _convergence_charts(name, info, arrays)
        return ctx
    runs = [r for r, v in info["runs"].items() if v["kind"] == "harness"]
    have = [e for e in info["engines"] if runs and array_key(name, runs[0], e, "x") in arrays]
    if not have:
        return ctx
    run = runs[0]
    trel = t - t[0]
    tol = lookup(NAME, "trajectory")
    pairs = list(itertools.combinations(have, 2))
    nv = arrays[array_key(name, "in", "v0")].size
    X = {e: arrays[array_key(name, run, e, "x")] for e in have}
    nq = X[have[0]].shape[1] - nv
    layout = _layout_from_info(info)
    e0 = have[0]
    sel = _thin(t.size, X[e0][:, :nq])
    charts = []
    for kind, unit, cols in _coordinate_groups(layout, nq):
        fig = figures.Figure(f"q(t), {kind} ({e0}; the other engines overlap it)",
                             "time t − t0", "s", kind, unit, height=340, digits=5)
        for i, (lab, col) in enumerate(cols):
            fig.line(trel[sel], _column(X[e0], col)[sel], lab, color_=figures.color(i),
                     dash=(None, "dash", "dot")[(i // 10) % 3])
        charts.append(fig)
    errs = {(a_, b_): sample_errors(X[a_], X[b_], tol)[0] for a_, b_ in pairs}
    sel = _thin(t.size, *errs.values()) if errs else sel
    if pairs:
        fig = figures.Figure("pointwise error max|x_a − x_b| over the state", "time t − t0",
                             "s", "error", "rad, m, rad/s or m/s", ylog=True, height=340,
                             digits=4)  # a log axis: 4 digits draw it exactly
        order = figures.engine_order(registry.engine_names(), have)
        for (a_, b_), err in errs.items():
            colour, _, dash = figures.pair_style(a_, b_, order)
            fig.line(trel[sel], err[sel], f"{a_}~{b_}", color_=colour, dash=dash)
        fig.hline(tol.atol, f"agreement band atol {tol.atol:g}")
        for n in sorted({window_length(arrays, name, run, e) for e in have}):
            if n < t.size:
                fig.vline(trel[n], "predictability window ends")
        charts.append(fig)
    E = arrays[array_key(name, run, e0, "energy")]
    W = arrays[array_key(name, run, e0, "work")]
    res = np.abs(E - E[0] - W[:, 0] + W[:, 1]).max()
    sel = _thin(t.size, E, W)
    fig = figures.Figure(f"energy balance ({e0}; max residual {res:.1e} J)", "time t − t0",
                         "s", "energy", "J", height=340)
    fig.line(trel[sel], (E - E[0])[sel], "E − E0", color_=figures.color(0))
    fig.line(trel[sel], (W[:, 0] - W[:, 1])[sel], "∫τᵀv − ∫vᵀDv (work in − dissipated)",
             color_=figures.color(1), dash="dash")
    fig.line(trel[sel], -W[sel, 1], "−∫vᵀDv (dissipated)", color_=figures.color(2),
             dash="dot")
    charts.append(fig)
    ctx["plots"] = [figures.grid(charts, min_width=560)]
    frame_names = info.get("frames", [])
    markers = [m["name"] for m in info["candidate"]["markers"]]
    for a_, b_ in pairs:
        xa, xb = X[a_], X[b_]
        err, bound = sample_errors(xa, xb, tol)
        lam, used = growth_rate(t, err)
        hz = np.nonzero(err > bound)[0]
        row = {"pair": f"{a_}~{b_}", "max": float(err.max()),
               "horizon": float(trel[hz[0]]) if hz.size else None,
               "growth": lam, "items": []}
        if layout is not None and layout.nq == nq:
            ce = coordinate_errors(layout, xa, xb)
            for j, lab in enumerate(coordinate_labels(layout)):
                row["items"].append((lab, float(ce[:, j].max()),
                                     first_time(trel, ce[:, j], tol.atol)))
        dp, ang = frame_errors(arrays[array_key(name, run, a_, "frames")],
                               arrays[array_key(name, run, b_, "frames")])
        for j in range(dp.shape[1]):
            fname = frame_names[j] if j < len(frame_names) else f"frame {j}"
            row["items"].append((f"frame {fname} position [m]", float(dp[:, j].max()),
                                 first_time(trel, dp[:, j], tol.atol)))
            row["items"].append((f"frame {fname} rotation [rad]", float(ang[:, j].max()),
                                 first_time(trel, ang[:, j], tol.atol)))
        dm = np.linalg.norm(arrays[array_key(name, run, a_, "markers")] -
                            arrays[array_key(name, run, b_, "markers")], axis=-1)
        for j in range(dm.shape[1]):
            lab = markers[j] if j < len(markers) else f"marker {j}"
            row["items"].append((f"marker {lab} [m]", float(dm[:, j].max()),
                                 first_time(trel, dm[:, j], tol.atol)))
        ctx["pairs"].append(row)
    return ctx


def _run_settings(runs: dict) -> dict:
    """{run or "run engine": settings_table rows} of every run (native: per engine;
    convergence: its base settings, then the reference with "reference" before each key)."""
    out = {}
    for run, r in runs.items():
        if r.get("kind") == "native":
            for e, n in r.get("engines", {}).items():
                out[f"{run} {e}"] = settings_table(n.get("settings", {}), n.get("refined"))
        elif r.get("kind") == "harness":
            out[run] = settings_table(r.get("settings", {}), r.get("refined"))
        else:
            ref = {f"reference {k}": v for k, v in (r.get("reference") or {}).items()}
            out[run] = settings_table({**r.get("settings", {}), **ref})
    return out


def _refinement_chart(name, recs) -> str:
    """How far each engine's runs moved when refined: harness-integrator runs (filled
    circles) and native stepping (open squares), with the refinement gate."""
    rows = [r for r in recs if r.quantity == "refinement" and r.max_rel is not None]
    if not rows:
        return ""
    kinds = {}
    for r in rows:
        run = r.id.split("/")[2]
        kinds.setdefault(run, []).append(r)
    engines = list(dict.fromkeys(r.engine_a for r in rows))
    fig = figures.Figure(f"{name}: change when refined, harness integrator vs native stepping",
                         "engine", None, "max relative change", figures.DIMENSIONLESS,
                         ylog=True, categories=engines, height=320)
    for i, (run, rs) in enumerate(kinds.items()):
        native = run == "native"
        label = "native stepping (engine's own)" if native else f"harness integrator {run}"
        t = fig.points([r.engine_a for r in rs], [r.max_rel for r in rs], label,
                       symbol_="square-open" if native else "circle",
                       color_="#b35c00" if native else figures.color(0), size=10,
                       hover=[f"{r.engine_a}: {r.max_rel:.3g} — {r.reason}" for r in rs])
        t["offsetgroup"] = run
    for tol in sorted({r.rtol for r in rows if r.rtol is not None}):
        fig.hline(tol, f"refinement gate rtol {tol:g}")
    spec = fig.spec()
    spec["layout"]["scattermode"] = "group"
    return figures.plot_div(spec)


def _layout_from_info(info):
    slots = tuple(JointSlot(n, ty, iq, nq, iv, nv) for n, ty, iq, nq, iv, nv in
                  info.get("layout", []))
    if not slots:
        return None
    return Layout(slots, sum(s.nq for s in slots), sum(s.nv for s in slots))


def _convergence_charts(name, info, arrays) -> list:
    """Four charts of a convergence sweep: state error, energy drift and momentum drift
    against the step h, and the speed–accuracy trade (error against wall time); log-log,
    one line per run and engine."""
    specs = (("state error max|x − x_ref| against the step", "step h", "s", "error",
              "rad, m, rad/s or m/s"),
             ("energy drift max|E − E0| against the step", "step h", "s", "drift", "J"),
             ("momentum drift max|L − L0| against the step", "step h", "s", "drift",
              "kg·m²/s"),
             ("speed–accuracy: state error against wall time", "wall time", "s", "error",
              "rad, m, rad/s or m/s"))
    figs = [figures.Figure(title, xl, xu, yl, yu, xlog=True, ylog=True, height=430,
                           legend="below") for title, xl, xu, yl, yu in specs]
    runs = [r for r, v in info["runs"].items() if v["kind"] == "convergence"]
    order = figures.engine_order(registry.engine_names(), info["engines"])
    for run in runs:
        for e in info["engines"]:
            pre = array_key(name, "conv", e, run)
            if pre + "/h" not in arrays:
                continue
            err = sweep_errors(arrays, pre, array_key(name, "conv", e, "x_ref"))
            # the engine's own colour; the run (integrator) its dash
            lab, c = f"{run} {e}", figures.engine_style(e, order)[0]
            dash = figures.PAIR_DASHES[runs.index(run) % len(figures.PAIR_DASHES)]
            wall = info["runs"][run].get("wall_s", {}).get(e)
            if wall is not None:
                figs[3].line(wall, err, lab, color_=c, markers=True, dash=dash)
            if run == "dop853":
                continue  # no step: its tolerance sweep is on the speed-accuracy axes
            h = arrays[pre + "/h"]
            E = arrays[pre + "/energy"]
            figs[0].line(h, err, lab, color_=c, markers=True, dash=dash)
            figs[1].line(h, np.abs(E - E[:, :1]).max(axis=1), lab, color_=c, markers=True,
                         dash=dash)
            if pre + "/momentum" in arrays:
                L = arrays[pre + "/momentum"]
                figs[2].line(h, np.linalg.norm(L - L[:, :1], axis=-1).max(axis=1), lab,
                             color_=c, markers=True, dash=dash)
    figs = [f for f in figs if f.traces]
    return [figures.grid(figs, min_width=560)] if figs else []
