"""The CLI's own promises: help for every option, ``--json FILE`` summaries that agree with
the exit code and with the bundle on disk (counts recounted from records.json), a folder
as ``--json`` refused before any work, repeated warnings printed once with their count,
and ``harness sweep`` saying which backend ran. Real runs of the installed CLI, small
(``pendulum``, 2 samples)."""
from __future__ import annotations

import argparse
import json
import logging
import warnings
from collections import Counter
from pathlib import Path

import pytest

from harness import api, cli
from tests.conftest import ROOT, run_cli

STATUSES = ("passed", "failed", "error", "not_scored", "not_provided", "unconverged",
            "informational")


def _subparsers() -> dict:
    p = cli.build_parser()
    (sp,) = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
    return sp.choices


def _json_of(path: Path, proc) -> dict:
    assert "Traceback" not in proc.stderr, proc.stderr
    doc = json.loads(Path(path).read_text())
    assert doc["exit_code"] == proc.returncode, (doc["exit_code"], proc.stderr[-2000:])
    assert doc["command"] == proc.args[3] and doc["error"] is None
    assert f"summary: {path}" in proc.stdout
    return doc


def _recount(bundle: Path) -> tuple:
    """(records per status, excluding diagnosis rows; number of records) from the bundle's
    own records.json, independently of the summary."""
    rows = json.loads((bundle / "records.json").read_text())
    c = Counter(r["status"] for r in rows if r["stage"] != "diagnosis")
    return {s: c.get(s, 0) for s in STATUSES}, len(rows)


def _check_verdict(doc: dict, bundle: Path, proc):
    counts, n = _recount(bundle)
    assert doc["verdict"]["counts"] == counts
    assert doc["n_records"] == n
    assert doc["bundle"] == str(bundle) and doc["report"] == str(bundle / "index.html")
    assert doc["verdict"]["headline"] in proc.stdout  # the sentence the terminal printed
    bad = sum(counts[s] for s in ("failed", "error", "not_scored", "unconverged"))
    scored = counts["passed"] + counts["failed"]
    assert doc["verdict"]["qualified"] == (bad == 0 and scored > 0)
    assert doc["verdict"]["n_scored"] == scored


# ----- help ---------------------------------------------------------------------------------
def test_every_option_of_every_command_has_help():
    subs = _subparsers()
    missing = [f"{name} {a.option_strings or a.dest}" for name, sub in subs.items()
               for a in sub._actions if not (a.help or "").strip()]
    assert missing == []
    # every command that writes an output folder says where, in its --help
    for name, folder in (("parity", "reports/parity"), ("diagnose", "reports/diagnose"),
                         ("replay", "reports/replay"), ("report", "BUNDLE/index.html")):
        assert folder in subs[name].format_help().replace("\n", " "), name
    for name in ("qualify", "swing", "sweep", "fit", "synth", "track"):
        out = [a for a in subs[name]._actions if "--out" in a.option_strings][0]
        assert out.required and "required" in out.help, name
    # --json on every command that runs something
    for name in ("engines", "parity", "diagnose", "qualify", "replay", "synth", "verify",
                 "report", "swing", "capture", "sweep", "fit", "track"):
        assert "--json" in subs[name]._option_string_actions, name
    workers = subs["sweep"]._option_string_actions["--workers"].help
    assert "--backend" in workers and "does not select Dask" in workers


# ----- --json FILE names a folder: exit 2 before any work ------------------------------------
@pytest.mark.parametrize("argv", [
    ["engines"],
    ["parity", "--fixture", "pendulum", "--samples", "2", "--out", "{out}"],
    ["diagnose", "fixtures/golden/pendulum.urdf", "--out", "{out}"],
    ["qualify", "--out", "{out}"],
    ["replay", "no_such_candidate.json", "--out", "{out}"],
    ["synth", "pendulum", "--out", "{out}/c.json"],
    ["verify", "{out}"],
    ["report", "{out}"],
    ["swing", "data/swing/driver.c3d", "--quick", "--out", "{out}"],
    ["capture", "data/swing/driver.c3d"],
    ["sweep", "contact", "--quick", "--out", "{out}"],
    ["fit", "--problem", "pendulum", "--out", "{out}"],
    ["track", "data/opensim_models/arm26.osim", "no_such.trc", "--out", "{out}"],
], ids=lambda a: a[0])
def test_json_naming_a_folder_exits_2_before_any_work(tmp_path, capsys, monkeypatch, argv):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "out"
    folder = tmp_path / "summary"
    folder.mkdir()
    rc = cli.main([a.format(out=out) for a in argv] + ["--json", str(folder)])
    cap = capsys.readouterr()
    assert rc == 2
    assert cap.err.strip().splitlines() == [
        f"harness: error: --json {folder}: is a folder; name a file"], cap.err
    assert cap.out == ""  # nothing ran
    assert not out.exists() and list(folder.iterdir()) == []


