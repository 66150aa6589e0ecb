"""Candidate files: strict versioned schema, per-array sha256, joints matched by name,
and one clear BadInput for every kind of bad file."""
from __future__ import annotations

import io
import json

import numpy as np
import pytest
from scipy.interpolate import CubicSpline

from harness.core.errors import BadInput
from harness.core.io import array_sha256
from harness.core.tolerances import lookup
from harness.model import candidate as cd
from harness.model.integrators import Method
from harness.model.prepared import prepare_fixture
from harness.stages.replay.cases import Case
from tests.conftest import assert_close


def _cand(fixture="chain7", n=11, seed=0, **kw):
    model = prepare_fixture(fixture)
    lay = model.layout
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 0.5, n)
    markers = tuple(cd.Marker(f"m_{f}", f, (0.01, 0.02, -0.03)) for f in model.frames[:2])
    prov = {"producer": "test", "created": "2026-12-01T00:00:00Z",
            "solver": {"name": "none", "tolerance": 1e-8, "ok": True, "note": None},
            "status": "synthetic", "notes": ""}
    return cd.from_arrays(model, lay.random_q(rng), rng.normal(size=lay.nv), t,
                          rng.normal(size=(n, lay.nv)), markers=markers, provenance=prov,
                          **kw)


@pytest.fixture
def saved(tmp_path):
    c = _cand()
    return c, cd.save(c, tmp_path / "cand.json")


def _edit(path, fn):
    m = json.loads(path.read_text())
    fn(m)
    path.write_text(json.dumps(m))


