"""Sweeps that can fail: ``harness sweep contact`` scores every case against the tolerance
table inside a stated qualified domain (exit 1 when a case fails, outside cases labelled
so), the report recomputes the verdicts from the stored metrics, and the known crash is
the expected crash whichever way it fails (signal, abort, C++ exception, exit code) with
the worker that ran it never reused. Real processes and engines throughout; the quick
grid on 2 workers."""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from harness import api, cli
from harness.core.tolerances import lookup
from harness.model import registry
from harness.sweep import contact
from harness.sweep.executor import run_sweep
from tests.support import sweep_cases as sc

MODES = ("segv", "abort", "cxx", "exit")


def _ode_duration(v_in):
    """T_c [s] of the sweep's impact (m 1 kg, the sweep's law) by DOP853, independently of
    the quadrature the domain uses."""
    from scipy.integrate import solve_ivp

    k, n, d = contact.LAW["stiffness"], contact.LAW["exponent"], contact.LAW["damping"]

    def f(t, y):
        return [y[1], -k * max(y[0], 0.0) ** n * (1 + d * y[1])]

    def back(t, y):
        return y[0]
    back.terminal, back.direction = True, -1
    sol = solve_ivp(f, (0, 1.0), [0.0, v_in], method="DOP853", rtol=1e-10, atol=1e-14,
                    events=back, first_step=1e-9)
    return sol.t_events[0][0]


def _expected_verdict(inputs, metrics, durations):
    """The verdict recomputed here from the table: inside iff dt ≤ T_c / N_min; then every
    scored metric within its entry."""
    vn = inputs["speed_mps"] * math.cos(math.radians(inputs["angle_deg"]))
    vt = inputs["speed_mps"] * math.sin(math.radians(inputs["angle_deg"]))
    T_c = durations.setdefault(vn, _ode_duration(vn))
    if T_c / inputs["dt_s"] < lookup("contact", "sweep_domain_steps").atol:
        return "outside"
    t = lookup("contact", "sweep_tangential")
    ok = (metrics["rebound_err_rel"] <= lookup("contact", "sweep_rebound").atol
          and abs(metrics["tangential_err_mps"]) <= t.atol * vt
          and metrics["penetration_err_rel"] <= lookup("contact", "sweep_penetration").atol
          and metrics["energy_gain_J"] <= lookup("contact", "sweep_energy_gain").atol
          and metrics["event_count"] == 1 and metrics["separated"] is True)
    return "passed" if ok else "failed"


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("contact") / "sweep"
    rc = cli.main(["sweep", "contact", "--quick", "--quiet", "--workers", "2", "--out",
                   str(out)])
    return rc, out, json.loads((out / "sweep.json").read_text())


def test_quick_contact_sweep_states_method_domain_and_scores_every_case(quick):
    rc, out, doc = quick
    sc_ = doc["scoring"]
    m = sc_["method"]
    assert "semi-implicit Euler" in m["integrator"] and "Hunt–Crossley" in m["law"]
    assert "μ_s = μ_d = the case's mu" in m["law"] and "k = 1e+06 N/m^1.5" in m["law"]
    assert m["engine"].split()[0] in registry.ENGINES
    scored = {x["name"]: x for x in m["metrics"] if x["scored"]}
    assert scored["rebound_err_rel"]["tolerance"] == "contact/sweep_rebound"
    assert scored["rebound_err_rel"]["atol"] == lookup("contact", "sweep_rebound").atol
    assert all(x["definition"] and x["unit"] for x in m["metrics"])
    assert "dt_s ≤ T_c / 50" in m["domain"]["statement"]
    rows = {r["case_id"]: r for r in doc["cases"]}
    durations = {}
    got = {v["case_id"]: v["verdict"] for v in sc_["verdicts"]}
    want = {cid: _expected_verdict(r["inputs"], r["metrics"], durations)
            for cid, r in rows.items()}
    assert got == want
    # the cases that made the sweep look wrong are coarse steps, labelled outside
    worst_rebound = max(rows.values(), key=lambda r: r["metrics"]["rebound_err_rel"])
    worst_tangent = max(rows.values(), key=lambda r: abs(r["metrics"]["tangential_err_mps"]))
    assert worst_rebound["metrics"]["rebound_err_rel"] > lookup("contact", "sweep_rebound").atol
    assert abs(worst_tangent["metrics"]["tangential_err_mps"]) > 0.5
    for r in (worst_rebound, worst_tangent):
        assert got[r["case_id"]] == "outside"
    assert sc_["counts"] == {"passed": list(want.values()).count("passed"), "failed": 0,
                             "outside": list(want.values()).count("outside"), "not_scored": 0}
    assert sc_["counts"]["passed"] >= 40 and rc == 0
    html = (out / "index.html").read_text()
    for text in ("Qualified domain", "Method", "semi-implicit Euler", "contact/sweep_rebound",
                 f"{sc_['counts']['outside']} outside the qualified domain"):
        assert text in html, text


