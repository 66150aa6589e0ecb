"""Drake's native contact on the ground's half space prints nothing of Drake's own to the
terminal: the one message it logs there (rigid half spaces take no part in deformable
contact, which the harness never builds) is dropped at its source, while every other
message of Drake's still reaches the command's warnings. Run in a fresh process: Drake
logs the message once per process."""
from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT

SCRIPT = """
import logging
import numpy as np
from fixtures.contact_catalog import scene
from harness.model import registry
from harness.model.prepared import prepare_fixture
a = registry.adapter_class("drake")(prepare_fixture("ball"))
out = a.native_contact(scene("ball"), np.array([0, 0, 0.2, 0, 0, 0, 1.0]), np.zeros(6),
                       0.01, lambda t: np.zeros(3))
assert out["t"].size > 2
logging.getLogger("drake").warning("another message of Drake's")
"""


def test_drake_native_contact_prints_no_half_space_warning():
    p = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "half spaces" not in p.stderr, p.stderr
    assert "another message of Drake's" in p.stderr  # only that one message is dropped
