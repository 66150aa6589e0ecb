"""Figures for reports: interactive plotly.js charts described as JSON, drawn by the browser.

Python builds a small, deterministic description of each chart (traces and layout, numbers
rounded to 7 significant digits, keys sorted: the same data give the same bytes); the page
draws it with plotly.js, which comes from the pinned ``plotly`` package and is either
written next to the page (``plotly.min.js`` in a bundle folder, shared by its pages) or
embedded in it (a stand-alone HTML file). Nothing is fetched from a network: reports open
offline with zoom, pan and hover on every chart.

Rules every chart obeys (checked by the browser tests):

* every value axis carries a title with its unit in brackets, ``"time [s]"``; a
  dimensionless quantity says ``[–]``; a categorical axis (fixtures, engines) names what it
  lists and needs no unit, but a chart always has at least one axis with a unit;
* on a logarithmic axis an exact zero is drawn on its own tick labelled ``0`` below the
  smallest non-zero value by two label spacings (at least two decades, so that its label
  never crowds that value's), never on the axis edge and never as a tiny number;
* small multiples are separate charts in a CSS grid (``grid``), each wide enough to read
  (``min_width`` px), never a strip of dozens of panels in one image;
* legends are plotly's own (they scroll when long); long series lists should be split or
  named so that a reader can tell lines apart.
"""
from __future__ import annotations

import html
import json
import math
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.core.io import SameAs

if TYPE_CHECKING:
    from harness.core.io import SameAs

# A chart's JSON description (plotly traces, layout, axes): str keys, JSON values.
Json = dict[str, Any]

ASSET = "plotly.min.js"
DIMENSIONLESS = "–"
_PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b",
            "#e377c2", "#7f7f7f", "#bcbd22")
_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "triangle-down", "cross",
            "star", "hexagon", "pentagon", "x")


# ----- one style per engine -------------------------------------------------------------------
# An engine's (colour, marker symbol) comes from its slot in the engine order (the engine
# registry's table order, then any other name, sorted: ``engine_order``), the same in every
# chart of every page; a reference the engines are compared with has a style of its own
# (dark or grey, with a symbol no engine uses). An engine pair ``a~b`` (a before b in the
# order) is drawn in a's colour with b's symbol and a dash from their distance in the
# order: distinct for every pair, and distinct from every engine's own style.
ENGINE_STYLES = (("#1f77b4", "circle"), ("#d62728", "square"), ("#2ca02c", "diamond"),
                 ("#9467bd", "triangle-up"), ("#ff7f0e", "triangle-down"),
                 ("#17becf", "cross"), ("#8c564b", "star"), ("#e377c2", "hexagon"))
REFERENCE_STYLES = {"declared": ("#555555", "diamond-open"), "analytic": ("#000000", "x"),
                    "consensus": ("#bcbd22", "star-open"),
                    "finite_difference": ("#7f7f7f", "pentagon")}
PAIR_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot", "5px 2px",
               "1px 3px")


def engine_order(known: Sequence[str], present: Iterable[str] = ()) -> tuple[str, ...]:
    """The order engine styles are given in: ``known`` (the engine registry's table order),
    then the other ``present`` names (engines of a bundle not in the table here), sorted;
    references and ``engine:solver`` names take no slot."""
    known = tuple(known)
    extra = sorted({n for n in present if n not in known and n not in REFERENCE_STYLES
                    and ":" not in n and n})
    return known + tuple(extra)


def engine_style(name: str, order: Sequence[str]) -> tuple[str, str]:
    """(colour, symbol) of an engine (``engine:solver`` takes its engine's) or a reference
    (``REFERENCE_STYLES``); names beyond the palette cycle (more than 8 engines)."""
    if name in REFERENCE_STYLES:
        return REFERENCE_STYLES[name]
    base = name.split(":", 1)[0]
    order = tuple(order)
    i = order.index(base) if base in order else len(order)
    return ENGINE_STYLES[i % len(ENGINE_STYLES)]


