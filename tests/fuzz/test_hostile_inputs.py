"""Hostile inputs: numbers and files that would make a command run for hours, take all
memory, hang or overflow are refused in one line before any work (the bounds of
harness/core/strict.py, each with its reason), with real engines and real files."""
from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from harness.core.io import array_sha256
from tests.conftest import ROOT, run_cli

OSIM = ROOT / "tests" / "data" / "osim_user_model.osim"
CAPTURE = ROOT / "data" / "swing" / "driver.c3d"


def _refused(args: list[object], *names: str, timeout: float = 120) -> str:
    """The one-line refusal (exit 2) of ``harness *args``, within ``timeout`` seconds."""
    try:
        p = run_cli(*args, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"harness {' '.join(map(str, args))} ran past {timeout} s: not refused "
                    "before any work")
    assert p.returncode == 2, (p.returncode, p.stderr[-2000:])
    assert p.stderr.count("\n") == 1 and "internal error" not in p.stderr, p.stderr
    for n in names:
        assert n in p.stderr, p.stderr
    return p.stderr


def test_sweep_workers_are_bounded(tmp_path):
    err = _refused(["sweep", "contact", "--quick", "--workers", "1000", "--out",
                    tmp_path / "sw"], "--workers", "64", timeout=60)
    assert "at most" in err
    assert not (tmp_path / "sw").exists()


def _candidate_with(tmp_path: Path, t: np.ndarray, shape_t: list[int] | None = None) -> Path:
    """A chain7 candidate (written by ``synth``) whose t (and tau, zeros) are replaced;
    ``shape_t``: the knots its manifest declares (default: t's)."""
    src = tmp_path / "src" / "c.json"
    p = run_cli("synth", "chain7", "--out", src, "--duration", "0.1")
    assert p.returncode == 0, p.stderr
    m = json.loads(src.read_text())
    with np.load(src.with_suffix(".npz"), allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    nv = arrays["tau"].shape[1]
    arrays["t"] = np.asarray(t, dtype=float)
    arrays["tau"] = np.zeros((t.size, nv))
    n = t.size if shape_t is None else shape_t[0]
    for k, a in arrays.items():
        m["arrays"][k]["sha256"] = array_sha256(a)
        m["arrays"][k]["shape"] = list(a.shape)
    m["arrays"]["t"]["shape"], m["arrays"]["tau"]["shape"] = [n], [n, nv]
    dest = tmp_path / "hostile.json"
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    dest.with_suffix(".npz").write_bytes(buf.getvalue())
    m["arrays_file"] = "hostile.npz"
    m["model"] = json.loads(src.read_text())["model"]
    dest.write_text(json.dumps(m))
    return dest


def test_a_candidate_lasting_a_million_seconds_is_refused_before_any_work(tmp_path):
    cand = _candidate_with(tmp_path, np.array([0.0, 1.0e6]))
    err = _refused(["replay", cand, "--out", tmp_path / "r"], "hostile.json", timeout=90)
    assert "600 s" in err
    assert not (tmp_path / "r").exists()


def test_a_candidate_of_two_million_knots_is_refused_from_its_manifest(tmp_path):
    cand = _candidate_with(tmp_path, np.linspace(0.0, 1.0, 11), shape_t=[2_000_001])
    err = _refused(["replay", cand, "--out", tmp_path / "r"], "hostile.json", timeout=90)
    assert "2000001 knots" in err and "1,000,000" in err


def test_fit_p0_is_bounded_with_its_reason(tmp_path):
    err = _refused(["fit", "--problem", "pendulum", "--p0", "1e300", "--out", tmp_path / "f"],
                   "--p0", timeout=120)
    assert "1/s²" in err
    assert not (tmp_path / "f").exists()


def test_club_masses_are_bounded_to_a_golf_club(tmp_path):
    err = _refused(["swing", CAPTURE, "--quick", "--club-masses", "1e308,0.2", "--out",
                    tmp_path / "s"], "--club-masses", timeout=120)
    assert "2 kg" in err
    assert not (tmp_path / "s").exists()


def _osim_referencing(tmp_path: Path, ref: str) -> Path:
    text = OSIM.read_text().replace('<ForceSet name="forceset">',
                                    f'<ForceSet name="forceset" file="{ref}">', 1)
    assert f'file="{ref}"' in text
    dest = tmp_path / "model.osim"
    dest.write_text(text)
    return dest


@pytest.mark.parametrize("kind", ["fifo", "folder", "/dev/zero"])
def test_osim_file_reference_to_a_non_regular_file_is_refused_before_opensim_reads_it(
        tmp_path, kind):
    if kind == "fifo":
        os.mkfifo(tmp_path / "refs.xml")
        ref = "refs.xml"
    elif kind == "folder":
        (tmp_path / "refs").mkdir()
        ref = "refs"
    else:
        ref = kind
    model = _osim_referencing(tmp_path, ref)
    err = _refused(["parity", "--osim", model, "--stages", "model_identity", "--out",
                    tmp_path / "p"], "model.osim", ref, timeout=60)
    assert "only regular files" in err


def test_osim_missing_file_reference_is_a_note(tmp_path):
    from harness.model.osim_import import load_osim_with_notes

    model = _osim_referencing(tmp_path, "missing.xml")
    _, notes = load_osim_with_notes(str(model))
    assert any("missing.xml" in n and "does not exist" in n for n in notes), notes


def test_report_of_a_laundered_bundle_says_it_does_not_verify(tmp_path):
    """Arrays edited and every hash resealed: the records still claim a pass, but they no
    longer recompute. The report must not show the pass banner, and exits 1 as verify."""
    import hashlib

    from harness.core.io import npz_bytes
    from harness.evidence.bundle import manifest_digest

    folder = tmp_path / "b"
    p = run_cli("parity", "--fixture", "pendulum", "--samples", "2", "--out", folder,
                "--quiet")
    assert p.returncode == 0, p.stderr
    manifest = json.loads((folder / "manifest.json").read_text())
    with np.load(folder / "arrays.npz", allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    engine = list(manifest["engines"])[1]
    key = f"out/pendulum/mass_matrix/{engine}"
    arrays[key] = arrays[key] * 1.01
    npz = npz_bytes(arrays)
    manifest["arrays_sha256"] = {k: array_sha256(v) for k, v in sorted(arrays.items())}
    manifest["arrays_file_sha256"] = hashlib.sha256(npz).hexdigest()
    manifest["manifest_sha256"] = manifest_digest(manifest)
    (folder / "arrays.npz").write_bytes(npz)
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1))
    assert run_cli("verify", folder).returncode == 1
    page = tmp_path / "r.html"
    p = run_cli("report", folder, "--out", page, "--quiet")
    html = page.read_text()
    assert "does not verify" in html
    assert "every scored comparison passed" not in html
    assert p.returncode == 1, p.stderr


