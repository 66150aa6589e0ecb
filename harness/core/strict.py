"""Strict, bounded reading of the files a user hands the harness, and the model size it
supports.

Every reader here refuses before it reads or allocates more than its limit, with one line
naming the file and the problem (``BadInput``, CLI exit 2):

* only **regular files** are read: a directory, a FIFO, a socket or a device
  (``/dev/zero``) is refused without reading from it (a FIFO is opened non-blocking, so
  a pipe with no writer never hangs the harness);
* **sizes** are capped per kind of file (``MAX_*_BYTES`` below) from ``fstat`` before
  reading, and the read itself stops one byte past the cap (a file that grows is refused
  too);
* **JSON** (``loads_json``): UTF-8, nesting at most ``MAX_JSON_DEPTH`` deep (checked by a
  linear scan before parsing, so deep nesting is refused, never a RecursionError), no
  key repeated inside one object (``{"a": 1, "a": 2}`` is refused, not "last wins"), no
  ``NaN``/``Infinity``;
* **.npz archives** (``npz_arrays``): each member's .npy header (dtype, shape) is read
  and its size checked against ``MAX_ARRAY_BYTES`` (and the sum against
  ``MAX_ARRAYS_TOTAL_BYTES``) before anything is allocated; exactly the bytes the header
  declares are decompressed, and a member holding more (a zip bomb behind a small
  header) is refused after one byte more. Callers that hold the archive's sha256 check
  it before calling (``sha256_bytes``), so a tampered archive is never decompressed.
  Numeric, boolean and string dtypes only (no pickles, no object arrays);
* ``is_int``: an integer that is not a bool (JSON ``true`` is not the number 1).

Model size (checked by ``FixtureSpec.validate``, so before any engine loads the model):
at most ``MAX_BODIES`` bodies and ``MAX_NV`` degrees of freedom. The bound on nv comes
from the engines' workspaces, which grow as nv³ (one engine's per-model workspace is
about 64·nv³ bytes: 0.5 GB at nv = 200, 1.1 GB at nv = 256, 8 GB at nv = 500).
``run_array_bytes`` estimates what a run of the sampled stages allocates for its arrays;
``check_run_size`` refuses a run whose estimate exceeds ``MAX_RUN_ARRAY_BYTES`` before
any engine is called.
"""
from __future__ import annotations

import hashlib
import io
import json
import math
import os
import re
import stat
import warnings
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from functools import partial, wraps
from typing import IO, Any, ParamSpec, TypeVar, cast

import numpy as np
from numpy.typing import NDArray

from harness.core.errors import BadInput

MiB, GiB = 1 << 20, 1 << 30
MAX_MODEL_FILE_BYTES = 64 * MiB      # a URDF or MJCF file
MAX_JSON_BYTES = 256 * MiB           # a manifest, records.json, a candidate manifest
MAX_JSON_DEPTH = 64                  # nesting of arrays/objects in any JSON input
MAX_NPZ_FILE_BYTES = 4 * GiB         # a bundle's or a candidate's .npz file
MAX_ARRAY_BYTES = 1 * GiB            # one array of an .npz, as its header declares it
MAX_ARRAYS_TOTAL_BYTES = 4 * GiB     # all arrays of one .npz together
MAX_NPZ_MEMBERS = 1_000_000          # arrays in one .npz
MAX_C3D_BYTES = 1 * GiB              # a C3D capture
MAX_BODIES = 512                     # bodies of one model (welded ones included)
MAX_NV = 256                         # degrees of freedom of one model
MAX_RUN_ARRAY_BYTES = 4 * GiB        # estimated arrays of one run (run_array_bytes)
_NPY_DTYPE_KINDS = "biufcUS"         # bool, ints, floats, complex, unicode, bytes

_P = ParamSpec("_P")
_R = TypeVar("_R")


