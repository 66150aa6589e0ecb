"""Files on disk: content hashes, atomic writes (temp file or folder beside the target,
fsync, rename) and the one rule for which output folders may be replaced.

No units. Every writer either leaves the old file/folder intact or replaces it whole.

The output-folder rule (``check_output_folder``): the harness replaces only a folder that
is absent, empty, or one it wrote itself: its marker file (e.g. ``manifest.json``) parses
with that kind's own schema and the folder holds nothing but the files and subfolders that
kind writes (no other name, no symbolic link). A writer holds an exclusive lock
(``fcntl.flock`` on ``.NAME.lock`` beside the folder, removed afterwards) from the check
before any work to the swap, and the rule is checked again at the swap, so a folder that
appeared meanwhile is never swapped out, and a second writer is refused.
"""
from __future__ import annotations

import ctypes
import errno
import fcntl
import functools
import hashlib
import io
import json
import os
import re
import shutil
import stat
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from harness.core.errors import BadInput

_R = TypeVar("_R")  # what a function decorated by claims_output returns


def array_sha256(a: NDArray[Any]) -> str:
    a = np.ascontiguousarray(a)
    h = hashlib.sha256()
    h.update(f"{a.dtype.str}|{a.shape}|".encode())
    h.update(a.tobytes())
    return h.hexdigest()


# ----- the output-folder rule ---------------------------------------------------------
MARKER_MAX_BYTES = 64 * 2 ** 20  # a marker file larger than this is no harness marker


@dataclass(frozen=True)
class OutputKind:
    """One kind of output folder the harness writes. ``what``: its name in messages ("an
    evidence bundle"); ``marker``: the relative path of the file that identifies it
    ("manifest.json", "fit/fit.json"); ``recognise(path)``: raises unless the file at
    ``path`` parses with this kind's own schema; ``files``: the names of the files it may
    hold; ``folders``: {name: OutputKind} of the subfolders it may hold (a swing's ``fit``
    and ``replay``; the name ``*``: any subfolder whose name does not start with a dot, a
    survey's one bundle per model). ``marker`` None: a plain container (a survey's
    ``models``), recognised by its subfolders' own markers."""

    what: str
    marker: str | None
    recognise: Callable[[Path], object]
    files: frozenset[str]
    folders: dict[str, OutputKind] = field(default_factory=dict)


