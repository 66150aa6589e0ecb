"""Which club a capture holds (harness/swing/pipeline.py ``which_club``): measured from
its markers at address, it sets the smash-factor band and the club's masses. Lengths m,
masses kg."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from fixtures.golfers import CLUB_MASSES_KG, GolferDims, golfer3d
from harness.capture import events as cap_events
from harness.capture.ingest import ingest
from harness.core.errors import BadInput
from harness.core.tolerances import lookup
from harness.model import registry
from harness.model.prepared import PreparedModel
from harness.swing.pipeline import address_frames, club_masses, which_club
from harness.swing.scaling import _mean, dims_from_capture
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def capture():
    cap = ingest(ROOT / "data" / "swing" / "driver.c3d")
    return cap, address_frames(cap_events.detect(cap))


def _shortened(cap, frames, by_m: float):
    """The capture with its club-head markers all moved by the same vector, by_m [m]
    from their mean at address toward the wrist markers' mean there: a club that much
    shorter, as the scaling measures it."""
    ch = _mean(cap, frames, *cap.markerset.club_head)
    wr = 0.5 * (_mean(cap, frames, "LWristTop") + _mean(cap, frames, "RWristTop"))
    X = cap.X.copy()
    X[:, [cap.index(lab) for lab in cap.markerset.club_head]] += \
        by_m * (wr - ch) / np.linalg.norm(wr - ch)
    return dataclasses.replace(cap, X=X)


def test_the_bundled_capture_holds_a_driver_and_a_shorter_club_is_an_iron(capture):
    """The bundled driver swing measures a club at least swing/club_length_driver_min
    long; the same swing with the club-head markers 0.2 m nearer the hands (about a
    7-iron against a driver) measures under it and is taken for an iron. --club wins
    over the measure, and anything else is refused."""
    cap, frames = capture
    lim = lookup("swing", "club_length_driver_min").atol
    _, measured = dims_from_capture(cap, frames)
    got = which_club("auto", measured)
    assert got["club"] == "driver" and got["length_m"] >= lim, got
    assert got["how"].startswith("inferred")
    assert got["masses_kg"] == list(CLUB_MASSES_KG["driver"])
    _, short = dims_from_capture(_shortened(cap, frames, 0.2), frames)
    st = lookup("swing", "stated_figure")
    assert short["club"]["value_m"] == pytest.approx(got["length_m"] - 0.2, rel=st.rtol,
                                                     abs=st.atol)
    iron = which_club("auto", short)
    assert iron["club"] == "iron" and iron["length_m"] < lim, iron
    assert which_club("driver", short)["club"] == "driver"
    assert which_club("iron", measured)["how"] == "given (--club)"
    with pytest.raises(BadInput):
        which_club("wood", measured)


def _whole_body_mass(dims) -> float:
    """kg: MuJoCo's mass-matrix entry of pelvis_tx (the whole body's mass) for the
    actuated-root golfer of ``dims``."""
    spec = golfer3d(dims, root="actuated")
    a = registry.adapter_class("mujoco")(PreparedModel(spec.validate(), "test:club"))
    i = a.layout.slot("pelvis_tx").iv
    return float(a.mass_matrix(np.zeros(a.nq))[i, i])


def test_the_club_masses_reach_the_engines():
    """The golfer built with an iron's masses carries the iron's extra mass: MuJoCo's
    mass matrix, whose pelvis-translation block is the whole body's mass, grows by the
    difference of the two clubs' masses."""
    def total(club):
        return _whole_body_mass(GolferDims().for_club(club))

    diff = CLUB_MASSES_KG["iron"][0] - CLUB_MASSES_KG["driver"][0]
    tol = lookup("dynamics", "mass_matrix")
    iron, driver = total("iron"), total("driver")
    assert iron - driver == pytest.approx(diff, abs=tol.atol + tol.rtol * iron)


def test_a_weighed_clubs_masses_replace_the_typical_ones(capture):
    """--club-masses TOTAL,HEAD: the club keeps its kind (and band) and takes the given
    masses, which reach the engines (MuJoCo's whole-body mass moves by the difference of
    the club's totals); a malformed or impossible pair is refused naming the option."""
    cap, frames = capture
    _, measured = dims_from_capture(cap, frames)
    got = which_club("auto", measured, "0.33,0.205")
    assert got["club"] == "driver" and got["masses_kg"] == [0.33, 0.205]
    assert "given (--club-masses)" in got["how"]
    assert which_club("auto", measured, None)["masses_kg"] == list(CLUB_MASSES_KG["driver"])

    def total(masses):
        return _whole_body_mass(GolferDims().for_club("driver", masses))

    tol = lookup("dynamics", "mass_matrix")
    heavy, typical = total((0.40, 0.25)), total(None)
    assert heavy - typical == pytest.approx(0.40 - CLUB_MASSES_KG["driver"][0],
                                            abs=tol.atol + tol.rtol * heavy)
    for bad in ("0.2,0.3", "0.31", "a,b", "0.31,0", "0.31,nan", (0.31,), (0.31, -0.1)):
        with pytest.raises(BadInput) as e:
            club_masses(bad)
        assert e.value.where == "--club-masses"
