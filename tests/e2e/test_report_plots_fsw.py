"""The fit, sweep and swing reports in headless Chromium: the chart rules every report obeys
(tests/e2e/browser.py) and one check per defect those reports had, each recomputed here
from the files the run wrote (fit.json, sweep.json, the replay's arrays), never read back
from the page alone. Each report is produced once per module (module-scoped fixtures);
full-page screenshots: test-artifacts/fsw-*.png."""
from __future__ import annotations

import html
import json
import math
import re

import numpy as np
import pytest

from harness.core.tolerances import lookup
from tests.conftest import ROOT, run_cli
from tests.e2e.browser import assert_report_rules, open_report

CAPTURE = ROOT / "data" / "swing" / "driver.c3d"
MAX_POINTS = 2000  # per trace (page weight)
# a number drawn in a chart (7 significant digits) against the run's files
CHART = lookup("report", "chart_value")

# every drawn chart: title, axis titles, traces (name, x, y, mode, text), shapes, the tick
# labels plotly drew, and where the y title sits against the chart's box
CHARTS_JS = """() => Array.from(document.querySelectorAll('div.plot')).map(el => {
  const L = el.layout || {}, F = el._fullLayout || {};
  const box = el.getBoundingClientRect();
  const yt = el.querySelector('.ytitle');
  return {
    title: ((L.title && L.title.text) || "").replace(/<br>/g, " "),
    x: (L.xaxis && L.xaxis.title && L.xaxis.title.text) || "",
    y: (L.yaxis && L.yaxis.title && L.yaxis.title.text) || "",
    yrange: F.yaxis ? F.yaxis.range : null, ytype: F.yaxis ? F.yaxis.type : null,
    yticktext: (L.yaxis && L.yaxis.ticktext) || null,
    ylayout: L.yaxis ? L.yaxis.range || null : null,
    xlayout: L.xaxis ? L.xaxis.range || null : null,
    y2: (L.yaxis2 && L.yaxis2.title && L.yaxis2.title.text) || null,
    y2range: L.yaxis2 ? L.yaxis2.range : null,
    scaleanchor: L.yaxis ? L.yaxis.scaleanchor || null : null,
    xticks: Array.from(el.querySelectorAll('.xtick text')).map(t => t.textContent),
    traces: el.data.map(t => ({name: t.name, x: t.x, y: t.y, mode: t.mode, text: t.text,
                               yaxis: t.yaxis || "y",
                               type: t.type, colorbar: t.colorbar ? t.colorbar.title.text
                               : null})),
    shapes: L.shapes || [], annotations: (L.annotations || []).map(a => a.text),
    ytitle_left: yt ? yt.getBoundingClientRect().left - box.left : null,
  };
})"""


def _page_facts(path, shot, extra=None):
    """Open the page (rules asserted), return its charts, body text and ``extra(page)``."""
    def check(page):
        rules = assert_report_rules(page)
        return {"rules": rules, "charts": page.evaluate(CHARTS_JS),
                "text": page.inner_text("body"),
                "extra": extra(page) if extra else None}
    return open_report(path, check, shot, full_page=True)


def _series_lengths_ok(charts):
    for c in charts:
        for t in c["traces"]:
            if t["type"] == "scatter" and t["x"] is not None:
                assert len(t["x"]) <= MAX_POINTS, (c["title"], t["name"], len(t["x"]))


# ----- fit -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def fit_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("fsw") / "fit"
    p = run_cli("fit", "--problem", "balance", "--n", "3000", "--out", out)
    assert p.returncode == 0, p.stdout + p.stderr
    doc = json.loads((out / "fit.json").read_text())
    return out, doc, _page_facts(out / "index.html", "fsw-fit-report.png")


