"""The operator's hands reach the Dex3 hands: real processes over DDS.

hand_retarget (as real.yaml starts it with dex3:=true) and hw_bridge (dex3) against the virtual robot emulating
two Dex3 hands (test_hw_bridge's rig: this process plays the policy); this process also plays xr_input, sending
xr/left_hand and xr/right_hand PoseArrays of a model operator hand at 60 Hz: open, a pinch, open again. What is
checked is what reaches the robot: the HandCmds on rt/dex3/*/cmd (a probe on the robot's DDS) and the emulated
hands' measured joints, put through the Dex3's forward kinematics.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from geometry_msgs.msg import Pose, PoseArray
from sensor_msgs.msg import JointState

from g1_teleop.core.dex3_description import SIDES, load_dex3
from g1_teleop.launching.graph_description import load_graph
from g1_teleop.launching.process_runner import GraphProcesses
from g1_teleop.retarget.hand_retarget_kinematics import Dex3Kinematics
from g1_teleop.ros.qos import QOS_SENSOR
from g1_teleop.tools.bench.hand_poses import hand_landmarks
from integration import test_hw_bridge as bridge_rig

make_rig, robot_domain = bridge_rig.make_rig, bridge_rig.robot_domain  # the rig's fixtures
QOS, RELAXED = bridge_rig.QOS, bridge_rig.RELAXED

pytestmark = pytest.mark.integration
DEX3 = load_dex3()
KINEMATICS = {side: Dex3Kinematics(side, DEX3.model) for side in SIDES}
HAND_PERIOD_S = 1 / 60  # a headset's hand tracking rate


def thumb_index_m(side: str, q: np.ndarray) -> float:
    tips = KINEMATICS[side].tips(q)
    return float(np.linalg.norm(tips[1] - tips[0]))


def landmarks_msg(points: np.ndarray, side: str) -> PoseArray:
    msg = PoseArray(poses=[Pose() for _ in points])
    msg.header.frame_id = f"xr_{side}_hand"
    for pose, p in zip(msg.poses, points, strict=True):
        pose.position.x, pose.position.y, pose.position.z = (float(v) for v in p)
        pose.orientation.w = 1.0
    return msg


def test_an_operator_pinch_closes_the_dex3_thumb_on_the_index(make_rig):
    (spec,) = [n for n in load_graph("real").resolve({"robot": "virtual", "network_interface": "lo", "dex3": "true"})
               if n.name == "hand_retarget"]
    rig = make_rig(parameters=RELAXED, dex3=True)
    retarget = GraphProcesses([spec], output=rig.lines.append)
    retarget.start()
    try:
        publishers = {side: rig.node.create_publisher(PoseArray, f"xr/{side}_hand", QOS_SENSOR) for side in SIDES}
        hand_states: dict[str, JointState] = {}
        rig.node.create_subscription(JointState, "hand_states",
                                     lambda msg: hand_states.__setitem__(msg.name[0].split("_")[0], msg), QOS)
        targets: list[JointState] = []
        rig.node.create_subscription(JointState, "teleop/hand_target", targets.append, QOS)
        rig.wait_state("ZERO_TORQUE", 20.0)
        rig.bring_up()

        def operator(seconds: float, pinch: float | list[float], points=None) -> None:
            """The operator's two hands for ``seconds`` (a pinch ramp: one value per sample)."""
            count = round(seconds / HAND_PERIOD_S)
            ramp = pinch if isinstance(pinch, list) else [pinch] * count
            for value in ramp:
                for side in SIDES:
                    hand = hand_landmarks(side, pinch=value) if points is None else points
                    publishers[side].publish(landmarks_msg(hand, side))
                rig.spin(HAND_PERIOD_S)

        def commanded(side: str, since: float) -> list[np.ndarray]:
            return [s.q for s in rig.probe.handcmds[side] if s.t > since and np.all(s.kp > 0)]

        operator(2.0, 0.0)  # open: the hand_retarget process is up and its targets reach the hands
        assert targets, f"no teleop/hand_target from hand_retarget:\n{rig.log}"
        t_open = time.monotonic()
        operator(0.5, 0.0)
        for side in SIDES:
            sent = commanded(side, t_open)
            assert sent, f"no {side} HandCmd while ACTIVE:\n{rig.log}"
            assert min(thumb_index_m(side, q) for q in sent) > 0.06, side
        operator(0.5, list(np.linspace(0.0, 1.0, 30)))  # the pinch closes
        operator(1.5, 1.0)  # and holds: the hand settles (slew-limited commands, then kd/kp ≈ 0.13 s)
        t_pinch = time.monotonic()
        operator(0.5, 1.0)
        for side in SIDES:
            gaps = [thumb_index_m(side, q) for q in commanded(side, t_pinch)]
            assert gaps and max(gaps) < 0.03, f"{side}: commanded thumb–index gaps {gaps[:3]}… m (bridge " \
                                              f"{rig.state}):\n{rig.log}"
            measured = thumb_index_m(side, np.array(hand_states[side].position))
            assert measured < 0.035, f"{side}: the emulated hand's thumb and index are {measured * 1e3:.0f} mm apart"
            print(f"\n{side} pinch: commanded thumb–index {max(gaps) * 1e3:.1f} mm at most over 0.5 s, the emulated "
                  f"hand's {measured * 1e3:.1f} mm")
        pinch_q = {side: commanded(side, t_pinch)[-1] for side in SIDES}

        # NaN landmarks are refused: nothing non-finite reaches a hand, which holds the pinch.
        nan = hand_landmarks("left")
        nan[9, 0] = math.nan
        t_nan = time.monotonic()
        operator(0.5, 0.0, points=nan)
        for side in SIDES:
            sent = commanded(side, t_nan)
            assert sent and all(np.all(np.isfinite(q)) for q in sent)
            np.testing.assert_allclose(sent[-1], pinch_q[side], atol=0.02)
        assert "are not finite" in rig.log

        # The operator's hands reopen, then tracking stops: the hands hold where they were.
        t_reopen = time.monotonic()

        def reopened() -> bool:
            return all(any(thumb_index_m(side, q) > 0.06 for q in commanded(side, t_reopen)) for side in SIDES)

        for _ in range(300):  # at most 5 s at 60 Hz (done within 0.5 s on a quiet machine)
            operator(HAND_PERIOD_S, 0.0)
            if reopened():
                break
        assert reopened(), f"the hands did not reopen (bridge {rig.state}, last targets {targets[-1].position}):\n" \
                           f"{rig.log}"
        operator(0.3, 0.0)
        t_stale = time.monotonic()
        rig.spin(1.5)
        for side in SIDES:
            held = commanded(side, t_stale + 0.7)  # after the bridge's 0.5 s command timeout
            assert held, f"no {side} HandCmd with stiffness after the landmarks stopped (state {rig.state}):\n{rig.log}"
            assert thumb_index_m(side, held[-1]) > 0.06, f"{side}: held {held[-1]}, {len(held)} HandCmds"
            assert np.ptp(np.array(held), axis=0).max() < 1e-6, f"{side} hand moved without landmarks"
    finally:
        retarget.stop()