@contextmanager
def warnings_held() -> Iterator[None]:
    """Warnings (numpy's, a library's) raised inside are held back: dropped when the block
    raises — its one-line error is all the user sees — and issued again when it ends
    normally."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for w in caught:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def holds_warnings(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """``fn`` run inside ``warnings_held``."""
    @wraps(fn)
    def inner(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with warnings_held():
            return fn(*args, **kwargs)
    return inner


def is_int(v: object) -> bool:
    """True for a JSON integer (``true``/``false`` are not integers)."""
    return isinstance(v, int) and not isinstance(v, bool)


def _human(n: int) -> str:
    for unit, size in (("PiB", 1 << 50), ("TiB", 1 << 40), ("GiB", GiB), ("MiB", MiB),
                       ("KiB", 1024)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} bytes"


def open_regular(path: str | os.PathLike[str], what: str, max_bytes: int,
                 where: str | None = None) -> IO[bytes]:
    """The regular file at ``path`` opened for binary reading (the caller closes it), after
    the checks: it exists, is a regular file (a FIFO is opened non-blocking, so it never
    hangs), at most ``max_bytes`` long (``what`` words the limit, e.g. "a URDF file");
    BadInput(``where`` or path, problem) otherwise."""
    where = str(path) if where is None else where
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError as e:
        raise BadInput(where, f"file not found ({e.strerror})") from None
    except IsADirectoryError:
        raise BadInput(where, f"is a directory, not {what}") from None
    except OSError as e:
        raise BadInput(where, f"cannot read the file: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise BadInput(where, f"is a directory, not {what}")
        if not stat.S_ISREG(st.st_mode):
            kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(st.st_mode) else
                    "a character device" if stat.S_ISCHR(st.st_mode) else
                    "a block device" if stat.S_ISBLK(st.st_mode) else
                    "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
            raise BadInput(where, f"is {kind}; only regular files are read")
        if st.st_size > max_bytes:
            raise BadInput(where, f"is {_human(st.st_size)}, over the {_human(max_bytes)} "
                                  f"limit for {what}")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike[str], what: str, max_bytes: int,
                 where: str | None = None) -> bytes:
    """The bytes of the regular file at ``path`` (``open_regular``'s checks), reading at
    most ``max_bytes`` (a file that grows past it while read is refused too)."""
    where = str(path) if where is None else where
    with open_regular(path, what, max_bytes, where) as fh:
        try:
            size = os.fstat(fh.fileno()).st_size
            raw = fh.read(size + 1)
            if size < len(raw) <= max_bytes:  # it grew since fstat: read on to the limit
                raw += fh.read(max_bytes + 1 - len(raw))
        except OSError as e:
            raise BadInput(where, f"cannot read the file: {e.strerror or e}") from None
    if len(raw) > max_bytes:
        raise BadInput(where, f"grew past the {_human(max_bytes)} limit for {what} while it "
                              "was read")
    return raw


XML_MAX_BYTES = 1 << 24   # an OpenSim setup, marker set or loads file: well under 16 MiB


def parse_xml(where: str, text: str) -> ET.Element:
    """The root element of the XML document ``text`` (its ``<?xml …?>`` declaration
    dropped: ElementTree refuses an encoding declaration in a str); BadInput(where,
    "not well-formed XML (…)") when it does not parse."""
    try:
        return ET.fromstring(re.sub(r"<\?xml[^>]*\?>", "", text, count=1))
    except ET.ParseError as e:
        raise BadInput(where, f"not well-formed XML ({e})") from None


def read_xml(path: str | os.PathLike[str], what: str,
             max_bytes: int = XML_MAX_BYTES) -> ET.Element:
    """The root element of the XML file at ``path`` (``read_regular``'s checks, at most
    ``max_bytes``, decoded as UTF-8 with bad bytes replaced); BadInput naming the file for
    a file that is not regular, too large or not well-formed."""
    raw = read_regular(path, what, max_bytes)
    return parse_xml(str(path), raw.decode("utf-8", "replace"))


def check_regular(path: str | os.PathLike[str], what: str, max_bytes: int,
                  where: str | None = None) -> None:
    """The checks of ``read_regular`` without keeping the bytes: for files a library opens
    by path after the harness has looked at them."""
    read_regular(path, what, max_bytes, where)


def sha256_bytes(blob: bytes) -> str:
    return hashlib.sha256(blob).hexdigest()


# ----- JSON ----------------------------------------------------------------------------
# a JSON string as the depth scan sees one: from a quote to the next unescaped quote, or to
# the end of the text (an unterminated string; the parser rejects it afterwards)
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.S)
_JSON_BRACKET = re.compile(r"[\[\]{}]")
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def _brackets_outside_strings(text: str) -> Iterator[re.Match[str]]:
    """The matches of every [ ] { } of ``text`` that is not inside a JSON string."""
    pos = 0
    for s in _JSON_STRING.finditer(text):
        yield from _JSON_BRACKET.finditer(text, pos, s.start())
        pos = s.end()
    yield from _JSON_BRACKET.finditer(text, pos)


def json_depth_problem(text: str, limit: int = MAX_JSON_DEPTH) -> str:
    """'' if no array/object in ``text`` is nested deeper than ``limit``, else why
    (a linear scan that skips strings; ``loads_json`` refuses deeper input with it). Strings and
    every other character are dropped by regular expressions and only the brackets are
    walked (a character-by-character loop took 1-5 ms per bundle manifest); the position
    of an excess is looked up only when there is one."""
    depth = 0
    for ch in _NOT_BRACKET.sub("", _JSON_STRING.sub("", text)):
        depth += 1 if ch in "[{" else -1
        if depth > limit:
            break
    else:
        return ""
    depth = 0
    for b in _brackets_outside_strings(text):
        depth += 1 if b.group() in "[{" else -1
        if depth > limit:
            return (f"nested deeper than {limit} levels (at character {b.start()}); "
                    "no harness file needs that")
    return ""  # pragma: no cover - the first pass found the same excess


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):  # a key repeated: name the first one that is
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise ValueError(f"key {k!r} appears twice in one object (a repeated key "
                                 "would silently override the first)")
            seen.add(k)
    return out


def _no_constant(c: str) -> Any:
    raise ValueError(f"{c} is not allowed (JSON has no NaN or infinity)")


def loads_json(raw: bytes | bytearray | str, where: str, what: str = "JSON") -> Any:
    """The JSON value in ``raw`` (bytes or str), strictly: UTF-8, nesting at most
    MAX_JSON_DEPTH, no repeated keys, no NaN/Infinity; BadInput(where, ...) otherwise."""
    if isinstance(raw, (bytes, bytearray)):
        try:
            text = bytes(raw).decode("utf-8")
        except UnicodeDecodeError as e:
            raise BadInput(where, f"not a valid {what}: not UTF-8 (invalid byte at offset "
                                  f"{e.start})") from None
    else:
        text = raw
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicates,
                           parse_constant=_no_constant)
    except (ValueError, RecursionError) as e:  # JSONDecodeError is a ValueError
        problem = json_depth_problem(text)  # too deep is said first, whatever else is wrong
        raise BadInput(where, f"not a valid {what}: {problem}" if problem else
                       f"not a valid {what} ({' '.join(str(e).split())})") from None
    if _deeper_than(value, MAX_JSON_DEPTH):  # the scan says where
        raise BadInput(where, f"not a valid {what}: {json_depth_problem(text)}")
    return value


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether an array or object of the parsed JSON ``value`` is nested deeper than
    ``limit`` (the nesting ``json_depth_problem`` counts in the text, without scanning the
    text: a walk of the parsed containers, exact dicts and lists as the parser gives them,
    one level at a time; a few ms for a qualification's records)."""
    level = [value] if type(value) in _CONTAINERS else []
    depth = 1
    while level:
        if depth > limit:
            return True
        level = [c for v in level for c in (v.values() if type(v) is dict else v)
                 if type(c) in _CONTAINERS]
        depth += 1
    return False


_CONTAINERS = (dict, list)


def read_json(path: str | os.PathLike[str], what: str = "JSON",
              max_bytes: int = MAX_JSON_BYTES, where: str | None = None) -> Any:
    """``loads_json`` of a regular file of at most ``max_bytes``."""
    where = str(path) if where is None else where
    return loads_json(read_regular(path, f"a {what} file", max_bytes, where), where, what)


# ----- .npz ----------------------------------------------------------------------------
# the header numpy itself writes (format 1.0): parsed here without numpy's literal_eval
# (a compile per array, most of the time of reading a bundle's thousands of arrays); any
# other header goes to numpy's parser as before
_NPY_HEADER = re.compile(r"\{'descr': '([<>|=]?[a-zA-Z][0-9]{0,3})', 'fortran_order': "
                         r"(True|False), 'shape': \(((?:[0-9]{1,18}, )*(?:[0-9]{1,18},?)?)"
                         r"\), \} *\n")


def npy_header_1_0(fh: IO[bytes]) -> tuple[tuple[int, ...], bool, np.dtype[Any]]:
    """(shape, fortran order, dtype) of a format-1.0 .npy header at ``fh`` (after its
    magic), as np.lib.format.read_array_header_1_0 gives them (which parses any header
    not in the form numpy writes, and raises for a malformed one)."""
    raw_len = fh.read(2)
    n = int.from_bytes(raw_len, "little") if len(raw_len) == 2 else 0
    header = fh.read(n) if 0 < n <= 10_000 else b""
    m = _NPY_HEADER.fullmatch(header.decode("latin1")) if header else None
    if m is None:  # numpy's parser on the same bytes: it raises for a bad header
        return np.lib.format.read_array_header_1_0(io.BytesIO(raw_len + header))
    shape = tuple(int(x) for x in m.group(3).replace(" ", "").split(",") if x)
    return shape, m.group(2) == "True", np.dtype(m.group(1))


def _npy_header(fh: IO[bytes], where: str,
                name: str) -> tuple[tuple[int, ...], bool, np.dtype[Any]]:
    version = np.lib.format.read_magic(fh)
    if version == (1, 0):
        return npy_header_1_0(fh)
    if version in ((2, 0), (3, 0)):
        return np.lib.format.read_array_header_2_0(fh)
    raise BadInput(where, f"array {name}: unsupported .npy format version {version}")


def npz_arrays(blob: bytes, where: str, max_array_bytes: int = MAX_ARRAY_BYTES,
               max_total_bytes: int = MAX_ARRAYS_TOTAL_BYTES,
               expect: dict[str, tuple[str, list[int]]] | None = None
               ) -> dict[str, NDArray[Any]]:
    """{name: array} of the .npz archive in ``blob``, read without trusting it: every
    member's .npy header is checked (dtype numeric/bool/string; declared size within
    ``max_array_bytes``, all together within ``max_total_bytes``; ``expect`` {name:
    (dtype name, shape)} if given: exactly these) before its data is decompressed, and
    exactly the declared bytes are read. BadInput(where, problem) otherwise."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(blob))
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as e:
        raise BadInput(where, f"not an .npz archive ({' '.join(str(e).split())})") from None
    out: dict[str, NDArray[Any]] = {}
    total = 0

    def check(name: str, shape: tuple[int, ...], dtype: np.dtype[Any]) -> int:
        """The data's byte count a member's header declares, once the header passed."""
        nonlocal total
        if dtype.hasobject or dtype.kind not in _NPY_DTYPE_KINDS \
                or dtype.fields is not None or dtype.subdtype is not None:
            raise BadInput(where, f"array {name}: dtype {dtype} is not numeric, "
                                  "boolean or text (no pickles)")
        if expect is not None and name in expect:
            want_dtype, want_shape = expect[name]
            if dtype.name != want_dtype or list(shape) != list(want_shape):
                raise BadInput(where, f"array {name}: {dtype.name} {list(shape)} differs "
                                      f"from the manifest's {want_dtype} {list(want_shape)}")
        nbytes = math.prod(int(s) for s in shape) * dtype.itemsize
        if nbytes > max_array_bytes:
            raise BadInput(where, f"array {name}: its header declares {list(shape)} "
                                  f"{dtype} = {_human(nbytes)}, over the "
                                  f"{_human(max_array_bytes)} limit per array")
        total += nbytes
        if total > max_total_bytes:
            raise BadInput(where, f"arrays over {_human(max_total_bytes)} in total (at "
                                  f"{name}); the limit per archive")
        return nbytes

    with zf:
        infos = zf.infolist()
        if len(infos) > MAX_NPZ_MEMBERS:
            raise BadInput(where, f"holds {len(infos)} arrays, over the limit of "
                                  f"{MAX_NPZ_MEMBERS}")
        for info in infos:
            if not info.filename.endswith(".npy") or info.is_dir():
                raise BadInput(where, f"member {info.filename[:80]!r} is not an .npy array")
            name = info.filename[:-4]
            if name in out:
                raise BadInput(where, f"array {name[:80]!r} appears twice")
            member_check = partial(check, name)
            try:
                shape, fortran, dtype, buf = _member(zf, info, where, name, member_check)
            except BadInput:
                raise
            except Exception as e:  # zlib, zip CRC, malformed header: the archive is bad
                raise BadInput(where, f"array {name}: unreadable ({type(e).__name__}: "
                                      f"{' '.join(str(e).split())[:200]})") from None
            if not buf:  # no elements (or zero-width strings)
                out[name] = np.zeros(shape, dtype=dtype)
            else:
                out[name] = np.frombuffer(buf, dtype=dtype).reshape(
                    shape, order="F" if fortran else "C")
    if expect is not None and set(out) != set(expect):
        raise BadInput(where, f"holds arrays {sorted(out)}, the manifest lists "
                              f"{sorted(expect)}")
    return out


def _member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, where: str, name: str,
            check: Callable[[tuple[int, ...], np.dtype[Any]], int]
            ) -> tuple[tuple[int, ...], bool, np.dtype[Any], bytes]:
    """(shape, fortran order, dtype, data) of the .npy member ``info``, through
    ``zipfile``'s reader (which checks the local header, the CRC-32 and the sizes against
    the zip directory): its header parsed from the first _HEAD_BYTES inflated (one read:
    the reader's cost is per call, and a bundle holds thousands of members), then
    ``check(shape, dtype)`` (raises, or returns the data's byte count) before more is
    inflated, then exactly that many bytes."""
    with zf.open(info) as fh:
        head = fh.read(_HEAD_BYTES)
        at = io.BytesIO(head)
        shape, fortran, dtype = _npy_header(at, where, name)
        nbytes = check(shape, dtype)
        data = head[at.tell():]
        if len(data) < nbytes:
            data += fh.read(nbytes - len(data))
        if len(data) < nbytes:
            raise BadInput(where, f"array {name}: {len(data)} bytes of data, its header "
                                  f"declares {nbytes}")
        if len(data) > nbytes or fh.read(1):
            raise BadInput(where, f"array {name}: more data than its header declares")
    return shape, fortran, dtype, data


_HEAD_BYTES = 16 * 1024  # inflated bytes a member's .npy header is read from (numpy's own
# limit on a header is 10,000 bytes)


# ----- model and run size ----------------------------------------------------------------
def model_size_problem(n_bodies: int, nv: int) -> str:
    """'' if a model of ``n_bodies`` bodies and ``nv`` degrees of freedom is within the
    supported size, else a one-line reason."""
    if n_bodies > MAX_BODIES:
        return (f"{n_bodies} bodies: the harness supports at most {MAX_BODIES} bodies per "
                "model (harness/core/strict.py)")
    if nv > MAX_NV:
        return (f"{nv} degrees of freedom: the harness supports at most {MAX_NV} (an "
                f"engine's workspace grows as nv³, about {_human(64 * nv ** 3)} here)")
    return ""


def run_array_bytes(nv: int, n_frames: int, samples: int, n_engines: int,
                    derivatives: bool = False) -> int:
    """Bytes [B] the arrays of the sampled stages of one model take, estimated from above:
    per engine and sample, frame poses (k·12) and Jacobians (k·6·nv) for k frames, M (nv²),
    four nv-vectors, and with the derivatives stage four nv×nv blocks (analytic and
    reference); every array is held about three times (the run's dict, the archive built
    for the manifest hash, the archive written)."""
    per = n_frames * (12 + 6 * nv) + nv * nv + 4 * nv + (8 * nv * nv if derivatives else 0)
    return 3 * 8 * samples * (n_engines + 1) * per


def check_run_size(models: Iterable[Any], n_engines: int, samples: int,
                   derivatives: bool = False) -> None:
    """BadInput naming the model (its source) when the arrays a run would allocate exceed
    MAX_RUN_ARRAY_BYTES; ``models``: objects with ``source``, ``layout.nv``, ``frames``."""
    total = 0
    for m in models:
        need = run_array_bytes(m.layout.nv, len(m.frames), samples, n_engines, derivatives)
        total += need
        if total > MAX_RUN_ARRAY_BYTES:
            raise BadInput(str(m.source), f"a run of {samples} samples on {n_engines} engines "
                                          f"would allocate about {_human(total)} of arrays, "
                                          f"over the {_human(MAX_RUN_ARRAY_BYTES)} limit "
                                          "(fewer --samples, or fewer models per run)")


# ----- numbers a user gives a command ------------------------------------------------------
# Each bound is what the harness supports, with its reason; outside it a command refuses
# in one line before any work (``bounded``).
MAX_WORKERS = 64
"""--workers of a sweep or batch: each worker is a process of its own that loads the
engines (about 4 MB at start, hundreds of MB once it runs a case), so 1000 workers took
4 GB within 5 s; 64 is far more processes than the cores a machine running the harness
has, and more than that only queues the cases."""
MAX_CANDIDATE_KNOTS = 1_000_000
"""Knots of a replay candidate: every knot becomes rows of the replay's arrays in every
engine (several times over: the run, its refined repeat, the observer), so a million
knots is already several GB of evidence; a golf swing at 100 Hz has about 300."""
MAX_CANDIDATE_DURATION_S = 600.0
"""Duration [s] of a replay candidate (last knot minus first): the replay integrates at
its step (1 ms by default) in every engine and again refined, so 600 s is already about
600,000 steps per engine and run; the fitted motions are seconds long."""
MAX_CLUB_MASS_KG = 2.0
"""A golf club's whole mass [kg] (--club-masses TOTAL): real clubs weigh 0.3–0.5 kg
(weighted training clubs up to about 1.5 kg); a heavier "club" is no golf club, and its
mass would outweigh the hands that hold it in the fit."""
MAX_PENDULUM_P0 = 1.0e4
"""The pendulum fit's initial guess of p = g/l [1/s²] (--p0): 1e4 is a 1 mm pendulum on
Earth; beyond it the collocation's residuals overflow floating point (1e300 did)."""


def bounded(value: object, option: str, low: float, high: float, reason: str,
            *, integer: bool = False, low_open: bool = False) -> float:
    """``value`` if it is a (finite) number within [low, high] (``low_open``: above low),
    an integer when ``integer``; else BadInput naming ``option``, the range and ``reason``
    (why the bound is there), raised before any work."""
    ok_type = is_int(value) if integer else (
        isinstance(value, (int, float)) and not isinstance(value, bool))
    if not ok_type:
        raise BadInput(option, f"must be {'an integer' if integer else 'a number'}, got "
                               f"{value!r}")
    v = float(cast(float, value))
    inside = math.isfinite(v) and (v > low if low_open else v >= low) and v <= high
    if not inside:
        lo = f"above {low:g}" if low_open else f"at least {low:g}"
        raise BadInput(option, f"{value!r} is out of range: {lo} and at most {high:g} "
                               f"({reason})")
    return v


def referenced_file_problem(path: str | os.PathLike[str]) -> str:
    """'' if ``path`` (a file a model file names, e.g. an .osim's ``file=``) is absent or a
    regular file within MAX_MODEL_FILE_BYTES; else why it may not be handed to a library
    that opens it by path (a FIFO would hang it, a device or a folder is no file).
    Nothing is opened: lstat only, the link followed once."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return ""
    except OSError as e:
        return f"cannot be inspected ({e.strerror or e})"
    if stat.S_ISREG(st.st_mode):
        return "" if st.st_size <= MAX_MODEL_FILE_BYTES else \
            f"is {_human(st.st_size)}, over the {_human(MAX_MODEL_FILE_BYTES)} limit"
    return ("is a folder" if stat.S_ISDIR(st.st_mode) else
            "is a FIFO (named pipe)" if stat.S_ISFIFO(st.st_mode) else
            "is a character device" if stat.S_ISCHR(st.st_mode) else
            "is a block device" if stat.S_ISBLK(st.st_mode) else
            "is a socket" if stat.S_ISSOCK(st.st_mode) else "is not a regular file") + \
        "; only regular files are read"


def check_workers(workers: object) -> int:
    """--workers of a sweep or batch within 1..MAX_WORKERS (its reason there)."""
    return int(bounded(workers, "--workers", 1, MAX_WORKERS, f"at most {MAX_WORKERS} worker "
                       "processes: each loads the engines, so more only takes memory and "
                       "queues the cases", integer=True))


def candidate_size_problem(n_knots: int | None = None, duration_s: float | None = None) -> str:
    """'' if a replay candidate of ``n_knots`` knots spanning ``duration_s`` [s] is within
    MAX_CANDIDATE_KNOTS and MAX_CANDIDATE_DURATION_S (their reasons there), else a one-line
    reason; checked before any engine runs (the knots from the manifest's shapes, before
    the arrays are read)."""
    if n_knots is not None and n_knots > MAX_CANDIDATE_KNOTS:
        return (f"{n_knots} knots: the harness replays at most {MAX_CANDIDATE_KNOTS:,} "
                "(each knot is rows of arrays in every engine and run; harness/core/strict.py)")
    if duration_s is not None and duration_s > MAX_CANDIDATE_DURATION_S:
        return (f"lasts {duration_s:g} s: the harness replays at most "
                f"{MAX_CANDIDATE_DURATION_S:g} s (about {MAX_CANDIDATE_DURATION_S * 1000:,.0f} "
                "steps of 1 ms per engine and run; harness/core/strict.py)")
    return ""
