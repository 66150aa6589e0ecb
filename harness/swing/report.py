"""HTML report of a swing run (Jinja2, autoescaped, inline SVG plots)."""
from __future__ import annotations

import sys

import numpy as np
from markupsafe import Markup

from harness.core.figures import svg_figure
from harness.report.render import ENV


def _svg(draw, size):
    return Markup(svg_figure(draw, size))


def provenance(replay_records=()) -> dict:
    """The run's provenance for the report: harness version, git commit, command line and
    the version of every engine the replay records name."""
    from harness.core.version import __version__
    from harness.evidence.bundle import git_commit
    from harness.model import registry

    names = sorted({n for r in replay_records for n in (r.engine_a, r.engine_b)
                    if n in registry.ENGINES})
    return {"harness_version": __version__, "git_commit": git_commit(),
            "command_line": ["harness", *sys.argv[1:]],
            "engines": {n: registry.probe(n).version for n in names}}


def render(summary: dict, arrays: dict, joint_names, checks: list, replay_records=(),
           title="Swing fit", prov: dict | None = None) -> str:
    """``prov``: provenance() of the run (computed here when None)."""
    t, tau = arrays["t"], arrays["tau"]
    e = np.linalg.norm(arrays["marker_residual"], axis=2)

    def torques(fig):
        ax = fig.add_subplot(1, 1, 1)
        for j, n in enumerate(joint_names):
            if np.abs(tau[:, j]).max() > 0.05 * np.abs(tau).max():
                ax.plot(t, tau[:, j], lw=0.8, label=n)
        ax.set_xlabel("t [s]")
        ax.set_ylabel("τ [N·m | N]")
        ax.legend(fontsize=5, ncol=3)

    def residuals(fig):
        ax = fig.add_subplot(1, 1, 1)
        ax.plot(t, 1000 * np.sqrt(np.nanmean(e ** 2, axis=1)), lw=1, label="RMS over markers")
        ax.plot(t, 1000 * np.nanmax(e, axis=1), lw=0.8, label="worst marker")
        ax.set_xlabel("t [s]")
        ax.set_ylabel("marker error [mm]")
        ax.legend(fontsize=6)

    def reint(fig):
        ax = fig.add_subplot(1, 1, 1)
        d = arrays["reint_dev"]
        tr = arrays["t_replay"]
        ax.semilogy(tr, np.maximum(1e-12, np.sqrt(np.mean(d ** 2, axis=1))), lw=1)
        ax.set_xlabel("t [s]")
        ax.set_ylabel("reintegrated − fitted markers, RMS [m]")

    def engines(fig):
        ax = fig.add_subplot(1, 1, 1)
        tr, ref = arrays["t_replay"], arrays["markers_replay"]
        for e, mk in arrays.get("engine_markers", {}).items():
            d = np.sqrt(np.mean(np.sum((mk - ref) ** 2, axis=2), axis=1))
            ax.semilogy(tr, np.maximum(1e-12, d), lw=1, label=e)
        ax.set_xlabel("t [s]")
        ax.set_ylabel("engine replay − fitted markers, RMS [m]")
        ax.legend(fontsize=7)

    plots = [("Joint torques (fitted)", _svg(torques, (10, 3.2))),
             ("Marker error over time", _svg(residuals, (10, 2.6))),
             ("Open-loop reintegration of the fitted torques", _svg(reint, (10, 2.6)))]
    if arrays.get("engine_markers"):
        plots.append(("Each engine's open-loop replay against the fitted markers",
                      _svg(engines, (10, 2.6))))
    return ENV.get_template("swing.html.j2").render(title=title, s=summary, plots=plots,
                                                      checks=checks, replay=list(replay_records),
                                                      prov=prov or provenance(replay_records))
