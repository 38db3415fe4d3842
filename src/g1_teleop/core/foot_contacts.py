"""The feet's ground contact: the contact spheres under each foot body, read from a MuJoCo model. ROS-free.

The G1 touches the floor only through four small spheres under each ankle_roll_link (the official model's
contact); the simulator places the robot on them and the standing controller takes its support polygon
from them.
"""

from __future__ import annotations

import mujoco
import numpy as np

FOOT_BODIES = ("left_ankle_roll_link", "right_ankle_roll_link")


def foot_contact_spheres(model: mujoco.MjModel) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per foot body: centres (n, 3) in the body frame (m) and radii (n,) of its colliding spheres.

    A foot body the model lacks, or one without colliding spheres, is left out.
    """
    spheres = {}
    for body in FOOT_BODIES:
        body_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, body)
        if body_id < 0:
            continue
        geoms = [g for g in np.flatnonzero(model.geom_bodyid == body_id)
                 if model.geom_type[g] == mujoco.mjtGeom.mjGEOM_SPHERE and model.geom_contype[g]]
        if geoms:
            spheres[body] = (model.geom_pos[geoms].copy(), model.geom_size[geoms, 0].copy())
    return spheres
