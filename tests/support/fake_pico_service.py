"""A fake XRoboToolkit PC Service for tests: a gRPC server of the service the PICO SDK (``xrobotoolkit_sdk``,
libPXREARobotSDK) connects to, so that the real, unmodified SDK reads what it streams.

The protocol (XR-Robotics/XRoboToolkit-PC-Service, RoboticsService/PXREAService/PXREAService.proto and the SDK's
PXREARobotSDK.cpp; only the facts are used here, the messages are built from their field numbers):

- service ``PXREAService.EAService``; the SDK calls ``SendBeat(Empty) → Empty`` every 0.5 s (its liveness check)
  and, once that answers, ``WatchServerFeedback(VRPid) → stream ServerFeedback``; ``CancelServerFeedback(VRPid)``
  when it closes. ``VRPid``: ``int32 pid = 1``.
- ``ServerFeedback``: ``string name = 1`` and a oneof of which this uses ``DeviceStateJson devicestatejson = 15``
  (``string devid = 1``, ``string statejson = 2``); the SDK hands the state on when ``name`` is
  ``"deviceStateJson"`` (at most 16351 characters).
- ``statejson`` is ``{"value": "<JSON text>"}``; that inner JSON (as the Python binding reads it) has ``Head.pose``,
  ``Controller.left/right`` (``pose``, ``trigger``, ``grip``, ``menuButton``, ``axisX``, ``axisY``, ``axisClick``,
  ``primaryButton``, ``secondaryButton``), ``Hand.leftHand/rightHand`` (``scale``, ``isActive``,
  ``HandJointLocations``: 26 × ``{"p": pose}``, OpenXR's XrHandJointEXT order), ``Body`` (``timeStampNs``,
  ``joints``: 24 × ``{"p", "va", "wva", "t"}``, XRobot's order) and ``timeStampNs``. A pose is the text
  ``"x,y,z,qx,qy,qz,qw"`` (m). Head, controllers and hands are in OpenXR's basis (y up, −z forward); the body
  points in Unity's frame, as XRobot streams them (``operator.body_stream``).

Run as a process: ``python tests/support/fake_pico_service.py --port P [--rate 90] [--body FILE.npz]``. It streams an
operator standing with the head at the default pose and both wrists (controllers and tracked hands) in front
(pelvis frame (0.3, ±0.25, 0.1) m plus an offset), and, with ``--body``, a body stream file's frames (looped, at
their own timing) converted back to XRobot's Unity frame. Lines on its stdin: ``offset X Y Z`` (m, pelvis frame),
``grips L R`` (0 … 1: both squeezed is the controllers' ENGAGE gesture), ``stick X Y`` (the right thumbstick),
``frame I`` (hold the body file's frame I from now on).
It prints one line per SDK call (``beat``, ``watch pid N``) and exits on SIGTERM.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path

import grpc
import numpy as np
from google.protobuf import descriptor_pb2, descriptor_pool, empty_pb2, message_factory
from grpc_fake import serve_until_signalled  # (run as a script: its folder is on the path)
from scipy.spatial.transform import Rotation

from g1_teleop.operator.body_stream import load_body_stream
from g1_teleop.operator.xr_frames import DEFAULT_WORLD_T_HEAD, robot_to_openxr
from g1_teleop.tools.bench.hand_poses import hand_joint_points

SERVICE = "PXREAService.EAService"
UNITY_FROM_Z_UP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])  # the inverse of body_stream's


def _messages() -> dict[str, type]:
    file = descriptor_pb2.FileDescriptorProto(name="fake_pxrea_service.proto", package="PXREAService",
                                              syntax="proto3")
    f = descriptor_pb2.FieldDescriptorProto
    file.message_type.add(name="VRPid").field.add(name="pid", number=1, type=f.TYPE_INT32, label=f.LABEL_OPTIONAL)
    state = file.message_type.add(name="DeviceStateJson")
    state.field.add(name="devid", number=1, type=f.TYPE_STRING, label=f.LABEL_OPTIONAL)
    state.field.add(name="statejson", number=2, type=f.TYPE_STRING, label=f.LABEL_OPTIONAL)
    feedback = file.message_type.add(name="ServerFeedback")
    feedback.oneof_decl.add(name="FeedbackArgs")
    feedback.field.add(name="name", number=1, type=f.TYPE_STRING, label=f.LABEL_OPTIONAL)
    feedback.field.add(name="devicestatejson", number=15, type=f.TYPE_MESSAGE, label=f.LABEL_OPTIONAL,
                       type_name=".PXREAService.DeviceStateJson", oneof_index=0)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return {n: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"PXREAService.{n}"))
            for n in ("VRPid", "DeviceStateJson", "ServerFeedback")}


MESSAGES = _messages()


def pose_text(T: np.ndarray) -> str:
    qx, qy, qz, qw = Rotation.from_matrix(T[:3, :3]).as_quat()
    return ",".join(f"{v:.5f}" for v in (*T[:3, 3], qx, qy, qz, qw))


def hand_joints(side: str, xr_T_wrist: np.ndarray) -> list[dict[str, str]]:
    """26 OpenXR hand joints (palm first) placed by the wrist, each with the wrist's orientation."""
    points = hand_joint_points(side) @ xr_T_wrist[:3, :3].T + xr_T_wrist[:3, 3]
    palm = (points[0] + points[11]) / 2.0  # between the wrist and the middle knuckle
    poses = []
    for p in (palm, *points):
        T = xr_T_wrist.copy()
        T[:3, 3] = p
        poses.append({"p": pose_text(T)})
    return poses


