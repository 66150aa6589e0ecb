"""`harness fit --problem bounce --event NAME=TIME±SIGMA:LABEL`: a measured event is
scored, held against the data alone, and a conflict beyond the tolerance table's 3σ is
named in fit.json and the report and makes the exit code 1; one within 3σ is not; bad
syntax exits 2 in one line with nothing written (harness/fit/observed_events.py)."""
from __future__ import annotations

import html
import json
import math

import numpy as np
import pytest

from harness.core.tolerances import lookup
from harness.fit import bounce as B
from tests.conftest import run_cli


def _truth_impacts() -> list[float]:
    """The true impact times [s] from the closed form (independent of the fit): first
    impact (v0 + √(v0² + 2 g h0))/g, then flights of 2 eʲ s / g."""
    g, h0, v0, e = 9.81, 1.0, 0.5, 0.8
    tau = (v0 + math.sqrt(v0 * v0 + 2 * g * h0)) / g
    s = g * tau - v0
    return [tau, tau + 2 * e * s / g, tau + 2 * e * s / g + 2 * e * e * s / g]


def test_measured_event_conflict_is_flagged(tmp_path):
    """The second impact measured 7.6 ms late with σ = 1 ms, against the phase-aligned fit
    (first-impact SE ≈ 0.2 ms): a conflict, named with its numbers, exit 1."""
    seed, given, sigma = 0, 1.24, 1e-3
    out = tmp_path / "fit"
    proc = run_cli("fit", "--problem", "bounce", "--method", "phases", "--seed", seed,
                   "--event", f"impact2={given}±{sigma}:measured",
                   "--event", "impact3=1.9+-0.1:assumed", "--out", out)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "CONFLICT: measured impact2" in proc.stdout
    doc = json.loads((out / "fit.json").read_text())
    eo = doc["event_observations"]
    assert eo["conflict"] and eo["threshold_z"] == lookup("schedules", "event_conflict_z").atol
    r2, r3 = eo["rows"]
    assert r2["name"] == "impact2" and r2["conflict"] and r2["scored"]
    assert r2["given"] == {"t_s": given, "sigma_s": sigma}
    # the data-alone time is the phase fit without the event, refitted here independently
    t, _, _, y = B.data(seed)
    R, P, _ = B.fit_phases(t, y)
    assert r2["data_alone"]["t_s"] == pytest.approx(R.event_times[1], abs=1e-9)
    assert r2["data_alone"]["se_s"] == pytest.approx(R.se[P.nz + 1], rel=1e-6)
    # … and covers the truth, so the conflict is the measurement's
    true2 = _truth_impacts()[1]
    assert abs(r2["data_alone"]["t_s"] - true2) < 3 * r2["data_alone"]["se_s"]
    z = (R.event_times[1] - given) / math.sqrt(sigma ** 2 + R.se[P.nz + 1] ** 2)
    assert r2["z"] == pytest.approx(z, rel=1e-6) and abs(z) > 3
    # the joint fit's standardised residual agrees (the impact time is nearly linear in θ)
    assert r2["z_joint"] == pytest.approx(z, rel=1e-3)
    # an assumed event is listed, never scored or flagged
    assert r3["label"] == "assumed" and not r3["scored"] and not r3["conflict"]
    assert [e["label"] for e in doc["events"]] == ["inferred", "measured", "inferred"]
    page = html.unescape((out / "index.html").read_text())
    assert 'id="event-conflict"' in page
    row = page.split('id="event-observation-impact2"')[1].split("</tr>")[0]
    for needle in (f"{given:.6f} ± 1.00e-03", f"{r2['data_alone']['t_s']:.6f}",
                   f"{r2['z']:+.2f}", "CONFLICT"):
        assert needle in row, (needle, row)


