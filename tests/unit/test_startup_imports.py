"""Startup cost of every command: building the CLI and loading the engine bindings does not
pull in modules no command start needs (scipy's sparse, optimize, interpolate and integrate
packages, which the fitters import where they use them; ssl and http through
xml.sax.saxutils; MuJoCo's OpenGL backend), and the local quoteattr of fixtures/export.py
writes exactly what xml.sax.saxutils.quoteattr writes."""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from xml.sax.saxutils import quoteattr as reference_quoteattr

from fixtures.export import quoteattr

ROOT = Path(__file__).resolve().parents[2]


def test_quoteattr_matches_the_standard_library():
    rng = random.Random(0)
    alphabet = "ab&<>\"'\n\r\t x;#"
    for _ in range(5000):
        s = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        assert quoteattr(s) == reference_quoteattr(s), s


def test_cli_and_engines_start_without_unneeded_modules():
    code = ("import json, sys; import harness.cli as c; "
            "from harness.model import registry; registry.command_process(); "
            "c.build_parser(); "
            "[registry.adapter_class(e) for e in registry.ENGINES]; "
            "print(json.dumps(sorted(sys.modules)))")
    env = {k: v for k, v in os.environ.items() if k != "MUJOCO_GL"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True).stdout
    loaded = set(json.loads(out.splitlines()[-1]))
    assert "engines.mujoco" in loaded and "harness.cli" in loaded  # the check can fail
    assert "harness.fit.collocation" in loaded  # the fitters are imported, not their scipy
    unneeded = {"scipy.sparse", "scipy.optimize", "scipy.interpolate", "scipy.integrate",
                "xml.sax.saxutils", "ssl", "http.client", "glfw", "mujoco.glfw"}
    assert not unneeded & loaded, sorted(unneeded & loaded)
