"""The contact part of a parity run and its report section (engine-blind).

Dimension legend: S elements of an analytic quantity (each a sample of its record);
N samples of a plotted series.

``run`` (called by ``harness parity --stages contact`` after the stage runner) adds, for
every contact fixture in the run and every engine:

* records (stage ``contact``, engine_a ``analytic``) of each analytic fixture of
  harness/stages/contact/cases.py against its closed form, on that engine's M, forward
  dynamics and kinematics — arrays ``out/FIXTURE/contact/CASE.QTY/{analytic,ENGINE}``,
  so ``harness verify`` recomputes them; the saltation check (FD vs Φ⁺ Ξ Φ⁻) on the first
  engine;
* explanatory arrays (no verdicts): ``contact/native/json`` (native rows with their law
  statements, harness/stages/contact/native.py), ``contact/dt_table/json`` (stick-to-slip time
  against dt), ``contact/diagnostics/json`` (per-interval diagnostics) and
  ``contact/series/NAME/{t,penetration_m,energy_J}`` for the plots.

``report_context(records, arrays)`` rebuilds the section from a bundle alone.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fixtures.contact_catalog import scene
from harness.core import figures
from harness.core.records import Record, compare
from harness.core.tolerances import lookup
from harness.model import registry
from harness.model.contact_law import ContactLaw
from harness.model.hybrid import saltation_check
from harness.model.prepared import PreparedModel
from harness.stages.contact import cases as cf
from harness.stages.contact.cases import ball_drop, block_dt_table
from harness.stages.contact.diagnostics import interval_diagnostics, shared_law_rollout
from harness.stages.contact.native import side_by_side

CONTACT_FIXTURES = ("ball", "box", "rod")


def _rows_for(adapter: Any, skip: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The analytic cases' rows (harness/stages/contact/cases.py) of one adapter, the
    cases named in ``skip`` left out."""
    fx = adapter.model.name
    if fx == "ball":
        rows = cf.ball_drop(adapter)[0] + cf.rolling(adapter)
        moving = cf.rolling(adapter, v_roll=0.5)
        for r in moving:
            r["case"] = "rolling_moving"
        rows += moving + cf.separation(adapter)
        rows += [] if "grazing" in skip else cf.grazing(adapter)
        return rows + cf.oblique(adapter)
    if fx == "box":
        rows, _ = cf.block_ramp(adapter, dt=0.01)
        r0 = rows[0]
        dt = r0["dt_s"]
        r0.update(quantity="stick_to_slip_samples",
                  analytic=[a / dt for a in r0["analytic"]],
                  measured=[m / dt for m in r0["measured"]])
        return rows
    if fx == "rod":
        rows, _ = cf.rod_flat(adapter)
        tilted, _ = cf.rod_flat(adapter, tilt=0.05)
        first = tilted[0]["order"][0][0] if tilted[0]["order"] else -1
        rows.append({"case": "rod_tilted", "quantity": "first_contact_index",
                     "analytic": [1.0], "measured": [float(first)]})
        return rows
    return []


# the analytic case a float32 engine cannot take part in, and why
FLOAT32_GRAZING = ("single precision: the grazing case starts the ball φ0 = 1e-9 m above "
                   "the plane, closing at w = 1e-5 m/s, below a float32 engine's gap "
                   "resolution (one-level pose round-off 8 eps32 · 1 m = 9.5e-7 m, "
                   "contact/missed_event_depth/float32; the height 0.1 m is itself "
                   "quantized to 7.5e-9 m): the event it locates is float32's rounding, "
                   "not the closed form's")