def pair_style(a: str, b: str, order: Sequence[str]) -> tuple[str, str, str]:
    """(colour, symbol, dash) of the engine pair a~b (either way round): the colour of the
    one first in ``order`` (a reference before any engine), the symbol of the other, the
    dash from their distance in the order."""
    order = tuple(order)

    def slot(n: str) -> int:
        base = n.split(":", 1)[0]
        if n in REFERENCE_STYLES:
            return -1 - list(REFERENCE_STYLES).index(n)
        return order.index(base) if base in order else len(order)

    first, second = sorted((a, b), key=slot)
    colour = engine_style(first, order)[0]
    symbol_ = engine_style(second, order)[1]
    return colour, symbol_, PAIR_DASHES[(abs(slot(second) - slot(first)) - 1)
                                        % len(PAIR_DASHES)]


def color(i: int) -> str:
    """The i-th colour of the report palette (cycles)."""
    return _PALETTE[i % len(_PALETTE)]


def symbol(i: int) -> str:
    """The i-th marker symbol (cycles)."""
    return _SYMBOLS[i % len(_SYMBOLS)]


def plotly_js_path() -> Path:
    """Path of plotly.min.js inside the installed ``plotly`` package: the first folder on
    ``sys.path`` that holds ``plotly/package_data/plotly.min.js`` (the package is not
    imported: its Python side is not used; asking importlib.metadata for the installed
    distribution's files instead cost every report about 12 ms to import it)."""
    for entry in sys.path:
        path = Path(entry or os.getcwd()) / "plotly" / "package_data" / ASSET
        if path.is_file():
            return path
    raise RuntimeError("the plotly package is not installed (pyproject.toml pins it)")


def plotly_asset() -> SameAs:
    """plotly.min.js as a file of an output folder (a copy of the installed file, its bytes
    identical: harness.core.io.SameAs)."""
    return SameAs(plotly_js_path())


def plotly_js() -> bytes:
    """The bytes of plotly.min.js (about 4.8 MB; 1.4 MB gzipped)."""
    return plotly_js_path().read_bytes()


def _num(x: Any, digits: int = 7) -> float | None:
    """A finite float rounded to ``digits`` significant digits, or None (a gap) for
    NaN/inf."""
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(x):
        return None
    if x == 0.0:
        return 0.0
    return float(f"{x:.{digits}g}")


def tidy(x: float) -> float | None:
    """A number as charts store it (7 significant digits; None for NaN/inf)."""
    return _num(x)


def _nums(xs: Iterable[Any], digits: int = 7) -> list[float | None]:
    """``[_num(x, digits) for x in xs]``: a finite Python float (every entry of a 1-D
    float array, through ``tolist``) is formatted here without ``_num``'s call and checks
    (``%`` and ``format`` round alike; a chart holds tens of thousands of numbers)."""
    vals = xs.tolist() if getattr(xs, "ndim", None) == 1 else list(xs)  # type: ignore[attr-defined]
    fmt = f"%.{digits}g"
    return [(float(fmt % v) if v else 0.0) if type(v) is float and v - v == 0.0
            else _num(v, digits) for v in vals]


def axis_title(label: str, unit: str | None) -> str:
    """``label [unit]``; ``unit`` None for a categorical axis (no unit applies)."""
    if unit is None:
        return label
    if not unit:
        raise ValueError(f"axis {label!r}: give a unit ('{DIMENSIONLESS}' if dimensionless)")
    return f"{label} [{unit}]"


