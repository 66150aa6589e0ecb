"""Pieces shared by the URDF and MJCF importers (engine-blind; no units involved).

* ``read_model_file(path, kind)``: the raw bytes of a user's model file after the checks
  both importers make (exists, a regular file — not a FIFO or a device such as
  ``/dev/zero`` — of at most ``MAX_MODEL_FILE_BYTES`` (harness/core/strict.py), not
  empty, UTF-8, no ``<!DOCTYPE``/``<!ENTITY``: no entity expansion); BadInput(path,
  problem) otherwise.
* ``sanitise_model_name``: the model's name as ``spec.name`` (the only name the importers
  ever rewrite: no engine matches on it).
"""
from __future__ import annotations

import os
import re

from harness.core.errors import BadInput
from harness.core.strict import MAX_MODEL_FILE_BYTES, read_regular


def read_model_file(path: str, kind: str) -> bytes:
    """Bytes of the model file at ``path``; ``kind`` ("URDF", "MJCF") words the errors."""
    raw = read_regular(path, f"an {kind} file", MAX_MODEL_FILE_BYTES)
    if not raw.strip():
        raise BadInput(path, "file is empty")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise BadInput(path, f"not a UTF-8 text file (invalid byte at offset {e.start}); "
                             f"an {kind} file is XML text") from None
    upper = text.upper()
    for decl in ("<!DOCTYPE", "<!ENTITY"):
        if decl in upper:
            raise BadInput(path, f"contains a {decl} declaration; DTDs and entities are "
                                 "rejected (no entity expansion)")
    return raw


def sanitise_model_name(name: str | None, path: str) -> str:
    """``name`` (or the file's stem) with every character outside [A-Za-z0-9_.-]
    replaced by ``_``, prefixed by ``_`` if it does not start with a letter or ``_``."""
    base = name.strip() if name and name.strip() else \
        os.path.splitext(os.path.basename(path))[0]
    s = re.sub(r"[^A-Za-z0-9_.\-]", "_", base)
    if not re.match(r"[A-Za-z_]", s):
        s = "_" + s
    return s
