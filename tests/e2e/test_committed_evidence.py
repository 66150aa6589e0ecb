"""The committed evidence bundle (evidence/qualify-ci, from `harness qualify`) still
verifies with this code: every record recomputes from its arrays."""
from __future__ import annotations

from harness import api
from tests.conftest import ROOT


def test_committed_qualify_bundle_verifies():
    b = ROOT / "evidence" / "qualify-ci"
    assert api.verify(b) == []
    bundle = api.read_bundle(b)
    scored = [r for r in bundle.records if r.status in ("passed", "failed")]
    assert scored and all(r.passed for r in scored)
