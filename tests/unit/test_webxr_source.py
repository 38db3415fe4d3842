"""What xr_input publishes of a headset's samples: the wrists only with the head and both wrists tracked, the head
when tracked, a tracked hand's 25 landmarks, the Joy reading always with its layout's frame; in lockstep each
sample once."""

from __future__ import annotations

import numpy as np

from g1_teleop.operator.webxr_client import ControllerInput, camera_move, controller_move, hand_move, synthetic_hand
from g1_teleop.operator.webxr_events import parse_event
from g1_teleop.operator.webxr_samples import SampleAssembler
from g1_teleop.operator.webxr_source import NewestOnce, publication
from g1_teleop.operator.xr_frames import robot_to_openxr
from g1_teleop.operator.xr_joy import XrJoyConfig


def at(x: float, y: float, z: float) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    return T


HEAD, LEFT, RIGHT = at(0.0, 0.0, 1.6), at(0.3, 0.2, 0.1), at(0.3, -0.2, 0.1)


def put(assembler: SampleAssembler, event: dict, t: float):
    return assembler.put(parse_event(event["etype"], event["value"], event.get("ts")), t)


def test_hands_tracked_then_one_lost() -> None:
    xr = robot_to_openxr(HEAD, LEFT, RIGHT, hand_tracking=True)
    hands = SampleAssembler("hands", XrJoyConfig())
    put(hands, camera_move(xr.xr_T_head), 0.0)
    out = publication(put(hands, hand_move(synthetic_hand(xr.xr_T_left_wrist), synthetic_hand(xr.xr_T_right_wrist),
                                           1.0e12), 0.01), "hands")
    assert out.head and out.wrists and out.joy_frame == "xr_hands"
    assert out.left_hand.shape == (25, 3) and out.right_hand.shape == (25, 3)
    np.testing.assert_allclose(out.frame.left_wrist[:3], LEFT[:3, 3], atol=1e-6)
    lost = publication(put(hands, hand_move(synthetic_hand(xr.xr_T_left_wrist), None, 1.0e12), 0.02), "hands")
    assert lost.head and not lost.wrists and lost.right_hand is None and lost.left_hand is not None
    assert len(lost.frame.joy_buttons) == 12  # the Joy reading goes out all the same


def test_controllers_without_a_head_pose_publish_the_joy_only() -> None:
    xr = robot_to_openxr(HEAD, LEFT, RIGHT, hand_tracking=False)
    controllers = SampleAssembler("controllers", XrJoyConfig())
    sample = put(controllers, controller_move(ControllerInput(xr.xr_T_left_wrist), ControllerInput(
        xr.xr_T_right_wrist, a=True), 1.0e12), 0.0)
    out = publication(sample, "controllers")
    assert not out.head and not out.wrists and out.left_hand is None and out.right_hand is None
    assert out.joy_frame == "xr_controllers" and out.frame.joy_buttons[0] == 1


def test_newest_once() -> None:
    xr = robot_to_openxr(HEAD, LEFT, RIGHT, hand_tracking=True)
    hands = SampleAssembler("hands", XrJoyConfig())
    event = hand_move(synthetic_hand(xr.xr_T_left_wrist), synthetic_hand(xr.xr_T_right_wrist), 1.0e12)
    first, second = put(hands, event, 0.0), put(hands, event, 0.01)
    gate = NewestOnce()
    assert gate.take(None) is None
    assert gate.take(first) is first and gate.take(first) is None
    assert gate.take(second) is second and gate.take(second) is None
