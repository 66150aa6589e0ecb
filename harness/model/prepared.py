"""PreparedModel: one model as every engine receives it.

A FixtureSpec (built-in, or converted from a user's URDF/MJCF) is exported once to URDF
(for Pinocchio, Crocoddyl and Drake) and MJCF (for MuJoCo); the canonical layout and the
list of frames compared in stage 1 are fixed here, before any engine sees the model.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property
from typing import cast

import numpy as np
from numpy.typing import NDArray

from fixtures import catalog
from fixtures.export import to_mjcf, to_urdf
from harness.core.conventions import Layout, combine_inertias, rpy_to_matrix, spatial_inertia_world
from harness.core.spec import FixtureSpec, Joint

# (p_WB (3,) [m], R_WB (3x3)): a body's pose in world
Pose = tuple[NDArray[np.float64], NDArray[np.float64]]


@dataclass(frozen=True)
class PreparedModel:
    spec: FixtureSpec
    source: str  # "fixture:NAME" or the user's file path
    source_sha256: str = ""
    notes: tuple[str, ...] = ()  # what the import changed (dropped friction, repaired inertia, ...)

    @cached_property
    def layout(self) -> Layout:
        return Layout.from_spec(self.spec)

    @cached_property
    def urdf(self) -> str:
        return to_urdf(self.spec)

    @cached_property
    def mjcf(self) -> str:
        return to_mjcf(self.spec)

    @property
    def name(self) -> str:
        return self.spec.name

    @cached_property
    def frames(self) -> list[str]:
        """Names of every frame compared in stage 1 (each body, then named frames)."""
        return self.spec.all_frame_names()

    @cached_property
    def digest(self) -> str:
        h = hashlib.sha256()
        for part in (self.spec.digest(), self.urdf, self.mjcf):
            h.update(part.encode())
        return h.hexdigest()

    # ----- declared quantities (what the engines should read back) ----------------
    def body_poses_at_neutral(self) -> dict[str, Pose]:
        """{body: (p_WB (3,) [m], R_WB (3x3))} at the neutral configuration."""
        spec = self.spec
        out: dict[str, Pose] = {spec.root: (np.zeros(3), np.eye(3))}
        for b in spec.depth_first()[1:]:  # parents first, no recursion
            j = cast(Joint, spec.parent_joint(b))  # every body but the root has one
            p, R = out[j.parent]
            out[b] = (p + R @ np.array(j.xyz), R @ rpy_to_matrix(j.rpy))
        return out

    def declared_group_inertias(self) -> dict[str, NDArray[np.float64]]:
        """{joint name: [m, c_W (3), I_W (6)]} of the rigid group each moving joint (and the
        free root) carries: its child body plus every body welded to it, at neutral, in
        world axes, inertia about the group's com. The world-welded group is omitted."""
        spec, poses = self.spec, self.body_poses_at_neutral()
        out = {}

        def group(body: str) -> list[str]:  # the body and every body welded below it, depth first
            members: list[str] = []
            stack = [body]
            while stack:
                b = stack.pop()
                members.append(b)
                stack.extend(j.child for j in reversed(spec.children(b)) if j.type == "fixed")
            return members

        heads = [(s.name, spec.root if s.type == "free" else
                  next(j.child for j in spec.joints if j.name == s.name))
                 for s in self.layout.slots]
        for jname, head in heads:
            items: list[tuple[float, NDArray[np.float64], NDArray[np.float64]]] = []
            for b in group(head):
                body = spec.body(b)
                p, R = poses[b]
                items.append((body.mass, p + R @ np.array(body.com),
                              R @ body.inertia_matrix @ R.T))
            out[jname] = spatial_inertia_world(*combine_inertias(items))
        return out

    def declared_total_mass(self) -> float:
        """Mass [kg] of everything that moves (bodies welded to the world excluded)."""
        return float(sum(v[0] for v in self.declared_group_inertias().values()))


def prepare_fixture(name: str) -> PreparedModel:

    spec = catalog.get(name)
    return PreparedModel(spec, f"fixture:{name}", spec.digest())