class FakeService:
    def __init__(self, rate_hz: float, body_file: str | None) -> None:
        self.rate_hz = rate_hz
        self.offset, self.grips, self.stick = np.zeros(3), (0.0, 0.0), (0.0, 0.0)
        self.stopped = threading.Event()
        self.body = None if body_file is None else load_body_stream(Path(body_file))
        self.raw = None if self.body is None else self.raw_body()
        self.start_s = time.monotonic()
        self.frame: int | None = None  # a held body frame; None: loop the file

    def read_commands(self) -> None:
        for line in sys.stdin:
            words = line.split()
            if words[:1] == ["offset"]:
                self.offset = np.array([float(v) for v in words[1:4]])
            elif words[:1] == ["grips"]:
                self.grips = (float(words[1]), float(words[2]))
            elif words[:1] == ["stick"]:
                self.stick = (float(words[1]), float(words[2]))
            elif words[:1] == ["frame"]:
                self.frame = int(words[1])

    def body_joints(self, now_s: float) -> list[dict[str, object]]:
        """The body stream's frame at ``now_s`` (looped) as XRobot's raw points (Unity frame, qx qy qz qw last)."""
        stream = self.body
        t = (now_s - self.start_s) % max(stream.stamps[-1] - stream.stamps[0], 1e-3) + stream.stamps[0]
        i = int(np.searchsorted(stream.stamps, t, side="right")) - 1 if self.frame is None else self.frame
        return [{"p": p, "va": "0,0,0,0,0,0", "wva": "0,0,0,0,0,0", "t": int(now_s * 1e9)} for p in self.raw[i]]

    def raw_body(self) -> list[list[str]]:
        """Every frame's 24 poses as XRobot sends them: p = U·p', q = quat(U) ⊗ q' (U the inverse of
        body_stream's Unity → z-up matrix)."""
        stream, rotation = self.body, Rotation.from_matrix(UNITY_FROM_Z_UP)
        q = rotation * Rotation.from_quat(stream.quat_wxyz[..., [1, 2, 3, 0]].reshape(-1, 4))
        raw = np.concatenate([stream.positions @ UNITY_FROM_Z_UP.T, q.as_quat().reshape(len(stream), -1, 4)], -1)
        return [[",".join(f"{v:.5f}" for v in point) for point in frame] for frame in raw]

    def state(self) -> str:
        """The state JSON now (the poses are computed again only when the operator moved: 50 ms under load)."""
        key = (tuple(self.offset), self.grips, self.stick)
        if getattr(self, "_key", None) != key:
            self._key, self._value = key, self.operator_state()
        value = {**self._value, "timeStampNs": time.time_ns()}
        if self.body is not None:
            value["Body"] = {"timeStampNs": value["timeStampNs"], "joints": self.body_joints(time.monotonic())}
        return json.dumps({"value": json.dumps(value, separators=(",", ":"))}, separators=(",", ":"))

    def operator_state(self) -> dict[str, object]:
        wrists = []
        for y in (0.25, -0.25):
            pelvis_T_wrist = np.eye(4)
            pelvis_T_wrist[:3, 3] = np.array([0.3, y, 0.1]) + self.offset
            wrists.append(pelvis_T_wrist)
        controllers = robot_to_openxr(DEFAULT_WORLD_T_HEAD, *wrists, hand_tracking=False)
        hands = robot_to_openxr(DEFAULT_WORLD_T_HEAD, *wrists, hand_tracking=True)
        controller = {}
        for side, T, grip, stick in (("left", controllers.xr_T_left_wrist, self.grips[0], (0.0, 0.0)),
                                     ("right", controllers.xr_T_right_wrist, self.grips[1], self.stick)):
            controller[side] = {"pose": pose_text(T), "trigger": 0.0, "grip": grip, "menuButton": False,
                                "axisX": stick[0], "axisY": stick[1], "axisClick": False, "primaryButton": False,
                                "secondaryButton": False}
        return {
            "Head": {"pose": pose_text(controllers.xr_T_head)},
            "Controller": controller,
            "Hand": {f"{side}Hand": {"scale": 1.0, "isActive": 1, "HandJointLocations": hand_joints(side, T)}
                     for side, T in (("left", hands.xr_T_left_wrist), ("right", hands.xr_T_right_wrist))},
        }

    def send_beat(self, request: object, context: grpc.ServicerContext) -> object:
        if not getattr(self, "_beat_seen", False):
            print("beat", flush=True)
            self._beat_seen = True
        return empty_pb2.Empty()

    def watch(self, request: object, context: grpc.ServicerContext):
        print(f"watch pid {request.pid}", flush=True)
        while context.is_active() and not self.stopped.is_set():
            text = self.state()
            assert len(text) < 16352, f"state JSON of {len(text)} characters: the SDK copies at most 16351"
            yield MESSAGES["ServerFeedback"](name="deviceStateJson", devicestatejson=MESSAGES["DeviceStateJson"](
                devid="PICO4U-FAKE", statejson=text))
            time.sleep(1.0 / self.rate_hz)

    def cancel(self, request: object, context: grpc.ServicerContext) -> object:
        print(f"cancel pid {request.pid}", flush=True)
        return empty_pb2.Empty()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--rate", type=float, default=90.0)
    parser.add_argument("--body", default=None, help="a body stream file (.npz) streamed as XRobot's body points")
    args = parser.parse_args()
    service = FakeService(args.rate, args.body)
    threading.Thread(target=service.read_commands, daemon=True).start()
    empty = (empty_pb2.Empty.FromString, lambda m: m.SerializeToString())
    pid = (MESSAGES["VRPid"].FromString, lambda m: m.SerializeToString())
    handler = grpc.method_handlers_generic_handler(SERVICE, {
        "SendBeat": grpc.unary_unary_rpc_method_handler(service.send_beat, *empty),
        "WatchServerFeedback": grpc.unary_stream_rpc_method_handler(service.watch, *pid),
        "CancelServerFeedback": grpc.unary_unary_rpc_method_handler(service.cancel, pid[0], empty[1]),
    })
    serve_until_signalled("fake PICO service", args.port, lambda server: server.add_generic_rpc_handlers((handler,)),
                          service.stopped)

if __name__ == "__main__":
    main()