def test_fit_report_rules_and_defects(fit_report):
    out, doc, page = fit_report
    charts = {c["title"]: c for c in page["charts"]}
    assert page["rules"]["charts"] == len(charts) >= 2 + 4 + 4
    assert (out / "plotly.min.js").is_file()
    _series_lengths_ok(page["charts"])
    hist = doc["history"]
    f = np.array([h["objective"] for h in hist])
    # the objective: relative to its final value (computed here), the final one stated in full
    (obj,) = [c for c in page["charts"] if c["title"].startswith("objective relative")]
    assert "f_final" in obj["y"] and "[–]" in obj["y"]
    plotted = {}
    for t in obj["traces"]:
        for x, y in zip(t["x"], t["y"]):
            plotted[int(x)] = y
    zero_at = 10 ** (obj["yrange"][0] + 0.5)  # where a zero is drawn: its own 0 tick
    assert obj["yticktext"][0] == "0"
    for i, fi in enumerate(f):
        want = abs(fi - f[-1]) / abs(f[-1])
        assert plotted[i] == pytest.approx(want if want else zero_at, rel=CHART.rtol,
                                           abs=CHART.atol), i
    final = float(re.search(r"f_final = ([-+0-9.e]+)", page["text"]).group(1))
    stated = lookup("report", "final_objective")  # 12 significant digits on the page
    assert final == pytest.approx(f[-1], rel=stated.rtol, abs=stated.atol)
    # infeasibility: a zero sits on its own 0 tick, the axis spans only the data's decades
    inf = charts["infeasibility"]
    assert inf["ytype"] == "log" and inf["yrange"][0] > -40, inf["yrange"]
    vals = [h[k] for h in hist for k in ("inf_pr", "inf_du")]
    if 0.0 in vals:
        assert inf["yticktext"][0] == "0"
    # iterations on integer ticks
    for c in (obj, inf):
        assert c["xticks"] and all(re.fullmatch(r"−?\d+", t) for t in c["xticks"]), c["xticks"]
    # every state with its unit (θ rad, ω rad/s: harness/fit/problems.py)
    states = {c["title"]: c["y"] for c in page["charts"] if c["title"].startswith("state ")}
    assert len(states) == len(doc["state_names"]) == 4
    for name in doc["state_names"]:
        unit = "[rad/s]" if name.startswith("omega") else "[rad]"
        sym = name.replace("theta", "θ").replace("omega", "ω")
        assert states[f"state {sym}"] == f"{sym} {unit}"
    # provenance kept
    assert "git commit" in page["text"] and doc["provenance"]["git_commit"] in page["text"]


# ----- sweep ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def sweep_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("fsw") / "sweep"
    p = run_cli("sweep", "contact", "--quick", "--quiet", "--out", out)
    assert p.returncode == 0, p.stdout + p.stderr  # every case passed or outside
    doc = json.loads((out / "sweep.json").read_text())

    def extra(page):
        return {"constant": page.locator("#constant-metrics li").all_inner_texts(),
                "captions": page.locator("figcaption").count(),
                "headings": page.locator("h2, h3, h4").all_inner_texts(),
                "step_charts": page.locator("#step-size div.plot").count()}
    return out, doc, _page_facts(out / "index.html", "fsw-sweep-report.png", extra)


def _ok_values(doc, metric):
    return [r for r in doc["cases"] if r["status"] == "ok"
            and isinstance(r["metrics"].get(metric), (int, float))
            and not isinstance(r["metrics"][metric], bool)]


def test_sweep_report_rules_and_defects(sweep_report):
    out, doc, page = sweep_report
    assert (out / "plotly.min.js").is_file()
    charts = page["charts"]
    _series_lengths_ok(charts)
    # every title once: no caption or heading repeats a chart's title, no colour bar either
    assert page["extra"]["captions"] == 0
    for c in charts:
        assert c["title"] not in page["extra"]["headings"]
        for t in c["traces"]:
            if t["colorbar"]:
                assert t["colorbar"] != c["title"] and not c["title"].startswith(
                    t["colorbar"].replace("log₁₀ ", "")), (c["title"], t["colorbar"])
    # constant metrics: one line of text, no chart (constancy recomputed from sweep.json)
    metrics = sorted({k for r in doc["cases"] for k in r["metrics"]})
    constant = [m for m in metrics if (rows := _ok_values(doc, m))
                and len({r["metrics"][m] for r in rows}) == 1]
    assert "energy_gain_J" in constant and "event_count" in constant
    lines = page["extra"]["constant"]
    for m in constant:
        v = _ok_values(doc, m)[0]["metrics"][m]
        assert any(re.match(rf"{m} = {v:.6g}\b.*for every case", s) for s in lines), lines
        assert not [c for c in charts if c["title"].startswith(m + ",")
                    or c["title"].startswith(m + " against")]
    # dt shown open: the rebound error against dt, one line per speed, each point the max
    # over the other inputs (recomputed here)
    assert page["extra"]["step_charts"] >= 3
    (c,) = [c for c in charts if c["title"] == "rebound_err_rel against dt_s"]
    assert c["x"] == "dt_s [s]" and "[–]" in c["y"]
    for t in c["traces"]:
        speed = float(t["name"].split("= ")[1])
        for dt, y in zip(t["x"], t["y"]):
            want = max(r["metrics"]["rebound_err_rel"] for r in _ok_values(doc, "rebound_err_rel")
                       if r["inputs"]["speed_mps"] == speed and r["inputs"]["dt_s"] == dt)
            assert y == pytest.approx(want, rel=CHART.rtol, abs=CHART.atol)
    # engine, law, integrator and metric definitions still stated
    for word in ("engine", "law", "integrator"):
        assert re.search(rf"^{word}\b", page["text"], re.M), word
    assert "rebound_err_rel" in page["text"] and "Hunt–Crossley" in page["text"]


