"""Shared test fixtures. Engines are real (never mocked); a missing engine makes its
tests fail with the registry's reason (no silent skip)."""
from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("OMP_NUM_THREADS", "1")

ROOT = Path(__file__).resolve().parent.parent

from fixtures import catalog  # noqa: E402
from harness.core.tolerances import lookup  # noqa: E402
from harness.model import registry  # noqa: E402
from harness.model.prepared import PreparedModel, prepare_fixture  # noqa: E402

# The double-precision engines, held to the parity claim's class; an engine that computes in
# float32 (MuJoCo Warp) is held to the float32 class in tests of its own
# (tests/unit/test_mujoco_warp.py), never to the double class's bounds.
# (an opt-in row of the engines table, outside registry.ENGINES).
FLOAT32_ENGINES = [e for e in registry.engine_names() if registry.probe(e).available and
                   getattr(registry.adapter_class(e), "precision", "float64") == "float32"]
ENGINES = [e for e in registry.ENGINES if e not in FLOAT32_ENGINES]
# the OpenSim adapter module sets OpenSim's logger (warnings only, no opensim.log file in
# the working folder); tests that call OpenSim directly get the same settings when it is
# imported here, before any test module
registry.probe("opensim")
FIXTURES = catalog.names() + catalog.joint_names()  # the tree fixtures, ball joints included

_adapters: dict = {}


def adapter(engine: str, fixture: str):
    """A cached adapter (construction is the slow part; adapters are stateless)."""
    key = (engine, fixture)
    if key not in _adapters:
        cls = registry.adapter_class(engine)  # raises EngineUnavailable: the test fails
        _adapters[key] = cls(prepare_fixture(fixture))
    return _adapters[key]


def assert_close(a, b, stage: str, quantity: str, what: str = ""):
    """Norm-wise comparison with the tolerance table's entry (harness/tolerances.py)."""
    from harness.core.records import measure

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape, f"{what}: shape {a.shape} vs {b.shape}"
    tol = lookup(stage, quantity)
    max_abs, max_rel, worst, ok = measure(a[None], b[None], tol)
    assert ok, (f"{what}: max_abs {max_abs:.3e} max_rel {max_rel:.3e} exceeds "
                f"atol {tol.atol} rtol {tol.rtol} ({stage}/{quantity})")


def assert_builds_alike(a, b, model, seed: int, what: str, kinematics: bool = True):
    """Adapters ``a`` and ``b`` of one PreparedModel at three random states: frame poses
    (unless ``kinematics`` is False), the mass matrix and forward dynamics within the
    tolerance table's entries."""
    rng = np.random.default_rng(seed)
    lay = model.layout
    for _ in range(3):
        q = lay.random_q(rng)
        v = rng.standard_normal(lay.nv)
        tau = rng.standard_normal(lay.nv)
        if kinematics:
            assert_close(a.frame_poses(q, model.frames), b.frame_poses(q, model.frames),
                         "kinematics", "frame_pose", what)
        assert_close(a.mass_matrix(q), b.mass_matrix(q), "dynamics", "mass_matrix", what)
        assert_close(a.forward_dynamics(q, v, tau), b.forward_dynamics(q, v, tau),
                     "dynamics", "forward_dynamics", what)


def tol_kw(stage: str, quantity: str) -> dict:
    """rtol and atol of a table entry, as keywords of np.testing.assert_allclose."""
    t = lookup(stage, quantity)
    return {"rtol": t.rtol, "atol": t.atol}


def assert_known(records, complete: bool = True):
    """Every record as harness/core/known_disagreements.toml says: a listed record has its
    entry's status (a listed one that passes is stale), any other record passed, and
    (``complete``) every entry within the records' stages, fixtures, quantities and
    engines matched one of them."""
    from harness.core import known

    problems = known.check(records, complete)
    assert not problems, "\n".join(problems)


def assert_bad_input(load, path: str, expected: str):
    """load(path) raises BadInput naming ``path``, on one line, with ``expected`` in it."""
    from harness.core.errors import BadInput

    with pytest.raises(BadInput) as e:
        load(path)
    assert e.value.where == path and str(e.value).startswith(path + ": ")
    assert expected in e.value.problem, e.value.problem
    assert "\n" not in str(e.value)


def run_cli(*args, cwd=None, timeout=600):
    """Run the installed CLI in a subprocess; returns CompletedProcess."""
    return subprocess.run([sys.executable, "-m", "harness.launch", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd or ROOT, timeout=timeout)


# The test files that read the shared quick swing (below): under pytest-xdist (`make test`
# runs two workers) they run on one worker, so that swing is fitted once per run.
QUICK_SWING_FILES = frozenset(
    p.relative_to(ROOT).as_posix() for p in (ROOT / "tests").rglob("test_*.py")
    if "quick_swing" in p.read_text(encoding="utf-8"))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Scheduling for ``make test``'s two workers: a test file stays on one worker (its
    module-scoped fixtures are built once) and the files of ``QUICK_SWING_FILES`` share
    one worker. (xdist's own ``loadfile`` scheduling, grouped.)"""
    from xdist.scheduler import LoadScopeScheduling

    class FileScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return "quick_swing" if path in QUICK_SWING_FILES else path

    return FileScheduling(config, log)


@pytest.fixture(scope="session")
def quick_swing(tmp_path_factory):
    """One ``harness swing --quick --activation`` of the bundled capture, shared by the
    tests that read its outputs (the fit, its replay in every engine, the report, the
    OpenSim export, the activation-driven refit): a swing takes about a minute. Its
    output folder first holds an earlier swing's files, which the run must replace whole.
    Returns (base, out, CompletedProcess); base holds only out."""
    import json

    from harness.swing.run import SUMMARY_KEYS

    base = tmp_path_factory.mktemp("quick_swing")
    out = base / "swing"
    (out / "fit").mkdir(parents=True)
    (out / "fit" / "fit.json").write_text(json.dumps(dict.fromkeys(SUMMARY_KEYS, {})))
    (out / "index.html").write_text("earlier")
    p = run_cli("swing", ROOT / "data" / "swing" / "driver.c3d", "--quick", "--activation",
                "--out", out, "--quiet", timeout=1500)
    return base, out, p


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@dataclass(frozen=True)
class EditedMjcfModel(PreparedModel):
    """The same model, except that the MJCF the harness exports is edited (old → new):
    gives one engine a model that differs in one known way, for tests of what the harness
    reports about a difference."""

    edit: tuple = ("", "")

    @cached_property
    def mjcf(self) -> str:
        text = super().mjcf
        assert text.count(self.edit[0]) == 1, self.edit[0]
        return text.replace(*self.edit)

def reseal_arrays(folder, arrays: dict) -> None:
    """Write ``arrays`` as the bundle's arrays.npz and update the manifest's file hash
    and seal to match (a tampering that also forges the hashes), for verify tests."""
    import hashlib
    import json

    from harness.core import io
    from harness.evidence.bundle import manifest_digest

    folder = Path(folder)
    (folder / "arrays.npz").write_bytes(io.npz_bytes(arrays))
    m = json.loads((folder / "manifest.json").read_text())
    m["arrays_file_sha256"] = hashlib.sha256((folder / "arrays.npz").read_bytes()).hexdigest()
    m["manifest_sha256"] = manifest_digest(m)
    (folder / "manifest.json").write_text(json.dumps(m))
