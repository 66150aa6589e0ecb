"""The swing's segmented replay on the shared quick run (tests/conftest.py quick_swing):
the segments tile the fitted window from fitted states, the segment through the impact is
replayed in every engine with the fitted impulse's reset, and fit.json's flags follow the
segments' records (a tampered segment makes them false)."""
from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from harness.model import candidate, registry
from harness.swing import segments


def _load(out):
    fit = json.loads((out / "fit" / "fit.json").read_text())
    z = np.load(out / "fit" / "trajectory.npz")
    bundle = out / segments.BUNDLE
    arrays = np.load(bundle / "arrays.npz")
    records = json.loads((bundle / "records.json").read_text())
    records = records["records"] if isinstance(records, dict) else records
    return fit, z, arrays, records


def test_segments_tile_the_window_from_fitted_states(quick_swing):
    _, out, p = quick_swing
    assert p.returncode in (0, 1), p.stderr
    fit, z, arrays, _ = _load(out)
    seg = fit["replay"]["segments"]
    tr = z["t_replay"]
    # the horizon is the whole-window replay's predictability window (its shortest)
    until = [d["scored_until_s"] for d in fit["replay"]["energy_balance"].values()]
    assert seg["horizon_s"] == pytest.approx(min(until) - tr[0], abs=1e-12)
    lst = seg["list"]
    assert len(lst) >= 2
    assert lst[0]["knots"][0] == 0 and lst[-1]["knots"][1] == tr.size - 1
    for s0, s1 in zip(lst, lst[1:]):
        assert s0["knots"][1] == s1["knots"][0]
    for s in lst:
        a, b = s["knots"]
        assert s["t_s"] == [pytest.approx(tr[a]), pytest.approx(tr[b])]
        assert tr[b] - tr[a] <= seg["horizon_s"]
        # each case of the bundle starts from the fitted state at its first knot, on the
        # candidate's knots a … b
        case = s["case"]
        assert np.array_equal(arrays[f"replay/{case}/t"], tr[a:b + 1])
        assert np.array_equal(arrays[f"replay/{case}/in/q0"], z["q_replay"][a])
        assert np.array_equal(arrays[f"replay/{case}/in/v0"], z["v_replay"][a])
    assert fit["summary"]["replay_window_s"] == [pytest.approx(tr[0]),
                                                  pytest.approx(tr[-1])]


def test_the_impact_segment_is_replayed_through_the_reset_in_every_engine(quick_swing):
    _, out, _ = quick_swing
    fit, z, arrays, records = _load(out)
    seg = fit["replay"]["segments"]
    t_e = float(z["impact_time_s"])
    hold = [s for s in seg["list"] if s["t_s"][0] < t_e < s["t_s"][1]]
    assert len(hold) == 1 and hold[0]["holds_impact"]
    s = hold[0]
    engines = sorted(fit["replay"]["engine_marker_deviation_m"])
    assert sorted(s["engines"]) == engines == seg["engines"]
    case = s["case"]
    t = arrays[f"replay/{case}/t"]
    k = int(np.flatnonzero(np.diff(t) == 0.0)[0])      # the event's left limit
    cand = candidate.load(out / "fit" / "candidate.json")
    nq = cand.q0.size
    pin = registry.adapter_class("pinocchio")(cand.model)
    L = z["impulse_Ns"]
    frame = str(z["impact_frame_name"])
    mine = [r for r in records if r["id"].startswith(case + "/")]
    for e in engines:
        x = next(v for key, v in arrays.items()
                 if key.startswith(f"replay/{case}/") and key.endswith(f"/{e}/x"))
        q, vm, vp = x[k, :nq], x[k, nq:], x[k + 1, nq:]
        # the reset map the fit uses, M(v⁺ − v⁻) = JᵀΛ, recomputed by pinocchio
        M, J = pin.mass_matrix(q), pin.frame_jacobian(q, frame)[:3]
        assert np.allclose(M @ (vp - vm), J.T @ L, rtol=1e-8, atol=1e-8), e
        assert {r["quantity"] for r in mine if r["engine_a"] == e} >= \
            {"refinement", "energy_balance"}
    pairs = {(r["engine_a"], r["engine_b"]) for r in mine if r["quantity"] == "trajectory"}
    assert len(pairs) == len(engines) * (len(engines) - 1) // 2
    counts = s["records"]
    assert counts["total"] == len([r for r in mine if r["status"] != "not_provided"])
    assert counts["passed"] == sum(r["status"] == "passed" for r in mine)


def test_the_flags_follow_the_segments_records(quick_swing):
    _, out, _ = quick_swing
    fit, z, arrays, records = _load(out)
    seg = fit["replay"]["segments"]
    s = fit["summary"]
    # the stored per-engine figures recomputed from the bundle's replayed markers
    pin = registry.adapter_class("pinocchio")(
        candidate.load(out / "fit" / "candidate.json").model)
    labels = [str(x) for x in z["labels"]]
    fitted = np.stack([pin.frame_poses(q, labels)[:, :3] for q in z["q_replay"]])
    for sg in seg["list"]:
        a, b = sg["knots"]
        for e, d in sg["engines"].items():
            mk = next(v for key, v in arrays.items()
                      if key.startswith(f"replay/{sg['case']}/") and
                      key.endswith(f"/{e}/markers"))
            dev = np.linalg.norm(mk - fitted[a:b + 1], axis=2)
            assert d["fit_rms_m"] == pytest.approx(np.sqrt(np.mean(dev ** 2)), abs=1e-9)
    hold = next(x for x in seg["list"] if x["holds_impact"])
    mine = [r for r in records if r["id"].startswith(hold["case"] + "/")]
    expect = (all(r["status"] == "passed" for r in mine if r["status"] != "not_provided")
              and all(d["fit_rms_m"] <= hold["limit_m"] for d in hold["engines"].values()))
    assert s["replay_through_impact"] is expect
    assert segments.through_impact(seg) is expect
    # tampered: a record of the impact's segment not passing, or an engine missing there
    for tamper in (lambda x: x["records"].update(passed=x["records"]["passed"] - 1),
                   lambda x: x["engines"].pop(sorted(x["engines"])[0])):
        bad = copy.deepcopy(seg)
        tamper(next(x for x in bad["list"] if x["holds_impact"]))
        assert segments.through_impact(bad) is False
