"""xr_input: operator input → head and wrist poses in the robot's frames.

source "scenario": a YAML file of timed operator actions (g1_teleop.operator.scenario) is turned into the poses an
OpenXR headset would report and sent through the same XR→robot conversion a headset's data gets
(g1_teleop.operator.xr_frames). source "bag": the operator samples of a recorded run (a rosbag2 bag with xr/* and
joy, ``bag`` parameter) are published again exactly as recorded (g1_teleop.operator.input_sources). Publishes
xr/head (headset world, robot basis), xr/left_wrist, xr/right_wrist (pelvis frame: the IK targets of
left_ee / right_ee) and joy, stamped with the sample time. Lockstep: one sample per simulation clock tick;
otherwise samples at the source's device rate.

Playback starts with the first sample when ``autoplay`` is true. Otherwise the first sample is published
(the operator holding still) until a call of the service xr_input/play (std_srvs/Trigger), which plays the
source from its start; each call restarts it. On a robot: activate the bridge, then play.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseStamped
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Joy
from std_srvs.srv import Trigger

from g1_teleop.core.paths import scenario_path
from g1_teleop.core.settings import check_settings, setting
from g1_teleop.operator.input_sources import WRIST_REFERENCES, OperatorRecording, ScenarioPlayer
from g1_teleop.operator.scenario import Scenario
from g1_teleop.ros.diagnostics import Diagnostics
from g1_teleop.ros.messages import stamp_ns, to_stamp
from g1_teleop.ros.node_main import run
from g1_teleop.ros.parameters import declare_config
from g1_teleop.ros.qos import QOS_SENSOR, QOS_STATE

SOURCES = ("scenario", "bag")


@dataclass(frozen=True)
class XrInputConfig:
    """xr_input's ROS parameters (read once at start-up)."""

    source: str = setting("scenario", "where operator samples come from: a scenario played through a simulated "
                          "headset, or the operator topics of a recorded bag", choices=SOURCES)
    scenario: str = setting("default", "source scenario: a name in config/scenarios/ or a YAML path")
    bag: str = setting("", "source bag: a rosbag2 folder with the operator topics (g1-teleop record, a sim run's "
                       "bag/)")
    rate_hz: float = setting(0.0, "samples per second when not in lockstep (Hz); 0: the source's device rate",
                             minimum=0.0)
    lockstep: bool = setting(True, "one sample per /clock tick; false: samples on a timer at rate_hz")
    autoplay: bool = setting(True, "play from the start; false: hold the first sample until xr_input/play")
    wrist_reference: str = setting(
        "head", "head: wrists relative to the head position (OpenWBT/televuer); body: relative to a body-fixed "
        "frame (the neck pivot, heading calibrated on the first sample), so turning the head does not move the "
        "arms", choices=WRIST_REFERENCES)

    def __post_init__(self) -> None:
        check_settings(self)
        if self.source == "bag" and not self.bag:
            raise ValueError("source bag needs the bag parameter: the folder of a recorded bag")


def pose_msg(pose: np.ndarray, stamp: Time, frame_id: str) -> PoseStamped:
    """(7,) position (m) and orientation (w, x, y, z) → PoseStamped, copied value for value.

    Not ``ros.messages.pose_stamped_msg``: that one takes a 4×4 transform, and the way back from a rotation
    matrix to a quaternion does not give a recorded quaternion's bits back, so a bag replay (source bag) would
    no longer repeat the recorded run exactly."""
    msg = PoseStamped()
    msg.header.stamp, msg.header.frame_id = stamp, frame_id
    p, o = msg.pose.position, msg.pose.orientation
    p.x, p.y, p.z, o.w, o.x, o.y, o.z = (float(v) for v in pose)
    return msg


class XrInput(Node):
    """Publishes a player's operator samples (input_sources) on xr/* and joy (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__("xr_input")
        cfg = self.cfg = declare_config(self, XrInputConfig)
        self.player = (ScenarioPlayer(Scenario.load(scenario_path(cfg.scenario)), cfg.wrist_reference)
                       if cfg.source == "scenario" else OperatorRecording.load(cfg.bag))
        self.pub_head = self.create_publisher(PoseStamped, "xr/head", QOS_SENSOR)
        self.pub_left = self.create_publisher(PoseStamped, "xr/left_wrist", QOS_SENSOR)
        self.pub_right = self.create_publisher(PoseStamped, "xr/right_wrist", QOS_SENSOR)
        self.pub_joy = self.create_publisher(Joy, "joy", QOS_SENSOR)
        self.samples = 0
        self.start_ns: int | None = None
        self.last_stamp_ns = -1
        self.playing = cfg.autoplay
        self.diagnostics = Diagnostics(self, lambda: {"source": cfg.source, "samples": self.samples,
                                                      "playing": self.playing})
        self.create_service(Trigger, "xr_input/play", self.on_play)
        if cfg.lockstep:
            self.create_subscription(Clock, "/clock", self.on_clock, QOS_STATE)
        else:
            self.create_timer(1.0 / (cfg.rate_hz or self.player.sample_rate_hz), self.on_timer)
        self.get_logger().info(f"{cfg.source} {self.player.source}: {self.player.description} "
                               f"({self.player.duration:g} s)")

    def on_play(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        self.playing, self.start_ns = True, None
        response.success = True
        response.message = f"playing {self.player.source} from its start ({self.player.duration:g} s)"
        self.get_logger().info(response.message)
        return response

    def on_clock(self, msg: Clock) -> None:
        self.publish_sample(stamp_ns(msg.clock))

    def on_timer(self) -> None:
        self.publish_sample(self.get_clock().now().nanoseconds)

    def publish_sample(self, now_ns: int) -> None:
        """Publish the operator sample for ``now_ns``; the same stamp again is published again (lockstep
        re-publication), in the same form."""
        if self.start_ns is None and self.playing:
            self.start_ns = now_ns
        frame = self.player.frame(0.0 if self.start_ns is None else (now_ns - self.start_ns) / 1e9)
        stamp = to_stamp(now_ns)
        # joy first: in lockstep the policy ticks once the wrists' arm target is in
        if frame.joy_axes or frame.joy_buttons:
            joy = Joy(axes=list(frame.joy_axes), buttons=list(frame.joy_buttons))
            joy.header.stamp = stamp
            self.pub_joy.publish(joy)
        self.pub_head.publish(pose_msg(frame.head, stamp, "xr_world"))
        self.pub_left.publish(pose_msg(frame.left_wrist, stamp, "pelvis"))
        self.pub_right.publish(pose_msg(frame.right_wrist, stamp, "pelvis"))
        if now_ns != self.last_stamp_ns:
            self.samples += 1
            self.last_stamp_ns = now_ns


def main(args: list[str] | None = None) -> None:
    run(XrInput, args)


if __name__ == "__main__":
    main()
