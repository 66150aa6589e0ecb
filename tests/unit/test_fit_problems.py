"""A fit problem is one module (harness/fit/fitproblem.py, harness/fit/catalog.py): a
scratch ``FitProblem`` registered here — the pendulum's pieces under another name — is
offered by the CLI, runs through api.fit, is written and read back by the bundle writer,
rendered by the report and summarised by the CLI, with no edit anywhere else; once
unregistered, the CLI refuses it and its bundle is no longer read."""
from __future__ import annotations

import argparse
import dataclasses
import json

import pytest

from harness import api, cli
from harness.core.errors import BadInput
from harness.fit import METHODS, bounce_events, bundle, catalog, problem_bounce

NAME = "scratch_pendulum"


def _run(req):
    res = catalog.get("pendulum").run(req)
    res["json"]["problem"] = NAME
    return res


@pytest.fixture
def scratch():
    prob = dataclasses.replace(catalog.get("pendulum"), name=NAME,
                               help="the pendulum under another name", run=_run, studies=())
    catalog.register(prob)
    try:
        yield prob
    finally:
        catalog.unregister(NAME)


def _fit_choices() -> list:
    """The ``--problem`` choices of ``harness fit`` as the CLI builds them."""
    sub = next(a for a in cli.build_parser()._actions
               if isinstance(a, argparse._SubParsersAction))
    fit = sub.choices["fit"]
    return next(a for a in fit._actions if a.dest == "problem").choices


def test_listed_problems_are_the_cli_choices():
    assert list(_fit_choices()) == [p.name for p in api.fit_problems()]
    assert [p.name for p in api.fit_problems()] == ["pendulum", "balance", "bounce",
                                                     "bounce2", "dimension"]


def test_a_registered_problem_runs_through_every_layer(scratch, tmp_path, capsys):
    assert NAME in _fit_choices()
    out, summary = tmp_path / "b", tmp_path / "summary.json"
    assert cli.main(["fit", "--problem", NAME, "--n", "200", "--out", str(out),
                     "--json", str(summary)]) == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    assert printed.startswith(f"fit {NAME}: ")                 # the problem's summary line
    doc, arrays = bundle.read(out)                             # recognised by its key sets
    assert doc["problem"] == NAME and doc["N"] == 200 and arrays["t"].shape == (200,)
    page = (out / "index.html").read_text()
    assert f"Fit report: {NAME}" in page and 'id="shooting' in page
    s = json.loads(summary.read_text())
    assert s["problem"] == NAME and s["converged"] and "p" in s["parameters"]
    (out / "index.html").unlink()                              # re-rendered by the report
    assert cli.main(["report", str(out), "--quiet"]) == 0
    assert (out / "index.html").read_text() == page
    with pytest.raises(BadInput, match="--study"):            # its own options, not the
        api.fit(NAME, out=tmp_path / "s", study="resolution")  # pendulum's
    catalog.unregister(NAME)
    try:
        with pytest.raises(BadInput, match="fit.json"):
            bundle.read(out)
        assert NAME not in _fit_choices()
        with pytest.raises(SystemExit) as ex:               # argparse: not a choice
            cli.main(["fit", "--problem", NAME, "--out", str(tmp_path / "c")])
        assert ex.value.code == 2
        assert not (tmp_path / "c").exists()
    finally:
        catalog.register(scratch)


def test_a_method_of_another_problem_is_refused_naming_it(tmp_path):
    with pytest.raises(BadInput, match="phases applies to --problem bounce only"):
        api.fit("pendulum", out=tmp_path / "x", method="phases")
    with pytest.raises(BadInput, match="unknown method 'rk4'"):
        api.fit("balance", out=tmp_path / "x", method="rk4")
    assert not (tmp_path / "x").exists()


def test_declarations_agree_with_their_modules():
    # the catalog declares each problem's options without importing its module: what it
    # declares is what the module itself uses
    bounce = catalog.get("bounce")
    assert bounce.methods == ("midpoint", problem_bounce.BOUNCE_PHASES)
    assert bounce.event_kind == bounce_events.KIND
    assert catalog.get("pendulum").methods == catalog.get("balance").methods == METHODS
    for p in catalog.problems():  # every declared name exists in its module
        assert p.fields() and all(isinstance(k, (set, frozenset)) for k in p.fields())
        for code in (p.run, p.report_context, p.summary):
            assert callable(code.get())
