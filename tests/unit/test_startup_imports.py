"""Startup cost of every command: building the CLI and loading the engine bindings does not
pull in modules no command start needs (scipy's sparse, optimize, interpolate and integrate
packages, which the fitters import where they use them; ssl and http through
xml.sax.saxutils; MuJoCo's OpenGL backend; before the engines load, the swing's modules
and importlib.metadata, which `harness report` does not need; of `harness fit`'s problems
only their declarations, not their modules and solvers), and the local quoteattr of
fixtures/export.py writes exactly what xml.sax.saxutils.quoteattr writes."""
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
# what of harness.fit a command starts with: the problems' declarations, the study grid's
# options and the fit bundle's reader (none of them imports a problem's module or solver)
DECLARATIONS = {"harness.fit", "harness.fit.catalog", "harness.fit.fitproblem",
                "harness.fit.bundle", "harness.fit.study_grid",
                "harness.fit.observed_events", "harness.fit.schedules"}


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
            "from harness.core import figures; figures.plotly_js_path(); "
            "print(json.dumps(sorted(sys.modules))); "
            "[registry.adapter_class(e) for e in registry.ENGINES]; "
            "import harness.swing.run; "
            "from harness.fit import catalog; [p.fields() for p in catalog.problems()]; "
            "print(json.dumps(sorted(sys.modules)))")
    env = {k: v for k, v in os.environ.items() if k != "MUJOCO_GL"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True).stdout
    started, loaded = (set(json.loads(x)) for x in out.splitlines()[-2:])
    # what `harness report` and every other command but swing start with (the check can
    # fail): no swing module (the swing commands import harness.swing on use), and no
    # importlib.metadata (the chart library is found on sys.path)
    assert "harness.cli" in started and "harness.fit.catalog" in started
    late = {m for m in started if m.startswith("harness.swing")} | \
        ({"importlib.metadata"} & started)
    assert not late, sorted(late)
    # the fit problems' declarations (the CLI's options) and the fit bundle's reader only:
    # each problem's module and solvers are imported when the problem is used
    fit = {m for m in started if m.startswith("harness.fit")}
    assert fit == DECLARATIONS, sorted(fit ^ DECLARATIONS)
    assert "engines.mujoco" in loaded and "harness.swing.run" in loaded
    assert {"harness.fit.problem_collocation", "harness.fit.problem_bounce",
            "harness.fit.problem_bounce2", "harness.fit.problem_dimension",
            "harness.fit.collocation"} <= loaded
    # the engines, the fitters (every problem's module) and the swing are imported, not
    # their scipy
    unneeded = {"scipy.sparse", "scipy.optimize", "scipy.interpolate", "scipy.integrate",
                "xml.sax.saxutils", "ssl", "http.client", "glfw", "mujoco.glfw"}
    assert not unneeded & loaded, sorted(unneeded & loaded)