class Figure:
    """One chart. ``xlabel``/``ylabel`` and units make the axis titles (``axis_title``);
    ``xunit``/``yunit`` None only for categorical axes. ``ylog``/``xlog``: logarithmic
    axes (zeros drawn on their own ``0`` tick). ``height`` in px. ``legend``: ``"right"``
    (scrolls when long), ``"below"`` (small multiples) or ``"none"``. ``categories``: the
    x categories in order (only those that apply). ``integer_x``: integer ticks
    (iterations). ``equal_aspect``: one unit of x as long as one unit of y (positions in
    space). ``y2``: (label, unit, factor) a second value axis on the right showing y ×
    factor (the same data in another unit, e.g. N·m and N·m/kg), its range tied to the
    left one's. ``digits``: significant digits kept of the traces' numbers (7; a long
    time series drawn for its shape needs fewer)."""

    def __init__(self, title: str, xlabel: str, xunit: str | None, ylabel: str,
                 yunit: str | None, *, xlog: bool = False, ylog: bool = False,
                 height: int = 300, categories: Sequence[Any] | None = None,
                 integer_x: bool = False, legend: str = "right", equal_aspect: bool = False,
                 y2: tuple[str, str, float] | None = None, digits: int = 7) -> None:
        if xunit is None and yunit is None:
            raise ValueError(f"chart {title!r}: at least one axis needs a unit")
        if y2 is not None and (ylog or not y2[2] > 0):
            raise ValueError(f"chart {title!r}: y2 needs a linear y axis and a factor > 0")
        self.equal_aspect, self.y2 = equal_aspect, y2
        self.digits = digits  # significant digits kept of the traces' numbers
        self.title = title
        self.traces: list[Json] = []
        self.shapes: list[Json] = []
        self.annotations: list[Json] = []
        self.xlog, self.ylog = xlog, ylog
        self.height = height
        if legend not in ("right", "below", "none"):
            raise ValueError(f"legend {legend!r}: 'right', 'below' or 'none'")
        self.legend = legend
        self.xaxis: Json = {"title": {"text": axis_title(xlabel, xunit)}, "automargin": True,
                      "zeroline": False}
        self.yaxis: Json = {"title": {"text": axis_title(ylabel, yunit)}, "automargin": True,
                      "exponentformat": "e", "zeroline": False}
        if categories is not None:
            # labels upright: their boxes never overlap, however narrow the chart
            self.xaxis.update(type="category", categoryorder="array",
                              categoryarray=list(categories), tickangle=-90)
        if integer_x:
            self.xaxis.update(tickformat="d")
            self._integer_x = True
        else:
            self._integer_x = False
        self._ylog_values: list[float] = []
        self._xlog_values: list[float] = []

    # traces -----------------------------------------------------------------------------
    def _add(self, trace: Json, xs: Sequence[str | float | None],
             ys: Sequence[float | None]) -> Json:
        if self.ylog:
            self._ylog_values.extend(v for v in ys if v is not None)
        if self.xlog:
            self._xlog_values.extend(v for v in xs if v is not None and not isinstance(v, str))
        self.traces.append(trace)
        return trace

    def line(self, x: Iterable[Any], y: Iterable[Any], name: str, *, dash: str | None = None,
             color_: str | None = None, width: float = 1.6, markers: bool = False,
             hover: Sequence[object] | None = None, legendgroup: str | None = None,
             showlegend: bool = True) -> Json:
        """A line (``markers``: with points)."""
        xs, ys = self._xs(x), _nums(y, self.digits)
        t: Json = {"type": "scatter", "mode": "lines+markers" if markers else "lines",
             "x": xs, "y": ys, "name": str(name),
             "line": {"width": width, **({"dash": dash} if dash else {}),
                      **({"color": color_} if color_ else {})}}
        if hover is not None:
            t["text"] = [str(h) for h in hover]
            t["hovertemplate"] = "%{text}<extra>%{fullData.name}</extra>"
        if legendgroup:
            t["legendgroup"] = legendgroup
        if not showlegend:
            t["showlegend"] = False
        return self._add(t, xs, ys)

    def points(self, x: Iterable[Any], y: Iterable[Any], name: str, *, symbol_: str = "circle",
               color_: str | None = None, size: int = 8,
               hover: Sequence[object] | None = None) -> Json:
        """Markers only."""
        xs, ys = self._xs(x), _nums(y, self.digits)
        t: Json = {"type": "scatter", "mode": "markers", "x": xs, "y": ys, "name": str(name),
             "marker": {"symbol": symbol_, "size": size, **({"color": color_} if color_ else {})}}
        if hover is not None:
            t["text"] = [str(h) for h in hover]
            t["hovertemplate"] = "%{text}<extra>%{fullData.name}</extra>"
        return self._add(t, xs, ys)

    def bar(self, x: Iterable[Any], y: Iterable[Any], name: str, *,
            color_: str | None = None) -> Json:
        """Bars (one per x)."""
        xs, ys = self._xs(x), _nums(y, self.digits)
        return self._add({"type": "bar", "x": xs, "y": ys, "name": str(name),
                          **({"marker": {"color": color_}} if color_ else {})}, xs, ys)

    def hline(self, y: float, name: str, *, color_: str = "crimson",
              dash: str = "dash", legend: bool = True) -> None:
        """A horizontal reference line across the chart, named in the legend (``legend``
        False: its name only in the hover, for a line the legend names with another)."""
        y_n = _num(y)
        if y_n is None:
            return
        if self.ylog:
            self._ylog_values.append(y_n)
        self.traces.append({"type": "scatter", "mode": "lines", "name": str(name),
                            "x": [0, 1], "y": [y_n, y_n], "xaxis": "x2",
                            "line": {"color": color_, "dash": dash, "width": 1.4},
                            "hoverinfo": "name", "showlegend": legend})

    def vline(self, x: float, label: str, *, color_: str = "#555", dash: str = "dot",
              side: str = "center") -> None:
        """A vertical marker line (an event) with its label at the top: centred on the
        line, or ``side`` "left" / "right" of it (two events close together)."""
        x_n = _num(x)
        if x_n is None:
            return
        self.shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": x_n, "x1": x_n,
                            "y0": 0, "y1": 1, "line": {"color": color_, "dash": dash,
                                                       "width": 1.2}})
        self.annotations.append({"x": x_n, "xref": "x", "y": 1, "yref": "paper",
                                 "yanchor": "bottom", "text": html.escape(str(label)),
                                 "xanchor": {"left": "right", "right": "left"}.get(side,
                                                                                   "center"),
                                 "showarrow": False, "font": {"size": 11}})

    def heatmap(self, z: Iterable[Iterable[Any]], x: Iterable[Any], y: Iterable[Any],
                colorbar: str, *, log: bool = False) -> None:
        """A heat map: ``z`` rows follow ``y``; ``colorbar`` the value's title with unit."""
        rows = [[_num(v) for v in row] for row in z]
        if log:
            rows = [[None if v is None or v <= 0 else _num(math.log10(v)) for v in row]
                    for row in rows]
            colorbar = f"log₁₀ {colorbar}"
        self.traces.append({"type": "heatmap", "z": rows, "x": self._xs(x),
                            "y": [str(v) if isinstance(v, str) else _num(v) for v in y],
                            "colorscale": "Viridis", "colorbar": {"title": {"text": colorbar}},
                            "hoverongaps": False})

    def _xs(self, x: Iterable[Any]) -> list[str | float | None]:
        vals = x.tolist() if getattr(x, "ndim", None) == 1 else list(x)  # type: ignore[attr-defined]
        return [v if isinstance(v, str) else n for v, n in zip(vals, _nums(vals, self.digits))]

    # layout ------------------------------------------------------------------------------
    def _log_axis(self, axis: Json, values: list[float], traces_key: str) -> None:
        pos = [v for v in values if v > 0]
        has_zero = any(v == 0 for v in values)
        lo = math.floor(math.log10(min(pos))) if pos else -16
        hi = math.ceil(math.log10(max(pos))) if pos else 0
        hi = max(hi, lo + 1)
        axis["type"] = "log"
        if has_zero:
            decades = list(range(lo, hi + 1))
            step = max(1, math.ceil(len(decades) / 6))  # ≤ ~6 labels: legible when small
            decades = decades[::step]
            # the zero tick sits below the lowest non-zero value by two label spacings
            # (at least two decades), so its "0" never overlaps that decade's label however
            # many decades the data span; the zeros themselves set no part of the range
            gap = 2 * step
            zero_at = 10.0 ** (lo - gap)
            for t in self.traces:
                if t.get("type") == "scatter" and t.get("xaxis") != "x2":
                    vals = t[traces_key]
                    t[traces_key] = [zero_at if v == 0 else v for v in vals]
            axis["tickvals"] = [zero_at] + [10.0 ** d for d in decades]
            axis["ticktext"] = ["0"] + [f"1e{d}" for d in decades]
            axis["range"] = [lo - gap - 0.5, hi + 0.3]  # half a decade below the 0 tick
        else:
            axis["range"] = [lo - 0.3, hi + 0.3]
            axis["dtick"] = max(1, math.ceil((hi - lo) / 6))  # whole decades, ≤ ~7 labels
            axis["exponentformat"] = "e"  # 1e-12, as on axes with a zero tick

    def spec(self) -> Json:
        """The plotly description (data + layout) of this chart."""
        layout: Json = {"title": {"text": html.escape(self.title), "font": {"size": 14},
                            "x": 0.01, "xanchor": "left"},
                  "height": self.height, "margin": {"l": 60, "r": 16, "t": 48, "b": 48},
                  "xaxis": dict(self.xaxis), "yaxis": dict(self.yaxis),
                  "legend": {"font": {"size": 11}, **(
                      {"orientation": "h", "x": 0, "xanchor": "left", "y": 0,
                       "yanchor": "bottom", "yref": "container"}  # under the x title
                      if self.legend == "below" else {})},
                  "showlegend": self.legend != "none",
                  "font": {"family": "system-ui, sans-serif", "size": 12},
                  "hovermode": "closest", "shapes": self.shapes,
                  "annotations": self.annotations}
        if any(t.get("xaxis") == "x2" for t in self.traces):
            layout["xaxis2"] = {"overlaying": "x", "range": [0, 1], "visible": False,
                                "fixedrange": True}
        data = self.traces
        if self.equal_aspect:
            layout["yaxis"].update(scaleanchor="x", scaleratio=1)
        if self.y2 is not None:
            label, unit, factor = self.y2
            ys = [v for t in self.traces if t.get("type") == "scatter"
                  and t.get("xaxis") != "x2" for v in t["y"] if v is not None]
            lo, hi = (min(ys), max(ys)) if ys else (0.0, 1.0)
            pad = 0.05 * (hi - lo) if hi > lo else max(abs(hi), 1.0) * 0.05
            lo, hi = lo - pad, hi + pad
            # both value axes fixed: a zoom of one alone would untie them (x still zooms);
            # the right axis's ticks sit on the left one's gridlines
            ticks = _nice_ticks(lo, hi)
            layout["yaxis"].update(range=[_num(lo), _num(hi)], fixedrange=True,
                                   tickvals=[_num(v) for v in ticks])
            layout["yaxis2"] = {"title": {"text": axis_title(label, unit)},
                                "overlaying": "y", "side": "right", "automargin": True,
                                "range": [_num(lo * factor), _num(hi * factor)],
                                "tickvals": [_num(v * factor) for v in ticks],
                                "ticktext": [f"{v * factor:.3g}" for v in ticks],
                                "showgrid": False, "zeroline": False, "fixedrange": True}
            layout["margin"] = dict(layout["margin"], r=60)
            # plotly draws an axis only with a trace on it: an invisible one at the range
            x0 = next((v for t in self.traces if t.get("xaxis") != "x2" for v in t["x"]
                       if v is not None), 0.0)
            data = data + [{"type": "scatter", "mode": "lines", "x": [x0, x0],
                            "y": layout["yaxis2"]["range"], "yaxis": "y2",
                            "name": f"{label} axis", "showlegend": False,
                            "hoverinfo": "skip", "opacity": 0, "line": {"width": 0}}]
        if self.ylog:
            self._log_axis(layout["yaxis"], self._ylog_values, "y")
        if self.xlog:
            self._log_axis(layout["xaxis"], self._xlog_values, "x")
        return {"data": data, "layout": layout}

    def html(self) -> str:
        """The chart as a ``<div class="plot">`` the page's script draws."""
        return plot_div(self.spec())