def _arrays(path):
    with np.load(path.with_suffix(".npz"), allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def _write_arrays(path, arrays, reseal=True):
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    path.with_suffix(".npz").write_bytes(buf.getvalue())
    if reseal:  # a consistent forgery: the manifest's hashes and shapes follow the arrays
        _edit(path, lambda m: m["arrays"].update(
            {k: {"shape": list(a.shape), "dtype": a.dtype.name, "sha256": array_sha256(a)}
             for k, a in arrays.items()}))


def _bad(path, needle):
    with pytest.raises(BadInput) as e:
        cd.load(path)
    msg = str(e.value)
    assert "\n" not in msg and needle in msg, msg
    return msg


@pytest.mark.parametrize("fixture", ["chain7", "tree_floating", "free_body"])
def test_round_trip_keeps_every_array_and_field(tmp_path, fixture):
    c = _cand(fixture, interpolation="cubic")
    path = cd.save(c, tmp_path / "c.json")
    back = cd.load(path)
    for k in ("q0", "v0", "t", "tau"):
        assert np.array_equal(getattr(back, k), getattr(c, k)), k
    assert back.model.digest == c.model.digest and back.interpolation == "cubic"
    assert back.markers == c.markers and back.provenance == c.provenance
    assert back.arrays_sha256 == {k: array_sha256(getattr(c, k)) for k in cd.ARRAY_NAMES}
    assert len(back.manifest_sha256) == 64


def test_joints_are_matched_by_name_not_position(tmp_path):
    """The file lists tree_floating's joints reversed, with its arrays in that order; the
    loader puts every block back in canonical order (continuous joint: 2 q, 1 v)."""
    c = _cand("tree_floating")
    path = cd.save(c, tmp_path / "c.json")
    lay = c.model.layout
    order = list(reversed(lay.joint_names))
    qi = np.concatenate([np.arange(lay.slot(j).iq, lay.slot(j).iq + lay.slot(j).nq) for j in order])
    vi = np.concatenate([np.arange(lay.slot(j).iv, lay.slot(j).iv + lay.slot(j).nv) for j in order])
    _write_arrays(path, {"q0": c.q0[qi], "v0": c.v0[vi], "t": c.t, "tau": c.tau[:, vi]})
    _edit(path, lambda m: m.update(joints=order))
    back = cd.load(path)
    assert np.array_equal(back.q0, c.q0) and np.array_equal(back.tau, c.tau)


MANIFEST_EDITS = [
    (lambda m: m.update(extra=1), "unknown field(s) extra"),
    (lambda m: m["controls"].update(smoothing=0.1), "controls: unknown field(s) smoothing"),
    (lambda m: m["provenance"].update(host="x"), "provenance: unknown field(s) host"),
    (lambda m: m["markers"][0].update(colour="red"), "markers[0]: unknown field(s) colour"),
    (lambda m: m["arrays"]["q0"].update(units="m"), "arrays.q0: unknown field(s) units"),
    (lambda m: m["model"].update(version=2), "model: unknown field(s) version"),
    (lambda m: m.pop("provenance"), "missing field(s) provenance"),
    (lambda m: m.update(schema_version=2), "schema_version 2"),
    (lambda m: m.update(schema="other"), "schema is 'other'"),
    (lambda m: m["controls"].update(interpolation="spline"), "controls.interpolation"),
    (lambda m: m["joints"].__setitem__(0, "elbow"), "unknown joint name(s) elbow"),
    (lambda m: m["joints"].pop(), "are missing"),
    (lambda m: m["joints"].__setitem__(1, m["joints"][0]), "listed twice"),
    (lambda m: m["markers"][0].update(frame="nowhere"), "unknown frame 'nowhere'"),
    (lambda m: m["model"].update(sha256="0" * 64), "the fixture changed since"),
    (lambda m: m["model"].update(name="nope"), "unknown fixture 'nope'"),
    (lambda m: m["arrays"]["tau"].update(sha256="0" * 64), "sha256 differs"),
    (lambda m: m["parameters"].update(mass={"value": 1.0, "unit": "kg", "applied": "later"}),
     "applied must be 'in_model'"),
    (lambda m: m.update(arrays_file="../elsewhere.npz"), "next to the manifest"),
    (lambda m: m["contact_schedule"].append({"contact": "foot", "mode": "stick",
                                             "t_start": 0.4, "t_end": 0.2,
                                             "label": "assumed"}), "t_start < t_end"),
]


@pytest.mark.parametrize("edit,needle", MANIFEST_EDITS, ids=[n for _, n in MANIFEST_EDITS])
def test_every_manifest_problem_is_one_clear_error(saved, edit, needle):
    _, path = saved
    _edit(path, edit)
    assert str(path.with_suffix("")) in _bad(path, needle)  # the manifest or its .npz


def test_nan_in_the_json_manifest_is_rejected(saved):
    _, path = saved
    path.write_text(path.read_text().replace('"tolerance": 1e-08', '"tolerance": NaN'))
    _bad(path, "NaN")


@pytest.mark.parametrize("name,bad,needle", [
    ("tau", lambda a: a.__setitem__((3, 2), np.nan),
     "array tau: non-finite value nan at index [3, 2]"),
    ("q0", lambda a: a.__setitem__(0, np.inf), "array q0: non-finite value inf at index [0]"),
    ("v0", lambda a: None, "array v0: shape [6], expected [7]"),
    ("t", lambda a: a.__setitem__(4, a[3]), "array t: not strictly increasing at index 4"),
])
def test_bad_arrays_are_rejected_even_when_the_hashes_match(saved, name, bad, needle):
    c, path = saved
    arrays = _arrays(path)
    if name == "v0":
        arrays[name] = arrays[name][:6]
    else:
        bad(arrays[name])
    _write_arrays(path, arrays)
    _bad(path, needle)


def test_non_unit_quaternion_is_rejected(tmp_path):
    c = _cand("free_body")
    path = cd.save(c, tmp_path / "c.json")
    arrays = _arrays(path)
    arrays["q0"][3:7] *= 1.5
    _write_arrays(path, arrays)
    _bad(path, "not unit norm")


def test_arrays_file_problems(saved):
    c, path = saved
    arrays = _arrays(path)
    _write_arrays(path, {**arrays, "extra": np.zeros(2)}, reseal=False)
    _bad(path, "holds arrays")
    # a pickled (object) array is never loaded
    buf = io.BytesIO()
    np.savez(buf, **{**arrays, "tau": np.array([{"a": 1}], dtype=object)})
    path.with_suffix(".npz").write_bytes(buf.getvalue())
    _bad(path, "unreadable arrays file")
    path.with_suffix(".npz").write_bytes(b"not a zip")
    _bad(path, "unreadable arrays file")
    path.with_suffix(".npz").unlink()
    _bad(path, "arrays file is missing")


def test_changed_array_bytes_are_found(saved):
    _, path = saved
    arrays = _arrays(path)
    arrays["tau"][0, 0] += 1e-12
    _write_arrays(path, arrays, reseal=False)
    _bad(path, "array tau: sha256 differs from the manifest")


def test_not_json_and_missing_file(tmp_path):
    p = tmp_path / "x.json"
    p.write_text("{ not json")
    _bad(p, "not a valid JSON")
    _bad(tmp_path / "missing.json", "No such file")


def test_contact_schedule_with_contact_is_refused_by_replay(tmp_path):
    c = _cand(contact_schedule=({"contact": "tool", "mode": "stick", "t_start": 0.0,
                                 "t_end": 0.2, "label": "assumed"},))
    path = cd.save(c, tmp_path / "c.json")
    back = cd.load(path)  # the schema accepts it ...
    with pytest.raises(BadInput, match="stage 4"):  # ... the unconstrained replay does not
        Case("c", back, "agreement", Method("rk4", dt=1e-3))


def test_controls_interpolation_against_direct_formulas():
    rng = np.random.default_rng(2)
    t = np.sort(rng.uniform(0, 1, 8))
    tau = rng.normal(size=(8, 3))
    zoh, lin, cub = (cd.Controls(t, tau, k) for k in ("zoh", "linear", "cubic"))
    spline = CubicSpline(t, tau, axis=0, bc_type="not-a-knot")
    for k in range(7):
        for x in np.linspace(t[k], t[k + 1], 5):
            assert np.array_equal(zoh.segment(k)(x), tau[k])  # held up to the next knot
            w = (x - t[k]) / (t[k + 1] - t[k])
            assert_close(lin.segment(k)(x), (1 - w) * tau[k] + w * tau[k + 1],
                         "conformance", "analytic", "linear")
            assert_close(cub.segment(k)(x), spline(x), "conformance", "analytic", "cubic")
    assert np.array_equal(zoh(t[3]), tau[3]) and np.array_equal(zoh(t[-1]), tau[-1])


def test_lobatto_controls_reproduce_polynomials_and_converge_on_smooth_functions():
    """lobatto<P>: a degree-P polynomial per group is reproduced to round-off (against the
    polynomial itself), sub() keeps the groups, and sin(ω t) converges spectrally."""
    rng = np.random.default_rng(3)
    P, G = 6, 4
    x = -np.cos(np.pi * np.arange(P + 1) / P)
    br = np.linspace(0.0, 0.8, G + 1)
    t = np.unique(np.concatenate([a + (b - a) * (x + 1) / 2 for a, b in zip(br, br[1:])]))
    assert t.size == G * P + 1
    coef = rng.normal(size=(G, P + 1, 2))          # a different polynomial per group

    def poly(g, s):
        return np.polynomial.polynomial.polyval(s - br[g], coef[g]).T
    for g in range(1, G):                            # continuous at the shared knots
        coef[g, 0] = poly(g - 1, br[g])
    tau = np.stack([poly(min(max(int(np.searchsorted(br, s, side="right")) - 1, 0), G - 1), s)
                    for s in t])
    c = cd.Controls(t, tau, f"lobatto{P}")
    sub = c.sub(5, 17)                               # starts inside a group
    for k in range(t.size - 1):
        g = k // P
        for s in np.linspace(t[k], t[k + 1], 4):
            assert_close(c.segment(k)(s), poly(g, s), "conformance", "analytic", "lobatto")
            if 5 <= k < 17:
                assert np.array_equal(sub.segment(k - 5)(s), c.segment(k)(s))
    # smooth: the error of sin(10 t) (2 rad per group) falls spectrally, P = 4 → 8 → 12
    errs = []
    for P in (4, 8, 12):
        x = -np.cos(np.pi * np.arange(P + 1) / P)
        t = np.unique(np.concatenate([a + (b - a) * (x + 1) / 2 for a, b in zip(br, br[1:])]))
        c = cd.Controls(t, np.sin(10 * t)[:, None], f"lobatto{P}")
        s = np.linspace(0, 0.8, 1001)
        errs.append(max(abs(c(float(u))[0] - np.sin(10 * u)) for u in s))
    assert errs[0] > 1e4 * errs[1] and errs[1] > 1e4 * errs[2]
    assert errs[2] <= lookup("conformance", "analytic").rtol


@pytest.mark.parametrize("interp,n,needle", [("lobatto4", 11, "multiple of 4"),
                                             ("lobatto0", 11, "lobatto<P>"),
                                             ("lobatto33", 34, "lobatto<P>"),
                                             ("lobattox", 11, "lobatto<P>")])
def test_lobatto_candidate_rejects_bad_degree_or_knot_count(interp, n, needle):
    with pytest.raises(BadInput, match=needle):
        _cand(n=n, interpolation=interp)


def test_lobatto_candidate_round_trips(tmp_path):
    c = _cand(n=13, interpolation="lobatto4")
    back = cd.load(cd.save(c, tmp_path / "c.json"))
    assert back.interpolation == "lobatto4"
    ca, cb = c.controls(), back.controls()
    for s in np.linspace(0.0, 0.5, 37):
        assert np.array_equal(ca(float(s)), cb(float(s)))
    m = json.loads((tmp_path / "c.json").read_text())
    m["controls"]["interpolation"] = "lobatto5"      # 12 intervals: not a multiple of 5
    (tmp_path / "c.json").write_text(json.dumps(m))
    with pytest.raises(BadInput, match="multiple of 5"):
        cd.load(tmp_path / "c.json")
