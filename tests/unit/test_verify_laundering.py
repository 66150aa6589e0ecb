"""`harness verify` cannot be laundered: a bundle whose failed rows were rewritten, deleted
or re-scored under an edited tolerance — with every hash updated, as anyone holding the
files can — is a mismatch, and so is a records or manifest file edited without updating
the hashes (exit 1, not bad input).

The starting point is a real run (stages 0–2 on two pendulums, every engine) in which one
engine's mass matrices are scaled by 1.01, as an engine holding a wrong model would output
them, and every row computed from them is recomputed: a consistent bundle with failed rows
that verifies clean. Each attack then edits that bundle the way a launderer would."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import run_cli

from harness import api
from harness.core.io import array_sha256, npz_bytes
from harness.core.records import Record, compare
from harness.core.tolerances import lookup
from harness.evidence.bundle import manifest_digest, records_csv
from harness.stages.dynamics import QUANTITIES as DYNAMICS

FX = "pendulum"
QTY = "mass_matrix"


def _load(folder: Path):
    manifest = json.loads((folder / "manifest.json").read_text())
    records = [Record.from_json(r) for r in json.loads((folder / "records.json").read_text())]
    with np.load(folder / "arrays.npz", allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    return manifest, records, arrays


def _seal(folder: Path, manifest, records, arrays):
    """Write the three files with every hash updated, and records.csv to match (what a
    launderer does)."""
    blob = json.dumps([r.to_json() for r in records], indent=1, allow_nan=False).encode()
    npz = npz_bytes(arrays)
    import hashlib

    manifest["arrays_sha256"] = {k: array_sha256(v) for k, v in sorted(arrays.items())}
    manifest["arrays_file_sha256"] = hashlib.sha256(npz).hexdigest()
    manifest["records_sha256"] = hashlib.sha256(blob).hexdigest()
    manifest["manifest_sha256"] = manifest_digest(manifest)
    (folder / "arrays.npz").write_bytes(npz)
    (folder / "records.json").write_bytes(blob)
    (folder / "records.csv").write_bytes(records_csv(records))
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1))


def _recompute(r: Record, arrays) -> Record:
    labels = arrays[r.key_labels] if r.key_labels else None
    return compare(r.id, r.stage, r.fixture, r.quantity, r.engine_a, r.engine_b,
                   arrays[r.key_a], arrays[r.key_b], lookup(r.stage, r.quantity), r.key_a,
                   r.key_b, labels, r.key_labels)


@pytest.fixture(scope="module")
def genuine(tmp_path_factory):
    out = tmp_path_factory.mktemp("genuine") / "bundle"
    o = api.parity(fixtures=[FX, "double_pendulum"], out=str(out), samples=2)
    assert o.exit_code == 0
    return out


@pytest.fixture
def failing(genuine, tmp_path):
    """(folder, engine, failed row ids): the consistent bundle with failed rows."""
    folder = tmp_path / "bundle"
    shutil.copytree(genuine, folder)
    manifest, records, arrays = _load(folder)
    engine = list(manifest["engines"])[1]
    key = f"out/{FX}/{QTY}/{engine}"
    arrays[key] = arrays[key] * 1.01
    failed = []
    for i, r in enumerate(records):
        if key in (r.key_a, r.key_b):
            records[i] = _recompute(r, arrays)
            failed.append(r.id)
    assert failed and all(r.status == "failed" for r in records if r.id in failed)
    _seal(folder, manifest, records, arrays)
    assert api.verify(folder) == []  # consistent: what such a run writes
    return folder, engine, failed


def _problems(folder) -> str:
    p = api.verify(folder)
    assert p, "the laundered bundle verified clean"
    return "\n".join(p)


@pytest.mark.parametrize("keep_keys", [True, False])
def test_failed_rows_rewritten_as_not_provided_are_recomputed(failing, keep_keys):
    folder, engine, failed = failing
    manifest, records, arrays = _load(folder)
    for r in records:
        if r.id in failed:
            r.status, r.passed, r.max_abs, r.max_rel = "not_provided", None, None, None
            r.worst_sample, r.worst_label, r.atol, r.rtol = None, "", None, None
            r.reason = "the engine has no API for it"
            if not keep_keys:
                r.key_a = r.key_b = r.key_labels = ""
    _seal(folder, manifest, records, arrays)
    text = _problems(folder)
    for rid in failed:
        assert rid in text
    if keep_keys:
        assert "recomputed: failed" in text


def test_failed_rows_rewritten_as_passed_are_recomputed(failing):
    folder, engine, failed = failing
    manifest, records, arrays = _load(folder)
    for r in records:
        if r.id in failed:
            r.status, r.passed = "passed", True
    _seal(folder, manifest, records, arrays)
    assert all(rid in _problems(folder) for rid in failed)


def test_deleted_rows_are_missing(failing):
    folder, engine, failed = failing
    manifest, records, arrays = _load(folder)
    _seal(folder, manifest, [r for r in records if r.id not in failed], arrays)
    text = _problems(folder)
    assert all(f"record {rid} is missing" in text for rid in failed)


def test_rows_and_arrays_deleted_as_not_provided_contradict_the_manifest(failing):
    """The thorough launderer: the engine's mass matrices deleted, its pair rows deleted,
    and one row saying the engine has no mass matrix."""
    folder, engine, failed = failing
    manifest, records, arrays = _load(folder)
    del arrays[f"out/{FX}/{QTY}/{engine}"]
    kept = [r for r in records if r.id not in failed]
    _seal(folder, manifest, kept, arrays)
    assert f"no output of {engine} and no row saying why" in _problems(folder)
    kept.append(Record(id=f"{FX}/dynamics/{QTY}/{engine}", stage="dynamics", fixture=FX,
                       quantity=QTY, engine_a=engine, engine_b="", status="not_provided",
                       reason="no mass matrix API"))
    _seal(folder, manifest, kept, arrays)
    assert "not_provided, but the manifest names" in _problems(folder)


def test_edited_tolerance_entries_are_mismatches(failing):
    folder, engine, failed = failing
    manifest, records, arrays = _load(folder)
    entry = manifest["tolerances"][f"dynamics/{QTY}"]
    entry["rtol"] = 0.1  # the manifest alone edited
    _seal(folder, manifest, records, arrays)
    assert f"manifest tolerance dynamics/{QTY}" in _problems(folder)
    # the rows re-scored under the loose tolerance too, and the table version renamed so
    # that no table seems to apply
    manifest["tolerance_table_version"] = "0.0.0"
    for r in records:
        if r.id in failed:
            r.rtol = 0.1
            again = compare(r.id, r.stage, r.fixture, r.quantity, r.engine_a, r.engine_b,
                            arrays[r.key_a], arrays[r.key_b], type(lookup("dynamics", QTY))(
                                r.atol, 0.1, ""), r.key_a, r.key_b,
                            arrays[r.key_labels], r.key_labels)
            assert again.status == "passed"
            r.status, r.passed, r.max_rel = again.status, again.passed, again.max_rel
    _seal(folder, manifest, records, arrays)
    text = _problems(folder)
    assert all(f"record {rid}: tolerance" in text for rid in failed)
    # an entry no record uses, added to the manifest
    manifest["tolerances"]["dynamics/made_up"] = {"atol": 1.0, "rtol": 1.0, "reason": "x"}
    _seal(folder, manifest, records, arrays)
    assert "entry dynamics/made_up is used by no record" in _problems(folder)


def test_a_stage_deleted_for_one_fixture_is_found(failing):
    """Every row, output and label of stage 2 on the failing fixture removed: the run
    evaluated stage 2 on the other fixture, so this one lost it."""
    folder, engine, failed = failing
    manifest, records, arrays = _load(folder)
    records = [r for r in records if not (r.fixture == FX and r.stage == "dynamics")]
    qs = {q.name for q in DYNAMICS}
    arrays = {k: v for k, v in arrays.items()
              if not any(k.startswith(f"out/{FX}/{q}/") or k == f"labels/{FX}/{q}"
                         for q in qs)}
    _seal(folder, manifest, records, arrays)
    assert _problems(folder) == f"{FX}: no rows of stage dynamics, which the run " \
                                "evaluated on double_pendulum"


def test_samples_cut_from_the_arrays_are_found(failing):
    """The failing sample removed from every array of the quantity and its labels, the
    rows recomputed on what is left."""
    folder, engine, failed = failing
    manifest, records, arrays = _load(folder)
    for k in list(arrays):
        if k.startswith(f"out/{FX}/{QTY}/") or k == f"labels/{FX}/{QTY}":
            arrays[k] = arrays[k][:1]
    records = [_recompute(r, arrays) if r.key_a.startswith(f"out/{FX}/{QTY}/") else r
               for r in records]
    _seal(folder, manifest, records, arrays)
    assert f"labels/{FX}/{QTY}: not the 2 samples" in _problems(folder)


def test_edited_records_or_manifest_without_new_hashes_are_mismatches(failing):
    """Exit 1 with a MISMATCH line naming the file (it was exit 2, "bad input")."""
    folder, engine, failed = failing
    rows = json.loads((folder / "records.json").read_text())
    for row in rows:
        if row["id"] in failed:
            row["status"], row["passed"] = "passed", True
    (folder / "records.json").write_text(json.dumps(rows, indent=1))
    text = _problems(folder)
    assert "records.json: sha256 differs from the manifest" in text
    assert all(rid in text for rid in failed)  # and the rows are still recomputed
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["seed"] = 7
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1))
    assert "manifest_sha256 differs" in _problems(folder)
    proc = run_cli("verify", folder)
    assert proc.returncode == 1, proc.stderr
    assert "MISMATCH manifest.json: manifest_sha256 differs" in proc.stdout


def test_the_report_verifies_the_bundle_it_read_as_verify_does(failing):
    """``harness report`` reads a bundle once and verifies that read (verify_read): the
    same problems as ``verify`` on the folder, for a laundered bundle (failed rows
    rewritten as passed, every hash updated) and for the consistent one."""
    from harness.evidence import bundle as evidence

    folder, engine, failed = failing
    hooks = api.evidence_hooks()
    assert evidence.verify_read(api.read_bundle(folder), hooks) == api.verify(folder) == []
    manifest, records, arrays = _load(folder)
    for r in records:
        if r.id in failed:
            r.status, r.passed, r.reason = "passed", True, ""
    _seal(folder, manifest, records, arrays)
    found = api.verify(folder)
    assert found and evidence.verify_read(api.read_bundle(folder), hooks) == found
    problems: list[str] = []
    api.report(folder, problems=problems)
    assert problems == found
    assert "this bundle does not verify" in (folder / "index.html").read_text()


def test_condition_numbers_of_a_stack_are_those_of_each_matrix(rng):
    """cond(M) of the whole (N, n, n) stack at once equals one np.linalg.cond per matrix,
    bit for bit, with inf for a matrix with a non-finite entry."""
    from harness.stages.dynamics import condition_numbers

    M = rng.standard_normal((40, 6, 6))
    M[3, 2, 2] = np.nan
    M[7] = np.ones((6, 6))  # singular
    want = np.array([np.linalg.cond(m) if np.all(np.isfinite(m)) else np.inf for m in M])
    want = np.where(np.isnan(want), np.inf, want)
    assert np.array_equal(condition_numbers([M]), want)
    assert np.array_equal(condition_numbers([M, 2 * M]), want)  # the largest over engines
