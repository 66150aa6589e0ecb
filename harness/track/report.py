"""The page of a `harness track` run (DIR/index.html): the banner (harness/report/banner.py
``for_track``, from the same checks and exit code as the command), the checks, the IK per
coordinate beside OpenSim's, the generalized forces beside OpenSim's, what was not run.

Dimensions: F frames, n OpenSim coordinates. Units: degrees for rotational coordinates,
mm for translational ones and for markers, N and N·m for generalized forces.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from markupsafe import Markup
from numpy.typing import NDArray

from harness.core import figures as F
from harness.core.version import __version__
from harness.evidence.bundle import git_commit
from harness.model import registry
from harness.report import banner
from harness.report.render import ENV


def _rows(names: Sequence[str], ours: NDArray[np.float64], theirs: NDArray[np.float64] | None,
          rotational: Sequence[bool]) -> list[dict[str, Any]]:
    out = []
    for k, n in enumerate(names):
        f = np.degrees if rotational[k] else (lambda x: 1000 * x)
        row: dict[str, Any] = {"name": n, "unit": "deg" if rotational[k] else "mm",
                               "lo": float(np.min(f(ours[:, k]))),
                               "hi": float(np.max(f(ours[:, k])))}
        if theirs is not None:
            d = f(ours[:, k] - theirs[:, k])
            row.update(rms=float(np.sqrt(np.mean(d ** 2))), max=float(np.max(np.abs(d))))
        out.append(row)
    return out


def _aligned(columns: Sequence[str], tau_o: NDArray[np.float64] | None,
             used: Sequence[str] | None) -> NDArray[np.float64] | None:
    """The tool's (F, m) columns ``used`` laid out as ``columns`` (NaN where it has none)."""
    if tau_o is None or used is None:
        return None
    out = np.full((len(tau_o), len(columns)), np.nan)
    for j, c in enumerate(used):
        out[:, list(columns).index(c)] = tau_o[:, j]
    return out


def _id_rows(columns: Sequence[str], tau: NDArray[np.float64],
             tau_o: NDArray[np.float64] | None, used: Sequence[str] | None
             ) -> list[dict[str, Any]]:
    out = []
    for k, c in enumerate(columns):
        row: dict[str, Any] = {"name": c, "peak": float(np.max(np.abs(tau[:, k])))}
        if tau_o is not None and used is not None and c in used:
            j = list(used).index(c)
            row["max_diff"] = float(np.max(np.abs(tau[:, k] - tau_o[:, j])))
        out.append(row)
    return out


def charts(t: NDArray[np.float64], names: Sequence[str], ours: NDArray[np.float64],
           theirs: NDArray[np.float64] | None, rotational: Sequence[bool], tool: str,
           unit: tuple[str, str], scale: tuple[float, float], what: str) -> str:
    """Small multiples: one chart per coordinate, ours and the tool's over time. ``unit``
    and ``scale``: (rotational, translational) axis unit and factor from SI."""
    out = []
    for k, n in enumerate(names):
        u, f = (unit[0], scale[0]) if rotational[k] else (unit[1], scale[1])
        fig = F.Figure(n, "time", "s", what, u, height=220, legend="below", digits=6)
        fig.line(t, f * ours[:, k], "harness", color_=F.color(0), width=2.2)
        if theirs is not None:
            fig.line(t, f * theirs[:, k], f"{tool}'s tool", color_=F.color(1), dash="dash")
        out.append(fig)
    return F.grid(out, min_width=300)


def replay_chart(series: Mapping[str, Any] | None) -> str:
    """One chart: the worst coordinate (largest deviation of any engine in any segment) of
    the replay, tracked and replayed per engine (each segment started from the tracked
    state; a gap between segments), in deg or mm; '' without a replay."""
    if not series:
        return ""
    rot = series["rotational"]
    f, u = (180 / np.pi, "deg") if rot else (1000.0, "mm")
    fig = F.Figure(f"{series['coordinate']}: replayed in each engine against the tracked",
                   "time", "s", series["coordinate"], u, height=320, legend="below",
                   digits=9)
    fig.line(series["t"], f * np.asarray(series["tracked"]), "tracked (IK)", color_="#000000",
             width=3.0)
    order = F.engine_order(registry.engine_names(), series["engines"])
    for e, (tt, y) in series["engines"].items():
        fig.line(tt, f * np.asarray(y, dtype=float), e,
                 color_=F.engine_style(e, order)[0], dash="dash")
    return F.grid([fig], min_width=600)


def render(summary: Mapping[str, Any], checks: Sequence[Mapping[str, Any]], code: int,
           t: NDArray[np.float64], names: Sequence[str], Q: NDArray[np.float64],
           Q_osim: NDArray[np.float64] | None, tau: NDArray[np.float64],
           tau_osim: NDArray[np.float64] | None, id_columns: Sequence[str] | None,
           replay_series: Mapping[str, Any] | None = None) -> str:
    """The page's HTML. Q, Q_osim (F, n) [rad | m]; tau (F, n) [N | N·m], tau_osim (F, m)
    of OpenSim's ``id_columns``; ``replay_series`` the replay's worst coordinate
    (harness/track/replay.py), None when it was not run."""
    rot = [c.endswith("_moment") for c in summary["id_columns"]]
    prov = {"harness_version": __version__, "git_commit": git_commit(),
            "command_line": summary.get("command_line") or ["harness", *sys.argv[1:]]}
    scope = (f"model {summary['model']}, markers {summary['markers']} "
             f"({summary['markers_tracked']} tracked), {summary['frames']} frames t = "
             f"{summary['t_start_s']:.4f}–{summary['t_end_s']:.4f} s, engine "
             f"{summary['engine']}"
             + (f", contact {summary['contact_label']}" if summary.get("contact_label") else
                ""))
    head = banner.for_track(checks, code, scope, prov)
    tool = summary["reference_tool"]
    return ENV.get_template("track.html.j2").render(
        banner=head, title=f"Track: {os.path.basename(summary['model'])}", s=summary,
        checks=checks, tool=tool,
        id_rel=summary.get(f"id_vs_{tool['engine']}_rel"),
        ik_charts=Markup(charts(t, names, Q, Q_osim, rot, tool["engine"], ("deg", "mm"),
                                (180 / np.pi, 1000.0), "coordinate")),
        id_charts=Markup(charts(t, summary["id_columns"], tau, _aligned(
            summary["id_columns"], tau_osim, id_columns), rot, tool["engine"], ("N·m", "N"),
            (1.0, 1.0), "generalized force")),
        replay_chart=Markup(replay_chart(replay_series)), rep=summary.get("replay"),
        css=Markup(F.CSS), scripts=Markup(F.scripts("file")),
        ik_rows=_rows(names, Q, Q_osim, rot),
        id_rows=_id_rows(summary["id_columns"], tau, tau_osim, id_columns))
