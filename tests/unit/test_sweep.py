"""The sweep executor (harness/sweep.py): 200-case sweeps through the local backend and a
Dask LocalCluster, with a real crashing case (Drake's SAP world ball constraint segfaults
its process), a raising case and a timed-out case; every finished case is checked
against an independent recomputation with another engine."""
from __future__ import annotations

import io
import json
import random
import time

import pytest

from harness.core.errors import BadInput
from harness.sweep.executor import ProgressPrinter, run_sweep
from harness.sweep.report import build_document, read_sweep, render_html, write_sweep
from tests.conftest import assert_close
from tests.support import sweep_cases as sc


@pytest.fixture(scope="module")
def cluster():
    """One Dask LocalCluster (2 worker processes, 1 thread each) for this module."""
    from harness.sweep.executor import local_cluster

    c = local_cluster(2)
    yield c
    c.close()


@pytest.fixture(scope="module")
def independent():
    """Every grid case recomputed here with MuJoCo's forward dynamics (the sweep's
    run_case uses Pinocchio's, in another process)."""
    return {c["case_id"]: sc.rollout("mujoco", c) for c in sc.grid()}


def _check_sweep(result, independent):
    rows = result.rows
    grid = sc.grid()
    assert [r["case_id"] for r in rows] == sorted(r["case_id"] for r in rows)
    by_id = result.by_id()
    for c in grid:
        r = by_id[c["case_id"]]
        assert r["status"] == "ok", r
        assert r["inputs"] == {k: v for k, v in c.items() if k != "case_id"}
        ref = independent[c["case_id"]]
        assert set(r["metrics"]) == set(ref)
        assert_close([r["metrics"][k] for k in sorted(ref)], [ref[k] for k in sorted(ref)],
                     "sweep", "pendulum_rk4_metrics", f"case {c['case_id']}")
    cc = sc.crash_case()
    r = by_id[cc["case_id"]]
    assert r["status"] == "crashed", r
    assert r["inputs"] == {k: v for k, v in cc.items() if k != "case_id"}
    assert r["metrics"] == {}
    ec = sc.error_case()
    r = by_id[ec["case_id"]]
    assert r["status"] == "error" and "ValueError: dt_s must be > 0" in r["reason"], r
    return by_id


def test_local_sweep_200_cases_with_crash(independent):
    cases = sc.grid() + [sc.crash_case(), sc.error_case()]
    random.Random(3).shuffle(cases)  # completion and submission order must not matter
    lines = io.StringIO()
    result = run_sweep(sc.run_case, cases, backend="local", workers=2,
                       progress=ProgressPrinter(lines, interval_s=0.0))
    by_id = _check_sweep(result, independent)
    reason = by_id[sc.crash_case()["case_id"]]["reason"]
    assert "SIGSEGV" in reason, reason
    assert result.counts() == {"ok": 200, "error": 1, "crashed": 1, "timeout": 0}
    # replaced: the crashed worker and the one whose case raised (never reused)
    assert result.backend["name"] == "local" and result.backend["worker_restarts"] == 2
    out = lines.getvalue().splitlines()
    assert len(out) == len(cases)  # interval 0: one line per finished case
    assert out[-1].startswith("sweep: 202/202 done, 1 crashed, 1 errors, 0 timeouts")
    assert "cases/s" in out[-1] and "ETA" in out[-1]


def test_dask_sweep_200_cases_with_crash_via_scheduler_address(cluster, independent):
    """--scheduler: connect to a separately started LocalCluster by its address."""
    cases = sc.grid() + [sc.crash_case(), sc.error_case()]
    random.Random(5).shuffle(cases)
    states = []
    result = run_sweep(sc.run_case, cases, backend="dask",
                       scheduler=cluster.scheduler_address, progress=states.append)
    by_id = _check_sweep(result, independent)
    reason = by_id[sc.crash_case()["case_id"]]["reason"]
    assert reason.startswith("KilledWorker:") and "died" in reason, reason
    assert by_id[sc.crash_case()["case_id"]]["attempts"] == 2  # allowed-failures 1
    assert result.backend == {"name": "dask", "workers": 2,
                              "scheduler": cluster.scheduler_address, "local_cluster": False,
                              "allowed_failures": 1, "timeout_s": 600.0}
    assert [s["done"] for s in states] == list(range(1, len(cases) + 1))
    assert states[-1]["counts"] == {"ok": 200, "error": 1, "crashed": 1, "timeout": 0}
    # both backends: same metrics, same order (determinism of the ordering and results)
    local = run_sweep(sc.run_case, list(reversed(cases)), backend="local", workers=2)
    assert [(r["case_id"], r["status"], r["metrics"]) for r in local.rows] == \
        [(r["case_id"], r["status"], r["metrics"]) for r in result.rows]


