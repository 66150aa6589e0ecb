"""Figures for reports: matplotlib drawn off-screen into inline SVG, serialised
deterministically (fixed hash salt, no date or RDF metadata), so the same data give the
same bytes. Units are the caller's: every axis it draws carries its own label.
"""
from __future__ import annotations

import io
import re


def svg_figure(draw, figsize) -> str:
    """Inline SVG of a matplotlib figure drawn by ``draw(fig)`` (same serialisation as
    stage_plot: deterministic hash salt, no metadata)."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "harness"
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=figsize)
    try:
        draw(fig)
        fig.subplots_adjust(left=0.06, right=0.99, bottom=0.16, top=0.88, wspace=0.28)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
    finally:
        plt.close(fig)
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]
    return re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)
