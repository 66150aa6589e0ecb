"""harness/core/figures.py: the chart descriptions every report draws with plotly.js.

Axis titles carry units (a missing unit is refused); an exact zero on a log axis is drawn on
its own ``0`` tick (two decades, or two label spacings, below the smallest non-zero value);
the same data give the same bytes; NaN and ±inf become gaps (JSON null), never numbers;
titles and names from user models are escaped so a page's HTML cannot be broken from a chart."""
from __future__ import annotations

import json
import math
from html.parser import HTMLParser

import numpy as np
import pytest

from harness.core import figures as F


class _Divs(HTMLParser):
    """The data-spec attribute of every div.plot, decoded by the standard HTML parser (as
    a browser would) — an independent reading of what ``html()`` wrote."""

    def __init__(self, text):
        super().__init__()
        self.specs, self.tags = [], []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        a = dict(attrs)
        if tag == "div" and "data-spec" in a:
            self.specs.append(json.loads(a["data-spec"]))


def test_a_value_axis_needs_a_unit():
    with pytest.raises(ValueError, match="unit"):
        F.Figure("t", "time", "", "y", "m")
    with pytest.raises(ValueError, match="at least one axis"):
        F.Figure("t", "fixture", None, "engine", None)
    f = F.Figure("drift", "time", "s", "‖g‖", F.DIMENSIONLESS)
    spec = f.spec()
    assert spec["layout"]["xaxis"]["title"]["text"] == "time [s]"
    assert spec["layout"]["yaxis"]["title"]["text"] == "‖g‖ [–]"
    cat = F.Figure("q", "fixture", None, "max relative error", "–", categories=["a"])
    assert cat.spec()["layout"]["xaxis"]["title"]["text"] == "fixture"


def test_exact_zero_on_a_log_axis_has_its_own_tick():
    f = F.Figure("e", "fixture", None, "err", "–", ylog=True, categories=["a", "b", "c"])
    f.points(["a", "b", "c"], [3e-13, 0.0, 2e-15], "pair")
    f.hline(1e-10, "rtol")
    y = f.spec()["layout"]["yaxis"]
    assert y["type"] == "log"
    assert y["ticktext"][0] == "0"
    zero_at = y["tickvals"][0]
    # two decades below the smallest non-zero value's decade (1e-15 → 1e-17)
    assert math.isclose(zero_at, 10.0 ** (math.floor(math.log10(2e-15)) - 2))
    lo, hi = y["range"]  # log10 units: the zero tick inside the range, below every value
    assert lo < math.log10(zero_at) < math.log10(2e-15) < math.log10(1e-10) < hi
    pts = f.traces[0]["y"]
    assert pts == [3e-13, zero_at, 2e-15]  # the zero drawn at its tick, the others as given
    assert f.traces[1]["y"] == [1e-10, 1e-10]  # the reference line is not moved
    # labels stay few enough to read however many decades the data span
    g = F.Figure("e", "x", "s", "err", "–", ylog=True)
    g.line([0, 1, 2], [0.0, 1e-18, 1.0], "wide")
    assert len(g.spec()["layout"]["yaxis"]["tickvals"]) <= 8


def test_log_axis_without_zero_has_no_zero_tick():
    f = F.Figure("e", "x", "s", "err", "–", ylog=True)
    f.line([0, 1], [1e-9, 1e-6], "a")
    y = f.spec()["layout"]["yaxis"]
    assert "tickvals" not in y and y["range"][0] < -9 < -6 < y["range"][1]
    assert f.traces[0]["y"] == [1e-9, 1e-6]


def test_same_data_same_bytes_and_rounding():
    def build(seed):
        rng = np.random.default_rng(seed)
        f = F.Figure("q(t)", "time", "s", "angle", "rad")
        t = np.linspace(0, 1, 50)
        f.line(t, np.sin(t) + rng.normal(size=50) * 1e-3, "j1")
        f.vline(0.5, "impact")
        return f.html()

    assert build(1) == build(1)
    assert build(1) != build(2)
    f = F.Figure("r", "x", "s", "y", "m")
    f.line([1 / 3], [2 / 3], "a")
    (spec,) = _Divs(f.html()).specs
    assert spec["data"][0]["x"] == [0.3333333] and spec["data"][0]["y"] == [0.6666667]


def test_nan_and_inf_are_gaps():
    f = F.Figure("gaps", "time", "s", "x", "m")
    f.line([0, 1, 2, 3], [1.0, float("nan"), float("inf"), -float("inf")], "a")
    (spec,) = _Divs(f.html()).specs
    assert spec["data"][0]["y"] == [1.0, None, None, None]
    assert "NaN" not in f.html() and "Infinity" not in f.html()