# ----- swing ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def swing_report(quick_swing):
    _, out, p = quick_swing
    # 1: a swing check not met (the report must say which); never an error
    assert p.returncode == (0 if "NOT met" not in p.stdout else 1), p.stdout + p.stderr
    fit = json.loads((out / "fit" / "fit.json").read_text())

    def extra(page):
        def table(sel):
            return [[td.inner_text() for td in tr.locator("td").all()]
                    for tr in page.locator(f"{sel} tr").all()]
        return {"gaps": table("#marker-gaps"), "rejected": table("#rejected-markers"),
                "rmse": table("#marker-rmse"), "summary": table("#swing-summary"),
                "replay": table("#replay-records"),
                "consistency": table("#contact-consistency"),
                "exceeding": table("#contact-exceeding"),
                "phase": table("#marker-phase-rmse"),
                "phase_head": [th.inner_text() for th in
                               page.locator("#marker-phase-rmse tr").first.locator("th").all()]}
    return out, fit, _page_facts(out / "index.html", "fsw-swing-report.png", extra)


def test_swing_impact_opens_on_the_contact_and_forces_show_body_weight(swing_report):
    """The impact chart opens on the contact (both impact times inside its first view, a
    small part of the swing), and each foot's ground reaction force [% body weight] has
    the body-weight line at 100 %."""
    _, fit, page = swing_report
    (imp,) = [c for c in page["charts"] if c["title"].startswith("club-head speed through")]
    lo, hi = imp["xlayout"]
    t = [x for tr in imp["traces"] if tr["x"] for x in tr["x"] if x is not None]
    ev = fit["capture"]["events"]
    assert lo < ev["impact_s"] < hi
    assert hi - lo < 0.25 * (max(t) - min(t))
    grf = [c for c in page["charts"] if c["title"].startswith("ground reaction force")]
    assert len(grf) == 2
    for c in grf:
        (bw,) = [tr for tr in c["traces"] if tr["name"].startswith("body weight")]
        assert bw["y"] == [100, 100] and c["y"].endswith("[% body weight]")


