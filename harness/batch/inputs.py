"""What a batch holds: the models (URDF, MJCF) or captures (C3D) named by a folder or a
list file, each with its base and a unique, readable slug. No units.

* **Folder**: every ``*.urdf`` and every ``*.xml`` whose root element is ``<mujoco>``
  (models), or every ``*.c3d`` (captures), searched recursively (hidden folders and
  symbolic links to folders are not followed); every model with the ``--base`` option's
  base(s). An ``*.xml`` that is not MJCF (a ROS package.xml, a launch file) is listed as
  skipped with the reason.
* **List file**: one path per line, ``#`` starts a comment, blank lines ignored; a relative
  path is relative to the list file's folder. Models may carry a second word, ``fixed``,
  ``floating`` or ``both`` (default: ``--base``). A ``.xml`` named in a list is read as
  MJCF whatever its root element.

Slug: the path relative to the batch's root (the folder; for a list, the list's folder
when every entry lies under it, else the entries' common folder) without its extension,
``/`` written ``__``, characters other than letters, digits and ``._+-`` written ``_``
(a leading dot too), plus ``@floating`` for a floating base. Two files whose slugs
collide (``robot.urdf`` and ``robot.xml``) keep their extension (``robot.urdf``).

Bad input (BadInput, naming the file, and the line of a list): a missing path, a folder
with nothing to run, an unreadable list, a list entry that is missing or of the wrong
type, an unknown base word, an entry named twice.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from harness.core.errors import BadInput

BASES = ("fixed", "floating", "both")
MODEL_SUFFIXES = {".urdf": "urdf", ".xml": "mjcf", ".mjcf": "mjcf"}
CAPTURE_SUFFIXES = {".c3d": "c3d"}
SNIFF_BYTES = 4096


@dataclass(frozen=True)
class Item:
    """One task of a batch: ``path`` the file (absolute), ``name`` its path relative to the
    batch's root (shown), ``kind`` urdf | mjcf | c3d, ``base`` fixed | floating (None for a
    capture), ``slug`` its folder name in the survey, ``size`` [bytes] (cost estimate)."""

    path: str
    name: str
    kind: str
    base: str | None
    slug: str
    size: int


@dataclass(frozen=True)
class Batch:
    """``items`` in input order; ``source`` the folder or list as given; ``source_type``
    folder | list; ``root`` the folder names are relative to; ``skipped`` [{path, why}]."""

    items: tuple
    source: str
    source_type: str
    root: str
    skipped: tuple = ()


MJCF_ROOT = "<mujoco>"  # the MJCF file format's root element


def _root_tag(path: Path) -> str:
    """The first element name of an XML file ("" if none is found in its first bytes)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(SNIFF_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""
    head = re.sub(r"<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>]*>", "", head, flags=re.S)
    m = re.search(r"<\s*([A-Za-z_][\w.:-]*)", head)
    return m.group(1) if m else ""


def _expand(base: str, where: str) -> tuple:
    if base not in BASES:
        raise BadInput(where, f"unknown base {base!r} (known: {', '.join(BASES)})")
    return ("fixed", "floating") if base == "both" else (base,)


def _slug_text(rel: str) -> str:
    text = rel.replace(os.sep, "/").replace("/", "__")
    text = re.sub(r"[^A-Za-z0-9._+-]", "_", text)
    return "_" + text[1:] if text.startswith(".") else text


def _slugs(entries: list, root: Path) -> list:
    """[(path, name, kind, base, slug)] from [(path, kind, base)] (slugs unique)."""
    names = [os.path.relpath(p, root) for p, _, _ in entries]
    stems = [_slug_text(os.path.splitext(n)[0]) for n in names]
    paths_of: dict = {}
    for (p, _, _), stem in zip(entries, stems):
        paths_of.setdefault(stem, set()).add(p)
    clash = {stem for stem, ps in paths_of.items() if len(ps) > 1}
    out, seen = [], set()
    for (p, kind, base), name, stem in zip(entries, names, stems):
        s = _slug_text(name) if stem in clash else stem
        s += "@floating" if base == "floating" else ""
        k, unique = 2, s
        while unique in seen:
            unique, k = f"{s}-{k}", k + 1
        seen.add(unique)
        out.append((p, name.replace(os.sep, "/"), kind, base, unique))
    return out


def _suffix_kind(path: Path, suffixes: dict):
    return suffixes.get(path.suffix.lower())


def collect(path: str | os.PathLike[str], of: str = "models", base: str = "fixed") -> Batch:
    """The batch named by ``path`` (a folder or a list file); ``of`` models | captures;
    ``base`` fixed | floating | both: the base of every model of a folder, and of a list
    entry without its own. BadInput for bad input (nothing is written)."""
    shown = str(path)
    suffixes = MODEL_SUFFIXES if of == "models" else CAPTURE_SUFFIXES
    what = "URDF (*.urdf) or MJCF (*.xml)" if of == "models" else "C3D capture (*.c3d)"
    bases = _expand(base, "--base") if of == "models" else (None,)
    p = Path(path)
    if not os.path.lexists(p):
        raise BadInput(shown, "does not exist")
    if p.is_dir():
        return _from_folder(p, shown, suffixes, what, bases, of)
    if not p.is_file():
        raise BadInput(shown, "is neither a folder nor a list file")
    if _suffix_kind(p, {**MODEL_SUFFIXES, **CAPTURE_SUFFIXES}):
        raise BadInput(shown, f"is a {p.suffix} file, not a folder or a list of files: "
                              "name it without --batch, or in a list")
    return _from_list(p, shown, suffixes, what, bases, of)


def _from_folder(folder: Path, shown, suffixes, what, bases, of) -> Batch:
    found, skipped = [], []
    for d, dirs, files in os.walk(folder, onerror=None, followlinks=False):
        dirs[:] = sorted(x for x in dirs if not x.startswith("."))
        for f in sorted(files):
            fp = Path(d) / f
            kind = _suffix_kind(fp, suffixes)
            if kind is None or f.startswith(".") or not fp.is_file():
                continue
            if kind == "mjcf":
                tag = _root_tag(fp)
                if f"<{tag}>" != MJCF_ROOT:
                    skipped.append({"path": str(fp), "why": f"an .xml file whose root element "
                                    f"is <{tag or '?'}>, not <mujoco>"})
                    continue
            found.append(fp.resolve())
    if not found:
        raise BadInput(shown, f"holds no {what} file" + (
            f" ({len(skipped)} .xml file(s) that are not MJCF)" if skipped else ""))
    entries = [(str(fp), _suffix_kind(fp, suffixes), b) for fp in found for b in bases]
    root = folder.resolve()
    return Batch(_items(entries, root), shown, "folder", str(root), tuple(skipped))


def _from_list(listfile: Path, shown, suffixes, what, bases, of) -> Batch:
    try:
        text = listfile.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        raise BadInput(shown, f"cannot be read as a list of files ({why})")
    if "\x00" in text:
        raise BadInput(shown, "is a binary file, not a list of files (one path per line)")
    here = listfile.resolve().parent
    entries, seen = [], {}
    for n, line in enumerate(text.splitlines(), 1):
        where = f"{shown}:{n}"
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) > (2 if of == "models" else 1):
            also = " and an optional base" if of == "models" else ""
            raise BadInput(where, f"expected a path{also}, got {len(words)} words")
        fp = Path(os.path.expanduser(words[0]))
        fp = fp if fp.is_absolute() else here / fp
        if not os.path.lexists(fp):
            raise BadInput(where, f"{words[0]} does not exist")
        if not fp.is_file():
            raise BadInput(where, f"{words[0]} is not a file")
        kind = _suffix_kind(fp, suffixes)
        if kind is None:
            raise BadInput(where, f"{words[0]} is not a {what} file")
        line_bases = _expand(words[1], where) if len(words) > 1 else bases
        fp = fp.resolve()
        for b in line_bases:
            key = (str(fp), b)
            if key in seen:
                raise BadInput(where, f"{words[0]}{' (' + b + ')' if b else ''} is already "
                                      f"named on line {seen[key]}")
            seen[key] = n
            entries.append((str(fp), kind, b))
    if not entries:
        raise BadInput(shown, f"names no {what} file (one path per line, # comments)")
    dirs = [os.path.dirname(p) for p, _, _ in entries]
    root = here if all(Path(d) == here or here in Path(d).parents for d in dirs) else \
        Path(os.path.commonpath(dirs))
    return Batch(_items(entries, root), shown, "list", str(root))


def _items(entries: list, root: Path) -> tuple:
    return tuple(Item(p, name, kind, base, slug, os.path.getsize(p))
                 for p, name, kind, base, slug in _slugs(entries, root))


def largest_first(items: Iterable[Item]) -> list[Item]:
    """Items ordered for submission, the costliest first (file size; a floating base
    before the fixed one of the same file), so that the last tasks to finish are short."""
    return sorted(items, key=lambda it: (-it.size, it.base == "fixed", it.slug))
