"""Bags of a made-up graph with chosen stamps and publish times, so that latency and loop figures have known
answers (tests of tools/latency.py, tools/bag_analysis.py and tools/run_report.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from rosbags.typesys.stores.ros2_kilted import builtin_interfaces__msg__Time as Time
from rosbags.typesys.stores.ros2_kilted import diagnostic_msgs__msg__DiagnosticArray as DiagnosticArray
from rosbags.typesys.stores.ros2_kilted import diagnostic_msgs__msg__DiagnosticStatus as DiagnosticStatus
from rosbags.typesys.stores.ros2_kilted import diagnostic_msgs__msg__KeyValue as KeyValue
from rosbags.typesys.stores.ros2_kilted import geometry_msgs__msg__Point as Point
from rosbags.typesys.stores.ros2_kilted import geometry_msgs__msg__Pose as Pose
from rosbags.typesys.stores.ros2_kilted import geometry_msgs__msg__PoseStamped as PoseStamped
from rosbags.typesys.stores.ros2_kilted import geometry_msgs__msg__Quaternion as Quaternion
from rosbags.typesys.stores.ros2_kilted import rosgraph_msgs__msg__Clock as Clock
from rosbags.typesys.stores.ros2_kilted import sensor_msgs__msg__JointState as JointState
from rosbags.typesys.stores.ros2_kilted import sensor_msgs__msg__TimeReference as TimeReference
from rosbags.typesys.stores.ros2_kilted import std_msgs__msg__Header as Header
from rosbags.typesys.stores.ros2_kilted import std_msgs__msg__String as String

from g1_teleop.core.robot_description import ARM_INDICES, load_robot
from g1_teleop.core.rosbag import TYPESTORE, BagWriter

MS = 1_000_000  # ns
T0 = 1_700_000_000 * 1_000_000_000  # a system-clock origin (ns since 1970)


def stamp(ns: int) -> Time:
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


class SyntheticBag:
    """Writes the graph's messages with explicit stamps, log and publish times (ns)."""

    def __init__(self, path: Path) -> None:
        self.writer = BagWriter(path)
        self.robot = load_robot()
        self.names = list(self.robot.joint_names)

    def _write(self, topic: str, msg, log_ns: int, publish_ns: int) -> None:
        self.writer.write(topic, msg.__msgtype__, log_ns, TYPESTORE.serialize_cdr(msg, msg.__msgtype__), publish_ns)

    def wrists(self, s: int, left_pub: int, right_pub: int, log_ns: int | None = None,
               left=(0.3, 0.2, 0.1), right=(0.3, -0.2, 0.1)) -> None:
        for topic, pub, p in (("/xr/left_wrist", left_pub, left), ("/xr/right_wrist", right_pub, right)):
            msg = PoseStamped(header=Header(stamp=stamp(s), frame_id="pelvis"),
                              pose=Pose(position=Point(x=p[0], y=p[1], z=p[2]),
                                        orientation=Quaternion(x=0.0, y=0.0, z=0.0, w=1.0)))
            self._write(topic, msg, pub if log_ns is None else log_ns, pub)

    def arm_target(self, s: int, pub: int, log_ns: int | None = None, q: np.ndarray | None = None) -> None:
        names = [self.names[i] for i in ARM_INDICES]
        q = self.robot.default_q[list(ARM_INDICES)] if q is None else q
        msg = JointState(header=Header(stamp=stamp(s), frame_id=""), name=names, position=np.asarray(q, float),
                         velocity=np.zeros(0), effort=np.zeros(14))
        self._write("/teleop/arm_target", msg, pub if log_ns is None else log_ns, pub)

    def joints(self, topic: str, c: int, pub: int, log_ns: int | None = None, q: np.ndarray | None = None) -> None:
        q = self.robot.default_q if q is None else q
        msg = JointState(header=Header(stamp=stamp(c), frame_id=""), name=self.names, position=np.asarray(q, float),
                         velocity=np.zeros(29), effort=np.zeros(29))
        self._write(topic, msg, pub if log_ns is None else log_ns, pub)

    def trace(self, c: int, s: int, pub: int, log_ns: int | None = None) -> None:
        msg = TimeReference(header=Header(stamp=stamp(c), frame_id="joint_command"), time_ref=stamp(s),
                            source="policy")
        self._write("/teleop/trace", msg, pub if log_ns is None else log_ns, pub)

    def clock(self, t: int, pub: int) -> None:
        self._write("/clock", Clock(clock=stamp(t)), t, pub)

    def mode(self, mode: str, log_ns: int) -> None:
        self._write("/teleop/mode", String(data=mode), log_ns, log_ns)

    def diagnostics(self, node: str, level: int, message: str, log_ns: int) -> None:
        status = DiagnosticStatus(level=level, name=node, message=message, hardware_id="g1",
                                  values=[KeyValue(key="state", value=message.split(":")[0])])
        self._write("/diagnostics", DiagnosticArray(header=Header(stamp=stamp(log_ns), frame_id=""), status=[status]),
                    log_ns, log_ns)

    def close(self) -> None:
        self.writer.close()


