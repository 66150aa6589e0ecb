"""The HTML report of a fit bundle: the page of its problem (``FitProblem``,
harness/fit/fitproblem.py, found by fit.json's ``problem`` in harness/fit/catalog.py),
its template rendered with the report's template environment and the context the
problem's ``report_context`` builds from fit.json and arrays.npz (interactive plotly
charts, harness/core/figures.py; each problem's charts and their units are stated in its
module). This module names no problem.

Dimensions: none of its own (the problem's arrays, as its module states).
"""
from __future__ import annotations

from harness.core import figures as F
from harness.fit import catalog
from harness.report.render import ENV


def render(doc: dict, arrays: dict, mode: str = "file") -> str:
    """The fit bundle's index.html (``mode``: "file" loads plotly.min.js beside it,
    "inline" embeds it for a stand-alone file)."""
    prob = catalog.get(doc["problem"])
    return ENV.get_template(prob.template).render(
        fit=doc, css=F.CSS, scripts=F.scripts(mode), **prob.report_context(doc, arrays))
