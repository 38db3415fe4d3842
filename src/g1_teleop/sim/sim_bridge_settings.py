"""sim_bridge's settings (its ROS parameters, each with its description and validation), ROS-free."""

from __future__ import annotations

from dataclasses import dataclass

from g1_teleop.core.input_watchdog import WatchdogTimeouts
from g1_teleop.core.settings import check_settings, setting
from g1_teleop.sim.simulator import SimConfig, parse_pushes


@dataclass(frozen=True)
class SimBridgeConfig:
    """sim_bridge's ROS parameters (read once at start-up)."""

    model: str = setting("", "robot model, a URDF or MJCF path; empty: the project's model")
    robot_config: str = setting("", "robot description YAML; empty: config/g1_29dof.yaml")
    physics_dt: float = setting(0.005, "MuJoCo physics step (s); divides control_dt", positive=True)
    control_dt: float = setting(0.02, "command period (s): a whole number of physics steps", positive=True)
    lockstep: bool = setting(True, "advance one control period per joint_command stamped with the current one; "
                             "false: physics follows the wall clock")
    gantry: bool = setting(False, "a virtual gantry holds the torso (sim/gantry.py)")
    pushes: str = setting("", "external forces on the pelvis: 'START,FX,FY,FZ,DURATION; ...' (s, N in the world "
                          "frame, s)")
    viewer: bool = setting(False, "open MuJoCo's passive viewer (needs a display)")
    gain_profile: str = setting("default", "PD gain profile of the robot description for joint_command until the "
                                "first teleop/gains message")
    damping_profile: str = setting("damping", "gain profile of the damping fall-back (its kd)")
    command_hold_after_s: float = setting(0.1, "real time: hold the last target after this long without a "
                                          "joint_command (s)", positive=True)
    command_damp_after_s: float = setting(1.0, "real time: then damping only after this long (s); >= "
                                          "command_hold_after_s", positive=True)
    republish_period_s: float = setting(0.2, "lockstep: re-publish the state this often (wall s) while waiting "
                                        "for the command", positive=True)
    realtime_factor: float = setting(1.0, "real time: simulated seconds per wall second", positive=True)
    # Further behind (a starved process), the simulation slips instead of racing to catch up, so that the
    # controllers never see simulated time run in bursts.
    max_lag_s: float = setting(0.02, "real time: the most the simulation may trail the wall clock (s); further "
                               "behind it slips", positive=True)
    wait_for_start: bool = setting(False, "hold at t = 0, publishing nothing, until a message on sim/start "
                                   "(tools attach first)")
    dex3: bool = setting(False, "Dex3-1 hands on the wrists (config/dex3.yaml; the project's body or a URDF one): "
                         "teleop/hand_target → their PD, hand_states")
    stop_at_s: float = setting(0.0, "lockstep: stop advancing at this simulated time (s), so that a run of a given "
                                    "duration ends on the same sample on any machine; 0: never", minimum=0.0)

    def __post_init__(self) -> None:
        check_settings(self)
        SimConfig(self.physics_dt, self.control_dt, pushes=parse_pushes(self.pushes))
        WatchdogTimeouts(self.command_hold_after_s, self.command_damp_after_s)
