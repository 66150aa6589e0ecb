"""Stage 5 — open-loop replay of a candidate in every engine (engine-blind).

Dimension legend: N knots of the candidate's time grid; nq, nv canonical; k frames
(every body and named frame of the model); m markers; K levels of a convergence sweep.

A *case* is one candidate replayed one way:

* ``agreement`` — every engine integrates the candidate with the same harness integrator
  (harness/model/integrators.py); every pair of engines is compared pointwise over the whole
  grid (``trajectory`` rows). Engines with stepping of their own (``native_rollout`` in
  engines/<engine>.py) are replayed with it too and compared with their own harness
  reference, the refined harness run (``native`` rows); an engine without one gets a
  ``not_provided`` row. Energy balance rows: E(t) − E(t0) = ∫τᵀv − ∫vᵀDv.
* ``horizon`` — for sensitive (chaotic) motions: as ``agreement``, but a pair is scored only
  over the *predictability window*: the knots before a twin run of the same engine, whose
  v0 differs by the twin perturbation of the tolerance table (the size of difference the
  stage-2 parity claim cannot exclude), leaves the agreement band. The agreement horizon
  (first knot where the pair leaves the band) and the growth rate of log-error (a finite-
  time Lyapunov estimate) are measured over the whole run and reported; beyond the window
  no verdict is claimed.
* ``convergence`` — one integrator at K steps h, h/2, ... in every engine; the state error
  against an adaptive DOP853 reference at the tightest tolerance gives the observed order
  (``convergence_order`` rows, scored against the method's theoretical order). Energy and
  angular-momentum drift against h, and error against wall time, are reported.

Refinement gate: every run is repeated refined (rtol/atol tightened 100× and the step
bounded by half the shortest knot interval, or the
*effective* step — the step actually taken in each knot interval, which the knots bound
whatever dt says — at least halved in every interval; runs are labelled by their
effective step). A run whose trajectory moves by more than the ``replay/refinement``
tolerance, or whose refined run is bitwise the same, gets an ``unconverged`` refinement
row, and every row computed from it is ``unconverged`` too (neither passed nor failed;
``qualify`` fails on it): a native row is never scored against an unconverged reference.
For a convergence row the refined quantity is the order of the next finer pair of levels.

Frames, markers, energy and momentum of *every* engine's trajectory are evaluated with one
observation map: the first engine of the run that provides frame_pose and mass_matrix
(named in the manifest), so they measure trajectory divergence, not kinematics (stage 1
checks that). Every verdict is recomputed from the stored arrays by ``recompute_record``
(called by ``harness verify``).

Modules: cases.py (a case, its names, the manifest section), measures.py (errors and
the observation map), run.py (the runs and their records), recompute.py (verify's
recomputation, the refinement gate), synth.py (candidates from known laws, the
qualification cases), report.py (the report section).
"""