def _not_ours(folder: Path, kind: OutputKind, prefix: str = "") -> str:
    """"" if ``folder`` is empty or holds only what ``kind`` writes with a marker of that
    kind; else the first reason it is not (a relative path and what is wrong with it)."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as e:
        return f"{prefix or '.'} cannot be listed ({e.strerror})"
    if not entries:
        return ""
    for ent in entries:
        rel = prefix + ent.name
        if ent.is_symlink():
            return f"it holds {rel}, a symbolic link the harness does not write"
        if ent.name in kind.files and ent.is_file(follow_symlinks=False):
            continue
        sub = kind.folders.get(ent.name) or \
            (kind.folders.get("*") if not ent.name.startswith(".") else None)
        if sub is not None and ent.is_dir(follow_symlinks=False):
            problem = _not_ours(Path(ent.path), sub, rel + "/")
            if problem:
                return problem
            continue
        return f"it holds {rel}{'/' if ent.is_dir(follow_symlinks=False) else ''}, which the " \
               f"harness does not write there"
    if kind.marker is None:  # a plain container: each subfolder was checked by its own kind
        return ""
    marker = folder / kind.marker
    rel = prefix + kind.marker
    try:
        if not marker.is_file() or marker.stat().st_size > MARKER_MAX_BYTES:
            return f"it has no {rel} of its own"
        kind.recognise(marker)
    except BadInput as e:
        return f"{rel}: {_short(e.problem)}"
    except Exception as e:  # any failure to recognise the marker: not ours, refuse
        return f"{rel}: {_short(f'{type(e).__name__}: {e}')}"
    return ""


def _short(text: str, n: int = 100) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[:n - 1] + "…"


def check_output_folder(out: str | os.PathLike[str], kind: OutputKind) -> Path:
    """``out`` resolved if the harness may write that folder: absent, empty, or ``kind``'s
    own (its marker parses with its schema and it holds nothing else; ``_not_ours``);
    BadInput otherwise, with nothing touched. Checked before any work and again at the
    swap."""
    shown = str(out)
    path = Path(out).resolve()
    if path == path.parent:
        raise BadInput(shown, "is a filesystem root, not an output folder")
    if os.path.lexists(path) and not path.is_dir():
        raise BadInput(shown, "exists and is not a folder")
    if path.is_dir():
        problem = _not_ours(path, kind)
        if problem:
            raise BadInput(shown, f"is not {kind.what}; refusing to replace it ({problem}); "
                                  "remove it or choose another folder")
    return path


def check_output_file(path: str | os.PathLike[str], option: str,
                      recognise: Callable[[Path], object] | None = None) -> Path:
    """``path`` if one file can be written there atomically (JUnit XML, a JSON report, an
    HTML page, a candidate): not a folder, not a special file, and its nearest existing
    parent a folder this process can create files in (probed with a file created and
    removed at once; missing folders between are created by the writer). With
    ``recognise`` (the output-file rule for files the harness names itself, e.g. a
    candidate's .npz beside its manifest): an existing file is replaced only if
    ``recognise(path)`` accepts it as one the harness wrote. BadInput naming ``option``
    otherwise. Checked before any work."""
    p = Path(path)
    shown = f"{option} {path}"
    if p.is_dir():
        raise BadInput(shown, "is a folder; name a file")
    if os.path.lexists(p) and not p.is_file():
        raise BadInput(shown, "exists and is not a regular file")
    if os.path.lexists(p) and p.is_symlink():
        raise BadInput(shown, "is a symbolic link the harness does not write; refusing to "
                              "replace it")
    if recognise is not None and os.path.lexists(p):
        try:
            recognise(p)
        except BadInput as e:
            raise BadInput(shown, f"exists and is not a file the harness wrote "
                                  f"({_short(e.problem)}); refusing to replace it; remove it "
                                  "or choose another name")
        except Exception as e:  # any failure to recognise it: not ours, refuse
            raise BadInput(shown, f"exists and is not a file the harness wrote "
                                  f"({_short(f'{type(e).__name__}: {e}')}); refusing to "
                                  "replace it; remove it or choose another name")
    parent = Path(os.path.abspath(p)).parent
    while not os.path.lexists(parent):
        parent = parent.parent
    if not parent.is_dir():
        raise BadInput(shown, f"{parent} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise BadInput(shown, f"cannot write in {parent} (no write permission)")
    probe = parent / f".{p.name}.tmp-{os.getpid()}-probe"
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.unlink(probe)
    except OSError as e:
        raise BadInput(shown, f"cannot write in {parent} ({e.strerror})")
    return p


# ----- the writer's lock ------------------------------------------------------------------
_HELD: dict[Path, int] = {}  # resolved output folder -> lock file descriptor held by this process


def _lock(path: Path, shown: str) -> int:
    """An exclusive flock on ``.NAME.lock`` beside ``path`` (parents created); BadInput if
    another writer holds it or the place is not writable."""
    parent = path.parent
    while not os.path.lexists(parent):
        parent = parent.parent
    if not parent.is_dir():
        raise BadInput(shown, f"{parent} is not a folder")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise BadInput(shown, f"cannot create its parent folder ({e.strerror or e})")
    lock = path.parent / f".{path.name}.lock"
    while True:
        created = False
        try:  # ours if this run creates it, or if it holds the harness's own lock text
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC |
                         os.O_NOFOLLOW, 0o666)
            created = True
        except FileExistsError:
            try:
                fd = os.open(lock, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
            except FileNotFoundError:
                continue  # removed by its holder meanwhile: try again
            except OSError as e:
                raise BadInput(shown, f"{lock.name} exists and cannot be used as the "
                                      f"harness's lock ({e.strerror or e}); remove it")
        except OSError as e:
            raise BadInput(shown, f"cannot write there ({e.strerror or e})")
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise BadInput(shown, f"{lock.name} exists and is not a regular file; remove it")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            os.close(fd)
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise BadInput(shown, "another harness run is writing this folder now; wait "
                                      "for it to finish or choose another folder")
            raise BadInput(shown, f"cannot lock {lock.name} ({e.strerror or e})")
        try:  # the file may have been removed by the previous holder between open and lock
            st = os.stat(lock)
            held = (st.st_ino, st.st_dev) == (os.fstat(fd).st_ino, os.fstat(fd).st_dev)
        except FileNotFoundError:
            held = False
        if not held:
            os.close(fd)
            continue
        if created:
            os.write(fd, _LOCK_TEXT)
        else:  # a file of that name: removed afterwards only if it is a harness lock
            created = os.pread(fd, len(_LOCK_TEXT) + 1, 0) == _LOCK_TEXT
        _OWN_LOCK[fd] = created
        return fd


_LOCK_TEXT = b"harness output lock\n"  # what a lock file the harness creates holds
_OWN_LOCK: dict[int, bool] = {}  # lock fd -> the lock file is the harness's (removed after)


def _unlock(path: Path, fd: int) -> None:
    """Release the lock; remove ``.NAME.lock`` only if the harness created it (a user's
    file of that name is left as it was)."""
    lock = path.parent / f".{path.name}.lock"
    if _OWN_LOCK.pop(fd, False):
        try:
            st = os.stat(lock, follow_symlinks=False)
            if (st.st_ino, st.st_dev) == (os.fstat(fd).st_ino, os.fstat(fd).st_dev):
                os.unlink(lock)
        except OSError:
            pass
    os.close(fd)


@contextmanager
def output_folder(out: str | os.PathLike[str], kind: OutputKind) -> Iterator[Path]:
    """``with output_folder(out, kind) as path:`` the output folder checked by the rule
    and locked for this writer until the block ends (BadInput before the block if it may
    not be written or another writer holds it). Writes inside go through
    ``write_folder_atomic`` or ``swap_in``, which check the rule again at the swap."""
    path = check_output_folder(out, kind)
    fd = _lock(path, str(out))
    try:
        check_output_folder(out, kind)  # again, now that no other writer can change it
        _HELD[path] = fd
        yield path
    finally:
        _HELD.pop(path, None)
        _unlock(path, fd)


def claims_output(kind: OutputKind) -> Callable[[Callable[..., _R]], Callable[..., _R]]:
    """Decorator: the function's ``out`` keyword argument held as ``output_folder(out,
    kind)`` for the whole call (the function receives the resolved path)."""
    def wrap(fn: Callable[..., _R]) -> Callable[..., _R]:
        @functools.wraps(fn)
        def claimed(*args: Any, out: str | os.PathLike[str], **kw: Any) -> _R:
            with output_folder(out, kind) as path:
                return fn(*args, out=path, **kw)
        return claimed
    return wrap


# ----- atomic folder write ----------------------------------------------------------------
_RENAME_NOREPLACE, _RENAME_EXCHANGE = 1, 2


def _renameat2(a: Path, b: Path, flags: int) -> int:
    """renameat2(a, b, flags) (Linux): 0 on success, else the errno (ENOSYS if the call
    is missing)."""
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return errno.ENOSYS
    AT_FDCWD = -100
    if fn(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), flags) == 0:
        return 0
    return ctypes.get_errno() or errno.EIO


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass


def _umask() -> int:
    """The process umask, read without changing it where Linux reports it."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_TOKEN_HEX = 16  # hex digits of the random token in every temporary name the harness makes


