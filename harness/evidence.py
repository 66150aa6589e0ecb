"""Evidence bundles: a folder with manifest.json, arrays.npz, records.json, index.html.

* manifest.json — schema version, harness version, git commit, engine versions (and
  the reasons of unavailable engines), fixtures (source, sha256, nq, nv, frames, joints,
  which engine API computed each quantity), sha256 of every array, tolerance-table
  version and the entries used, platform, command line, seed, samples, creation time.
* arrays.npz — every input and output a record was computed from (no pickles:
  numeric and unicode arrays only; loaded with ``allow_pickle=False``).
* records.json — list of records (harness/records.py), one per comparison.
* manifest ``replay`` — for bundles with stage 5: per replay case the candidate (hashes,
  provenance), the integrator settings of every run and the observer engine
  (harness/replay.py validates it); ``{}`` otherwise.

One schema, validated strictly on read: unknown or missing fields are errors. Writes
are atomic: the bundle is built in a temporary sibling folder and swapped in with one
rename (an existing bundle is exchanged atomically with ``renameat2(RENAME_EXCHANGE)``
on Linux, then deleted), so a reader sees the old bundle or the new one, never a mix.
``verify`` recomputes every record from the arrays and reports any difference.
"""
from __future__ import annotations

import ctypes
import hashlib
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np

from harness import __version__
from harness.errors import BadInput
from harness.records import Record, compare
from harness.tolerances import TABLE, TABLE_VERSION, Tolerance

SCHEMA_VERSION = 2  # 2: "replay" manifest key (stage 5)
MANIFEST_TYPES = {"schema_version": int, "harness_version": str, "git_commit": str,
                  "engines": dict, "unavailable_engines": dict, "fixtures": list,
                  "arrays_sha256": dict, "records_sha256": str,
                  "tolerance_table_version": str, "tolerances": dict, "platform": dict,
                  "command_line": list, "seed": int, "samples": int, "created": str,
                  "kind": str, "arrays_file_sha256": str, "manifest_sha256": str,
                  "replay": dict}
MANIFEST_KEYS = set(MANIFEST_TYPES)
FIXTURE_KEYS = {"name", "source", "digest", "nq", "nv", "floating", "frames", "joints",
                "provides", "notes"}


def array_sha256(a: np.ndarray) -> str:
    a = np.ascontiguousarray(a)
    h = hashlib.sha256()
    h.update(f"{a.dtype.str}|{a.shape}|".encode())
    h.update(a.tobytes())
    return h.hexdigest()


def git_commit() -> str:
    root = Path(__file__).resolve().parent.parent
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"],
                             capture_output=True, text=True, timeout=5)
        return out.stdout.strip() if out.returncode == 0 else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _records_blob(records) -> bytes:
    return json.dumps([r.to_json() for r in records], indent=1, allow_nan=False).encode()


def build_manifest(result, unavailable: dict, command_line: list,
                   replay: dict | None = None) -> dict:
    """``replay``: the replay section (harness.replay.ReplayResult.info) or None."""
    used = {(r.stage, r.quantity) for r in result.records if (r.stage, r.quantity) in TABLE}
    if replay:
        from harness.replay import THRESHOLDS

        used |= {("replay", q) for q in THRESHOLDS}
    used = sorted(used)
    manifest = {
        "schema_version": SCHEMA_VERSION,
        "kind": "parity" if not replay else "parity+replay",
        "replay": dict(replay or {}),
        "harness_version": __version__,
        "git_commit": git_commit(),
        "engines": {n: v for n, v in result.engines},
        "unavailable_engines": dict(unavailable),
        "fixtures": [{"name": f.name, "source": f.source, "digest": f.digest, "nq": f.nq,
                      "nv": f.nv, "floating": f.floating, "frames": f.frames,
                      "joints": f.joints, "provides": f.provides, "notes": f.notes}
                     for f in result.fixtures],
        "arrays_sha256": {k: array_sha256(v) for k, v in sorted(result.arrays.items())},
        "records_sha256": hashlib.sha256(_records_blob(result.records)).hexdigest(),
        "arrays_file_sha256": hashlib.sha256(npz_bytes(result.arrays)).hexdigest(),
        "tolerance_table_version": TABLE_VERSION,
        "tolerances": {f"{s}/{q}": {"atol": TABLE[(s, q)].atol, "rtol": TABLE[(s, q)].rtol,
                                    "reason": TABLE[(s, q)].reason} for s, q in used},
        "platform": {"python": platform.python_version(), "machine": platform.machine(),
                     "system": platform.system(), "release": platform.release()},
        "command_line": list(command_line),
        "seed": result.seed,
        "samples": result.samples,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    manifest["manifest_sha256"] = manifest_digest(manifest)
    return manifest


def manifest_digest(manifest: dict) -> str:
    """sha256 of the manifest's canonical JSON without this field: any later edit of the
    manifest (an engine version, a tolerance, the seed) is detectable."""
    body = {k: v for k, v in manifest.items() if k != "manifest_sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":"),
                                     allow_nan=False).encode()).hexdigest()


