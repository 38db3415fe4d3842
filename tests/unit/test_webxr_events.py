"""Parsing vuer's WebXR client events (payloads laid out as vuer 0.0.60's web client sends them, decoded from
msgpack as vuer's server decodes them) into typed records."""

from __future__ import annotations

import re

import msgpack
import numpy as np
import pytest

from g1_teleop.operator.webxr_events import (
    HAND_JOINTS,
    INDEX_TIP,
    THUMB_TIP,
    ControllersState,
    HandsTracking,
    HeadPose,
    MalformedEvent,
    parse_event,
)

UNDEFINED = msgpack.ExtType(0, b"\x00")  # JavaScript undefined as msgpackr writes it


def column_major(T: np.ndarray) -> list[float]:
    return [float(v) for v in np.asarray(T).ravel(order="F")]


def decoded(payload: dict) -> dict:
    """The payload after the wire: packed, then unpacked as vuer's server does (``unpackb(raw=False)``)."""
    return msgpack.unpackb(msgpack.packb(payload, use_bin_type=True), raw=False)


def test_hand_joint_order_is_the_webxr_hand_input_order() -> None:
    assert len(HAND_JOINTS) == 25
    assert HAND_JOINTS[0] == "wrist" and HAND_JOINTS[-1] == "pinky-finger-tip"
    assert (THUMB_TIP, INDEX_TIP) == (4, 9)


def test_camera_move_matrix_is_column_major() -> None:
    # a 90° turn about +y (OpenXR up) at (0.1, 1.6, -0.3): R = [[0, 0, 1], [0, 1, 0], [-1, 0, 0]]
    elements = [0, 0, -1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0.1, 1.6, -0.3, 1]
    payload = decoded({"etype": "CAMERA_MOVE", "key": "defaultCamera",
                       "value": {"camera": {"type": "PerspectiveCamera", "matrix": elements, "fov": 75},
                                 "world": {"background": "#131416"}}})
    head = parse_event(payload["etype"], payload["value"], payload.get("ts"))
    assert isinstance(head, HeadPose)
    expected = np.array([[0, 0, 1, 0.1], [0, 1, 0, 1.6], [-1, 0, 0, -0.3], [0, 0, 0, 1.0]])
    assert np.array_equal(head.xr_T_head, expected)
    assert head.device_time_s is None  # CAMERA_MOVE carries no ts


def test_hand_move_joints_in_order_with_the_stamp() -> None:
    joints = np.repeat(np.eye(4)[None], 25, axis=0)
    joints[:, :3, 3] = np.arange(75).reshape(25, 3) * 0.01
    joints[3, :3, :3] = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]
    flat = [v for T in joints for v in column_major(T)]
    payload = decoded({"ts": 1717000000123.0, "etype": "HAND_MOVE", "key": "hands", "value": {
        "left": flat, "leftState": {"pinch": False, "pinchValue": 0.05, "squeeze": False, "squeezeValue": 0.1,
                                    "tap": False, "tapValue": 0.05},
        "right": UNDEFINED, "rightState": {}}})
    hands = parse_event(payload["etype"], payload["value"], payload["ts"])
    assert isinstance(hands, HandsTracking)
    assert hands.right is None
    assert hands.device_time_s == pytest.approx(1717000000.123, abs=1e-6)
    assert np.array_equal(hands.left.xr_T_joints, joints)
    assert np.array_equal(hands.left.xr_T_wrist, joints[0])
    assert np.array_equal(hands.left.xr_points[9], [0.27, 0.28, 0.29])
    assert hands.left.pinch_distance_m() == pytest.approx(np.linalg.norm(joints[4, :3, 3] - joints[9, :3, 3]))


@pytest.mark.parametrize("missing", [UNDEFINED, None, "absent"])
def test_a_hand_out_of_view_is_none(missing: object) -> None:
    value = {"left": missing, "leftState": {}, "right": UNDEFINED, "rightState": {}}
    if missing == "absent":
        del value["left"]
    hands = parse_event("HAND_MOVE", value, 1.0)
    assert hands.left is None and hands.right is None


def test_controller_move_fields() -> None:
    pose = np.eye(4)
    pose[:3, 3] = (0.2, 1.1, -0.4)
    state = {"trigger": True, "squeeze": False, "touchpad": False, "thumbstick": True, "aButton": False,
             "bButton": True, "triggerValue": 0.75, "squeezeValue": 0.25, "touchpadValue": [0, 0],
             "thumbstickValue": [0.5, -1], "aButtonValue": False, "bButtonValue": True}
    payload = decoded({"ts": 1717000000000.0, "etype": "CONTROLLER_MOVE", "key": "motionControllers",
                       "value": {"left": UNDEFINED, "leftState": {}, "right": column_major(pose),
                                 "rightState": state}})
    controllers = parse_event(payload["etype"], payload["value"], payload["ts"])
    assert isinstance(controllers, ControllersState)
    assert controllers.left is None
    right = controllers.right
    assert np.array_equal(right.xr_T_controller, pose)
    assert (right.trigger, right.squeeze, right.trigger_pressed, right.squeeze_pressed) == (0.75, 0.25, True, False)
    assert right.thumbstick == (0.5, -1.0) and right.thumbstick_pressed
    assert (right.a_pressed, right.b_pressed) == (False, True)


def test_events_without_tracking_are_none() -> None:
    assert parse_event("INIT", None) is None
    assert parse_event("GAMEPADS", {"axes": []}, 1.0) is None


@pytest.mark.parametrize(("etype", "value", "ts", "message"), [
    ("CAMERA_MOVE", {"camera": {"matrix": [1.0] * 15}}, None, "CAMERA_MOVE value.camera.matrix must be 16 numbers"),
    ("CAMERA_MOVE", {"world": {}}, None, "CAMERA_MOVE value.camera must be a map"),
    ("HAND_MOVE", [1, 2], 1.0, "HAND_MOVE value must be a map"),
    ("HAND_MOVE", {"left": [0.0] * 16}, 1.0, "HAND_MOVE value.left must be 400 numbers, got 16 values"),
    ("HAND_MOVE", {"right": ["x"] * 400}, 1.0, "HAND_MOVE value.right must hold numbers only"),
    ("CONTROLLER_MOVE", {"left": [0.0] * 16, "leftState": {"triggerValue": "1"}}, 1.0,
     "CONTROLLER_MOVE value.leftState.triggerValue must be a number"),
    ("CONTROLLER_MOVE", {"right": [0.0] * 16}, 1.0, "CONTROLLER_MOVE value.rightState must be a map"),
    ("HAND_MOVE", {}, "yesterday", "HAND_MOVE ts must be the headset's Date.now() in ms"),
])
def test_malformed_payloads_name_the_field(etype: str, value: object, ts: object, message: str) -> None:
    with pytest.raises(MalformedEvent, match=re.escape(message)):
        parse_event(etype, value, ts)