def _nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """About n ticks at multiples of 1, 2 or 5 × 10^k inside [lo, hi]."""
    raw = (hi - lo) / n
    if not raw > 0:
        return [lo]
    e = 10.0 ** math.floor(math.log10(raw))
    step = next(m * e for m in (1, 2, 5, 10) if m * e >= raw)
    k0 = math.ceil(lo / step)
    return [k * step for k in range(k0, math.floor(hi / step) + 1)]


def plot_div(spec: Json) -> str:
    """``<div class="plot" data-spec=...>`` for a plotly spec (escaped attribute)."""
    blob = json.dumps(spec, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return f'<div class="plot" data-spec="{html.escape(blob, quote=True)}"></div>'


def grid(charts: Iterable[Figure | str], min_width: int = 380) -> str:
    """Small multiples: the charts (Figure or HTML strings) in a responsive CSS grid, each at
    least ``min_width`` px wide, or the page's width where that is narrower (a phone)."""
    cells = [c.html() if isinstance(c, Figure) else c for c in charts]
    if not cells:
        return ""
    return (f'<div class="plotgrid" style="display:grid;gap:8px;'
            f'grid-template-columns:repeat(auto-fill,minmax(min({int(min_width)}px,100%),1fr))">'
            + "".join(cells) + "</div>")


# The page script: draws every div.plot once plotly.js is loaded; a page whose plotly.min.js
# is missing says so in place of each chart instead of failing silently.
BOOT = """<script>
(function () {
  var els = document.querySelectorAll("div.plot[data-spec]");
  if (!window.Plotly) {
    els.forEach(function (el) {
      el.textContent = "This chart needs plotly.min.js beside this page (harness report " +
        "re-creates it).";
    });
    return;
  }
  var cfg = {responsive: true, displaylogo: false,
             modeBarButtonsToRemove: ["select2d", "lasso2d"]};
  // a title longer than its chart is wide (a phone, a narrow grid cell) is broken into
  // lines at spaces, measured in the title's own font; the top margin and the height grow
  // by the added lines, so the plot area keeps its size
  var ctx = document.createElement("canvas").getContext("2d");
  function wrapTitle(el, L) {
    var t = L.title, txt = t && (typeof t === "string" ? t : t.text);
    if (!txt || /[<\\n]/.test(txt)) return;
    var f = (t.font || {}), size = f.size || (L.font || {}).size || 12;
    ctx.font = size + "px " + (f.family || (L.font || {}).family || "sans-serif");
    var room = el.clientWidth * (1 - (t.x || 0)) - 16;
    if (room <= 0 || ctx.measureText(txt).width <= room) return;
    // a number keeps its unit on its line ("1.814 s)", "12 mm")
    var words = [];
    txt.split(" ").forEach(function (w) {
      var last = words.length ? words[words.length - 1] : "";
      if (/[0-9]$/.test(last) && w.length <= 5) words[words.length - 1] = last + " " + w;
      else words.push(w);
    });
    var lines = [], line = "";
    words.forEach(function (w) {
      var next = line ? line + " " + w : w;
      if (line && ctx.measureText(next).width > room) { lines.push(line); line = w; }
      else line = next;
    });
    lines.push(line);
    var extra = Math.ceil((lines.length - 1) * size * 1.3);
    L.title = Object.assign({}, typeof t === "string" ? {} : t, {text: lines.join("<br>")});
    L.margin = Object.assign({}, L.margin || {}, {t: ((L.margin || {}).t || 80) + extra});
    if (L.height) L.height += extra;
  }
  els.forEach(function (el) {
    var s = JSON.parse(el.getAttribute("data-spec"));
    wrapTitle(el, s.layout);
    Plotly.newPlot(el, s.data, s.layout, cfg);
  });
  document.documentElement.setAttribute("data-plots-drawn", String(els.length));
})();
</script>"""

CSS = """.plot { min-height: 120px; }
.plotgrid .plot { border: 1px solid #e4e4e4; border-radius: 3px; }"""


def scripts(mode: str = "file") -> str:
    """The script tags a page ends with: plotly.js (``"file"``: ``<script src>`` of the
    bundle's plotly.min.js; ``"inline"``: embedded, for a stand-alone file) and the boot
    script that draws the charts."""
    if mode == "file":
        lib = f'<script src="{ASSET}"></script>'
    elif mode == "inline":
        lib = "<script>" + plotly_js().decode("utf-8").replace("</script", "<\\/script") \
            + "</script>"
    else:
        raise ValueError(f"scripts mode {mode!r}: 'file' or 'inline'")
    return lib + "\n" + BOOT

