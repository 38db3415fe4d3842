"""hand_retarget: the operator's hands (xr/left_hand, xr/right_hand) → the Dex3 hands' joint targets.

Subscribes xr/left_hand and xr/right_hand (geometry_msgs/PoseArray: 25 landmarks in the hand frame, WebXR Hand
Input order, from xr_input with source webxr) and publishes teleop/hand_target (sensor_msgs/JointState: the 7
joints of each hand tracked, names and order of config/dex3.yaml, position = target in rad, stamped with the
newest landmarks' stamp) every ``1 / rate_hz`` s of the wall clock. At each tick a hand's newest landmarks,
if new, are retargeted (g1_teleop.retarget.hand_retarget: bounded least squares, low-pass filtered, clipped to
the hand's limits; sets that came between two ticks are skipped); a hand whose landmarks are older than
``stale_s`` is left out, so hw_bridge holds it (after its own 0.5 s); landmarks that cannot be used (NaN, an
untracked hand's zeros, not 25) are refused with one warning per kind, and that hand is left out too.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseArray
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from sensor_msgs.msg import JointState

from g1_teleop.core.dex3_description import SIDES, load_dex3
from g1_teleop.core.settings import setting
from g1_teleop.retarget.hand_retarget import HandLandmarksError, HandRetargetConfig, HandRetargeter
from g1_teleop.ros.diagnostics import Diagnostics, WarnOnce
from g1_teleop.ros.node_main import run
from g1_teleop.ros.parameters import declare_config
from g1_teleop.ros.qos import QOS_COMMAND, QOS_SENSOR


@dataclass(frozen=True)
class HandRetargetNodeConfig(HandRetargetConfig):
    """hand_retarget's ROS parameters (read once at start-up): the retargeter's and the node's own."""

    rate_hz: float = setting(50.0, "teleop/hand_target publications per second (Hz): the control rate",
                             positive=True)
    stale_s: float = setting(0.2, "a hand whose newest landmarks are older than this is not published: the robot's "
                             "hand holds (s)", positive=True)
    dex3_config: str = setting("", "the Dex3 description (YAML: joint order and limits); empty: config/dex3.yaml")


@dataclass
class _Landmarks:
    points: np.ndarray
    stamp: Time
    received_s: float  # time.monotonic()


class HandRetarget(Node):
    def __init__(self) -> None:
        super().__init__("hand_retarget")
        cfg = self.cfg = declare_config(self, HandRetargetNodeConfig)
        dex3 = load_dex3(cfg.dex3_config or None)
        self.names = {side: list(dex3.joint_names(side)) for side in SIDES}
        self.retargeters = {side: HandRetargeter(side, dex3, cfg) for side in SIDES}
        self.latest: dict[str, _Landmarks] = {}
        self.solved: dict[str, _Landmarks] = {}  # the landmarks behind each hand's last solution
        self.targets: dict[str, np.ndarray] = {}
        self.warn = WarnOnce(self)
        self.counts = {"solved": 0, "refused": 0, "published": 0, "solve_ms_max": 0.0}
        self.pub = self.create_publisher(JointState, "teleop/hand_target", QOS_COMMAND)
        for side in SIDES:
            self.create_subscription(PoseArray, f"xr/{side}_hand", lambda m, s=side: self.on_hand(s, m), QOS_SENSOR)
        self.create_timer(1.0 / cfg.rate_hz, self.on_timer, clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.diagnostics = Diagnostics(self, lambda: dict(self.counts, **self.warn.counts))
        self.get_logger().info(f"xr/*_hand → teleop/hand_target at {cfg.rate_hz:g} Hz "
                               f"({', '.join(dex3.motor_order)}); a hand stale after {cfg.stale_s:g} s holds")

    def on_hand(self, side: str, msg: PoseArray) -> None:
        points = np.array([(p.position.x, p.position.y, p.position.z) for p in msg.poses], dtype=float)
        self.latest[side] = _Landmarks(points.reshape(-1, 3), msg.header.stamp, time.monotonic())

    def on_timer(self) -> None:
        now_s = time.monotonic()
        fresh = [side for side, hand in self.latest.items() if now_s - hand.received_s <= self.cfg.stale_s]
        for side in fresh:
            landmarks = self.latest[side]
            if self.solved.get(side) is not landmarks:
                self.solved[side] = landmarks
                self.retarget(side, landmarks.points)
        published = [side for side in fresh if side in self.targets]
        if not published:
            return
        msg = JointState(name=[n for side in published for n in self.names[side]],
                         position=[float(v) for side in published for v in self.targets[side]])
        msg.header.stamp = max((self.latest[side].stamp for side in published),
                               key=lambda t: (t.sec, t.nanosec))
        self.pub.publish(msg)
        self.counts["published"] += 1

    def retarget(self, side: str, points: np.ndarray) -> None:
        start = time.perf_counter()
        try:
            self.targets[side] = self.retargeters[side].update(points)
        except HandLandmarksError as exc:
            self.counts["refused"] += 1
            self.targets.pop(side, None)  # not published: the robot's hand holds
            self.warn(f"{side}_landmarks", f"xr/{side}_hand: {exc}")
            return
        self.counts["solved"] += 1
        self.counts["solve_ms_max"] = max(self.counts["solve_ms_max"], round((time.perf_counter() - start) * 1e3, 3))


def main(args: list[str] | None = None) -> None:
    run(HandRetarget, args)


if __name__ == "__main__":
    main()
