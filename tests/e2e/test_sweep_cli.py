"""``harness sweep NAME`` as a user runs it. The contact sweep's module
(harness/contact_sweep.py) is registered under ``contact``; these tests register the
pendulum sweep of tests/support/sweep_cases.py under ``pendulum_test`` (a real engine
rollout per case and Drake's real SAP segfault as the crash case)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from harness import api, cli
from harness.core.strict import MAX_WORKERS
from tests.conftest import ROOT, assert_close
from tests.support import sweep_cases as sc

NAME = "pendulum_test"
_RUNNER = ("import sys; from harness import api, cli; "
           f"api.SWEEPS[{NAME!r}] = 'tests.support.sweep_cases'; sys.exit(cli.main(sys.argv[1:]))")


def _run(*args, timeout=300):
    return subprocess.run([sys.executable, "-c", _RUNNER, "sweep", NAME, *map(str, args)],
                          capture_output=True, text=True, cwd=ROOT, timeout=timeout)


@pytest.fixture
def registered(monkeypatch):
    monkeypatch.setitem(api.SWEEPS, NAME, "tests.support.sweep_cases")


def test_cli_sweep_with_crash_progress_and_output(tmp_path):
    out = tmp_path / "sweep"
    proc = _run("--out", out, "--workers", "2", "--include-crash")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    progress = [l for l in proc.stderr.splitlines() if l.startswith(f"sweep {NAME}: ")]
    assert progress and progress[-1].startswith(f"sweep {NAME}: 201/201 done, 1 crashed"), \
        proc.stderr
    assert "expected crashed: case 10000: worker process killed by SIGSEGV" in proc.stdout
    assert f"report: {out.resolve() / 'index.html'}" in proc.stdout
    doc = json.loads((out / "sweep.json").read_text())
    assert doc["schema_version"] == 2 and doc["name"] == NAME
    assert doc["scoring"] is None  # the test sweep has no bounds: statuses decide alone
    assert doc["counts"] == {"ok": 200, "error": 0, "crashed": 1, "timeout": 0}
    assert doc["expected"] == [{"case_id": 10000, "status": "crashed"}]
    assert doc["unexpected"] == []
    assert doc["backend"]["name"] == "local" and doc["backend"]["workers"] == 2
    assert doc["command_line"][:3] == ["harness", "sweep", NAME]
    assert doc["versions"]["drake"] and doc["versions"]["distributed"]
    assert [r["case_id"] for r in doc["cases"]] == list(range(200)) + [10000]
    crash = doc["cases"][-1]
    assert crash["status"] == "crashed" and crash["inputs"]["crash"] is True
    assert doc["grid"]["n_cases"] == 201 and len(doc["grid"]["axes"]["q0_rad"]) == 10
    html = (out / "index.html").read_text()
    assert _heat_maps(html) == 3 and "worker process killed by SIGSEGV" in html
    assert sorted(p.name for p in out.iterdir()) == ["index.html", "plotly.min.js",
                                                     "sweep.json"]


def _heat_maps(html: str) -> int:
    """Charts in the heat-map section (one per metric that varies over the cases)."""
    return html.split('<div id="maps">')[1].split("</section>")[0].count('class="plot"')


def test_cli_sweep_dask_local_cluster_quiet(tmp_path, registered, capsys):
    """--backend dask --workers 2 starts its own LocalCluster; --quiet: nothing on stderr.
    (Crashes on Dask: tests/unit/test_sweep.py, on a shared cluster.)"""
    out = tmp_path / "sweep"
    rc = cli.main(["sweep", NAME, "--out", str(out), "--backend", "dask", "--workers", "2",
                   "--quick", "--quiet"])
    cap = capsys.readouterr()
    assert rc == 0, cap.out + cap.err
    assert cap.err == ""
    doc = json.loads((out / "sweep.json").read_text())
    assert doc["backend"]["name"] == "dask" and doc["backend"]["local_cluster"] is True
    assert doc["backend"]["workers"] == 2 and doc["backend"]["allowed_failures"] == 1
    assert doc["counts"] == {"ok": 8, "error": 0, "crashed": 0, "timeout": 0}
    for r in doc["cases"]:
        if r["status"] == "ok":
            case = {"case_id": r["case_id"], **r["inputs"]}
            assert r["metrics"].keys() == sc.rollout("mujoco", case).keys()


def test_unexpected_outcomes_exit_1_and_are_still_written(tmp_path, monkeypatch, capsys):
    """Crash policy: the sweep goes on and is written, but any case that did not finish as
    expected (here a raising case, and a 'crash case' that does not crash) makes exit 1."""
    from tests.support import sweep_cases

    mod = type(sys)("sweep_cases_variant")
    mod.grid = lambda quick=False: sweep_cases.grid(quick=True) + [sweep_cases.error_case()]
    mod.run_case = sweep_cases.run_case
    mod.crash_case = lambda: {**sweep_cases.error_case(), "case_id": 77, "dt_s": 0.01}
    monkeypatch.setitem(sys.modules, "sweep_cases_variant", mod)
    monkeypatch.setitem(api.SWEEPS, NAME, "sweep_cases_variant")
    out = tmp_path / "sweep"
    rc = cli.main(["sweep", NAME, "--out", str(out), "--workers", "1", "--quick",
                   "--include-crash", "--quiet"])
    cap = capsys.readouterr()
    assert rc == 1, cap.out + cap.err
    doc = json.loads((out / "sweep.json").read_text())
    assert doc["unexpected"] == [77, 10001]
    assert "ERROR    case 10001" in cap.out and "OK       case 77" in cap.out


@pytest.mark.parametrize("args, message", [
    (["--workers", "0"], f"--workers: 0 is out of range: at least 1 and at most {MAX_WORKERS}"),
    (["--backend", "local", "--scheduler", "tcp://127.0.0.1:1"], "--scheduler: connects to"),
    (["--timeout", "-1"], "--timeout: must be a finite number"),
    (["--axes", "q0_rad,speed_mps"], "--axes: y axis 'speed_mps' is not an input"),
    (["--axes", "q0_rad"], "--axes: needs two different inputs"),
])
def test_bad_options_exit_2_and_write_nothing(tmp_path, registered, capsys, args, message):
    out = tmp_path / "sweep"
    rc = cli.main(["sweep", NAME, "--out", str(out), "--quick", "--quiet", *args])
    cap = capsys.readouterr()
    assert rc == 2
    assert cap.err.strip().splitlines() == [cap.err.strip()] and message in cap.err, cap.err
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == []  # no temporary folder left either


def test_refuses_to_replace_a_folder_that_is_not_a_sweep(tmp_path, registered, capsys):
    out = tmp_path / "data"
    out.mkdir()
    (out / "precious.txt").write_text("keep me")
    rc = cli.main(["sweep", NAME, "--out", str(out), "--quick", "--quiet"])
    assert rc == 2 and "not a sweep; refusing to replace it" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["precious.txt"]
    # an earlier sweep is replaced atomically
    out2 = tmp_path / "s"
    assert cli.main(["sweep", NAME, "--out", str(out2), "--quick", "--quiet",
                     "--workers", "1"]) == 0
    first = json.loads((out2 / "sweep.json").read_text())
    assert cli.main(["sweep", NAME, "--out", str(out2), "--quick", "--quiet",
                     "--workers", "2"]) == 0
    second = json.loads((out2 / "sweep.json").read_text())
    assert first["backend"]["workers"] == 1 and second["backend"]["workers"] == 2
    assert [r["metrics"] for r in first["cases"]] == [r["metrics"] for r in second["cases"]]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "s"]


def test_contact_sweep_module_missing_is_one_line_exit_2(tmp_path, capsys):
    """On a branch without harness/contact_sweep.py the command says so (exit 2)."""
    try:
        import harness.sweep.contact  # noqa: F401
    except ImportError:
        rc = cli.main(["sweep", "contact", "--out", str(tmp_path / "c"), "--quiet"])
        err = capsys.readouterr().err
        assert rc == 2 and "module harness.contact_sweep is not available" in err
        assert not (tmp_path / "c").exists()
    else:  # merged: the contact sweep's own quick grid runs end to end
        rc = cli.main(["sweep", "contact", "--out", str(tmp_path / "c"), "--quick",
                       "--quiet", "--workers", "2"])
        assert rc == 0, capsys.readouterr().out
        doc = json.loads((tmp_path / "c" / "sweep.json").read_text())
        assert doc["counts"]["ok"] == len(doc["cases"])


def test_report_rerenders_a_sweep_folder(tmp_path, registered, capsys):
    out = tmp_path / "s"
    assert cli.main(["sweep", NAME, "--out", str(out), "--quick", "--quiet",
                     "--workers", "1"]) == 0
    (out / "index.html").write_text("stale")
    assert cli.main(["report", str(out)]) == 0
    html = (out / "index.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and _heat_maps(html) == 3
    assert (out / "plotly.min.js").is_file()
    assert cli.main(["report", str(out), "--baseline", str(out)]) == 2
    doc = json.loads((out / "sweep.json").read_text())
    doc["cases"][0]["metrics_extra"] = 1
    (out / "sweep.json").write_text(json.dumps(doc))
    assert cli.main(["report", str(out)]) == 2
    assert "has unknown or missing fields" in capsys.readouterr().err


def test_chosen_axes_and_aggregation(tmp_path, registered, capsys):
    out = tmp_path / "s"
    assert cli.main(["sweep", NAME, "--out", str(out), "--quick", "--quiet", "--workers", "1",
                     "--axes", "dt_s,v0_radps", "--aggregate", "min"]) == 0
    doc = json.loads((out / "sweep.json").read_text())
    assert doc["heatmap"] == {"x": "dt_s", "y": "v0_radps", "aggregate": "min",
                              "over": ["q0_rad", "tau_Nm", "t_end_s"]}
    html = (out / "index.html").read_text()
    assert "<strong>minimum</strong>" in html
    from harness.sweep.report import heatmap_cells

    cells = heatmap_cells(doc, "q_end_rad")
    for (dt, v0), c in cells.items():  # the minimum over q0 of the recomputed values
        ref = [sc.rollout("mujoco", {"case_id": 0, **r["inputs"]})["q_end_rad"]
               for r in doc["cases"] if (r["inputs"]["dt_s"], r["inputs"]["v0_radps"]) == (dt, v0)]
        assert len(ref) == 2
        assert_close([c["value"]], [min(ref)], "sweep", "pendulum_rk4_metrics")
