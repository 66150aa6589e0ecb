"""Evidence bundles: strict schema, atomic writes, and verify recomputing every record."""
from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from harness import api
from harness.core import io
from harness.core.errors import BadInput
from harness.evidence import bundle as evidence
from harness.model.prepared import prepare_fixture
from harness.stages import runner


@pytest.fixture(scope="module")
def result():
    return runner.run([prepare_fixture("double_pendulum"), prepare_fixture("free_body")],
                      ["pinocchio", "mujoco", "drake", "crocoddyl"], samples=3, seed=2)


@pytest.fixture
def bundle(tmp_path, result):
    return evidence.write_bundle(tmp_path / "b", result, {}, ["test"], api.evidence_hooks())


def _rewrite_npz(path, fn):
    with np.load(path / "arrays.npz", allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    fn(arrays)
    (path / "arrays.npz").write_bytes(io.npz_bytes(arrays))


def test_fresh_bundle_verifies(bundle):
    assert api.verify(bundle) == []
    m = json.loads((bundle / "manifest.json").read_text())
    assert m["engines"].keys() == {"pinocchio", "mujoco", "drake", "crocoddyl"}
    assert m["tolerance_table_version"] and m["fixtures"][0]["digest"]


def test_one_changed_number_is_found_and_named(bundle, result):
    rec = next(r for r in result.records if r.quantity == "forward_dynamics"
               and r.status == "passed")

    def bump(arrays):
        arrays[rec.key_b][rec.worst_sample, 0] += 1e-3

    _rewrite_npz(bundle, bump)
    problems = api.verify(bundle)  # the archive differs: named, and never decompressed
    assert any(p.startswith("arrays.npz: file sha256 differs") for p in problems), problems
    m = json.loads((bundle / "manifest.json").read_text())  # the file's hash re-sealed
    m["arrays_file_sha256"] = hashlib.sha256((bundle / "arrays.npz").read_bytes()).hexdigest()
    m["manifest_sha256"] = evidence.manifest_digest(m)
    (bundle / "manifest.json").write_text(json.dumps(m))
    problems = api.verify(bundle)
    assert any(rec.key_b in p and rec.id in p for p in problems), problems
    assert any(p.startswith(f"record {rec.id}:") for p in problems), problems


def test_edited_verdict_is_found_even_with_a_matching_hash(bundle):
    rows = json.loads((bundle / "records.json").read_text())
    row = next(r for r in rows if r["status"] == "passed" and r["max_rel"] > 0)
    row["max_rel"] = row["max_rel"] / 2
    blob = json.dumps(rows, indent=1).encode()
    (bundle / "records.json").write_bytes(blob)
    m = json.loads((bundle / "manifest.json").read_text())
    m["records_sha256"] = hashlib.sha256(blob).hexdigest()
    (bundle / "manifest.json").write_text(json.dumps(m))
    assert "manifest.json: manifest_sha256 differs: the manifest was edited after it was " \
           "written" in api.verify(bundle)  # a mismatch (exit 1), not bad input
    # a forger who also re-seals the manifest is still caught by the recomputation
    m["manifest_sha256"] = evidence.manifest_digest(m)
    (bundle / "manifest.json").write_text(json.dumps(m))
    problems = api.verify(bundle)
    assert any(row["id"] in p and "max_rel" in p for p in problems), problems


def test_unknown_manifest_field_is_rejected(bundle):
    m = json.loads((bundle / "manifest.json").read_text())
    m["surprise"] = 1
    (bundle / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(BadInput, match="unknown fields.*surprise"):
        api.read_bundle(bundle)


def test_unknown_record_field_is_rejected(bundle):
    rows = json.loads((bundle / "records.json").read_text())
    rows[0]["extra"] = True
    (bundle / "records.json").write_text(json.dumps(rows))
    with pytest.raises(BadInput, match="records.json"):
        api.read_bundle(bundle)


def test_pickled_arrays_are_refused(bundle):
    import io
    buf = io.BytesIO()
    np.savez(buf, x=np.array([{"a": 1}], dtype=object))
    (bundle / "arrays.npz").write_bytes(buf.getvalue())
    with pytest.raises(BadInput, match="arrays.npz"):
        api.read_bundle(bundle)


def test_missing_files_and_not_a_bundle(tmp_path, bundle):
    (bundle / "records.json").unlink()
    with pytest.raises(BadInput, match="missing records.json"):
        api.read_bundle(bundle)
    with pytest.raises(BadInput, match="not a bundle"):
        api.read_bundle(tmp_path / "nothing")


def test_atomic_replace_keeps_old_bundle_on_failure(tmp_path, result):
    out = evidence.write_bundle(tmp_path / "b", result, {}, ["first"], api.evidence_hooks())
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    with pytest.raises(TypeError):
        io.write_folder_atomic(out, {"manifest.json": b"{}", "arrays.npz": object()},
                               evidence.OUTPUT)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["b"], "temporary folder left behind"
    evidence.write_bundle(out, result, {}, ["second"], api.evidence_hooks())
    assert json.loads((out / "manifest.json").read_text())["command_line"] == ["second"]
    assert api.verify(out) == []
    assert [p.name for p in tmp_path.iterdir()] == ["b"]


def test_a_manifest_written_again_with_sorted_keys_verifies(bundle):
    """A JSON object's keys have no order: manifest.json written again with its keys
    sorted (as JSON tools do) keeps its seal (manifest_sha256 hashes it with sorted keys)
    and still verifies — the run's engine order (which engine of a pair comes first in the
    pair rows) is not read from the order of the engines object. A pair row named the
    other way round than the run's is still not a row the run produces."""
    m = json.loads((bundle / "manifest.json").read_text())
    assert list(m["engines"]) != sorted(m["engines"])  # the run's order is not sorted
    (bundle / "manifest.json").write_text(json.dumps(m, indent=1, sort_keys=True))
    assert api.verify(bundle) == []
    rows = json.loads((bundle / "records.json").read_text())
    pair = [i for i, r in enumerate(rows) if r["stage"] == "dynamics" and r["engine_b"]
            and r["engine_a"] in m["engines"]]
    row = rows[pair[len(pair) // 2]]
    a, b = row["engine_a"], row["engine_b"]
    row.update(id=row["id"].replace(f"/{a}~{b}", f"/{b}~{a}"), engine_a=b, engine_b=a,
               key_a=row["key_b"], key_b=row["key_a"])
    blob = json.dumps(rows, indent=1).encode()
    (bundle / "records.json").write_bytes(blob)
    (bundle / "records.csv").unlink()
    m["records_sha256"] = hashlib.sha256(blob).hexdigest()
    m["manifest_sha256"] = evidence.manifest_digest(m)
    (bundle / "manifest.json").write_text(json.dumps(m, indent=1, sort_keys=True))
    problems = api.verify(bundle)
    assert f"record {row['id']}: not a row the run's fixtures, engines and gating " \
           "produce" in problems, problems
    assert any(p.startswith(f"record {row['id'].replace(f'/{b}~{a}', f'/{a}~{b}')} is "
                            "missing") for p in problems), problems
