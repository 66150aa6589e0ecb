"""Known disagreements as data (harness/core/known.py, known_disagreements.toml): the file
loads and states every fact with a reason; the loader refuses what it does not know; the
check fails a listed record that passes (stale), an unlisted record that does not, a
listed record failing for another reason, and an entry that matches nothing in its
scope."""
from __future__ import annotations

import textwrap

import pytest

from harness.core import known
from harness.core.records import STATUSES

GOOD = """
[[disagreement]]
name = "x_no_h"
stage = "dynamics"
quantity = "bias_forces"
engines = ["x"]
status = "not_provided"
record_reason = "no h"
reason = "Engine x exposes no h(q, v)."
"""


def _load(tmp_path, text):
    p = tmp_path / "k.toml"
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return known.load(p)


def _rec(rid, status, a="x", b="", reason="", stage="dynamics", fixture="f",
         quantity="bias_forces"):
    return {"id": rid, "stage": stage, "fixture": fixture, "quantity": quantity,
            "engine_a": a, "engine_b": b, "status": status, "reason": reason}


def test_the_file_loads_and_every_entry_has_a_reason():
    entries = known.load()
    assert entries and len({k.name for k in entries}) == len(entries)
    for k in entries:
        assert k.status in STATUSES and k.status != "passed"
        assert len(k.reason) > 40, k.name
    assert known.entry("crocoddyl_no_kinematics").engines == ("crocoddyl",)


@pytest.mark.parametrize("change, message", [
    ('colour = "red"\n', "unknown key(s) colour"),
    ('reason = "   "\n', "reason must be a non-empty string"),
    ('status = "passed"\n', "is not a non-passing status"),
    ('status = "broken"\n', "is not a non-passing status"),
    ('engines = "x"\n', "engines must be a list"),
    ('fixture = []\n', "fixture must be a non-empty string or list"),
    ('name = "Has Spaces"\n', "lower-case slug"),
    ('reason = "As issue 8 says."\n', "cites an issue number"),
    ('reason = "See ENGINE_NOTES.md."\n', "outside the repository"),
])
def test_the_loader_refuses_what_it_does_not_know(tmp_path, change, message):
    key = change.split(" ")[0]
    lines = [ln for ln in GOOD.strip().splitlines() if not ln.startswith(key + " ")]
    with pytest.raises(ValueError, match="disagreement 1") as e:
        _load(tmp_path, "\n".join(lines) + "\n" + change)
    assert message in str(e.value)


def test_a_missing_reason_a_duplicate_name_and_a_stray_table_are_errors(tmp_path):
    no_reason = "\n".join(ln for ln in GOOD.strip().splitlines() if "reason = " not in ln
                          or ln.startswith("record_reason"))
    with pytest.raises(ValueError, match="missing reason"):
        _load(tmp_path, no_reason)
    with pytest.raises(ValueError, match="duplicate name"):
        _load(tmp_path, GOOD + GOOD)
    with pytest.raises(ValueError, match="unknown top-level key"):
        _load(tmp_path, GOOD + "\n[notes]\ntext = 'x'\n")


def test_check_is_strict_both_ways(tmp_path):
    table = _load(tmp_path, GOOD)
    listed = _rec("f/dynamics/bias_forces/x", "not_provided", reason="x has no h")
    other = _rec("f/dynamics/bias_forces/y", "passed", a="y")
    assert known.check([listed, other], table=table) == []
    assert known.expected_status(listed, table) == ("not_provided", table[0].reason)
    assert known.expected_status(other, table) is None
    # the known disagreement now passes: stale
    (p,) = known.check([{**listed, "status": "passed"}, other], table=table)
    assert "stale" in p and "x_no_h" in p
    # an unlisted record that does not pass
    (p,) = known.check([listed, {**other, "status": "failed"}], table=table)
    assert p.startswith("f/dynamics/bias_forces/y: failed") and "not a known" in p
    # the listed status, for another reason than the entry states
    (p,) = known.check([{**listed, "reason": "x raised"}], table=table)
    assert "another reason" in p
    # in scope (its stage, quantity and engine x all occur) but no record matched: stale
    (p,) = known.check([_rec("f/dynamics/bias_forces/y~z", "passed", "y", "z"),
                        _rec("f/kinematics/bias_forces/x", "passed", stage="kinematics")],
                       table=table)
    assert "matches no record" in p
    # out of scope (no record of engine x): nothing to say
    assert known.check([other], table=table) == []


def test_engines_match_a_pair_across_the_listed_group_only(tmp_path):
    table = _load(tmp_path, GOOD.replace('engines = ["x"]', 'engines = ["x", "w"]'))
    assert known.expected_status(_rec("a", "failed", "x", "y"), table)
    assert known.expected_status(_rec("b", "failed", "declared", "w"), table)
    assert known.expected_status(_rec("c", "failed", "x:solver", ""), table)
    assert known.expected_status(_rec("d", "failed", "x", "w"), table) is None  # same side


def test_a_record_matched_twice_is_an_error(tmp_path):
    table = _load(tmp_path, GOOD + GOOD.replace('"x_no_h"', '"x_no_h_again"'))
    with pytest.raises(ValueError, match="several known disagreements"):
        known.expected_status(_rec("f/dynamics/bias_forces/x", "not_provided"), table)