def test_timeouts_are_recorded_and_the_sweep_goes_on(cluster):
    cases = sc.grid(quick=True) + [sc.slow_case()]
    ref = {c["case_id"]: sc.rollout("mujoco", c) for c in sc.grid(quick=True)}
    for kw in ({"backend": "local", "workers": 2},
               {"backend": "dask", "scheduler": cluster.scheduler_address}):
        # 3 s: the first case of a fresh worker builds its adapter (~1 s on a loaded
        # machine); the slow case needs minutes
        result = run_sweep(sc.run_case, cases, timeout_s=3.0, **kw)
        by_id = result.by_id()
        slow = by_id[sc.slow_case()["case_id"]]
        assert slow["status"] == "timeout", (kw, slow)
        assert "ran longer than 3 s" in slow["reason"]
        for cid, m in ref.items():
            assert by_id[cid]["status"] == "ok"
            assert_close([by_id[cid]["metrics"][k] for k in sorted(m)],
                         [m[k] for k in sorted(m)], "sweep", "pendulum_rk4_metrics")


@pytest.mark.parametrize("cases, problem", [
    ([], "non-empty list"),
    ([{"q0_rad": 1.0}], "case #0 is not a dict with a case_id"),
    ([{"case_id": 1}, {"case_id": 1}], "case_id 1 appears twice"),
    ([{"case_id": 1, "x": float("nan")}], "is not a finite JSON scalar"),
    ([{"case_id": 1, "x": [1, 2]}], "is not a finite JSON scalar"),
    ([{"case_id": 1.5}], "case_id must be an int or a str"),
])
def test_bad_cases_are_bad_input(cases, problem):
    with pytest.raises(BadInput) as e:
        run_sweep(sc.run_case, cases)
    assert problem in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("kw, where", [
    ({"backend": "spark"}, "--backend"), ({"workers": 0}, "--workers"),
    ({"timeout_s": float("inf")}, "--timeout"), ({"scheduler": "tcp://x:1"}, "--scheduler"),
])
def test_bad_options_are_bad_input(kw, where):
    with pytest.raises(BadInput) as e:
        run_sweep(sc.run_case, sc.grid(quick=True), **kw)
    assert e.value.where == where


def test_run_case_must_be_importable_by_workers():
    with pytest.raises(BadInput) as e:
        run_sweep(lambda c: {}, sc.grid(quick=True))
    assert "module-level function" in str(e.value)


def test_non_metric_results_are_errors():
    """run_case returning a non-dict or a non-scalar metric is an error row, not a crash."""
    result = run_sweep(json.loads, [{"case_id": 1}], workers=1)  # TypeError inside
    assert result.rows[0]["status"] == "error" and "TypeError" in result.rows[0]["reason"]
    result = run_sweep(dict, [{"case_id": 1, "a": 2}], workers=1)  # returns the case
    assert result.rows[0]["status"] == "ok" and result.rows[0]["metrics"] == \
        {"case_id": 1, "a": 2}
    result = run_sweep(list, [{"case_id": 1}], workers=1)  # returns a list
    assert result.rows[0]["status"] == "error" and "not a dict" in result.rows[0]["reason"]


def _doc_with_hostile_names():
    cases = [{"case_id": i, "speed_mps": s, "angle_deg": a, "mu": 0.5,
              "label": "<script>alert(1)</script>"}
             for i, (s, a) in enumerate((s, a) for s in (1.0, 2.0) for a in (0.0, 30.0))]
    from harness.sweep.executor import SweepResult, _row

    rows = [_row(c, "ok", {"pen_m": c["speed_mps"] * 1e-3}) for c in cases[:3]]
    rows.append(_row(cases[3], "crashed", reason="worker process killed by SIGSEGV <b>"))
    return build_document("hostile<i>", cases, SweepResult(rows, {"name": "local",
                          "workers": 1, "timeout_s": 1.0}, 1.0, "now"), {},
                          command_line=["harness", "sweep"])


def _chart_specs(html: str) -> list:
    """The plotly descriptions of the page's charts (figures.py's data-spec attributes)."""
    import html as html_mod
    import re

    return [json.loads(html_mod.unescape(m)) for m in re.findall(r'data-spec="([^"]*)"', html)]


