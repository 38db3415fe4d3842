"""Clearance between the robot's parts that may touch each other (the arms and the trunk, the legs and
the other arm), from the collision geometry of the MuJoCo model. ROS-free.

The pairs of link groups come from the robot configuration (``self_collision`` in config/g1_29dof.yaml);
the geometry is the model's collision geoms. Distances are signed (negative: penetration), in metres.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from g1_teleop.robot import MjJointMap, Robot


@dataclass(frozen=True)
class Clearance:
    distance_m: float  # smallest signed distance over the monitored pairs (capped at the search range)
    links: tuple[str, str]  # the two links where it occurs


class ClearanceMonitor:
    """Smallest distance between monitored link groups at a joint configuration (DDS order, rad)."""

    def __init__(self, robot: Robot, model: mujoco.MjModel, groups: tuple[str, ...] = ("left_arm", "right_arm"),
                 search_range_m: float = 0.2) -> None:
        """Monitor the configured pairs that involve one of ``groups`` (default: every pair with an arm)."""
        self.model = model
        self.data = mujoco.MjData(model)
        self.joints = MjJointMap.from_model(model, robot.joint_names)
        self.search_range_m = search_range_m
        sc = robot.self_collision
        unknown = [g for g in groups if g not in sc.groups]
        if unknown:
            raise ValueError(f"unknown self-collision groups {unknown}; configured: {sorted(sc.groups)}")

        def geoms(group: str) -> list[int]:
            bodies = {model.body(name).id for name in sc.groups[group]}
            return [g for g in range(model.ngeom) if model.geom_bodyid[g] in bodies and model.geom_contype[g]]

        self.pairs = [(g1, g2) for a, b in sc.pairs if a in groups or b in groups
                      for g1 in geoms(a) for g2 in geoms(b)]
        if not self.pairs:
            raise ValueError(f"no configured self-collision pair involves {groups}")

    def clearance(self, q: np.ndarray) -> Clearance:
        self.data.qpos[self.joints.qpos_adr] = q
        mujoco.mj_kinematics(self.model, self.data)
        best, where = self.search_range_m, self.pairs[0]
        for g1, g2 in self.pairs:
            distance = mujoco.mj_geomDistance(self.model, self.data, g1, g2, self.search_range_m, None)
            if distance < best:
                best, where = distance, (g1, g2)
        names = tuple(self.model.body(self.model.geom_bodyid[g]).name for g in where)
        return Clearance(float(best), names)  # type: ignore[arg-type]
