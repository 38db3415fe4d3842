"""The lower-body controller a policy node runs, chosen by name and composed of its parts; the one module
outside control/learned/ that reaches the learned policies. ROS-free.

``controller`` chooses what stands and squats: "builtin" the model-based standing and squat controller (no
weights), "openwbt" a learned squat policy (``squat_config``, OpenWBT's g1_squat.yaml by default), "hold" the
default pose (mode STAND_HOLD; it does not balance, and does not walk). ``loco_config`` adds walking (mode
LOCOMOTION) with a learned locomotion policy of either layout, OpenWBT's or a legs-only one such as
unitree_rl_gym's (OpenWBT's g1_loco.yaml by default with "openwbt"; none by default with "builtin").
Configurations are preset names, or paths (:mod:`g1_teleop.control.learned.policy_presets`); policy files
come from the policy folder (:func:`g1_teleop.control.learned.policy_files.resolve_policy_dir`).
Gains: the built-in controller's and hold's are the robot's ``default`` profile, a learned policy's its
configuration's kps/kds; all must be within the robot's gain_limits (the bridges refuse gains beyond them).
"""

from __future__ import annotations

from pathlib import Path

from g1_teleop.control.default_pose_hold import DefaultPoseHold
from g1_teleop.control.gains import JointGains
from g1_teleop.control.learned.inference import PolicyInferenceError
from g1_teleop.control.learned.policy_config import LearnedPolicyConfig, LearnedPolicyConfigError, load_policy_config
from g1_teleop.control.learned.policy_files import PolicyFileError, resolve_policy_dir
from g1_teleop.control.learned.policy_parts import LearnedSquat, LearnedWalk
from g1_teleop.control.learned.policy_presets import resolve_policy_config
from g1_teleop.control.leg_ik import StanceModel
from g1_teleop.control.lower_body import LowerBodyController
from g1_teleop.control.squat_locomotion import SquatLocomotionController
from g1_teleop.control.standing_controller import StandingConfig, StandingController
from g1_teleop.core.dex3_description import Dex3
from g1_teleop.core.robot_description import Robot

CONTROLLERS = ("builtin", "hold", "openwbt")
OPENWBT_SQUAT_CONFIG = "g1_squat.yaml"  # in the policy folder, as `g1-teleop policies fetch` puts it
OPENWBT_LOCO_CONFIG = "g1_loco.yaml"


class ControllerSetupError(ValueError):
    """The controller cannot be built: a policy file is missing, corrupt or does not fit, or the parameters
    contradict each other (the message names the file or parameter and the fix)."""


def make_lower_body(robot: Robot, controller: str, *, control_dt: float = 0.02, policy_dir: str = "",
                    squat_config: str = "", loco_config: str = "", hands: Dex3 | None = None) -> LowerBodyController:
    """The controller for legs and waist: ``controller`` one of :data:`CONTROLLERS`; ``control_dt`` (s) the
    control period; ``policy_dir`` ("" → the default folder); ``squat_config`` and ``loco_config`` preset names
    or paths ("" → the controller's defaults, see the module doc); ``hands``: Dex3-1 hands on the wrists (the
    built-in controller's model carries them)."""
    if controller not in CONTROLLERS:
        raise ValueError(f"controller must be one of {', '.join(CONTROLLERS)}, got {controller!r}")
    if controller == "hold":
        if squat_config or loco_config:
            raise ControllerSetupError("controller hold keeps the default pose and takes no squat_config or "
                                       "loco_config: use controller:=builtin or openwbt")
        return DefaultPoseHold(robot)
    if controller == "builtin" and squat_config:
        raise ControllerSetupError("squat_config is a learned squat policy's: use controller:=openwbt with it "
                                   "(controller builtin stands and squats by itself)")
    folder = resolve_policy_dir(policy_dir or None)
    try:
        if controller == "builtin":
            squat = StandingController(robot, StanceModel.for_robot(robot, hands),
                                       StandingConfig(control_dt=control_dt))
        else:
            squat = LearnedSquat(robot, _learned_config(robot, squat_config or OPENWBT_SQUAT_CONFIG, folder))
        loco_config = loco_config or (OPENWBT_LOCO_CONFIG if controller == "openwbt" else "")
        walk = LearnedWalk(robot, _learned_config(robot, loco_config, folder)) if loco_config else None
    except (PolicyFileError, PolicyInferenceError, LearnedPolicyConfigError) as exc:
        hint = ("; without OpenWBT's squat policy, controller:=builtin stands and squats (walking from loco_config)"
                if controller == "openwbt" and not squat_config and OPENWBT_SQUAT_CONFIG in str(exc) else "")
        raise ControllerSetupError(f"{exc}{hint}") from None
    return SquatLocomotionController(squat, walk)


def _learned_config(robot: Robot, value: str, folder: Path) -> LearnedPolicyConfig:
    """The configuration ``value`` names, loaded, its gains within the robot's gain_limits."""
    config = load_policy_config(resolve_policy_config(value, folder), folder)
    over = JointGains(config.kps, config.kds).above(*robot.gain_limits)
    if over:
        raise LearnedPolicyConfigError(
            f"{config.source}: gains above the robot's gain_limits for {[robot.joint_names[i] for i in over]}: "
            f"lower them, or raise gain_limits in {robot.config_path}")
    return config
