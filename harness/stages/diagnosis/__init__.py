"""Diagnose engine disagreements: load a user's model as each engine would by default
(*as-is*), read back what every engine compiled, name the known causes of their
differences, and measure each cause's share by removing it alone (ablation).

Engine-blind: engines are reached only through their adapters (``readback``,
``ablated``, ``naive_dynamics``, ``as_is_joints`` in engines/*.py).

As-is loading (``load_as_is``, harness/model/as_is.py). The user's URDF or MJCF goes to
every engine's own parser with that engine's defaults (MuJoCo: fusestatic,
inertiafromgeom auto, limits, mimic equalities and frictionloss as soft constraints;
Pinocchio: pin.aba ignores damping and friction, mimic tags ignored; Drake: damping
applied, MJCF armature not parsed). What the harness still does, and says so: (1) a
URDF's ``<visual>`` elements and its mesh ``<collision>`` elements are removed
(``package://`` meshes cannot be resolved; primitive collision geometry is kept because
MuJoCo derives inertia from it); (2) the base is the declared one (``--floating``: a
free root named ``root_joint``; otherwise the root is welded — Drake alone would make an
unattached root floating); (3) MuJoCo contacts are disabled (stages 0-2 are contact-
free); (4) Drake's coupler constraints (from mimic tags) are removed, because a
continuous-time plant refuses every constraint; (5) every MuJoCo body gets a massless site
of its name, which keeps the frame of a body its importer fuses; (6) Drake's parser
warnings are collected into its read-back instead of printed. The declared model (the
reference) is the file as the harness parses it (harness/model/urdf_import.py, with mimic
joints kept as moving joints and the mimic relation recorded; friction recorded; with
``repair_inertia`` the nearest physical inertias, the file's own recorded). Quantities
are still exchanged in canonical coordinates (harness/core/conventions.py).

Read-back (``adapter.readback()``; format below) feeds stage 0 element by element
(harness/stages/identity.py) and the cause catalogue here.

    {"engine": str, "api": str, "notes": [str], "nq_native": int, "nv_native": int,
     "bodies": {name: {"mass" kg, "com_W" (3) m, "I_W" (3x3) kg·m² about the com,
                       "X_WB" (4x4)}},                     # bodies the engine keeps
     "joints": {canonical joint: {"type", "axis_W" (3), "X_WJ" (4x4), "lower", "upper"
                (None if unbounded), "limit_enforced", "damping", "damping_applied",
                "friction", "friction_applied", "armature", "native_q", "native_v",
                "native_index"}},
     "couplings": {follower joint: leader joint},           # enforced in the dynamics
     "warnings": [str]}        # optional: what the engine's parser warned about (one line each)

all at the canonical neutral q, world axes; "held" values (damping, friction) are what the
engine stores, "applied" what its dynamics use.

Cause catalogue (``CATALOGUE``): each cause has the read-back evidence that detects it
and the ablation that removes it; its share of a difference between two engines is
``1 − |diff without the cause| / |diff as-is|`` with |·| the record's max_abs (the largest
element difference over the sampled states), computed from stored records only.
``harness verify`` recomputes every record behind a share.

Modules: causes.py (the catalogue and the findings), ablation.py (the measured
dynamics as-is and without each cause: the records), summary.py (shares, first differing
elements, the printed lines and the report section).
"""