def _temp_name(target: Path, what: str) -> Path:
    """``.NAME.tmp-PID-TOKEN`` (or ``.old-``) beside ``target``: the only names
    ``_remove_stale_temps`` will ever delete (TOKEN: 16 random hex digits)."""
    return target.with_name(f".{target.name}.{what}-{os.getpid()}-"
                            f"{os.urandom(_TOKEN_HEX // 2).hex()}")


def _remove_stale_temps(target: Path) -> None:
    """Delete the temporary files and folders (``.NAME.tmp-PID-TOKEN``,
    ``.NAME.old-PID-TOKEN``, exactly as ``_temp_name`` makes them) of writers of ``target``
    that were killed (their pid is gone). Any other name is a user's and left alone."""
    own = re.compile(rf"\.{re.escape(target.name)}\.(?:tmp|old)-(\d+)-[0-9a-f]{{{_TOKEN_HEX}}}")
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return
    for ent in entries:
        m = own.fullmatch(ent.name)
        if m is None:
            continue
        try:
            os.kill(int(m.group(1)), 0)
            continue  # alive (or not ours to judge)
        except ProcessLookupError:
            pass
        except (PermissionError, OverflowError):
            continue
        p = Path(ent.path)
        if ent.is_dir(follow_symlinks=False):
            shutil.rmtree(p, ignore_errors=True)
        else:
            try:
                p.unlink()
            except OSError:
                pass


