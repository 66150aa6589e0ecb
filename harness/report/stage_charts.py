"""A stage's small multiples in the report: per quantity, each engine's worst error on each
fixture against its reference — the records the stage's engine matrix shows for it
(harness/report/matrix.py ``against_reference``: the declared model or an analytic
solution, its own checks, else the quantity's consensus engine) — drawn against the
threshold that judged each row.

* A row judged by its relative error (rtol > 0, relative error defined) is drawn as its
  max relative error on a log axis, with the quantity's rtol dashed (a short bar over each
  quantity when a chart's quantities differ in rtol); exact zeros sit on their own ``0``
  tick (harness.core.figures).
* A row judged by its absolute error alone — its rtol is 0 (event counts, sample indices,
  trajectories to a band), or it is a check against zero (relative error undefined) — is
  drawn as its |Δ| with its unit on a linear axis from 0, with its atol as the bound (the
  bound is atol + rtol × |value| where a check against zero has an rtol too: the label says
  so).
* A chart with a single fixture (or case quantity) lists the engines on its x axis
  instead, the fixture in its title.

Each engine keeps one style (harness.core.figures ``engine_style``) in every chart; one
legend above the charts; a point's hover names the record's other side. A failed record
is drawn whatever it compared (no failure hides from the charts). Informational
rows (no tolerance) and rows without numbers are not drawn.
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from html import escape
from typing import Any

from harness.core import figures
from harness.core.records import Record, unit_of
from harness.report.matrix import against_reference, engine_of

_GLYPH = {"circle": "●", "square": "■", "diamond": "◆", "triangle-up": "▲",
          "triangle-down": "▼", "cross": "✚", "star": "★", "hexagon": "⬢",
          "pentagon": "⬟", "x": "✖", "diamond-open": "◇", "star-open": "☆"}
REL, ABS = "relative", "absolute"


def series_style(label: str, order: Sequence[str]) -> tuple[str, str, str]:
    """(colour, symbol, dash) of a chart series named ``a~b`` (an engine pair or a
    reference against an engine: figures.pair_style) or a single engine (its own style,
    solid)."""
    if "~" in label:
        a, b = label.split("~", 1)
        return figures.pair_style(a, b, order)
    return (*figures.engine_style(label, order), "solid")


def judged_by(r: Record) -> str | None:
    """``REL`` for a row judged by its relative error, ``ABS`` for one judged by |Δ|
    against atol alone (rtol 0, or a check against zero), None for a row not drawn (no
    tolerance: informational; no numbers)."""
    if r.atol is None or r.rtol is None or r.max_abs is None:
        return None
    return REL if r.max_rel is not None and r.rtol > 0 else ABS


def shared_legend(pairs: Sequence[str], order: Sequence[str], kinds: set[str]) -> str:
    """One HTML legend for a stage's small multiples: each series' marker (its one style
    in every chart of every page) and the threshold lines that appear."""
    items = ('<span class="legend-note">each engine against its reference (as in the '
             "matrix above: the declared model, an analytic solution, its own checks or "
             "the consensus engine, which has no point of its own against itself):</span>")
    for p in pairs:
        colour, sym, _ = series_style(p, order)
        items += (f'<span class="legend-item" data-style="{colour} {sym}">'
                  f'<span style="color:{colour}">{_GLYPH.get(sym, "●")}</span> '
                  f'{escape(p)}</span>')
    if REL in kinds:
        items += ('<span class="legend-note"><span style="color:crimson">– –</span> '
                  "the quantity's rtol, on relative-error charts (a short bar over each "
                  "quantity when a chart's quantities differ)</span>")
    if ABS in kinds:
        items += ('<span class="legend-note"><span style="color:#b35c00">– –</span> '
                  "the quantity's atol, on |Δ| charts (rows judged by their absolute "
                  "error: rtol 0 or a check against zero)</span>")
    return f'<div class="shared-legend">{items}</div>'


def _groups(recs: Sequence[Record], fixtures: Sequence[str], stage: str
            ) -> list[tuple[str, str, str, list[tuple[str, Record]]]]:
    """[(title, kind, x label, [(category, record)])]: one chart per quantity and kind over
    the fixtures that have records for it; quantities ``case.name`` of one fixture share
    one chart per case (and, for |Δ| charts, per unit)."""
    fx_order = {f: i for i, f in enumerate(fixtures)}
    by_q: OrderedDict[tuple[str, str], list[Record]] = OrderedDict()
    for r in recs:
        kind = judged_by(r)
        if kind is not None:
            by_q.setdefault((r.quantity, kind), []).append(r)
    groups: OrderedDict[tuple[str, ...], tuple[str, str, str, list[tuple[str, Record]]]] = \
        OrderedDict()
    for (q, kind), rs in by_q.items():
        fxs = {r.fixture for r in rs}
        if "." in q and len(fxs) == 1:
            case, name = q.split(".", 1)
            fx = next(iter(fxs))
            unit = unit_of(stage, q) if kind == ABS else ""
            g = groups.setdefault(("case", case, fx, kind, unit),
                                  (f"{case} ({fx})", kind, "quantity", []))
            g[3].extend((name, r) for r in rs)
        else:
            groups[("q", q, kind)] = (q, kind, "fixture", [(r.fixture, r) for r in rs])
    out = []
    for title, kind, xlabel, items in groups.values():
        cats = list(OrderedDict.fromkeys(c for c, _ in items))
        if xlabel == "fixture":
            cats.sort(key=lambda c: fx_order.get(c, len(fx_order)))
        if len(cats) == 1:  # one category: the pairs go on the x axis, it in the title
            title = f"{title}: {cats[0]}" if xlabel == "quantity" else f"{title} ({cats[0]})"
            xlabel = "engine"
        out.append((title, kind, xlabel, items))
    return out


def _value(r: Record, kind: str) -> float:
    return float(r.max_rel if kind == REL and r.max_rel is not None else r.max_abs or 0.0)


def _bound(r: Record, kind: str) -> float:
    return float((r.rtol if kind == REL else r.atol) or 0.0)


def _threshold_lines(fig: figures.Figure, items: list[tuple[str, Record]], cats: list[str],
                     kind: str) -> None:
    """The threshold of each category (rtol or atol): one line when they are all equal,
    else a short bar over each category."""
    tol: OrderedDict[str, float] = OrderedDict()
    for c, r in items:  # an atol of 0 (an exact count) is drawn too: at 0
        if _bound(r, kind) > 0 or kind == ABS:
            tol[c] = max(tol.get(c, 0.0), _bound(r, kind))
    colour = "crimson" if kind == REL else "#b35c00"
    word = "rtol" if kind == REL else "atol"
    extra = any(r.rtol for _, r in items) if kind == ABS else False
    for v in sorted(set(tol.values())):
        fig.hline(v, f"{word} {v:g}" + (" (+ rtol × |value|)" if extra else "")
                  + (" (exact)" if v == 0 else ""), color_=colour)
        if len(set(tol.values())) > 1:  # category i spans (i, i + 1) / n of the width
            n, xs, ys = len(cats), [], []
            for c, b in tol.items():
                if b == v:
                    i = cats.index(c)
                    xs += [(i + 0.1) / n, (i + 0.9) / n, None]
                    ys += [v, v, None]
            fig.traces[-1].update(x=xs, y=ys)


def _pair_points(fig: figures.Figure, pair: str, worst: OrderedDict[str, Record], kind: str,
                 colour: str, sym: str, group: bool) -> None:
    """One pair's points (its worst record per category) in its style. Hover: the value,
    its threshold and verdict from one template per trace when they are shared, so the
    page holds no copy of the numbers; exact zeros (drawn on the log axis's 0 tick, not at
    0) are a trace of their own that says 0."""
    word = "rtol" if kind == REL else "atol"

    def note(r: Record) -> str:
        other = ("own check" if not r.engine_b
                 else r.engine_a if r.engine_b == pair else r.engine_b)
        return f"vs {other} ({word} {_bound(r, kind):g}) {r.status.replace('_', ' ')}"

    zeros = [c for c, r in worst.items() if kind == REL and _value(r, kind) == 0]
    parts = [([c for c in worst if c not in zeros], "%{y:.3g}"), (zeros, "0")]
    for k, (cats, shown) in enumerate(p for p in parts if p[0]):
        t = fig.points(cats, [_value(worst[c], kind) for c in cats], pair, symbol_=sym,
                       color_=colour, size=8)
        notes = [note(worst[c]) for c in cats]
        if len(set(notes)) == 1:
            t["hovertemplate"] = (f"%{{x}}: {shown} {escape(notes[0])}"
                                  "<extra>%{fullData.name}</extra>")
        else:
            t["text"] = notes
            t["hovertemplate"] = f"%{{x}}: {shown} %{{text}}<extra>%{{fullData.name}}</extra>"
        if k:
            t["showlegend"] = False
        if group:
            t["offsetgroup"] = pair  # side by side within a category, zeros in line


def _chart(title: str, kind: str, xlabel: str, items: list[tuple[str, Record]],
           drawn_for: dict[str, list[str]], order: Sequence[str], engines: Sequence[str],
           stage: str) -> dict[str, Any]:
    """The plotly spec of one chart (module doc); ``drawn_for``: {record id: the engines
    it compares with their reference}."""
    if xlabel == "engine":  # one category: the engines are the x axis
        items = [(e, r) for _, r in items for e in drawn_for.get(r.id, ())]
    cats = list(OrderedDict.fromkeys(c for c, _ in items))
    if xlabel == "engine":
        cats = [e for e in engines if e in cats]
    units = sorted({unit_of(stage, r.quantity) for _, r in items} - {""})
    if kind == REL:
        fig = figures.Figure(title, xlabel, None, "max relative error",
                             figures.DIMENSIONLESS, ylog=True, categories=cats,
                             legend="none", height=340 if len(cats) > 3 else 280)
    else:
        fig = figures.Figure(title, xlabel, None, "max |Δ|",
                             " or ".join(units) if units else figures.DIMENSIONLESS,
                             categories=cats, legend="none",
                             height=340 if len(cats) > 3 else 280)
    for e in engines:
        colour, sym = figures.engine_style(e, order)
        worst: OrderedDict[str, Record] = OrderedDict()  # category → its worst record
        for c, r in items:
            if e in drawn_for.get(r.id, ()) and (xlabel != "engine" or c == e) and (
                    c not in worst or _value(r, kind) > _value(worst[c], kind)):
                worst[c] = r
        if worst:
            _pair_points(fig, e, worst, kind, colour, sym, group=xlabel != "engine")
    _threshold_lines(fig, items, cats, kind)
    spec = fig.spec()
    spec["layout"]["scattermode"] = "group"  # pairs side by side within a category
    spec["layout"]["xaxis"]["range"] = [-0.5, len(cats) - 0.5]  # as the threshold bars assume
    if kind == ABS:  # linear from 0, the bound and every point inside
        top = max([_value(r, kind) for _, r in items] + [_bound(r, kind) for _, r in items])
        spec["layout"]["yaxis"]["range"] = [0, figures.tidy(1.15 * top if top > 0 else 1.0)]
    return spec


def stage_plot(records: Sequence[Record], stage: str, fixtures: Sequence[str],
               order: Sequence[str] = (), engines: Sequence[str] | None = None) -> str:
    """Small multiples of a stage's records under one shared legend (module doc);
    ``order``: the engine order styles are given in (figures.engine_order); ``engines``:
    the bundle's engines (default: ``order``)."""
    engines = list(order if engines is None else engines)
    recs = [r for r in records if r.stage == stage and judged_by(r) is not None]
    drawn_for: dict[str, list[str]] = {}
    by_q: OrderedDict[str, list[Record]] = OrderedDict()
    for r in records:
        if r.stage == stage:
            by_q.setdefault(r.quantity, []).append(r)
    for rs in by_q.values():  # the records the matrix shows per engine, quantity by quantity
        for e, mine in against_reference(rs, engines)[0].items():
            for r in mine:
                drawn_for.setdefault(r.id, []).append(e)
        for r in rs:  # a failed pair is drawn whatever it was compared against
            if r.status == "failed" and r.id not in drawn_for:
                drawn_for[r.id] = [e for e in (engine_of(r.engine_a, engines),
                                               engine_of(r.engine_b, engines)) if e]
    recs = [r for r in recs if r.id in drawn_for]
    if not recs:
        return ""
    groups = _groups(recs, fixtures, stage)
    charts = [figures.plot_div(_chart(title, kind, xlabel, items, drawn_for, order, engines,
                                      stage))
              for title, kind, xlabel, items in groups]
    shown = [e for e in engines if any(e in drawn_for[r.id] for r in recs)]
    return (shared_legend(shown, order, {kind for _, kind, _, _ in groups})
            + figures.grid(charts, min_width=380))