# ----- --json of each command: parses, matches the exit code and the bundle -------------------
@pytest.fixture(scope="module")
def parity_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("json")
    out, js = d / "parity", d / "parity.json"
    proc = run_cli("parity", "--fixture", "pendulum", "--samples", "2", "--out", out,
                   "--json", js, "--quiet")
    return proc, out, js


def test_parity_json_matches_exit_code_and_bundle(parity_run):
    proc, out, js = parity_run
    doc = _json_of(js, proc)
    _check_verdict(doc, out, proc)
    assert proc.returncode == 0 and doc["verdict"]["qualified"] is True
    manifest = json.loads((out / "manifest.json").read_text())
    assert doc["engines"] == manifest["engines"]
    assert doc["command_line"][:2] == ["harness", "parity"]


def test_verify_and_report_json_read_the_same_bundle(parity_run, tmp_path):
    _, out, _ = parity_run
    js = tmp_path / "verify.json"
    proc = run_cli("verify", out, "--json", js)
    doc = _json_of(js, proc)
    counts, n = _recount(out)
    assert proc.returncode == 0 and doc["problems"] == [] and doc["n_records"] == n
    assert doc["verdict"]["counts"] == counts
    js = tmp_path / "report.json"
    html = tmp_path / "page.html"
    proc = run_cli("report", out, "--out", html, "--json", js)
    doc = _json_of(js, proc)
    assert proc.returncode == 0 and doc["report"] == str(html) and html.is_file()
    assert doc["verdict"]["counts"] == counts and doc["changes"] is None


def test_diagnose_json_exit_code_follows_the_explanation(tmp_path):
    out, js = tmp_path / "dg", tmp_path / "dg.json"
    proc = run_cli("diagnose", ROOT / "fixtures/golden/double_pendulum.urdf", "--samples", "2",
                   "--out", out, "--json", js, "--quiet")
    doc = _json_of(js, proc)
    counts, n = _recount(out)
    assert doc["verdict"]["counts"] == counts and doc["n_records"] == n
    assert doc["explained"] == (proc.returncode == 0)
    assert doc["explained"] == all(s["explained"] for s in doc["diagnosis"])


def test_synth_and_replay_json(tmp_path):
    cand, js = tmp_path / "cand.json", tmp_path / "synth.json"
    proc = run_cli("synth", "pendulum", "--out", cand, "--duration", "0.5", "--json", js)
    doc = _json_of(js, proc)
    npz = json.loads(cand.read_text())  # the manifest the summary names
    assert proc.returncode == 0 and doc["candidate"] == str(cand) and npz
    assert Path(doc["arrays"]).is_file()
    assert doc["duration_s"] == pytest.approx(0.5, abs=0.01 + 1e-12)  # one knot spacing
    out, js = tmp_path / "replay", tmp_path / "replay.json"
    proc = run_cli("replay", cand, "--samples", "2", "--out", out, "--json", js, "--quiet")
    doc = _json_of(js, proc)
    _check_verdict(doc, out, proc)
    rows = json.loads((out / "records.json").read_text())
    traj = [r for r in rows if r["stage"] == "replay" and r["quantity"] == "trajectory"
            and r["max_abs"] is not None]
    assert doc["replay_worst_trajectory"]["max_abs"] == max(r["max_abs"] for r in traj)


