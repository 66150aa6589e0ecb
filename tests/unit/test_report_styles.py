"""One style per engine, the same in every chart: six engines get six distinct (colour,
symbol) pairs, every pair of them (and every reference against an engine) a distinct
(colour, symbol, dash), and a stage's charts draw each pair in its one style."""
from __future__ import annotations

import html
import itertools
import json
import re

import numpy as np

from harness.core import figures
from harness.core.records import Record
from harness.model import registry
from harness.report.render import stage_plot
from harness.stages.constrained import rollout
from harness.stages.contact import suite

SIX = ["mujoco", "pinocchio", "crocoddyl", "drake", "opensim", "mujoco_warp"]


def test_six_engines_and_the_references_have_distinct_styles():
    order = figures.engine_order(SIX)
    styles = [figures.engine_style(e, order) for e in SIX]
    assert len({c for c, _ in styles}) == 6 and len({s for _, s in styles}) == 6
    refs = [figures.engine_style(r, order) for r in ("declared", "analytic", "consensus")]
    assert len(set(refs)) == 3 and not set(refs) & set(styles)
    assert not {c for c, _ in refs} & {c for c, _ in styles}
    # an engine's solver (engine:solver) takes the engine's style
    assert figures.engine_style("drake:SAP", order) == figures.engine_style("drake", order)


def test_every_pair_of_six_engines_has_its_own_style_either_way_round():
    order = figures.engine_order(SIX)
    pairs = list(itertools.combinations(SIX, 2))
    pairs += [(ref, e) for ref in ("declared", "analytic", "consensus") for e in SIX]
    styles = {p: figures.pair_style(*p, order) for p in pairs}
    assert len(set(styles.values())) == len(pairs) == 15 + 18
    assert len({(c, s) for c, s, _ in styles.values()}) == len(pairs)  # even without dash
    engines_own = {figures.engine_style(e, order) for e in SIX}
    assert not {(c, s) for c, s, _ in styles.values()} & engines_own
    for a, b in pairs:
        assert figures.pair_style(b, a, order) == styles[(a, b)]


def test_an_engine_keeps_its_style_whichever_engines_a_page_has():
    """The order is the registry's table, not a page's engine list: an engine missing from
    one run does not shift the others' styles."""
    known = registry.engine_names()
    full = figures.engine_order(known, SIX)
    fewer = figures.engine_order(known, SIX[1:])
    for e in SIX[1:]:
        assert figures.engine_style(e, full) == figures.engine_style(e, fewer)


def _rec(fx: str, q: str, a: str, b: str, rel: float) -> Record:
    return Record(id=f"{fx}/dynamics/{q}/{a}~{b}", stage="dynamics", fixture=fx, quantity=q,
                  engine_a=a, engine_b=b, status="passed", passed=True, max_abs=rel,
                  max_rel=rel, atol=1e-12, rtol=1e-9, n_samples=2)


def test_a_stage_draws_each_engine_in_one_style_in_every_chart():
    """Six engines, every pair compared: each engine is drawn against the consensus engine
    (the first), in its own style in every chart, no two engines alike."""
    recs = [_rec(fx, q, a, b, 1e-15 * (1 + i))
            for q in ("mass_matrix", "bias_forces")
            for fx in ("pendulum", "chain7")
            for i, (a, b) in enumerate(itertools.combinations(SIX, 2))]
    order = figures.engine_order(registry.engine_names(), SIX)
    page = stage_plot(recs, "dynamics", ["pendulum", "chain7"], order, SIX)
    seen: dict[str, set] = {}
    for blob in re.findall(r'data-spec="([^"]*)"', page):
        for t in json.loads(html.unescape(blob))["data"]:
            if t.get("mode") == "markers":
                seen.setdefault(t["name"], set()).add((t["marker"]["color"],
                                                       t["marker"]["symbol"]))
    assert sorted(seen) == sorted(SIX[1:])  # the consensus engine has no point of its own
    for e, styles in seen.items():
        assert styles == {figures.engine_style(e, order)}, e
    assert len({next(iter(v)) for v in seen.values()}) == 5


def _traces(page: str) -> list[tuple[dict, dict]]:
    """(trace, layout) of every line of every chart in ``page``."""
    out = []
    for blob in re.findall(r'data-spec="([^"]*)"', page):
        spec = json.loads(html.unescape(blob))
        out += [(t, spec["layout"]) for t in spec["data"] if "lines" in t.get("mode", "")]
    return out


def test_constrained_rollout_drift_lines_take_their_engines_style():
    """Stage 3's rollout drift: each stabilisation mode's line in the colour of the engine
    rolled out (the same as in every other chart), modes told apart by their dash, the
    legend naming mode and engine."""
    t = np.linspace(0.0, 0.5, 51)
    arrays = {}
    for k, mode in enumerate(rollout.MODES):
        pre = f"out/fx/constrained/rollout/{mode}"
        arrays[f"{pre}/t"] = t
        arrays[f"{pre}/drift/declared"] = np.zeros((t.size, 2))
        arrays[f"{pre}/drift/drake"] = np.full((t.size, 2), 10.0 ** -k)
    lines = _traces(rollout.drift_plot("fx", arrays))
    order = figures.engine_order(registry.engine_names(), ["drake"])
    assert len(lines) == 2 * len(rollout.MODES)  # both charts, every mode
    for trace, layout in lines:
        assert trace["line"]["color"] == figures.engine_style("drake", order)[0], trace["name"]
        assert trace["name"].endswith("(drake)") and layout["showlegend"] is True
    dashes = {t["name"]: t["line"].get("dash", "solid") for t, _ in lines}
    assert len(set(dashes.values())) == len(rollout.MODES)


def test_contact_series_take_their_engines_style():
    names = ["native drake point k 1e5", "native drake point k 1e7", "native mujoco defaults",
             "rigid hybrid (e 0.8)", "shared law (semi-implicit Euler 2e-4 s)"]
    styles = suite.series_styles(names)
    order = figures.engine_order(registry.engine_names(), ["drake", "mujoco"])
    for n in names[:3]:
        assert styles[n][0] == figures.engine_style(n.split()[1], order)[0], n
    assert styles[names[0]] != styles[names[1]]  # one engine's two series: two dashes
    engine_colours = {c for c, _ in figures.ENGINE_STYLES}
    assert not {styles[n][0] for n in names[3:]} & engine_colours
    assert len(set(styles.values())) == len(names)