def temp_folder(out: Path) -> Path:
    """A new empty folder ``.NAME.tmp-PID-TOKEN`` beside ``out`` (after removing those of
    dead writers), with the permissions of a folder made under the process umask."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_temps(out)
    tmp = _temp_name(out, "tmp")
    os.mkdir(tmp, 0o700)
    os.chmod(tmp, 0o777 & ~_umask())
    return tmp


def swap_in(tmp: Path, out: Path, kind: OutputKind, shown: str | None = None) -> Path:
    """Put the finished folder ``tmp`` in place of ``out`` atomically: a rename if ``out`` is
    absent, else (the rule checked again first) ``renameat2(RENAME_EXCHANGE)`` and the old
    folder, checked once more now that nobody can add to it, deleted (or swapped back and
    BadInput if something appeared in it). Two renames only where renameat2 is missing.
    ``tmp`` is consumed or left for the caller to remove on an exception."""
    out = Path(out)
    shown = shown or str(out)
    problem = _not_ours(tmp, kind)
    if problem:  # the harness must be able to replace what it writes
        raise RuntimeError(f"the new {kind.what} does not pass the output-folder rule: "
                           f"{problem}")
    _fsync_dir(tmp)
    err = _renameat2(tmp, out, _RENAME_NOREPLACE)
    if err in (errno.ENOSYS, errno.EINVAL):
        try:
            os.rename(tmp, out)  # replaces only an empty folder
            err = 0
        except OSError as e:
            err = e.errno if e.errno is not None else errno.EIO
    if err == 0:
        _fsync_dir(out.parent)
        return out
    if err not in (errno.EEXIST, errno.ENOTEMPTY):
        raise OSError(err, os.strerror(err), str(out))
    check_output_folder(out, kind)  # it appeared or changed during the run
    err = _renameat2(tmp, out, _RENAME_EXCHANGE)
    if err == 0:
        problem = _not_ours(tmp, kind)  # tmp now holds the old folder
        if problem:
            if _renameat2(tmp, out, _RENAME_EXCHANGE) == 0:
                raise BadInput(shown, f"changed while the harness was writing it "
                                      f"({problem}); left as it was")
            kept = out.with_name(f"{out.name}.kept-{os.getpid()}")
            os.rename(tmp, kept)  # never delete what is not ours
            raise BadInput(shown, f"changed while the harness was writing it ({problem}); "
                                  f"the old folder is now {kept}")
        shutil.rmtree(tmp)
    elif err in (errno.ENOSYS, errno.EINVAL):  # no renameat2: old kept until the new is in
        old = _temp_name(out, "old")
        os.rename(out, old)
        os.rename(tmp, out)
        shutil.rmtree(old)
    else:
        raise OSError(err, os.strerror(err), str(out))
    _fsync_dir(out.parent)
    return out


class SameAs:
    """A file of an output folder whose content is the file ``source`` (a large read-only
    asset such as the reports' plotly.min.js), written as a copy of it: never a hard link,
    so editing one report's copy cannot change the installed package or another report."""

    def __init__(self, source: str | os.PathLike[str]) -> None:
        self.source = Path(source)


def put_file(dest: Path, blob: bytes | SameAs) -> None:
    """Write ``blob`` (bytes, or SameAs) as the new file ``dest`` (flushed to disk)."""
    if isinstance(blob, SameAs):  # a copy, never a link: editing it changes nothing else
        shutil.copyfile(blob.source, dest)
        return
    with open(dest, "wb") as fh:
        fh.write(blob)
        fh.flush()
        os.fsync(fh.fileno())


def write_folder_atomic(out: str | os.PathLike[str], files: dict[str, bytes | SameAs],
                        kind: OutputKind) -> Path:
    """Write {filename: bytes or SameAs} as folder ``out`` of ``kind``, atomically replacing an old
    one only if the output-folder rule allows it. Under the caller's ``output_folder`` lock
    if it holds one, else its own."""
    path = Path(out).resolve()
    if path in _HELD:
        return _write_folder(path, files, kind, str(out))
    with output_folder(out, kind) as path:
        return _write_folder(path, files, kind, str(out))


def _write_folder(out: Path, files: dict[str, bytes | SameAs], kind: OutputKind,
                  shown: str) -> Path:
    tmp = temp_folder(out)
    try:
        for name, blob in files.items():
            put_file(tmp / name, blob)
        return swap_in(tmp, out, kind, shown)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write one file atomically (temp file beside it + fsync + rename); nothing is left
    behind if it fails. BadInput if ``path`` is a folder."""
    dest = Path(path)
    if dest.is_dir():
        raise BadInput(str(dest), "is a folder; name a file")
    dest.parent.mkdir(parents=True, exist_ok=True)  # checked before any work
    _remove_stale_temps(dest)
    tmp = _temp_name(dest, "tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # umask applies
        with open(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, dest)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise
    return dest


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write one UTF-8 text file atomically (write_bytes_atomic)."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path: str | os.PathLike[str], obj: object) -> Path:
    """JSON (sorted keys, no NaN) written atomically."""
    return write_text_atomic(path, json.dumps(obj, indent=1, sort_keys=True,
                                              allow_nan=False) + "\n")


def npz_bytes(arrays: Mapping[str, ArrayLike]) -> bytes:
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