def run(models: Sequence[PreparedModel], engines: Sequence[str],
        progress: Callable[[str], None] | None = None,
        ) -> tuple[list[Record], dict[str, NDArray[Any]]]:
    """(records, arrays) of the analytic contact fixtures and the explanatory arrays."""
    records, arrays = [], {}
    contact_models = [m for m in models if m.name in CONTACT_FIXTURES]
    if not contact_models:
        return records, arrays
    first_adapter = {}
    for model in contact_models:
        fx = model.name
        for e in engines:
            if progress:
                progress(f"{fx}: analytic contact fixtures on {e}")
            a = registry.adapter_class(e)(model)
            cls = "/float32" if getattr(a, "precision", "") == "float32" else ""
            if cls:  # a single-precision engine: the float32 class of each closed form
                if fx == "ball":
                    records.append(Record(
                        id=f"{fx}/contact/grazing/{e}", stage="contact", fixture=fx,
                        quantity="grazing", engine_a=e, engine_b="",
                        status="not_provided", reason=FLOAT32_GRAZING))
            else:
                first_adapter.setdefault(fx, a)
            for row in _rows_for(a, skip=("grazing",) if cls else ()):
                q = f"{row['case']}.{row['quantity']}"
                ka = f"out/{fx}/contact/{q}/analytic"
                kb = f"out/{fx}/contact/{q}/{e}"
                kl = f"labels/{fx}/contact/{q}"
                A = np.asarray(row["analytic"], dtype=float).reshape(-1)
                B = np.asarray(row["measured"], dtype=float).reshape(-1)
                if A.shape != B.shape:
                    B = np.full(A.shape, np.nan)
                arrays[ka], arrays[kb] = A, B
                arrays[kl] = np.array([f"{q}[{i}]" for i in range(A.size)])
                records.append(compare(f"{fx}/contact/{q}/analytic~{e}", "contact", fx,
                                       q + cls, "analytic", e, A, B,
                                       lookup("contact", q + cls), ka, kb, arrays[kl], kl))
    if "ball" in first_adapter:
        records += _saltation(first_adapter["ball"], arrays)
        arrays.update(_diagnostics(first_adapter["ball"]))
    if "box" in first_adapter:

        arrays["contact/dt_table/json"] = np.array(json.dumps(
            block_dt_table(first_adapter["box"], dts=(0.1, 0.05, 0.02, 0.01, 0.005, 0.002))))
    if progress:
        progress("contact: native contact side by side")

    native = side_by_side(engines=tuple(engines),
                          cases=tuple(c for c, f in (("rolling_push", "ball"),
                                                     ("ball_drop", "ball"),
                                                     ("block_ramp", "box"))
                                      if f in first_adapter))
    keep = []
    for i, r in enumerate(native):
        series = r.pop("series", None)
        if series is not None and r["case"] == "ball_drop":
            name = f"native {r['engine']} {r['variant']}"
            for k, v in series.items():
                arrays[f"contact/series/{name}/{k}"] = np.asarray(v, dtype=float)
        keep.append(r)
    arrays["contact/native/json"] = np.array(json.dumps(keep, default=float))
    return records, arrays


def _saltation(adapter, arrays):


    r = saltation_check(adapter, scene("ball"), np.array([0, 0, 0.4, 0, 0, 0, 1.0]),
                        np.array([0.8, -0.3, -0.5, 0, 0, 0]), 0.45, 0.7, 0.05)
    fx, e, q = "ball", adapter.name, "saltation.flow_jacobian"
    ka, kb, kl = f"out/{fx}/contact/{q}/fd", f"out/{fx}/contact/{q}/{e}", f"labels/{fx}/contact/{q}"
    arrays[ka], arrays[kb] = r["fd"][None], r["predicted"][None]
    arrays[kl] = np.array([f"oblique impact, t_e {r['t_event']:.6f} s, denominator "
                           f"{r['denominator']:.4g} m/s, cond(Ξ) {r['cond']:.3g}"])
    return [compare(f"{fx}/contact/{q}/fd~{e}", "contact", fx, q, "finite_difference", e,
                    arrays[ka], arrays[kb], lookup("contact", "saltation.flow_jacobian"),
                    ka, kb, arrays[kl], kl)]


def _diagnostics(adapter):
    """Per-interval diagnostics and plotted series: the rigid hybrid drop (e 0.8) and the
    shared law's compliant drop, both from 0.5 m."""




    sc = scene("ball")
    out = {}
    _, run = ball_drop(adapter)
    rigid = interval_diagnostics(run.t, run.phi, run.impacts(), run.E)
    out["contact/series/rigid hybrid (e 0.8)/t"] = run.t
    out["contact/series/rigid hybrid (e 0.8)/penetration_m"] = np.maximum(-run.phi.min(axis=1), 0)
    out["contact/series/rigid hybrid (e 0.8)/energy_J"] = run.E
    law = ContactLaw(**sc.law_params())
    rec = shared_law_rollout(adapter, sc, law, np.array([0, 0, 0.6, 0, 0, 0, 1.0]),
                             np.array([0.3, 0, 0, 0, 0, 0]), 0.7, 2e-4)
    # intervals: contact onsets and separations of the compliant run
    on = rec["phi"].min(axis=1) < 0
    edges = [rec["t"][0]] + list(rec["t"][1:][on[1:] != on[:-1]]) + [rec["t"][-1]]
    compliant = interval_diagnostics(rec["t"], rec["phi"], [], rec["E"], rec["f_n"],
                                     rec["f_t"], rec["v_t"], law.mu_static, rec["P"], edges,
                                     mu_slide=law.mu_dynamic)
    name = "shared law (semi-implicit Euler 2e-4 s)"
    out[f"contact/series/{name}/t"] = rec["t"]
    out[f"contact/series/{name}/penetration_m"] = np.maximum(-rec["phi"].min(axis=1), 0)
    out[f"contact/series/{name}/energy_J"] = rec["E"]
    out["contact/diagnostics/json"] = np.array(json.dumps(
        {"rigid hybrid drop, e 0.8 (" + adapter.name + ")": rigid,
         "shared-law drop with 0.3 m/s slide (" + adapter.name + "), " + law.statement():
             compliant},
        default=float))
    return out


