"""`harness fit --problem dimension` as a user runs it (subprocess): candidate chains of
d* − 1, d*, d* + 1 hinges compared on held-out frames, the uncertainty recomputed from the
bundle's per-frame scores, the absorption check on the bent-link variant, the report's
held-out score charts, re-rendering, and bad input (exit 2, one line, nothing written)."""
from __future__ import annotations

import html
import json

import numpy as np
import pytest

from harness.core.tolerances import lookup
from tests.conftest import run_cli

D_STAR = 2          # the generating chain's hinges (harness/fit/dimension.py TRUE_HINGES)
KINK = 0.15         # rad, the variant's injected bend
BLOCK = 10          # frames per block of the standard errors


def _paired(a, b):
    """Σ(a − b) and its block standard error, summed block by block here."""
    d = np.asarray(a) - np.asarray(b)
    sums = np.array([d[i:i + BLOCK].sum() for i in range(0, d.size, BLOCK)])
    return d.sum(), np.sqrt(sums.size) * sums.std(ddof=1)


def test_dimension_fit_writes_bundle(tmp_path):
    out = tmp_path / "dim"
    proc = run_cli("fit", "--problem", "dimension", "--seed", 0, "--out", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "choice d2" in proc.stdout
    assert sorted(p.name for p in out.iterdir()) == ["arrays.npz", "fit.json", "index.html",
                                                    "plotly.min.js"]
    doc = json.loads((out / "fit.json").read_text())
    assert doc["schema"] == "harness-fit" and doc["problem"] == "dimension"
    assert doc["converged"] and doc["truth"]["d"] == D_STAR
    dm, va = doc["dimension"], doc["variant"]
    assert [c["d"] for c in dm["candidates"]] == [D_STAR - 1, D_STAR, D_STAR + 1]
    assert dm["selected"] == dm["choice"] == f"d{D_STAR}"
    assert va["selected"] == f"d{D_STAR + 1}" and va["choice"] == f"d{D_STAR}"
    assert [s["verdict"] for s in dm["absorption"]][0] == "dimension"
    assert dm["absorption"][1]["verdict"] != "absorbing"
    assert [s["verdict"] for s in va["absorption"]] == ["dimension", "absorbing"]
    with np.load(out / "arrays.npz", allow_pickle=False) as a:
        arr = {k: a[k] for k in a.files}
    n = doc["N"]
    assert arr["ll"].shape == (3, n) and arr["folds"].tolist() == [i % 4 for i in range(n)]
    for comp, ll, static in ((dm, arr["ll"], arr["static_ll"]),
                             (va, arr["ll_variant"], arr["static_ll_variant"])):
        rows = comp["candidates"]
        tot = ll.sum(axis=1)
        assert np.allclose(tot, [r["heldout_loglik"] for r in rows], rtol=1e-12, atol=1e-9)
        best = int(np.argmax(tot))
        assert rows[best]["name"] == comp["selected"]
        for i, r in enumerate(rows):       # differences and SEs recomputed from the frames
            if i == best:
                continue
            d, se = _paired(ll[best], ll[i])
            assert r["below_selected"]["diff"] == pytest.approx(d, rel=1e-9)
            assert r["below_selected"]["se"] == pytest.approx(se, rel=1e-9)
        frac = [r["bootstrap_fraction"] for r in rows]
        assert sum(frac) == pytest.approx(1.0)
        for k, s in enumerate(comp["absorption"]):   # the static/dynamic split
            d, se = _paired(static[k], ll[k])
            assert s["static_gain"]["diff"] == pytest.approx(d, rel=1e-9)
            assert s["static_gain"]["se"] == pytest.approx(se, rel=1e-9)
            d, se = _paired(ll[k + 1], static[k])
            assert s["dynamic_gain"]["diff"] == pytest.approx(d, rel=1e-9)
    assert dm["candidates"][1]["bootstrap_fraction"] >= lookup("dimension",
                                                               "selection_fraction").atol
    # the extra coordinate's fitted angle: near 0 on clean data, the injected bend otherwise
    tol = lookup("dimension", "kink_angle").atol
    masks = [arr["folds"] != f for f in range(4)]
    clean = [arr["extra_q"][f][m].mean() for f, m in enumerate(masks)]
    bent = [arr["extra_q_variant"][f][m].mean() for f, m in enumerate(masks)]
    assert np.all(np.abs(clean) <= tol) and np.all(np.abs(np.array(bent) - KINK) <= tol)
    assert va["absorption"][1]["extra_mean_angle_rad"] == pytest.approx(np.mean(bent))
    # the report: held-out score charts with units on their axes
    page = (out / "index.html").read_text()
    for needle in ('id="dimension"', 'id="absorption"', 'id="stability"', "Held-out scores",
                   'src="plotly.min.js"', "absorbing"):
        assert needle in page, needle
    specs = [json.loads(html.unescape(s.split('"', 1)[0]))
             for s in page.split('data-spec="')[1:]]
    titles = [(s["layout"]["xaxis"]["title"]["text"], s["layout"]["yaxis"]["title"]["text"])
              for s in specs]
    assert titles.count(("candidate (hinges)", "log-likelihood below the selected [nats]")) == 2
    assert ("candidate (hinges)", "fraction of resamples [–]") in titles
    assert titles.count(("t [s]", "extra hinge angle [rad]")) == 2
    # `harness report` re-renders the same page from fit.json and arrays.npz
    (out / "index.html").unlink()
    rep = run_cli("report", out, "--quiet")
    assert rep.returncode == 0, rep.stdout + rep.stderr
    assert (out / "index.html").read_text() == page


@pytest.mark.parametrize("args, needle", [
    (["--problem", "dimension", "--n", "50"], "--n"),
    (["--problem", "dimension", "--seed", "-1"], "--seed"),
    (["--problem", "dimension", "--method", "hermite_simpson"], "--method"),
    (["--problem", "dimension", "--p0", "3"], "--p0"),
])
def test_dimension_bad_input_exit_2_one_line(tmp_path, capsys, args, needle):
    """In-process (the subprocess path is exercised above): exit 2, one line, no folder."""
    from harness import cli

    out = tmp_path / "dim"
    rc = cli.main(["fit", *args, "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2, err
    lines = [l for l in err.splitlines() if l.strip()]
    assert len(lines) == 1 and needle in lines[0]
    assert not out.exists()
