"""Command-line wording a reader can take at its word: units of mixed-kind quantities as
"a or b" (never "a | b", which reads as two things at once); progress lines as "key value"
text, not Python dicts; the replay summary line with its unit; ``fit`` naming its report
like every other command; ``verify`` on a fit or sweep folder saying what the folder is."""
from __future__ import annotations

from harness.core.records import UNITS, unit_of
from tests.conftest import run_cli


def test_mixed_units_read_as_alternatives():
    assert unit_of("model_identity", "joint_damping") == "N·s/m or N·m·s/rad"
    assert not [u for u in UNITS.values() if "|" in u]


def test_replay_progress_and_summary_lines(tmp_path):
    cand, out = tmp_path / "cand.json", tmp_path / "replay"
    assert run_cli("synth", "chain7", "--out", cand, "--duration", "0.2").returncode == 0
    proc = run_cli("replay", cand, "--out", out)
    assert proc.returncode in (0, 1), proc.stderr
    native = [ln for ln in proc.stderr.splitlines() if " native " in ln]
    assert native and not [ln for ln in native if "{" in ln or "'" in ln], native
    worst = [ln for ln in proc.stdout.splitlines()
             if ln.startswith("replay: worst engine-pair trajectory error")]
    assert len(worst) == 1 and " m or rad, m/s or rad/s (" in worst[0], proc.stdout


def test_fit_names_its_report_and_verify_says_what_a_folder_is(tmp_path):
    fit = tmp_path / "fit"
    proc = run_cli("fit", "--problem", "pendulum", "--n", "1000", "--p0", "60", "--out", fit)
    assert proc.returncode == 0, proc.stderr
    assert f"report: {fit / 'index.html'}" in proc.stdout.splitlines()
    bad = run_cli("verify", fit)
    assert bad.returncode == 2 and "is a fit bundle (harness fit), not an evidence bundle: " \
        "verify checks evidence bundles" in bad.stderr, bad.stderr
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    (sweep / "sweep.json").write_text("{}")
    bad = run_cli("verify", sweep)
    assert bad.returncode == 2 and "is a sweep folder (harness sweep), not an evidence " \
        "bundle" in bad.stderr, bad.stderr
