"""The HTML report of a fit bundle (objective components, convergence history, residual
and state plots as inline SVG), rendered with the report's template environment."""
from __future__ import annotations

from harness.core.figures import svg_figure
from harness.report.render import ENV


def render(doc: dict, arrays: dict) -> str:
    hist = doc["history"]

    def conv(fig):
        ax1, ax2 = fig.subplots(1, 2)
        it = [h["iter"] for h in hist]
        pos = [(h["iter"], h["objective"]) for h in hist if h["objective"] > 0]
        if pos:  # a start on the data has objective 0, which a log axis cannot show
            ax1.semilogy(*zip(*pos), "o-")
        ax1.set_xlabel("IPOPT iteration")
        ax1.set_title("objective")
        ax2.semilogy(it, [max(h["inf_pr"], 1e-300) for h in hist], "o-", label="primal inf.")
        ax2.semilogy(it, [max(h["inf_du"], 1e-300) for h in hist], "s-", label="dual inf.")
        ax2.set_xlabel("IPOPT iteration")
        ax2.legend()
        ax2.set_title("infeasibility")

    names = doc["state_names"]

    def resid(fig):
        e, t = arrays["e"], arrays["t"]
        axes = fig.subplots(1, e.shape[1], squeeze=False)[0]
        for k, ax in enumerate(axes):
            ax.plot(t, e[:, k], ".", ms=1)
            ax.set_xlabel("t [s]")
            ax.set_title(f"whitened residual {k}")

    def states(fig):
        x, xt, t = arrays["x_fit"], arrays["x_true"], arrays["t"]
        axes = fig.subplots(1, x.shape[1], squeeze=False)[0]
        for k, ax in enumerate(axes):
            ax.plot(t, xt[:, k], "-", lw=0.8, label="truth")
            ax.plot(t, x[:, k], "--", lw=0.8, label="fit")
            ax.set_xlabel("t [s]")
            ax.set_title(names[k] if k < len(names) else f"x{k}")
        axes[0].legend()
    ncols = max(arrays["x_fit"].shape[1], 2)
    plots = {"convergence": svg_figure(conv, (9, 3)),
             "residuals": svg_figure(resid, (3 * max(arrays["e"].shape[1], 2), 2.8)),
             "states": svg_figure(states, (3 * ncols, 2.8))}
    return ENV.get_template("fit_section.html.j2").render(fit=doc, plots=plots,
                                                           standalone=True)