def real_graph_bag(path: Path, ticks: int = 50, delays_ms=(0.0, 0.3, 0.8, 0.1)) -> dict[str, float]:
    """A graph on the system clock: operator samples every 10 ms (xr left +1.0 ms, right +1.2 ms, arm target
    +3.0 ms), the policy's 50 Hz timer due at T0 + 0.5 ms + j·20 ms, its command stamped ``delays_ms[j % n]``
    after the due time and published 0.2 ms after its stamp, using the newest arm target published before the
    due time. Returns the expected figures (ms)."""
    bag = SyntheticBag(path)
    bag.mode("SQUAT", T0)
    bag.diagnostics("/hw_bridge", 0, "WAIT_FOR_STATE: waiting for rt/lowstate", T0)
    for k in range(2 * ticks + 2):
        s = T0 + k * 10 * MS
        bag.wrists(s, s + MS, s + 1_200_000)
        bag.arm_target(s, s + 3 * MS)
        bag.joints("/joint_states", s, s + 100_000)
    for j in range(1, ticks):
        due = T0 + 500_000 + j * 20 * MS
        c = due + int(delays_ms[j % len(delays_ms)] * MS)
        s = T0 + (2 * j - 1) * 10 * MS  # the newest arm target published (s + 3 ms) before due
        bag.joints("/joint_command", c, c + 200_000)
        bag.trace(c, s, c + 210_000)
        if j == ticks // 2:
            bag.diagnostics("/hw_bridge", 1, "DAMP: e-stop (service)", c)
    bag.close()
    return {"operator_to_xr": 1.2, "xr_to_arm_target": 1.8, "arm_target_to_tick": 7.5}


def lockstep_bag(path: Path, ticks: int = 40) -> dict[str, float]:
    """A lockstep simulation: control period k stamped k·20 ms, its /clock published at wall W0 + k·50 ms,
    the state at +0.5 ms, the wrists at +2.0/+2.5 ms, the arm target at +6 ms, the command (same stamp) at
    +9 ms; log times are simulated. Returns the expected figures (ms)."""
    bag = SyntheticBag(path)
    w0 = T0
    for k in range(ticks):
        t, w = k * 20 * MS, w0 + k * 50 * MS
        bag.clock(t, w)
        bag.joints("/joint_states", t, w + 500_000, log_ns=t)
        bag.wrists(t, w + 2 * MS, w + 2_500_000, log_ns=t)
        bag.arm_target(t, w + 6 * MS, log_ns=t)
        bag.joints("/joint_command", t, w + 9 * MS, log_ns=t)
        bag.joints("/joint_command", t, w + 30 * MS, log_ns=t)  # a lockstep re-publication: ignored
        bag.trace(t, t, w + 9_100_000, log_ns=t)
    bag.close()
    return {"operator_to_xr": 2.5, "xr_to_arm_target": 3.5, "arm_target_to_tick": 0.0, "tick_to_command": 3.0,
            "operator_to_command": 9.0, "operator_to_command_without_wait": 9.0}
