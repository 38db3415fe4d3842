"""hw_bridge's configuration: its parameters (its ROS side's and its LowCmd process's), each declared once with
its description, units and legal values, and everything its LowCmd process needs, checked at load. ROS-free."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from g1_teleop.core import dex3_description
from g1_teleop.core.dex3_description import Dex3, load_dex3
from g1_teleop.core.robot_description import Robot, load_robot
from g1_teleop.core.settings import check_settings, setting
from g1_teleop.hardware.bridge_safety import BridgeSafety, BridgeSafetyConfig, OperatorAction
from g1_teleop.hardware.lowcmd import NUM_BODY_JOINTS
from g1_teleop.hardware.robot_dds import MAX_DOMAIN_ID
from g1_teleop.hardware.wireless_remote import parse_combo

MAX_RATE_HZ = 2000.0
_COMBO = "wireless-remote combination that {} (button names joined by '+', e.g. L1+B; acts on the press)"
_JOY_BUTTON = "button index of a Joy device on joy that {}; -1: none"


@dataclass(frozen=True)
class HwBridgeConfig:
    """hw_bridge's parameters; its safety thresholds are
    :class:`~g1_teleop.hardware.bridge_safety.BridgeSafetyConfig`."""

    model: str = setting("", "robot model file (URDF or MJCF); empty: the project's urdf/g1_29dof.urdf")
    robot_config: str = setting("", "robot YAML; empty: config/g1_29dof.yaml")
    robot_domain_id: int = setting(0, "DDS domain of the robot's own topics (CycloneDDS): 0 on a G1, 1 for Unitree's "
                                      "simulator", minimum=0, maximum=MAX_DOMAIN_ID)
    network_interface: str = setting("eth0", "network interface wired to the robot (192.168.123.x); lo for the "
                                             "virtual robot")
    lowcmd_rate_hz: float = setting(500.0, "rt/lowcmd writes per second (Hz)", positive=True, maximum=MAX_RATE_HZ)
    lowcmd_priority: int = setting(0, "SCHED_FIFO priority of the LowCmd process, its robot DDS threads included "
                                      "(needs CAP_SYS_NICE or an rtprio limit); 0: normal scheduling", minimum=0,
                                   maximum=99)
    state_publish_rate_hz: float = setting(200.0, "joint_states and imu per second on average, at most one per "
                                                  "LowState (Hz)", positive=True, maximum=MAX_RATE_HZ)
    joy_publish_rate_hz: float = setting(50.0, "joy (the wireless remote) per second on average, at most one per "
                                               "LowState (Hz)", positive=True, maximum=MAX_RATE_HZ)
    gain_profile: str = setting("default", "gain profile (config/g1_29dof.yaml) of the policy's commands in ACTIVE "
                                                  "until the first valid teleop/gains")
    start_combo: str = setting("start", _COMBO.format("starts (ZERO_TORQUE or DAMP → RAMP)"))
    activate_combo: str = setting("A", _COMBO.format("activates (HOLD → ACTIVE)"))
    estop_combo: str = setting("select", _COMBO.format("e-stops (any state → DAMP)"))
    joy_start_button: int = setting(-1, _JOY_BUTTON.format("starts"), minimum=-1)
    joy_activate_button: int = setting(-1, _JOY_BUTTON.format("activates"), minimum=-1)
    joy_estop_button: int = setting(-1, _JOY_BUTTON.format("e-stops"), minimum=-1)
    lowstate_crc_check: bool = setting(True, "drop rt/lowstate samples whose CRC does not match (a G1 "
                                                  "fills it); false for Unitree's simulator unitree_mujoco (CRC 0)")
    dex3: bool = setting(False, "drive two Dex3 hands (rt/dex3/{left,right}/cmd|state)")
    dex3_config: str = setting("", "Dex3 hand YAML; empty: config/dex3.yaml")
    dex3_rate_hz: float = setting(dex3_description.RATE_HZ, "HandCmd per hand per second on average (Hz)",
                                  positive=True, maximum=MAX_RATE_HZ)

    def __post_init__(self) -> None:
        check_settings(self)
        if not self.network_interface:
            raise ValueError("network_interface is empty: name the interface wired to the robot (lo: virtual robot)")
        for name in ("start_combo", "activate_combo", "estop_combo"):
            try:
                parse_combo(getattr(self, name))
            except ValueError as exc:
                raise ValueError(f"{name}: {exc}") from None

    def combos(self) -> dict[OperatorAction, frozenset[str]]:
        """The wireless remote's combination of each operator action."""
        return {OperatorAction.START: parse_combo(self.start_combo),
                OperatorAction.ACTIVATE: parse_combo(self.activate_combo),
                OperatorAction.ESTOP: parse_combo(self.estop_combo)}

    def joy_buttons(self) -> dict[OperatorAction, int]:
        """The Joy device's button of each operator action that has one."""
        buttons = {OperatorAction.START: self.joy_start_button, OperatorAction.ACTIVATE: self.joy_activate_button,
                   OperatorAction.ESTOP: self.joy_estop_button}
        return {action: index for action, index in buttons.items() if index >= 0}


def load_bridge_robot(config: HwBridgeConfig) -> Robot:
    """The robot of ``model`` and ``robot_config``; ValueError unless it is the 29-joint G1."""
    robot = load_robot(Path(config.robot_config) if config.robot_config else None,
                       Path(config.model) if config.model else None)
    if len(robot.joint_names) != NUM_BODY_JOINTS:
        raise ValueError(f"hw_bridge drives the {NUM_BODY_JOINTS}-joint G1; the model has {len(robot.joint_names)} "
                         "joints")
    return robot


@dataclass(frozen=True)
class Setup:
    """Everything the LowCmd process needs (the first message it gets); ``dex3``: None without hands."""

    bridge: HwBridgeConfig
    safety: BridgeSafetyConfig
    dex3: Dex3 | None


def load_setup(bridge: HwBridgeConfig, safety: BridgeSafetyConfig) -> Setup:
    """Check what the parameters name (the robot, its gain profiles, the hands' file) before a process starts;
    ValueError says what is wrong."""
    robot = load_bridge_robot(bridge)
    try:
        BridgeSafety(robot, safety)
        robot.gains(bridge.gain_profile)
    except KeyError as exc:  # an unknown gain profile
        raise ValueError(exc.args[0]) from None
    dex3 = load_dex3(Path(bridge.dex3_config) if bridge.dex3_config else None) if bridge.dex3 else None
    return Setup(bridge, safety, dex3)