def test_titles_and_names_cannot_break_the_page():
    hostile = '"><script>alert(1)</script><img src=x onerror=alert(2)>'
    f = F.Figure(hostile, "time", "s", "x", "m")
    f.line([0, 1], [0, 1], hostile)
    f.vline(0.5, hostile)
    page = "<body>" + F.grid([f, f]) + "</body>"
    parsed = _Divs(page)
    assert "script" not in parsed.tags and "img" not in parsed.tags
    assert len(parsed.specs) == 2
    spec = parsed.specs[0]
    # the title and event label are drawn by plotly as markup: escaped to show as text
    assert spec["layout"]["title"]["text"] == "&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;" \
                                              "&lt;img src=x onerror=alert(2)&gt;"
    assert "<" not in spec["layout"]["annotations"][0]["text"]
    assert spec["data"][0]["name"] == hostile  # data, never markup of the page


def test_grid_and_page_scripts():
    f = F.Figure("a", "time", "s", "x", "m")
    f.line([0, 1], [0, 1], "a")
    g = F.grid([f, f.html()], min_width=400)
    assert g.count('class="plot"') == 2 and "minmax(min(400px,100%)" in g  # a phone: the page
    assert F.grid([]) == ""
    assert F.scripts("file").startswith(f'<script src="{F.ASSET}"></script>')
    inline = F.scripts("inline")
    lib = inline[len("<script>"):inline.index("</script>\n<script>")]
    assert "</script" not in lib and len(lib) > 1_000_000  # embedded whole, tag-safe
    with pytest.raises(ValueError):
        F.scripts("cdn")


def test_second_value_axis_shows_the_same_data_scaled():
    """y2 = (label, unit, factor): the right axis's range is the left one's × factor, its
    ticks sit at the left ticks × factor, both value axes are fixed (a zoom of one alone
    would untie them) and the helper trace that makes plotly draw it is on y2, unnamed in
    the legend."""
    fig = F.Figure("torque", "t", "s", "torque", "N·m", y2=("per mass", "N·m/kg", 1 / 80))
    fig.line([0, 1, 2], [0.0, 100.0, -50.0], "a")
    fig.hline(200.0, "threshold")        # reference lines do not widen the range
    s = fig.spec()
    L = s["layout"]
    lo, hi = L["yaxis"]["range"]
    assert lo < -50 < 100 < hi and hi - lo == pytest.approx(150 * 1.1)
    assert L["yaxis2"]["range"] == pytest.approx([lo / 80, hi / 80])
    assert L["yaxis2"]["title"]["text"] == "per mass [N·m/kg]"
    assert L["yaxis2"]["overlaying"] == "y" and L["yaxis2"]["side"] == "right"
    assert L["yaxis"]["fixedrange"] and L["yaxis2"]["fixedrange"]
    left = L["yaxis"]["tickvals"]
    assert left == [-50, 0, 50, 100]                      # multiples of 50 inside the range
    assert L["yaxis2"]["tickvals"] == pytest.approx([v / 80 for v in left])
    assert L["yaxis2"]["ticktext"] == ["-0.625", "0", "0.625", "1.25"]
    (helper,) = [t for t in s["data"] if t.get("yaxis") == "y2"]
    assert helper["showlegend"] is False and helper["y"] == L["yaxis2"]["range"]
    with pytest.raises(ValueError):
        F.Figure("x", "t", "s", "y", "N", ylog=True, y2=("z", "N/kg", 1.0))


def test_equal_aspect_ties_the_axes():
    fig = F.Figure("pose", "along", "m", "height", "m", equal_aspect=True)
    fig.line([0, 1], [0, 2], "a")
    y = fig.spec()["layout"]["yaxis"]
    assert y["scaleanchor"] == "x" and y["scaleratio"] == 1
    assert "scaleanchor" not in F.Figure("p", "a", "m", "b", "m").spec()["layout"]["yaxis"]


@pytest.mark.parametrize("lo, hi, want", [(0, 1, [0, 0.2, 0.4, 0.6, 0.8, 1.0]),
                                          (-3, 7, [-2, 0, 2, 4, 6]),
                                          (0.013, 0.061, [0.02, 0.03, 0.04, 0.05, 0.06])])
def test_nice_ticks(lo, hi, want):
    assert F._nice_ticks(lo, hi) == pytest.approx(want)
