"""Pieces every stage shares: the seeded inputs and the quantity declaration.

Dimensions: N sampled states; nq, nv canonical (harness/core/conventions.py).
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
from numpy.typing import NDArray

from harness.model.prepared import PreparedModel


@dataclass(frozen=True)
class Inputs:
    """Seeded samples shared by every engine. N states; nq, nv canonical."""

    q: np.ndarray      # (N, nq)
    v: np.ndarray      # (N, nv) [rad/s | m/s]
    tau: np.ndarray    # (N, nv) [N·m | N]
    vdot: np.ndarray   # (N, nv) [rad/s² | m/s²]
    frames: tuple      # frame names compared in stage 1

    @classmethod
    def sample(cls, model: PreparedModel, n: int, rng: np.random.Generator) -> Inputs:
        """n seeded states of ``model``: q (n, nq) valid (``Layout.random_q``: inside limits,
        unit quaternions); v, tau, vdot (n, nv) standard normal, in SI units."""
        lay = model.layout
        q = np.stack([lay.random_q(rng) for _ in range(n)])
        v = rng.normal(size=(n, lay.nv))
        tau = rng.normal(size=(n, lay.nv))
        vdot = rng.normal(size=(n, lay.nv))
        return cls(q, v, tau, vdot, tuple(model.frames))

    def arrays(self) -> dict[str, NDArray[np.float64]]:
        """{q (N, nq), v, tau, vdot (N, nv)}: the samples as stored in a bundle."""
        return {"q": self.q, "v": self.v, "tau": self.tau, "vdot": self.vdot}


@dataclass(frozen=True)
class Quantity:
    name: str
    compute: Callable          # (adapter, inputs) -> (S, ...) array
    labels: Callable           # (model, inputs) -> list of S strings
    declared: Callable | None = None  # (model) -> (S, ...) array, or None
    needs: str = ""            # adapter capability (harness.model.protocol.QUANTITIES)
    # derivatives stage: a per-engine reference computed from the engine's own
    # lower-level API, compared as "<reference_name>~<engine>"; ``variant(a, b)`` (b None:
    # the reference row) returns the tolerance-key suffix of a comparison
    reference: Callable | None = None   # (adapter, inputs) -> (S, ...) array
    reference_name: str = ""
    variant: Callable | None = None


def state_labels(model: PreparedModel, inputs: Inputs) -> list[str]:
    return [f"state {i}" for i in range(inputs.q.shape[0])]


def state_frame_labels(model: PreparedModel, inputs: Inputs) -> list[str]:
    return [f"state {i} / {f}" for i in range(inputs.q.shape[0]) for f in inputs.frames]


def _always(record) -> bool:
    return True


@dataclass(frozen=True)
class Stage:
    """One stage of the comparison, as the runner, the evidence layer and the report see it.

    The runner evaluates ``quantities`` on the shared samples (or calls ``run`` for a stage
    whose states are its own); ``applies(model)`` limits a stage to the models it is for.
    The evidence layer gets ``recompute`` (how ``verify`` recomputes a row whose verdict is
    not a plain comparison of two arrays), ``manifest_key``/``manifest_problem`` (the
    stage's manifest section and its strict check) and ``thresholds`` (table entries the
    section uses). The report gets ``report_section`` (manifest, records, arrays, timings)
    → template context, rendered with ``template``. ``in_headline(record)`` says whether a
    row counts in the headline "worst relative error" (rows against a closed form or zero,
    and rows with their own summary line, do not). The remaining fields say how the report
    and the command line show the stage, so that neither names a stage: a stage with a
    section ships its template in its own folder (``template_dir``)."""

    name: str
    number: int | None
    quantities: tuple = ()
    opt_in: bool = False
    applies: Callable | None = None
    run: Callable | None = None
    recompute: Callable | None = None
    # (record, arrays) -> whether ``recompute`` computes that row as ``compare`` of its two
    # arrays alone (verify then measures it with the other plain rows, stacked)
    compared_plainly: Callable | None = None
    manifest_key: str = ""
    manifest_problem: Callable | None = None
    thresholds: tuple = ()
    report_section: Callable | None = None
    template: str = ""
    in_headline: Callable = _always
    # how the report shows the stage (harness/report/render.py names no stage):
    title: str = ""                 # the heading of its own section ("" : its name)
    template_dir: Path | None = None  # folder of its own templates (section, note, banner)
    before_ladder: bool = False     # its section sits above the stage ladder
    summary_template: str = ""      # a banner that stands for the verdict's (own rule)
    records_note: str = ""          # template shown above its record tables
    plot_rows: bool = True          # draw its rows' relative errors against their rtol
    row_tag: Callable | None = None  # (record) -> {"kind", "label"} or None: a row's run
    judged: bool = True             # False: rows explain, they do not enter the verdict
    reason_stated: bool = False     # its rows' reasons state a law, not a computed value
    summary_line: Callable | None = None  # (scored records) -> a line the CLI prints, or ""
    large_arrays: bool = False      # its arrays grow as nv³ per sample (the run-size check)

    @property
    def sampled(self) -> bool:
        """True for the stages the runner evaluates (its own states or the shared ones)."""
        return bool(self.quantities) or self.run is not None


def fixture_rng(seed: int, name: str) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([int(seed), zlib.crc32(name.encode())]))