# ----- report ------------------------------------------------------------------------------
def series_styles(names: Sequence[str]) -> dict[str, tuple[str, str | None]]:
    """{series name: (colour, dash)}: a native engine's series ("native ENGINE …") in that
    engine's colour, as in every chart of the report, the harness's own (the shared law,
    the rigid hybrid model) in the reference colours; series of one colour told apart by
    their dash."""
    engines = [n.split()[1] for n in names if n.startswith("native ") and len(n.split()) > 1]
    order = figures.engine_order(registry.engine_names(), engines)
    refs = [c for c, _ in figures.REFERENCE_STYLES.values()]
    out: dict[str, tuple[str, str | None]] = {}
    own = 0
    for name in names:
        words = name.split()
        if words[:1] == ["native"] and len(words) > 1:
            colour = figures.engine_style(words[1], order)[0]
        else:
            colour, own = refs[own % len(refs)], own + 1
        same = sum(c == colour for c, _ in out.values())
        out[name] = (colour, None if same == 0 else
                     figures.PAIR_DASHES[same % len(figures.PAIR_DASHES)])
    return out


def _plot(series, key, title, ylabel, unit, logy=False):
    """One chart (harness.core.figures) of ``key`` against time for every series that has it
    (``series_styles``); series longer than 300 samples are thinned keeping each bucket's
    extremes."""
    fig = figures.Figure(title, "time", "s", ylabel, unit, ylog=logy, legend="below",
                         height=380, digits=5)
    styles = series_styles(list(series))
    for name, s in series.items():
        if key in s and "t" in s:
            t, y = np.asarray(s["t"], dtype=float), np.asarray(s[key], dtype=float)
            idx = _thin(t.size, y)
            colour, dash = styles[name]
            fig.line(t[idx], y[idx], name, color_=colour, dash=dash)
    return fig


def _thin(n, y, most=300):
    """Indices of at most ~``most`` samples of a series of ``n``: first and last kept, and
    in each of most/2 buckets the minimum and the maximum (extremes survive)."""
    if n <= most:
        return np.arange(n)
    edges = np.linspace(0, n, most // 2 + 1).astype(int)
    starts = edges[:-1][edges[1:] > edges[:-1]]  # the buckets that hold samples
    y = np.asarray(y, dtype=float)[:n]
    bucket = np.searchsorted(starts, np.arange(n), side="right") - 1
    finite = np.logical_or.reduceat(np.isfinite(y), starts)
    keep = {0, n - 1}
    for extreme in (np.fmin, np.fmax):  # NaN ignored, as nanargmin/nanargmax do
        at = np.flatnonzero(y == extreme.reduceat(y, starts)[bucket])
        first = np.full(starts.size, n)
        np.minimum.at(first, bucket[at], at)  # each bucket's first extreme
        keep.update(np.where(finite, first, starts).tolist())  # no finite value: its start
    return np.array(sorted(keep))


def report_context(manifest: dict[str, Any], records: list[Record],
                   arrays: dict[str, NDArray[Any]] | None,
                   timings: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """Dict for templates/contact_section.html.j2, or None when the bundle has no contact
    part."""
    if arrays is None or "contact/native/json" not in arrays and not any(
            r.stage == "contact" for r in records):
        return None
    series = {}
    for k, v in arrays.items():
        if k.startswith("contact/series/"):
            name, field = k[len("contact/series/"):].rsplit("/", 1)
            series.setdefault(name, {})[field] = np.asarray(v)

    def js(key: str) -> Any:
        return json.loads(str(arrays[key])) if key in arrays else None

    analytic = sorted((r for r in records if r.stage == "contact" and r.engine_a in
                       ("analytic", "finite_difference")), key=lambda r: r.id)
    native = js("contact/native/json") or []
    return {"analytic": analytic, "native": native,
            "dt_table": js("contact/dt_table/json") or [],
            "diagnostics": js("contact/diagnostics/json") or {},
            "plots": _plots({n: series[n] for n in series_order(series, native)})}


def series_order(names: Iterable[str], native: Sequence[dict[str, Any]]) -> list[str]:
    """The plotted series' names in the charts' order, whatever order the arrays came in
    (a run's own or arrays.npz's sorted one, so a re-rendered page is the same page): the
    harness's own series by name, then the native ones ("native ENGINE VARIANT") in the
    order of their ball-drop rows in ``native`` (contact/native/json), any other by name."""
    rows = [f"native {r.get('engine')} {r.get('variant')}" for r in native
            if r.get("case") == "ball_drop"]

    def key(name: str) -> tuple[int, int, str]:
        if not name.startswith("native "):
            return 0, 0, name
        return 1, rows.index(name) if name in rows else len(rows), name

    return sorted(names, key=key)


def _plots(series) -> str:
    """Penetration (log axis: exact zeros, no contact, on their own 0 tick) and energy of
    the ball drops, side by side."""
    if not series:
        return ""
    return figures.grid([
        _plot(series, "penetration_m", "Penetration depth of the ball", "penetration",
              "m", logy=True),
        _plot(series, "energy_J", "Energy of the ball", "energy E = T + V", "J")],
        min_width=520)