# ----- atomic folder write --------------------------------------------------------------
_RENAME_EXCHANGE = 2


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2); False if unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    AT_FDCWD = -100
    rc = fn(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return rc == 0


def _fsync_dir(path: Path):
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass


def _remove_stale_temps(out: Path):
    """Delete temporary folders left by a writer that was killed (its pid is gone)."""
    for p in out.parent.glob(f".{out.name}.tmp-*"):
        try:
            pid = int(p.name.rsplit(".tmp-", 1)[1].split("-", 1)[0])
        except (IndexError, ValueError):
            continue
        try:
            os.kill(pid, 0)
            alive = True
        except ProcessLookupError:
            alive = False
        except PermissionError:
            alive = True
        if not alive and p.is_dir():
            shutil.rmtree(p, ignore_errors=True)


def write_folder_atomic(out: Path, files: dict) -> Path:
    """Write {filename: bytes} as folder ``out``, atomically replacing any old one."""
    out = Path(out).resolve()
    if out.exists() and not out.is_dir():
        raise BadInput(str(out), "exists and is not a folder")
    out.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temps(out)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-{os.getpid()}-", dir=out.parent))
    try:
        for name, blob in files.items():
            with open(tmp / name, "wb") as fh:
                fh.write(blob)
                fh.flush()
                os.fsync(fh.fileno())
        _fsync_dir(tmp)
        if out.exists():
            if _exchange(tmp, out):
                shutil.rmtree(tmp)  # tmp now holds the old bundle
            else:  # fallback: two renames, old kept until the new one is in place
                old = out.with_name(f".{out.name}.old-{os.getpid()}")
                os.rename(out, old)
                os.rename(tmp, out)
                shutil.rmtree(old)
        else:
            os.rename(tmp, out)
        _fsync_dir(out.parent)
    except BaseException:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def write_bytes_atomic(path, data: bytes) -> Path:
    """Write one file atomically (temp file beside it + fsync + rename)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    return path


def write_text_atomic(path, text: str) -> Path:
    """Write one UTF-8 text file atomically (write_bytes_atomic)."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path, obj) -> Path:
    """JSON (sorted keys, no NaN) written atomically."""
    return write_text_atomic(path, json.dumps(obj, indent=1, sort_keys=True,
                                              allow_nan=False) + "\n")


def npz_bytes(arrays: dict) -> bytes:
    """An .npz archive (readable by np.load) written deterministically: sorted names,
    fixed timestamps, deflate; same arrays → same bytes. No pickles (object arrays
    are refused)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in sorted(arrays):
            a = np.asanyarray(arrays[name])
            if a.dtype.hasobject:
                raise ValueError(f"array {name} holds Python objects; evidence is numeric")
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            member = io.BytesIO()
            np.lib.format.write_array(member, a, allow_pickle=False)
            zf.writestr(info, member.getvalue())
    return buf.getvalue()


def write_bundle(out, result, unavailable: dict, command_line: list, html: str | None = None,
                 extra_files: dict | None = None, replay: dict | None = None) -> Path:
    manifest = build_manifest(result, unavailable, command_line, replay)
    files = {"manifest.json": json.dumps(manifest, indent=1, allow_nan=False).encode(),
             "arrays.npz": npz_bytes(result.arrays),
             "records.json": _records_blob(result.records)}
    if hashlib.sha256(files["arrays.npz"]).hexdigest() != manifest["arrays_file_sha256"]:
        raise RuntimeError("arrays.npz is not deterministic")  # would be a harness bug
    if html is not None:
        files["index.html"] = html.encode()
    files.update(extra_files or {})
    return write_folder_atomic(Path(out), files)


# ----- strict read ----------------------------------------------------------------------
class Bundle:
    def __init__(self, path, manifest, records, arrays):
        self.path, self.manifest, self.records, self.arrays = path, manifest, records, arrays


def read_bundle(path) -> Bundle:
    path = Path(path)
    if not path.is_dir():
        raise BadInput(str(path), "is not a bundle folder")
    for name in ("manifest.json", "records.json", "arrays.npz"):
        if not (path / name).is_file():
            raise BadInput(str(path), f"missing {name}")
    try:
        manifest = json.loads((path / "manifest.json").read_text())
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise BadInput(str(path / "manifest.json"), f"not valid JSON ({e})")
    _check_manifest(path / "manifest.json", manifest)
    raw = (path / "records.json").read_bytes()
    try:
        rows = json.loads(raw)
        if not isinstance(rows, list):
            raise ValueError("records.json must hold a list")
        records = [Record.from_json(r) if isinstance(r, dict) else _bad_row(r) for r in rows]
    except (UnicodeDecodeError, json.JSONDecodeError, ValueError, TypeError) as e:
        raise BadInput(str(path / "records.json"), str(e))
    if hashlib.sha256(raw).hexdigest() != manifest["records_sha256"]:
        raise BadInput(str(path / "records.json"), "sha256 differs from the manifest")
    try:
        with np.load(path / "arrays.npz", allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except Exception as e:  # any failure to parse the archive (zlib, zip, npy header)
        raise BadInput(str(path / "arrays.npz"), f"unreadable ({type(e).__name__}: {e})")
    if set(arrays) != set(manifest["arrays_sha256"]):
        raise BadInput(str(path / "arrays.npz"), "array names differ from the manifest")
    return Bundle(path, manifest, records, arrays)


def _bad_row(r):
    raise ValueError(f"record is not an object: {str(r)[:40]!r}")


def _check_manifest(where, m):
    if not isinstance(m, dict):
        raise BadInput(str(where), "manifest must be an object")
    unknown, missing = set(m) - MANIFEST_KEYS, MANIFEST_KEYS - set(m)
    if unknown or missing:
        raise BadInput(str(where), f"unknown fields {sorted(unknown)}, missing {sorted(missing)}")
    for k, t in MANIFEST_TYPES.items():
        if not isinstance(m[k], t) or (t is int and isinstance(m[k], bool)):
            raise BadInput(str(where), f"field {k} must be {t.__name__}")
    if m["schema_version"] != SCHEMA_VERSION:
        raise BadInput(str(where), f"schema version {m['schema_version']!r}, this harness "
                                   f"reads {SCHEMA_VERSION}")
    if not isinstance(m["fixtures"], list) or not all(
            isinstance(f, dict) and set(f) == FIXTURE_KEYS for f in m["fixtures"]):
        raise BadInput(str(where), "fixtures entries have unknown or missing fields")
    if not all(isinstance(v, str) for v in m["arrays_sha256"].values()):
        raise BadInput(str(where), "arrays_sha256 values must be strings")
    if m["replay"]:
        from harness.replay import manifest_section_problem

        problem = manifest_section_problem(m["replay"])
        if problem:
            raise BadInput(str(where), f"replay section: {problem}")
    try:
        digest = manifest_digest(m)
    except (TypeError, ValueError) as e:
        raise BadInput(str(where), f"not canonical JSON ({e})")
    if digest != m["manifest_sha256"]:
        raise BadInput(str(where), "manifest_sha256 differs: the manifest was edited")


# ----- verify ---------------------------------------------------------------------------
def verify(path) -> list:
    """Recompute every record of a bundle; return a list of one-line problems (empty if
    the bundle is consistent). Raises BadInput if the bundle cannot be read."""
    b = read_bundle(path)
    problems = []
    if hashlib.sha256((Path(path) / "arrays.npz").read_bytes()).hexdigest() != \
            b.manifest["arrays_file_sha256"]:
        problems.append("arrays.npz: file sha256 differs from the manifest (changed after "
                        "it was written)")
    for k, a in b.arrays.items():
        if array_sha256(a) != b.manifest["arrays_sha256"][k]:
            users = [r.id for r in b.records if k in (r.key_a, r.key_b, r.key_labels)]
            problems.append(f"array {k}: sha256 differs from the manifest (used by "
                            f"{', '.join(users) if users else 'no record'})")
    ids = [r.id for r in b.records]
    if len(set(ids)) != len(ids):
        problems.append("duplicate record ids")
    by_id = {r.id: r for r in b.records}
    for r in b.records:
        if r.status == "informational":  # stage 3: numbers without a verdict
            problems += _verify_informational(r, b.arrays)
            continue
        if r.status not in ("passed", "failed", "unconverged"):
            if r.passed is not None or r.max_abs is not None:
                problems.append(f"record {r.id}: status {r.status} carries a verdict")
            continue
        if r.stage == "replay":  # windows, gates and derived quantities: harness/replay.py
            from harness.replay import recompute_record

            table_tol = TABLE.get((r.stage, r.quantity))
            if (table_tol is None or (table_tol.atol, table_tol.rtol) != (r.atol, r.rtol)) \
                    and b.manifest["tolerance_table_version"] == TABLE_VERSION:
                problems.append(f"record {r.id}: tolerance differs from table {TABLE_VERSION}")
            try:
                again = recompute_record(r, b.arrays, by_id)
            except (KeyError, ValueError, IndexError) as e:
                problems.append(f"record {r.id}: cannot recompute ({type(e).__name__}: {e})")
                continue
            if again.to_json() != r.to_json():
                diff = [k for k, v in again.to_json().items() if r.to_json()[k] != v]
                problems.append(f"record {r.id}: recomputed {', '.join(diff)} differ")
            continue
        if r.status == "unconverged":
            problems.append(f"record {r.id}: status unconverged outside the replay stage")
            continue
        try:
            a, c = b.arrays[r.key_a], b.arrays[r.key_b]
            labels = b.arrays[r.key_labels] if r.key_labels else None
        except KeyError as e:
            problems.append(f"record {r.id}: array {e} missing")
            continue
        tol = Tolerance(r.atol, r.rtol, "")
        table_tol = TABLE.get((r.stage, r.quantity))
        if table_tol is None or (table_tol.atol, table_tol.rtol) != (r.atol, r.rtol):
            if b.manifest["tolerance_table_version"] == TABLE_VERSION:
                problems.append(f"record {r.id}: tolerance differs from table "
                                f"{TABLE_VERSION}")
        try:
            again = compare(r.id, r.stage, r.fixture, r.quantity, r.engine_a, r.engine_b,
                            a, c, tol, r.key_a, r.key_b, labels, r.key_labels)
        except ValueError as e:
            problems.append(f"record {r.id}: {e}")
            continue
        if r.stage == "constrained" and not again.reason:
            again.reason = r.reason  # stage 3 rows state their solver's law (not computed)
        if again.to_json() != r.to_json():
            diff = [k for k, v in again.to_json().items() if r.to_json()[k] != v]
            problems.append(f"record {r.id}: recomputed {', '.join(diff)} differ "
                            f"({', '.join(f'{k}={getattr(r, k)!r}->{getattr(again, k)!r}' for k in diff[:3])})")
    return problems


def _verify_informational(r, arrays) -> list:
    """Recompute an informational record (harness/records.py ``inform``); a note without
    arrays (no key_a) must carry no numbers."""
    from harness.records import inform

    if r.passed is not None:
        return [f"record {r.id}: informational record carries a verdict"]
    if not r.key_a:
        return [] if r.max_abs is None else [f"record {r.id}: note carries numbers"]
    try:
        a, c = arrays[r.key_a], arrays[r.key_b]
        labels = arrays[r.key_labels] if r.key_labels else None
    except KeyError as e:
        return [f"record {r.id}: array {e} missing"]
    again = inform(r.id, r.stage, r.fixture, r.quantity, r.engine_a, r.engine_b, a, c,
                   r.key_a, r.key_b, labels, r.key_labels, r.reason.split("; non-finite")[0])
    if again.to_json() != r.to_json():
        diff = [k for k, v in again.to_json().items() if r.to_json()[k] != v]
        return [f"record {r.id}: recomputed {', '.join(diff)} differ"]
    return []
