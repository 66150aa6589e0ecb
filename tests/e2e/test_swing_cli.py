"""`harness swing` end to end on the bundled capture (quick settings), and its bad input."""
from __future__ import annotations

import json
from pathlib import Path

from conftest import ROOT, run_cli
from harness.tolerances import lookup

CAPTURE = ROOT / "data" / "swing" / "driver.c3d"


def test_swing_quick_on_the_bundled_capture(tmp_path):
    out = tmp_path / "swing"
    p = run_cli("swing", CAPTURE, "--quick", "--out", out, "--quiet", timeout=1500)
    assert p.returncode in (0, 1), p.stderr
    assert "Traceback" not in p.stderr
    fit = json.loads((out / "fit" / "fit.json").read_text())
    # checks recomputed here from the stored numbers, not read from the report's verdicts
    rmse = fit["fit"]["marker_rmse_by_phase_m"]["top_to_impact"]
    assert rmse <= lookup("swing", "marker_rmse").atol
    speed = fit["fit"]["club_head_speed_at_impact_mps"]
    assert abs(speed["fitted"] - speed["measured"]) < \
        lookup("swing", "impact_speed_fit").atol * speed["measured"]
    assert fit["capture"]["rejected"].keys() == {"Marker_0:0:0"}
    html = (out / "index.html").read_text()
    assert 'id="swing-summary"' in html and "replay/index.html" in html
    assert (out / "replay" / "manifest.json").is_file()
    assert p.returncode == (0 if "NOT met" not in p.stdout else 1)
    # the candidate is a valid replay input on its own
    from harness import candidate

    cand = candidate.load(out / "fit" / "candidate.json")
    assert cand.tau.shape[1] == 30


def test_swing_bad_input(tmp_path):
    bad = tmp_path / "bad.c3d"
    bad.write_bytes(CAPTURE.read_bytes()[:600])
    p = run_cli("swing", bad, "--out", tmp_path / "o")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and str(bad) in p.stderr
    assert not (tmp_path / "o").exists()
    other = tmp_path / "notes"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    p = run_cli("swing", CAPTURE, "--out", other)
    assert p.returncode == 2 and "refusing" in p.stderr
    assert (other / "keep.txt").read_text() == "mine"
