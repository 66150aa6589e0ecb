"""The HTML report of a fit bundle: the page of its problem (``FitProblem``,
harness/fit/fitproblem.py, found by fit.json's ``problem`` in harness/fit/catalog.py),
its template rendered with the report's template environment and the context the
problem's ``report_context`` builds from fit.json and arrays.npz (interactive plotly
charts, harness/core/figures.py; each problem's charts and their units are stated in its
module). This module names no problem.

Dimensions: none of its own (the problem's arrays, as its module states).
"""
from __future__ import annotations

import numpy as np

from harness.core import figures as F
from harness.fit import catalog
from harness.report.banner import for_fit
from harness.report.render import ENV


def _span(t: object) -> tuple[float, float] | None:
    """(first, last) [s] of a fit's time samples, or None when it has none."""
    ts = np.asarray(t, float).ravel() if t is not None else np.zeros(0)
    return (float(ts[0]), float(ts[-1])) if ts.size and np.all(np.isfinite(ts[[0, -1]])) \
        else None


def render(doc: dict, arrays: dict, mode: str = "file") -> str:
    """The fit bundle's index.html (``mode``: "file" loads plotly.min.js beside it,
    "inline" embeds it for a stand-alone file)."""
    prob = catalog.get(doc["problem"])
    _fields, lines, code = prob.summary(doc, "")  # the CLI's lines and exit code
    return ENV.get_template(prob.template).render(
        fit=doc, css=F.CSS, scripts=F.scripts(mode),
        banner=for_fit(doc, lines, code, window=_span(arrays.get("t"))),
        **prob.report_context(doc, arrays))