def test_swing_report_rules_and_defects(swing_report):
    out, fit, page = swing_report
    assert (out / "plotly.min.js").is_file()
    charts, text, tab = page["charts"], page["text"], page["extra"]
    _series_lengths_ok(charts)
    # no "nan" anywhere; a marker never seen reads "—" with its reason
    assert not re.search(r"\bnan\b", text, re.I)
    unseen = [k for k, v in fit["fit"]["marker_rmse_by_label_m"].items() if v is None]
    assert unseen  # the bundled capture's RShoulderTop is missing over the window
    rows = {r[0]: r for r in tab["rmse"] if r}
    for k in unseen:
        assert rows[k][1].startswith("— (not seen in the fitted window"), rows[k]
    # the rejected marker: in the rejected table with its reason, not among the gaps
    rejected = fit["capture"]["rejected"]
    assert rejected
    for k, why in rejected.items():
        assert [k, why] in tab["rejected"]
        assert k not in [r[0] for r in tab["gaps"] if r]
    # marker distances in mm everywhere: no chart axis in m but the stick figures' (space)
    for c in charts:
        if c["title"].startswith("stick figure"):
            continue
        assert "[m]" not in (c["x"], c["y"]) and not c["y"].endswith(" [m]"), c["title"]
    mk = [c for c in charts if "marker" in c["title"]]
    assert len(mk) >= 3 and all(c["y"].endswith("[mm]") for c in mk)
    # the engine replay values carry their unit
    (dev,) = [r for r in tab["summary"] if r and r[0].startswith("each engine's open-loop")]
    assert re.findall(r"\d (mm|m)\b", dev[1]) and not re.search(r"max [\d.e-]+\)", dev[1])
    for r in tab["replay"]:
        if r and r[2] != "—":
            assert re.search(r"e[+-]\d+ \S", r[2]), r  # a unit after the number
    # y titles not clipped: inside each chart's box
    for c in charts:
        assert c["ytitle_left"] is not None and c["ytitle_left"] >= 0, c["title"]
    # every joint has its torque drawn; forces (N) and torques (N·m) never share an axis
    joints = set(fit["fit"]["torque_peak"])
    drawn = {}
    mass = fit["model"]["dims"]["body_mass_kg"]
    for c in charts:
        if c["y"].startswith("fitted joint"):
            for t in c["traces"]:
                if t["yaxis"] == "y":
                    drawn[t["name"]] = c["y"]
            # the right axis: the same values per body mass, its range tied to the left's
            assert c["y2"].endswith("/kg]"), c["title"]
            assert np.allclose(c["y2range"], np.asarray(c["ylayout"]) / mass, rtol=CHART.rtol,
                               atol=CHART.atol)
            # the events inside the window are marked: top and ball contact
            assert {"top", "impact"} <= set(c["annotations"]), c["title"]
            x = {a: sh["x0"] for a, sh in zip(c["annotations"], c["shapes"])}
            assert x["top"] == pytest.approx(fit["capture"]["events"]["top_s"],
                                             abs=lookup("report", "chart_time").atol)
    assert set(drawn) == joints and len(joints) == 44  # with the legs
    for name, ytitle in drawn.items():
        assert ytitle.endswith("[N]" if name.startswith("pelvis_t") else "[N·m]"), name
    # the energy record's quoted work equals the plotted work at the instant it applies,
    # and both equal the replay arrays' (recomputed here from the evidence bundle)
    (en,) = [c for c in charts if c["title"].startswith("energy of the replay")]
    engine = re.search(r"\((\w+);", en["title"]).group(1)
    (rec,) = [r for r in tab["replay"] if r and r[0].endswith(f"energy_balance/{engine}")]
    quoted = float(re.search(r"applied (-?[\d.]+(?:e[-+]?\d+)?) J", rec[3]).group(1))
    x0 = en["shapes"][0]["x0"]
    (work,) = [t for t in en["traces"] if t["name"].startswith("applied work")]
    i = int(np.argmin(np.abs(np.asarray(work["x"]) - x0)))
    assert abs(work["x"][i] - x0) <= lookup("report", "same_sample").atol
    assert float(f"{work['y'][i]:.4g}") == pytest.approx(
        quoted, abs=lookup("report", "quoted_value").atol)
    with np.load(out / "replay" / "arrays.npz") as a:
        key = [k for k in a.files if k.endswith(f"/{engine}/work")][0]
        t = a[key.split("/")[0] + "/" + key.split("/")[1] + "/t"]
        W = a[key]
        E = a[key[:-len("work")] + "energy"]
    j = int(np.argmin(np.abs(t - x0)))
    assert float(f"{W[j, 0]:.4g}") == quoted  # the record's number, at the marked instant
    # the plotted quantity
    assert work["y"][-1] == pytest.approx(W[-1, 0], rel=CHART.rtol, abs=CHART.atol)
    # the same convention
    assert E[-1] - E[0] == pytest.approx(W[-1, 0] - W[-1, 1],
                                         abs=lookup("swing", "replay_energy_end").atol)
    assert f"{W[-1, 0]:+.4g} J" in rec[3]  # the end value is stated too
    _consistency_section(fit, charts, text, tab)
    _biomechanics_sections(out, fit, charts, text, tab)
    # the candidate path: relative to the output folder, and it exists
    assert not fit["candidate"].startswith("/") and (out / fit["candidate"]).is_file()
    assert math.isfinite(fit["replay"]["energy_balance"][engine]["max_balance_residual_J"])