def test_rerender_recomputes_verdicts_from_the_stored_metrics(quick, tmp_path):
    """An inside case whose stored metric is past its bound fails on re-render even though
    sweep.json still says passed; the report says the stored verdicts differ."""
    import shutil

    _, out, doc = quick
    folder = tmp_path / "s"
    shutil.copytree(out, folder)
    victim = next(v["case_id"] for v in doc["scoring"]["verdicts"] if v["verdict"] == "passed")
    for r in doc["cases"]:
        if r["case_id"] == victim:
            r["metrics"]["rebound_err_rel"] = 2 * lookup("contact", "sweep_rebound").atol
    (folder / "sweep.json").write_text(json.dumps(doc))
    assert cli.main(["report", str(folder)]) == 0
    html = (folder / "index.html").read_text()
    assert "1 case(s) failed their bounds" in html and 'id="verdicts-differ"' in html
    assert victim in html.split('id="failed-cases"')[1]


@pytest.fixture
def variant(monkeypatch):
    """Registers a sweep module named ``variant`` built by the test (grid, run_case,
    crash_case, scorer)."""
    mod = type(sys)("sweep_variant")
    monkeypatch.setitem(sys.modules, "sweep_variant", mod)
    monkeypatch.setitem(api.SWEEPS, "variant", "sweep_variant")
    return mod


def test_a_defective_law_fails_inside_the_domain_and_exits_1(variant, tmp_path, capsys):
    """The rollout loses the damping term; the closed forms keep it: every case inside
    the domain fails on its rebound (≥ 5e-2 off), the coarse ones are outside."""
    inside = [{"speed_mps": s, "angle_deg": 15.0, "mu": 0.3, "dt_s": 1e-4,
               "case_id": f"in{s:g}"} for s in (1.0, 3.0)]
    coarse = [{"speed_mps": 2.0, "angle_deg": 15.0, "mu": 0.3, "dt_s": 2e-3,
               "case_id": "coarse"}]
    variant.grid = lambda quick=False: inside + coarse
    variant.run_case = sc.contact_lost_damping
    variant.scorer = contact
    out = tmp_path / "s"
    rc = cli.main(["sweep", "variant", "--quiet", "--workers", "2", "--out", str(out)])
    stdout = capsys.readouterr().out
    assert rc == 1, stdout
    doc = json.loads((out / "sweep.json").read_text())
    assert doc["unexpected"] == [] and doc["counts"]["ok"] == 3
    assert doc["scoring"]["failed"] == ["in1", "in3"]
    verdicts = {v["case_id"]: v for v in doc["scoring"]["verdicts"]}
    assert verdicts["coarse"]["verdict"] == "outside"
    for cid in ("in1", "in3"):
        bad = {c["metric"] for c in verdicts[cid]["checks"] if not c["passed"]}
        assert "rebound_err_rel" in bad
        assert f"FAILED   case {cid}: rebound_err_rel" in stdout
    assert "2 failed, 1 outside the qualified domain" in stdout
    html = (out / "index.html").read_text()
    assert "2 case(s) failed their bounds" in html


