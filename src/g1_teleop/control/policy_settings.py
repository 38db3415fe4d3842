"""The policy node's settings (its ROS parameters, each with its description and validation), ROS-free."""

from __future__ import annotations

from dataclasses import dataclass

from g1_teleop.control.controller_factory import CONTROLLERS
from g1_teleop.core.dex3_description import dex3_setting
from g1_teleop.core.settings import check_settings, setting


@dataclass(frozen=True)
class PolicyNodeConfig:
    """policy's ROS parameters (read once at start-up)."""

    model: str = setting("", "robot model file (MJCF .xml or URDF); empty: the one robot_config names")
    robot_config: str = setting("", "robot configuration (YAML); empty: config/g1_29dof.yaml")
    dex3: bool = dex3_setting()
    controller: str = setting("builtin", "standing and squatting: builtin (model-based, no weights), openwbt "
                              "(OpenWBT's squat policy) or hold (default pose by joint PD; needs the gantry)",
                              choices=CONTROLLERS)
    policy_dir: str = setting("", "folder of the policy files; empty: $G1_TELEOP_POLICY_DIR, then the user data "
                              "folder")
    squat_config: str = setting("", "openwbt: the squat policy's configuration, a preset name or a YAML path "
                                "(relative: in policy_dir); empty: g1_squat.yaml")
    loco_config: str = setting("", "walking (LOCOMOTION): the locomotion policy's configuration, a preset name "
                               "(g1-teleop policies list) or a YAML path (relative: in policy_dir); empty: "
                               "g1_loco.yaml with openwbt, no walking with builtin")
    control_dt: float = setting(0.02, "control period (s): the real-time timer and the builtin controller's rates",
                                positive=True)
    lockstep: bool = setting(True, "one command per joint_states stamp, once that stamp's IMU sample and arm "
                             "target are in; false: a command every control_dt from the newest inputs")
    command_lead_s: float = setting(0.0, "real time: each command is computed this long before its tick's time, "
                                    "from the inputs then, and written at its time, so that how long the computing "
                                    "takes moves no write (s; less than half of control_dt); 0: computed at its time, "
                                    "from the freshest inputs", minimum=0.0)
    arm_step_limit_rad: float = setting(0.01, "largest arm target step per control period (rad; a tick after "
                                              "skipped periods takes up to 3)", positive=True)
    arm_target_timeout_s: float = setting(0.5, "real time: an older teleop/arm_target is stale and the arms hold "
                                          "(s)", positive=True)
    sync_timeout_s: float = setting(1.0, "lockstep: wall time to wait for a state's arm target before using the "
                                    "latest one (s)", positive=True)
    state_timeout_s: float = setting(0.1, "real time: no command from joint_states older than this (s)", positive=True)
    joy_timeout_s: float = setting(0.5, "joy input older than this counts as sticks released (s)", positive=True)
    cmd_vel_timeout_s: float = setting(0.5, "cmd_vel older than this is ignored (s)", positive=True)
    joy_axes: tuple[int, ...] = setting((1, 4, 1, 0, 3), "Joy axes: height, pitch, vx, vy, wz", length=5,
                                        minimum=0)
    joy_buttons: tuple[int, ...] = setting((0, 1), "Joy buttons: request LOCOMOTION, request SQUAT", length=2,
                                           minimum=0)
    button_release_s: float = setting(0.05, "a button press counts only after a release this long (s)", minimum=0.0)
    mode_hold_off_s: float = setting(1.5, "mode requests within this time (control ticks × control_dt) of an "
                                     "accepted switch are refused (s)", minimum=0.0)
    locomotion_arms: str = setting("walking_pose", "arms from a LOCOMOTION request until SQUAT is requested: "
                                   "walking_pose (the default arm pose, IK targets ignored) or ik (teleoperated: "
                                   "a forward reach makes OpenWBT's policy fall, see README)",
                                   choices=("walking_pose", "ik"))

    def __post_init__(self) -> None:
        check_settings(self)
        if self.command_lead_s >= self.control_dt / 2:
            raise ValueError(f"command_lead_s {self.command_lead_s} s must be less than half of control_dt "
                             f"({self.control_dt} s): a command computed earlier answers too old a state")