def _consistency_section(fit, charts, text, tab):
    """The per-interval contact checks: said to be consistency checks under an assumed
    schedule (never a verdict), one chart per check with its threshold from the table
    and the per-interval values of fit.json, and one table row per exceeding interval
    and check, counted from fit.json's per-interval values against the table."""
    from harness.swing import consistency as cc

    assert "The contact schedule is assumed" in text and "never scored as measured" in text
    cons = fit["ground"]["consistency"]["quantities"]
    names = [r[0] for r in tab["summary"] if r]
    rows = [r for r in tab["summary"] if r and r[0].startswith("contact consistency per")]
    assert len(rows) == len(cc.QUANTITIES)
    assert all(r[3] == "reported" and "not scored" in r[2] for r in rows), rows
    assert names.index(rows[0][0]) > 0
    n_rows = 0
    for key, what, unit, scale, quantity in cc.QUANTITIES:
        (c,) = [c for c in charts if html.unescape(c["title"]) == what]
        assert c["x"] == "t (interval midpoint) [s]" and c["y"].endswith(f"[{unit}]"), c
        thr = scale * lookup("swing", quantity).atol
        (line,) = [t for t in c["traces"] if t["name"].startswith("threshold")]
        assert line["y"][0] == pytest.approx(thr, rel=CHART.rtol, abs=CHART.atol)
        data = [t for t in c["traces"] if not t["name"].startswith("threshold")]
        worst = np.array([np.nan if v is None else v for v in cons[key]["per_interval_worst"]])
        drawn = np.array([[np.nan if v is None else v for v in t["y"]] for t in data])
        with np.errstate(invalid="ignore"):
            assert np.allclose(np.nanmax(np.where(np.isnan(drawn), -np.inf, drawn), axis=0)
                               [~np.isnan(worst)], worst[~np.isnan(worst)], rtol=CHART.rtol,
                               atol=CHART.atol)
        n = int(np.sum(worst[~np.isnan(worst)] > thr))
        (row,) = [r for r in tab["consistency"] if r and r[0] == what]
        assert int(row[4]) == n, (what, row, n)
        n_rows += n
        mine = [r for r in tab["exceeding"] if r and r[2] == what]
        assert len(mine) == n
    assert n_rows == len([r for r in tab["exceeding"] if r])