# ----- the known crash, whichever way it fails ----------------------------------------------
def _failing_grid(pid_dir, fail_ids=()):
    return [{"case_id": i, "pid_dir": str(pid_dir),
             **({"fail": MODES[fail_ids.index(i)]} if i in fail_ids else {})}
            for i in range(14)]


def test_a_worker_is_never_reused_after_a_failure_of_any_kind(tmp_path):
    """Each failure mode early in the grid, 2 workers: the process that failed (its pid
    and the time written just before failing) runs no case after it; the C++-like
    exception is an error row (not a crash) unless the case is isolated, then it is a
    crash, and an isolated case's process runs no other case at all."""
    fail_ids = (1, 3, 5, 7)
    cases = _failing_grid(tmp_path, fail_ids)
    for isolate in ((), fail_ids):
        for p in tmp_path.iterdir():
            p.unlink()
        r = run_sweep(sc.failing_case, cases, workers=2, isolate=isolate)
        by_id = r.by_id()
        ok = [(x["metrics"]["pid"], x["metrics"]["t_ns"]) for x in r.rows
              if x["status"] == "ok"]
        assert len(ok) == 10
        for i, mode in zip(fail_ids, MODES):
            row = by_id[i]
            pid, t_ns = map(int, (tmp_path / str(i)).read_text().split())
            assert not [t for p, t in ok if p == pid and t > t_ns], (mode, isolate)
            if isolate:
                assert pid not in [p for p, _ in ok], mode
            if mode == "cxx" and not isolate:
                assert row["status"] == "error" and "MemoryError: std::bad_alloc" in row["reason"]
            else:
                assert row["status"] == "crashed", row
        assert "SIGSEGV" in by_id[1]["reason"] and "SIGABRT" in by_id[3]["reason"]
        assert "exited with code 3" in by_id[7]["reason"]
        if isolate:
            assert by_id[5]["reason"].startswith("raised MemoryError: std::bad_alloc")


def test_a_worker_that_dies_before_it_is_ready_is_replaced_once(tmp_path):
    """One worker (so the count is not raced): a process that dies before it reported
    ready never received its case, so the case goes to a new process and every case
    runs; two such deaths in a row are a broken setup, the sweep's start failure."""
    import os

    flag = tmp_path / "flag"
    cases = _failing_grid(tmp_path)
    flag.write_text(f"{os.getpid()} 1")
    r = run_sweep(sc.DiesBeforeReady(str(flag)), cases, workers=1)
    assert [x["status"] for x in r.rows] == ["ok"] * len(cases)
    assert r.backend["worker_start_failures"] == 1 and flag.read_text().split()[1] == "0"
    flag.write_text(f"{os.getpid()} 2")
    with pytest.raises(RuntimeError, match="failed to start .*SIGSEGV"):
        run_sweep(sc.DiesBeforeReady(str(flag)), cases, workers=1)


@pytest.mark.parametrize("mode", MODES)
def test_the_expected_crash_whichever_way_it_fails(variant, tmp_path, capsys, mode):
    """--include-crash with a crash case that fails by ``mode``: exit 0, recorded as the
    expected crash, run in a fresh process that runs nothing else."""
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    variant.grid = lambda quick=False: _failing_grid(pid_dir)
    variant.run_case = sc.failing_case
    variant.crash_case = lambda: {"case_id": 100, "pid_dir": str(pid_dir), "fail": mode}
    out = tmp_path / "s"
    rc = cli.main(["sweep", "variant", "--quiet", "--workers", "2", "--include-crash",
                   "--out", str(out)])
    stdout = capsys.readouterr().out
    assert rc == 0, stdout
    doc = json.loads((out / "sweep.json").read_text())
    assert doc["counts"] == {"ok": 14, "error": 0, "crashed": 1, "timeout": 0}
    assert doc["unexpected"] == [] and "expected crashed: case 100: " in stdout
    crash_pid = int(Path(pid_dir, "100").read_text().split()[0])
    assert crash_pid not in [r["metrics"]["pid"] for r in doc["cases"] if r["status"] == "ok"]