def test_report_heat_map_marks_crashes_and_escapes_text(tmp_path):
    doc = _doc_with_hostile_names()
    assert (doc["heatmap"]["x"], doc["heatmap"]["y"]) == ("speed_mps", "angle_deg")
    assert doc["unexpected"] == [3]
    html = render_html(doc)
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html
    assert "SIGSEGV &lt;b&gt;" in html and "hostile&lt;i&gt;" in html
    specs = _chart_specs(html)
    assert len(specs) == 1  # one metric: one heat map (no dt input, no scoring)
    marks = [t for t in specs[0]["data"] if t.get("mode") == "text"]
    assert "maximum (worst case" in html and marks[0]["text"] == ["×1"]  # crash marked
    assert (marks[0]["x"], marks[0]["y"]) == (["2"], ["30"])  # in the crashed case's cell
    path = write_sweep(tmp_path / "s", doc)
    again = read_sweep(path)
    assert again == json.loads(json.dumps(doc))
    bad = dict(again, extra=1)
    (path / "sweep.json").write_text(json.dumps(bad))
    with pytest.raises(BadInput, match="unknown fields"):
        read_sweep(path)


def test_heat_map_aggregates_worst_case_over_other_axes():
    from harness.sweep.executor import SweepResult, _row
    from harness.sweep.report import heatmap_cells

    cases = [{"case_id": i, "speed_mps": s, "angle_deg": 0.0, "mu": mu}
             for i, (s, mu) in enumerate((s, mu) for s in (1.0, 2.0) for mu in (0.1, 0.9))]
    vals = {0: 3.0, 1: 7.0, 2: -1.0, 3: 2.0}
    rows = [_row(c, "ok", {"m": vals[c["case_id"]]}) for c in cases]
    doc = build_document("agg", cases, SweepResult(rows, {"name": "local"}, 1.0), {},
                         x="speed_mps", y="angle_deg")
    cells = heatmap_cells(doc, "m")
    assert cells[(1.0, 0.0)]["value"] == max(3.0, 7.0)
    assert cells[(2.0, 0.0)]["value"] == max(-1.0, 2.0)
    assert doc["heatmap"]["over"] == ["mu"]
    assert cells[(2.0, 0.0)]["n_ok"] == 2 and cells[(2.0, 0.0)]["n_bad"] == 0


def test_numpy_scalars_in_cases_and_metrics_become_json_scalars():
    import numpy as np

    cases = [{"case_id": np.int64(i), "v": np.float64(i)} for i in range(3)]
    result = run_sweep(sc.numpy_case, cases, workers=1)
    assert [r["metrics"] for r in result.rows] == \
        [{"n": i, "flag": True, "x_m": i / 4} for i in range(3)]
    assert all(type(r["metrics"]["n"]) is int and type(r["case_id"]) is int
               for r in result.rows)
    json.dumps(result.rows, allow_nan=False)


def test_progress_is_throttled_but_always_reports_the_end():
    buf = io.StringIO()
    p = ProgressPrinter(buf, interval_s=60.0, label="sweep x")
    counts = {"ok": 0, "error": 0, "crashed": 0, "timeout": 0}
    for done in range(1, 101):
        counts["ok" if done % 10 else "crashed"] += 1
        p({"done": done, "total": 100, "counts": dict(counts), "elapsed_s": done / 50})
    lines = buf.getvalue().splitlines()
    assert lines == ["sweep x: 100/100 done, 10 crashed, 0 errors, 0 timeouts, 50.0 cases/s, "
                     "ETA 0 s [2.0 s]"]


def test_dask_survives_several_crashes_seconds_apart(cluster):
    """Regression: LocalCluster hard-closed a nanny whose worker had not re-registered
    lost-worker-timeout (15 s) after a removal; crashes a few seconds apart left no
    workers and the sweep hung. Three crashing cases among 60 now finish."""
    import threading

    cases = [{"case_id": i, "crash": i in (5, 25, 45)} for i in range(60)]
    box = {}
    t = threading.Thread(target=lambda: box.update(r=run_sweep(
        sc.segfault_case, cases, backend="dask", scheduler=cluster.scheduler_address)))
    t.start()
    t.join(180)
    assert not t.is_alive(), "the Dask sweep hung after repeated crashes"
    r = box["r"]
    assert r.counts() == {"ok": 57, "error": 0, "crashed": 3, "timeout": 0}
    assert [x["case_id"] for x in r.rows if x["status"] == "crashed"] == [5, 25, 45]
    assert all(x["metrics"] == {"x": x["case_id"]} for x in r.rows if x["status"] == "ok")


def _child_exit_code() -> int:
    """Exit code of a child process started from here (multiprocessing, spawn)."""
    import multiprocessing as mp

    child = mp.get_context("spawn").Process(target=time.sleep, args=(0.0,))
    child.start()
    child.join()
    return child.exitcode


def test_a_worker_may_start_child_processes(cluster):
    """Drake's constrained row runs SAP in a child process: the harness's workers are not
    daemonic, so a task can start one."""
    from distributed import Client

    with Client(cluster.scheduler_address) as client:
        assert client.submit(_child_exit_code, pure=False).result(timeout=120) == 0
