"""The replay section of the report: per case its plots (inline SVG, units on every axis)
and tables, computed from the bundle's arrays and records.
"""
from __future__ import annotations

import itertools

import numpy as np

from harness.core.tolerances import lookup
from harness.stages.replay.cases import NAME, array_key
from harness.stages.replay.measures import (
    coordinate_errors,
    coordinate_labels,
    first_time,
    frame_errors,
    growth_rate,
    sample_errors,
    sweep_errors,
    window_length,
)
from harness.stages.replay.run import merge_timings


# ----- report data ---------------------------------------------------------------------------
def report_context(manifest: dict, records: list, arrays: dict, timings=None) -> list:
    """Per case: plots (inline SVG) and tables for the report's replay_section.html.j2.
    ``timings``: the bundle's timings.json (wall times), if any."""
    if not manifest.get("replay"):
        return []
    cases = merge_timings(manifest.get("replay") or {}, timings).get("cases", {})
    out = []
    for name, info in cases.items():
        recs = [r for r in records if r.stage == NAME and r.id.startswith(f"{name}/{NAME}/")]
        try:
            ctx = _case_context(name, info, recs, arrays)
        except (KeyError, ValueError, IndexError) as e:
            ctx = {"name": name, "info": info, "plots": [], "pairs": [], "runs": {}, "error":
                   f"cannot draw this case from the bundle: {type(e).__name__}: {e}"}
        out.append(ctx)
    return out


_MAX_POINTS = 400  # per plotted line: keeps the report light and quick to draw


def _thin(n):
    """Indices of at most _MAX_POINTS samples of n (first and last kept)."""
    if n <= _MAX_POINTS:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, _MAX_POINTS).round().astype(int))


def _style(ax, xlabel, title):
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_title(title, fontsize=9)
    ax.tick_params(labelsize=7)


def _case_context(name, info, recs, arrays):
    from harness.core.figures import svg_figure

    t = arrays[array_key(name, "t")]
    ctx = {"name": name, "info": info, "plots": [], "pairs": [], "error": "",
           "runs": info.get("runs", {})}
    if info["mode"] == "convergence":
        ctx["plots"].append(("convergence, conservation and speed–accuracy",
                             svg_figure(lambda fig: _convergence_axes(fig, name, info, arrays),
                                        (12, 3.0))))
        return ctx
    runs = [r for r, v in info["runs"].items() if v["kind"] == "harness"]
    have = [e for e in info["engines"] if runs and array_key(name, runs[0], e, "x") in arrays]
    if not have:
        return ctx
    run = runs[0]
    trel = t - t[0]
    sel = _thin(t.size)
    tol = lookup(NAME, "trajectory")
    pairs = list(itertools.combinations(have, 2))
    nv = arrays[array_key(name, "in", "v0")].size
    X = {e: arrays[array_key(name, run, e, "x")] for e in have}
    nq = X[have[0]].shape[1] - nv

    def draw(fig):
        ax = fig.subplots(1, 3)
        e0 = have[0]
        ax[0].plot(trel[sel], X[e0][sel, :nq], lw=0.8)
        _style(ax[0], "t − t0 [s]", f"trajectory q(t) ({e0}; the others overlap)")
        for a_, b_ in pairs:
            err, _ = sample_errors(X[a_], X[b_], tol)
            ax[1].semilogy(trel[sel], np.maximum(err[sel], 1e-17), lw=0.8, label=f"{a_}~{b_}")
        ax[1].axhline(tol.atol, color="crimson", ls="--", lw=0.8, label=f"band {tol.atol:g}")
        ends = {window_length(arrays, name, run, e) for e in have}
        for n in ends:
            if n < t.size:
                ax[1].axvline(trel[n], color="grey", ls=":", lw=0.8,
                              label="predictability window")
        ax[1].set_ylim(1e-17, None)
        ax[1].legend(fontsize=5, ncol=2)
        _style(ax[1], "t − t0 [s]", "pointwise error max|x_a − x_b|")
        E = arrays[array_key(name, run, e0, "energy")]
        W = arrays[array_key(name, run, e0, "work")]
        ax[2].plot(trel[sel], (E - E[0])[sel], lw=0.8, label="E − E0")
        ax[2].plot(trel[sel], (W[:, 0] - W[:, 1])[sel], lw=0.8, ls="--",
                   label="∫τᵀv − ∫vᵀDv")
        ax[2].plot(trel[sel], -W[sel, 1], lw=0.8, ls=":", label="−∫vᵀDv (dissipated)")
        res = np.abs(E - E[0] - W[:, 0] + W[:, 1]).max()
        ax[2].legend(fontsize=5)
        _style(ax[2], "t − t0 [s]", f"energy balance [J] ({e0}; max residual {res:.1e})")
    ctx["plots"].append(("trajectory, error over time (every engine pair) and energy balance",
                         svg_figure(draw, (12, 3.0))))
    layout = _layout_from_info(info)
    frame_names = info.get("frames", [])
    markers = [m["name"] for m in info["candidate"]["markers"]]
    for a_, b_ in pairs:
        xa, xb = X[a_], X[b_]
        err, bound = sample_errors(xa, xb, tol)
        lam, used = growth_rate(t, err)
        hz = np.nonzero(err > bound)[0]
        row = {"pair": f"{a_}~{b_}", "max": float(err.max()),
               "horizon": float(trel[hz[0]]) if hz.size else None,
               "growth": lam, "items": []}
        if layout is not None and layout.nq == nq:
            ce = coordinate_errors(layout, xa, xb)
            for j, lab in enumerate(coordinate_labels(layout)):
                row["items"].append((lab, float(ce[:, j].max()),
                                     first_time(trel, ce[:, j], tol.atol)))
        dp, ang = frame_errors(arrays[array_key(name, run, a_, "frames")],
                               arrays[array_key(name, run, b_, "frames")])
        for j in range(dp.shape[1]):
            fname = frame_names[j] if j < len(frame_names) else f"frame {j}"
            row["items"].append((f"frame {fname} position [m]", float(dp[:, j].max()),
                                 first_time(trel, dp[:, j], tol.atol)))
            row["items"].append((f"frame {fname} rotation [rad]", float(ang[:, j].max()),
                                 first_time(trel, ang[:, j], tol.atol)))
        dm = np.linalg.norm(arrays[array_key(name, run, a_, "markers")] -
                            arrays[array_key(name, run, b_, "markers")], axis=-1)
        for j in range(dm.shape[1]):
            lab = markers[j] if j < len(markers) else f"marker {j}"
            row["items"].append((f"marker {lab} [m]", float(dm[:, j].max()),
                                 first_time(trel, dm[:, j], tol.atol)))
        ctx["pairs"].append(row)
    return ctx