def test_fit_json(tmp_path):
    out, js = tmp_path / "fit", tmp_path / "fit.json"
    proc = run_cli("fit", "--problem", "pendulum", "--n", "200", "--out", out, "--json", js)
    doc = _json_of(js, proc)
    fit = json.loads((out / "fit.json").read_text())
    assert doc["converged"] == fit["converged"] == (proc.returncode == 0)
    assert doc["parameters"] == fit["parameters"] and doc["bundle"] == str(out)


def test_engines_json(tmp_path):
    js = tmp_path / "engines.json"
    proc = run_cli("engines", "--json", js)
    doc = _json_of(js, proc)
    assert [e["name"] for e in doc["engines"]] == [l.split()[0] for l in
                                                   proc.stdout.splitlines()[:-1]]
    assert all(e["available"] == ("UNAVAILABLE" not in l) for e, l in
               zip(doc["engines"], proc.stdout.splitlines()))


def test_swing_json(tmp_path):
    out, js = tmp_path / "swing", tmp_path / "swing.json"
    proc = run_cli("swing", ROOT / "data/swing/driver.c3d", "--quick", "--no-replay",
                   "--quiet", "--out", out, "--json", js)
    doc = _json_of(js, proc)
    printed = [l.split()[0] for l in proc.stdout.splitlines() if l.startswith("  ")]
    assert doc["counts"]["not_met"] == printed.count("NOT")
    assert doc["counts"]["met"] == printed.count("met")
    assert (doc["counts"]["not_met"] == 0) == (proc.returncode == 0)
    assert doc["report"] == str(out / "index.html") and (out / "index.html").is_file()


# ----- sweep: --workers and the backend it names ------------------------------------------------
def test_sweep_names_its_backend_and_json_matches_sweep_json(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(api.SWEEPS, "pendulum_test", "tests.support.sweep_cases")
    out, js = tmp_path / "sweep", tmp_path / "sweep.json"
    rc = cli.main(["sweep", "pendulum_test", "--quick", "--workers", "2", "--out", str(out),
                   "--json", str(js)])
    cap = capsys.readouterr()
    first = [l for l in cap.err.splitlines() if l.strip()][0]
    assert first == "sweep pendulum_test: backend local (2 processes)", cap.err
    assert "cases on backend local (2 processes)" in cap.out
    doc = json.loads(js.read_text())
    sweep = json.loads((out / "sweep.json").read_text())
    assert doc["exit_code"] == rc and doc["backend"] == "backend local (2 processes)"
    assert doc["counts"] == sweep["counts"] and doc["n_cases"] == len(sweep["cases"])
    assert doc["unexpected"] == sweep["unexpected"] and (rc == 0) == (sweep["unexpected"] == [])
    assert api.backend_text("dask", 2) == "Dask LocalCluster (2 workers)"


# ----- warnings: each distinct one once, with its count ----------------------------------------
N = 7


def _warn_then(real):
    def wrapped(*args, **kw):
        for i in range(N):  # one source line: Python's default filter would show it once
            warnings.warn("a library says this again", UserWarning)
            logging.getLogger("some.library").warning("logged again")
        warnings.warn("said once", RuntimeWarning)
        return real(*args, **kw)
    return wrapped


def test_repeated_warnings_print_once_with_their_count(capsys, monkeypatch):
    monkeypatch.setattr(api, "engines", _warn_then(api.engines))
    assert cli.main(["engines"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [f"harness: warning: UserWarning: a library says this again (×{N})",
                   f"harness: warning: some.library: logged again (×{N})",
                   "harness: warning: RuntimeWarning: said once (×1)"], err


def test_quiet_prints_only_the_number_of_warnings(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(api, "parity", _warn_then(api.parity))
    js = tmp_path / "p.json"
    rc = cli.main(["parity", "--fixture", "pendulum", "--samples", "2", "--stages", "0",
                   "--out", str(tmp_path / "p"), "--quiet", "--json", str(js)])
    err = capsys.readouterr().err.splitlines()
    assert rc == 0
    assert err == [f"harness: {2 * N + 1} warnings (3 distinct) not shown (--quiet)"], err
    doc = json.loads(js.read_text())
    assert sorted(w["count"] for w in doc["warnings"]) == [1, N, N]
