"""The simulated page encodes events byte for byte as vuer's web client (msgpackr, useRecords false) does."""

from __future__ import annotations

import msgpack
import numpy as np

from g1_teleop.operator.webxr_client import UNDEFINED, camera_move, encode, hand_move, synthetic_hand
from g1_teleop.operator.webxr_events import INDEX_TIP, THUMB_TIP


def test_numbers_as_msgpackr_writes_them() -> None:
    # a JavaScript number that is a 32-bit integer → an integer format; others → float64; undefined → d4 00 00
    assert encode(1.0) == b"\x01"
    assert encode(-1.0) == b"\xff"
    assert encode(200.0) == b"\xcc\xc8"
    assert encode(-0.0) == b"\x00"
    assert encode(0.5) == b"\xcb" + np.float64(0.5).tobytes()[::-1]
    assert encode(1717000000123.0)[:1] == b"\xcb"  # Date.now(): beyond 32 bits, a float64
    assert encode(UNDEFINED) == b"\xd4\x00\x00"
    assert encode({"etype": "INIT"}) == b"\x81\xa5etype\xa4INIT"


def test_hand_move_layout() -> None:
    joints = synthetic_hand(np.eye(4), pinch_m=0.005)
    event = hand_move(joints, None, 1717000000123.0)
    assert list(event) == ["ts", "etype", "key", "value"]
    assert list(event["value"]) == ["left", "leftState", "right", "rightState"]
    assert len(event["value"]["left"]) == 400 and event["value"]["right"] is UNDEFINED
    assert event["value"]["rightState"] == {}
    state = event["value"]["leftState"]
    assert list(state) == ["pinch", "pinchValue", "squeeze", "squeezeValue", "tap", "tapValue"]
    assert state["pinch"] and abs(state["pinchValue"] - 0.005) < 1e-6
    decoded = msgpack.unpackb(encode(event), raw=False)
    assert decoded["value"]["right"] == UNDEFINED
    points = np.asarray(decoded["value"]["left"]).reshape(25, 16)[:, 12:15]
    assert abs(np.linalg.norm(points[THUMB_TIP] - points[INDEX_TIP]) - 0.005) < 1e-6


def test_camera_move_has_no_stamp_and_float32_values() -> None:
    T = np.eye(4)
    T[:3, 3] = (0.1, 1.6, -0.3)
    event = camera_move(T)
    assert "ts" not in event and event["key"] == "defaultCamera"
    matrix = event["value"]["camera"]["matrix"]
    assert matrix[13] == float(np.float32(1.6)) and matrix[:4] == [1.0, 0.0, 0.0, 0.0]
    assert event["value"]["camera"]["rotation"] == [0.0, 0.0, 0.0, "XYZ"]