@pytest.mark.parametrize("arg", [{"seed": 1.5}, {"samples": 2.0}, {"seed": True}])
def test_api_parity_refuses_a_wrongly_typed_argument_before_any_stage(tmp_path, arg):
    from harness import api
    from harness.core.errors import BadInput

    out = tmp_path / "b"
    with pytest.raises(BadInput) as e:
        api.parity(["pendulum"], out=str(out), stages=["model_identity"], **arg)
    assert str(e.value).startswith(next(iter(arg))), str(e.value)
    assert not out.exists()


def test_osim_export_refuses_a_fit_json_of_an_unknown_schema_version(tmp_path):
    from harness.swing.run import SUMMARY_KEYS

    d = tmp_path / "swing"
    (d / "fit").mkdir(parents=True)
    doc = {k: {} for k in SUMMARY_KEYS} | {"schema_version": 99}
    doc["capture"] = {"rate_hz": 200.0}
    doc["model"] = {"tracked_markers": []}
    (d / "fit" / "fit.json").write_text(json.dumps(doc))
    err = _refused(["osim-export", d, "--out", tmp_path / "o"], "fit.json", timeout=60)
    assert "schema_version 99" in err
    assert not (tmp_path / "o").exists()


def test_quiet_hides_opensims_own_warning_lines(tmp_path):
    """A massless body with a nonzero inertia makes OpenSim's native logger print
    "[warning] Body … massless" on stdout; they are harness warnings: once each with their
    count at the end, and only their number with --quiet."""
    import re

    text = OSIM.read_text()
    a = text.index('<Body name="head">')
    b = text.index("</Body>", a)
    text = text[:a] + re.sub(r"<mass>[^<]*</mass>", "<mass>0</mass>", text[a:b]) + text[b:]
    model = tmp_path / "massless.osim"
    model.write_text(text)
    args = ["parity", "--osim", model, "--stages", "model_identity", "--samples", "1"]
    p = run_cli(*args, "--out", tmp_path / "q", "--quiet")
    assert p.returncode == 0, p.stderr
    assert "massless" not in p.stdout + p.stderr, p.stdout
    assert "not shown (--quiet)" in p.stderr
    p = run_cli(*args, "--out", tmp_path / "v")
    assert p.returncode == 0, p.stderr
    assert "massless" not in p.stdout
    shown = [line for line in p.stderr.splitlines() if "massless" in line]
    assert len(shown) == 1 and shown[0].startswith("harness: warning:"), p.stderr
