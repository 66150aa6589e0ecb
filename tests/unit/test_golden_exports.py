"""Fixtures are declared once (fixtures/catalog.py) and exported deterministically;
the committed exports in fixtures/golden/ must match a fresh export byte for byte."""
from __future__ import annotations

import pytest

from fixtures import catalog
from fixtures.export import GOLDEN_DIR, golden_files, to_mjcf, to_urdf


@pytest.mark.parametrize("fname", sorted(golden_files()))
def test_committed_export_is_byte_identical(fname):
    fresh = golden_files()[fname].encode("utf-8")
    committed = (GOLDEN_DIR / fname).read_bytes()
    assert committed == fresh, (f"fixtures/golden/{fname} differs from a fresh export: "
                                "run `python -m fixtures.export` and commit")


def test_no_stray_golden_files():
    assert sorted(p.name for p in GOLDEN_DIR.iterdir()) == sorted(golden_files())


@pytest.mark.parametrize("name", catalog.names())
def test_export_is_deterministic_and_full_precision(name):
    """Same spec, same bytes; and every inertial number reads back bit-identical from
    both files (no round trip through ~6 significant digits, as MuJoCo's XML writer
    does)."""
    import xml.etree.ElementTree as ET

    spec = catalog.get(name)
    assert to_urdf(spec) == to_urdf(catalog.get(name))
    assert to_mjcf(spec) == to_mjcf(catalog.get(name))
    urdf = {l.get("name"): l for l in ET.fromstring(to_urdf(spec)).iter("link")}
    mjcf = {b.get("name"): b for b in ET.fromstring(to_mjcf(spec)).iter("body")}
    for b in spec.bodies:
        I = b.inertia_matrix
        six = [I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]]
        if b.mass > 0:
            inertial = mjcf[b.name].find("inertial")
            assert float(inertial.get("mass")) == b.mass
            assert [float(x) for x in inertial.get("fullinertia").split()] == six
            assert [float(x) for x in inertial.get("pos").split()] == list(b.com)
            u = urdf[b.name].find("inertial")
            assert float(u.find("mass").get("value")) == b.mass
            ui = u.find("inertia")
            assert [float(ui.get(k)) for k in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")] == six