def _layout_from_info(info):
    from harness.core.conventions import JointSlot, Layout

    slots = tuple(JointSlot(n, ty, iq, nq, iv, nv) for n, ty, iq, nq, iv, nv in
                  info.get("layout", []))
    if not slots:
        return None
    return Layout(slots, sum(s.nq for s in slots), sum(s.nv for s in slots))


def _convergence_axes(fig, name, info, arrays):
    ax = fig.subplots(1, 4)
    runs = [r for r, v in info["runs"].items() if v["kind"] == "convergence"]
    for run in runs:
        for e in info["engines"]:
            pre = array_key(name, "conv", e, run)
            if pre + "/h" not in arrays:
                continue
            err = sweep_errors(arrays, pre, array_key(name, "conv", e, "x_ref"))
            lab = f"{run} {e}"
            wall = info["runs"][run].get("wall_s", {}).get(e)
            if wall is not None:
                ax[3].loglog(wall, err, marker="o", ms=3, lw=0.8, label=lab)
            if run == "dop853":
                continue  # no step: its tolerance sweep is on the speed-accuracy axes
            h = arrays[pre + "/h"]
            E = arrays[pre + "/energy"]
            ax[0].loglog(h, err, marker="o", ms=3, lw=0.8, label=lab)
            ax[1].loglog(h, np.abs(E - E[:, :1]).max(axis=1), marker="o", ms=3, lw=0.8)
            if pre + "/momentum" in arrays:
                L = arrays[pre + "/momentum"]
                ax[2].loglog(h, np.linalg.norm(L - L[:, :1], axis=-1).max(axis=1),
                             marker="o", ms=3, lw=0.8)
    _style(ax[0], "step h [s]", "state error vs step")
    _style(ax[1], "step h [s]", "max |E − E0| [J]")
    _style(ax[2], "step h [s]", "max |L − L0| [kg·m²/s]")
    _style(ax[3], "wall time [s]", "speed–accuracy: error vs wall time")
    ax[0].legend(fontsize=5)
    ax[3].legend(fontsize=5)
