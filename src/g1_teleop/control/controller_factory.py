"""The lower-body controller a policy node runs, chosen by name; the one module outside control/learned/
that reaches the learned policies. ROS-free.

"builtin": the model-based standing and squat controller, no weights (mode SQUAT). "hold": legs and waist
at the default pose (mode STAND_HOLD; it does not balance). "openwbt": OpenWBT's squat and locomotion
policies (modes SQUAT, LOCOMOTION), their configurations and weights from the policy folder
(:func:`g1_teleop.control.learned.policy_files.resolve_policy_dir`).
"""

from __future__ import annotations

from g1_teleop.control.default_pose_hold import DefaultPoseHold
from g1_teleop.control.learned.policy_config import load_policy_config
from g1_teleop.control.learned.policy_files import PolicyFileError, resolve_policy_dir, verify
from g1_teleop.control.learned.squat_locomotion import SquatLocomotionController
from g1_teleop.control.leg_ik import StanceModel
from g1_teleop.control.lower_body import LowerBodyController
from g1_teleop.control.standing_controller import StandingConfig, StandingController
from g1_teleop.core.robot_description import Robot

CONTROLLERS = ("builtin", "hold", "openwbt")


class ControllerSetupError(ValueError):
    """The controller cannot be built: a policy file is missing or corrupt (the message names it and the fix)."""


def make_lower_body(robot: Robot, controller: str, *, control_dt: float = 0.02, policy_dir: str = "",
                    squat_config: str = "g1_squat.yaml", loco_config: str = "g1_loco.yaml") -> LowerBodyController:
    """The controller for legs and waist: ``controller`` one of :data:`CONTROLLERS`; ``control_dt`` (s) the
    control period; ``policy_dir`` ("" → the default folder) and the two configuration file names for
    "openwbt"."""
    if controller == "hold":
        return DefaultPoseHold(robot)
    if controller == "builtin":
        return StandingController(robot, StanceModel.for_robot(robot), StandingConfig(control_dt=control_dt))
    if controller != "openwbt":
        raise ValueError(f"controller must be one of {', '.join(CONTROLLERS)}, got {controller!r}")
    folder = resolve_policy_dir(policy_dir or None)
    try:
        for name in (squat_config, loco_config):
            verify(folder / name)
        return SquatLocomotionController(robot, load_policy_config(folder / squat_config, folder),
                                         load_policy_config(folder / loco_config, folder))
    except PolicyFileError as exc:
        raise ControllerSetupError(str(exc)) from None