def _biomechanics_sections(out, fit, charts, text, tab):
    """Stick figures, joint angles, centres of pressure and the marker table per phase,
    each against Drake's kinematics of the files the run wrote (trajectory.npz: the
    fitted spline, the measured markers, the contact forces)."""
    from scipy.interpolate import BSpline

    from harness.model import candidate, registry

    cand = candidate.load(out / fit["candidate"])
    drake = registry.adapter_class("drake")(cand.model)
    z = np.load(out / "fit" / "trajectory.npz")
    S = BSpline(z["spline_knots"], z["spline_coefficients"], int(z["spline_degree"]))
    # the pre-impact phase
    assert np.abs(S(z["t"][0]) - z["q"][0]).max() <= lookup("swing", "spline_samples").atol
    labels = [str(x) for x in z["labels"]]
    w, ev = fit["window"], fit["capture"]["events"]
    floor = fit["ground"]["floor_z_m"]
    # stick figures: four events × two views, in m with equal aspect; the poses' sources
    sticks = [c for c in charts if c["title"].startswith("stick figure")]
    assert len(sticks) == 8
    for e in ("address", "top", "impact", "follow-through"):
        for v in ("face-on", "down-the-line"):
            (c,) = [c for c in sticks if c["title"].startswith(f"stick figure, {v}: {e} (")]
            assert c["x"].endswith("[m]") and c["y"] == "height [m]" and c["scaleanchor"] == "x"
    src = {p["event"]: p["source"] for p in fit["fit"]["event_poses"]}
    assert src["top"] == src["impact"] == "fit"
    assert src["address"].startswith("calibration IK") and "outside the fitted window" in \
        src["address"]
    assert src["follow-through"].startswith("markers only")
    assert "not a detected event" in text
    # at the top: every drawn skeleton point's height is the height of one of Drake's
    # bodies or frames in the fitted pose (the exported model: markers are links there),
    # the feet's contact points and the head's top among them; the drawn markers'
    # heights are the measured ones
    k = ev["top_frame"] - w["first_frame"]
    q = S(z["t"][k])
    names = [b.name for b in cand.model.spec.bodies] + [f_.name for f_ in
                                                         cand.model.spec.frames]
    H = drake.frame_poses(q, names)[:, 2] - floor
    (top,) = [c for c in sticks if c["title"].startswith("stick figure, face-on: top (")]
    (model,) = [t for t in top["traces"] if t["name"].startswith("model (fit")]
    got = np.unique([y for y in model["y"] if y is not None])
    assert got.size >= 20
    pos = lookup("report", "chart_position").atol   # m
    assert all(np.abs(H - y).min() <= pos for y in got)
    for n in ("l_heel_contact", "r_mt1_contact", "HeadTop", "club_head_centre"):
        assert np.abs(got - H[names.index(n)]).min() <= pos, n
    (mk,) = [t for t in top["traces"] if t["name"] == "measured markers"]
    ym = z["y"][k, :, 2] - floor
    assert np.allclose([np.nan if y is None else y for y in mk["y"]], ym, rtol=0.0, atol=pos,
                       equal_nan=True)
    # every coordinate's angle drawn once, in deg (rotations) from the fitted q
    angles = {}
    for c in charts:
        if c["y"] == "joint angle [deg]":
            for t in c["traces"]:
                angles[t["name"]] = np.asarray(t["y"], float)
    joints = set(fit["fit"]["torque_peak"])
    rot = {j for j in joints if not j.startswith("pelvis_t")}
    assert set(angles) == rot
    for j, y in angles.items():
        assert np.allclose(y, np.degrees(z["q"][:, drake.layout.slot(j).iq]), rtol=CHART.rtol,
                           atol=CHART.atol), j
    # the centres of pressure: the distance between the two feet's is Drake's (moment
    # balance on the floor plane from the stored forces), whatever the view axes
    (cop,) = [c for c in charts if c["title"] == "centre of pressure per foot, seen from above"]
    assert cop["scaleanchor"] == "x" and cop["x"].endswith("[mm]")
    tr = {t["name"]: t for t in cop["traces"]}
    L = np.c_[tr["left foot: centre of pressure"]["x"], tr["left foot: centre of pressure"]["y"]]
    R = np.c_[tr["right foot: centre of pressure"]["x"], tr["right foot: centre of pressure"]["y"]]
    frames = [str(x) for x in z["contact_frames"]]
    f = z["contact_forces"]
    for i in range(0, len(z["t"]), 7):
        p = drake.frame_poses(z["q"][i], frames)[:, :3]   # after the impact too
        c2 = []
        for side in "lr":
            idx = [n for n, name in enumerate(frames) if name.startswith(side + "_")]
            M = np.cross(p[idx] - [0, 0, floor], f[i, idx]).sum(axis=0)
            c2.append(np.array([-M[1], M[0]]) / f[i, idx, 2].sum())
        # the chart is in mm
        assert np.linalg.norm(L[i] - R[i]) == pytest.approx(
            1e3 * np.linalg.norm(c2[0] - c2[1]), abs=1e3 * pos)
    # marker RMSE per marker and phase: Drake's markers of the fitted q against the
    # measured ones, over the fit's phases (the window start, top, mid-downswing, impact)
    (hdr,) = [r for r in [tab["phase_head"]]]
    assert [h.split("\n")[0] for h in hdr[1:]] == ["address → top", "window start → top",
                                                    "top → mid-downswing",
                                                    "mid-downswing → impact"]
    rows = {r[0]: r[1:] for r in tab["phase"] if r}
    fr = np.arange(w["first_frame"], w["last_frame"] + 1)
    mid = (ev["top_frame"] + ev["impact_frame"]) // 2
    Mq = np.stack([drake.frame_poses(x, labels)[:, :3] for x in z["q"]])
    e = np.linalg.norm(Mq - z["y"], axis=2)
    printed = 1e3 * lookup("report", "table_rmse_mm").atol   # mm, one decimal printed
    for col, (lo, hi) in enumerate([(fr[0], ev["top_frame"]), (ev["top_frame"], mid),
                                    (mid, ev["impact_frame"] + 1)], start=1):
        m = (fr >= lo) & (fr < hi)
        for kk, label in enumerate(labels):
            ek = e[m, kk]
            if np.isfinite(ek).any():
                want = 1e3 * np.sqrt(np.nanmean(ek ** 2))
                assert abs(float(rows[label][col]) - want) <= printed, (label, col, want)
            else:
                assert rows[label][col] == "—"
    assert "calibration IK" in hdr[1]


def test_page_sizes(fit_report, sweep_report, swing_report):
    """Each page's HTML size (the charts' JSON included; plotly.min.js is beside it)."""
    sizes = {name: (r[0] / "index.html").stat().st_size
             for name, r in (("fit", fit_report), ("sweep", sweep_report),
                             ("swing", swing_report))}
    print("page sizes [bytes]:", sizes)
    assert all(s < 1_500_000 for s in sizes.values()), sizes