def test_measured_event_within_3_sigma_is_not_flagged(tmp_path):
    """The true first impact measured with σ = 1 ms, default method: scored (the event
    is labelled measured), not a conflict, exit 0."""
    true1 = _truth_impacts()[0]
    out = tmp_path / "fit"
    proc = run_cli("fit", "--problem", "bounce", "--seed", 1,
                   "--event", f"impact1={true1:.6f}+-0.001:measured", "--out", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "CONFLICT" not in proc.stdout
    doc = json.loads((out / "fit.json").read_text())
    (row,) = doc["event_observations"]["rows"]
    assert not doc["event_observations"]["conflict"] and not row["conflict"]
    assert abs(row["z"]) <= 3
    # the data alone place the first impact near the truth within their stated spread
    assert abs(row["data_alone"]["t_s"] - true1) <= 3 * row["data_alone"]["se_s"]
    assert doc["events"][0]["label"] == "measured" and doc["events"][0]["scored"]
    page = (out / "index.html").read_text()
    assert "No measured event conflicts with the data" in page
    assert 'id="event-conflict"' not in page
    rep = run_cli("report", out, "--quiet")   # the page re-renders byte for byte
    assert rep.returncode == 0 and (out / "index.html").read_text() == page


@pytest.mark.parametrize("event, needle", [
    ("impact1=0.5", "no ±"),
    ("impact1=0.5±0.001", "no ':LABEL'"),
    ("impact1:0.5±0.001:measured", "no '='"),
    ("impact1=0.5±0.001:guessed", "label 'guessed'"),
    ("impact1=0.5±0:measured", "sigma must be"),
    ("impact1=abc±0.001:measured", "expected NAME=TIME±SIGMA:LABEL"),
    ("drop1=0.5±0.001:measured", "unknown event 'drop1'"),
])
def test_bad_event_syntax_exit_2_one_line(tmp_path, capsys, event, needle):
    """In-process: exit 2, one line naming --event and the problem, no folder."""
    from harness import cli

    out = tmp_path / "fit"
    rc = cli.main(["fit", "--problem", "bounce", "--event", event, "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "--event" in lines[0] and needle in lines[0], lines
    assert not out.exists()


def test_event_on_a_problem_without_events_exit_2(tmp_path, capsys):
    from harness import cli

    out = tmp_path / "fit"
    rc = cli.main(["fit", "--problem", "pendulum", "--event", "impact1=0.5±0.1:measured",
                   "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "has no events" in err
    assert not out.exists()


def test_schedule_event_time_mixture_against_closed_form():
    """The candidate fit's impact times: the mixture over the selected impact count's
    refined candidates of each one's closed-form impact time with spread √(g H⁻¹ gᵀ), g by
    central differences of the flow, recomputed here; the first impact has no spread
    within a candidate (its onset), so its spread is the onset posterior's."""
    from harness.fit.bounce_events import schedule_times

    t, _, _, y = B.data(2)
    R = B.fit_schedules(t, y)
    n = R["impacts"][R["selected"]]
    idx = [i for i, f in enumerate(R["fits"]) if f["valid"] and R["impacts"][i] == n]
    assert len(idx) > 2  # a mixture, not one candidate
    w = R["weights"][idx] / R["weights"][idx].sum()
    (t1, s1), (t2, s2) = schedule_times(R, t, [1, 2])
    step = 1e-6
    m, v = np.zeros((len(idx), 2)), np.zeros((len(idx), 2))
    for a, i in enumerate(idx):
        f = R["fits"][i]
        th = np.asarray(f["theta"], float)
        for j in (0, 1):
            g = np.array([(B.flow(t, *(th + step * np.eye(2)[k]), f["onset_s"])[3][j]
                           - B.flow(t, *(th - step * np.eye(2)[k]), f["onset_s"])[3][j])
                          / (2 * step) for k in range(2)])
            m[a, j] = B.flow(t, *th, f["onset_s"])[3][j]
            v[a, j] = g @ f["cov"] @ g
    mean = w @ m
    sd = np.sqrt(w @ (v + m ** 2) - mean ** 2)
    assert t1 == pytest.approx(mean[0], abs=1e-9) and s1 == pytest.approx(sd[0], rel=1e-3)
    assert t2 == pytest.approx(mean[1], abs=1e-9) and s2 == pytest.approx(sd[1], rel=1e-3)
    assert s1 == pytest.approx(R["onset_posterior"]["sd_s"], rel=1e-2)


def test_measured_event_beyond_the_phase_schedule_exit_2(tmp_path, capsys):
    """--method phases places the selected schedule's three impacts: a measured fifth
    is refused in one line naming --event, nothing written."""
    from harness import cli

    out = tmp_path / "fit"
    rc = cli.main(["fit", "--problem", "bounce", "--method", "phases",
                   "--event", "impact5=1.9±0.01:measured", "--out", str(out)])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert rc == 2 and len(lines) == 1 and "--event" in lines[0] and "3 impacts" in lines[0]
    assert not out.exists()
