"""Files on disk: content hashes and atomic writes (temp file or folder beside the target,
fsync, rename), and the rule for which output folders may be replaced.

No units. Every writer either leaves the old file/folder intact or replaces it whole.
"""
from __future__ import annotations

import ctypes
import hashlib
import io
import json
import os
import shutil
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from harness.core.errors import BadInput


def array_sha256(a: np.ndarray) -> str:
    a = np.ascontiguousarray(a)
    h = hashlib.sha256()
    h.update(f"{a.dtype.str}|{a.shape}|".encode())
    h.update(a.tobytes())
    return h.hexdigest()


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


def check_output_folder(out, marker: str, what: str) -> Path:
    """``out`` as a Path if the harness may write there: absent, an empty folder, or a
    folder it wrote earlier (one holding ``marker``, e.g. "manifest.json" for an evidence
    bundle, "fit.json" for a fit bundle); BadInput otherwise (``what`` names the kind in
    the message). Checked before any work, so a run never ends in a refusal."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise BadInput(str(out), "exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / marker).exists():
        raise BadInput(str(out), f"is a non-empty folder that is not {what}; refusing to "
                                 "replace it")
    return out
