"""Apple Vision Pro's hand-tracking stream as avp-stream's Vision Pro app serves it (Improbable-AI/VisionProTeleop,
PyPI ``avp-stream``): the gRPC messages, built here from their field numbers, and their meaning. ROS-free.

The app is the gRPC server (port 12345) of ``handtracking.HandTrackingService``; its one method
``StreamHandUpdates(HandUpdate) → stream HandUpdate`` answers a client's request with one HandUpdate per tracking
frame. Messages (proto3; field numbers as the app's handtracking.proto):

- ``Matrix4x4``: floats m00 … m33 (fields 1–16), row-major: m_rc is row r, column c.
- ``Skeleton``: ``jointMatrices`` (1, repeated Matrix4x4): the hand's joints relative to its wrist (ARKit's
  ``anchorFromJointTransform``), ARKit's order (25 hand joints, then forearmWrist and forearmArm on newer apps).
- ``Hand``: ``wristMatrix`` (1): the hand anchor in the app's world; ``skeleton`` (2).
- ``HandUpdate``: ``left_hand`` (1), ``right_hand`` (2), ``Head`` (3): the device in the app's world.

The app's world is visionOS's: y up, the operator looking along −z at the start, metres — OpenXR's basis. The
request announces the client: ``Head.m00 = 888`` (a discovery marker), the client's IPv4 address in m01, m02,
m03, m10 and avp-stream's version code (major·10000 + minor·100 + patch) in m30, as avp-stream's
``VisionProStreamer.stream`` sends them.
"""

from __future__ import annotations

import ipaddress

import numpy as np
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

SERVICE_METHOD = "/handtracking.HandTrackingService/StreamHandUpdates"
DEFAULT_PORT = 12345
DISCOVERY_MARKER = 888.0
CLIENT_VERSION_CODE = 25000.0  # avp-stream 2.50.0, the protocol these messages follow
_MATRIX_FIELDS = tuple(f"m{r}{c}" for r in range(4) for c in range(4))


def _messages() -> dict[str, type]:
    """The four message classes, from a file descriptor built in code (no generated module, no protoc)."""
    file = descriptor_pb2.FileDescriptorProto(name="g1_teleop_avp_handtracking.proto", package="handtracking",
                                              syntax="proto3")
    field = descriptor_pb2.FieldDescriptorProto
    matrix = file.message_type.add(name="Matrix4x4")
    for number, name in enumerate(_MATRIX_FIELDS, start=1):
        matrix.field.add(name=name, number=number, type=field.TYPE_FLOAT, label=field.LABEL_OPTIONAL)
    for message, fields in (("Skeleton", [("jointMatrices", 1, ".handtracking.Matrix4x4", field.LABEL_REPEATED)]),
                            ("Hand", [("wristMatrix", 1, ".handtracking.Matrix4x4", field.LABEL_OPTIONAL),
                                      ("skeleton", 2, ".handtracking.Skeleton", field.LABEL_OPTIONAL)]),
                            ("HandUpdate", [("left_hand", 1, ".handtracking.Hand", field.LABEL_OPTIONAL),
                                            ("right_hand", 2, ".handtracking.Hand", field.LABEL_OPTIONAL),
                                            ("Head", 3, ".handtracking.Matrix4x4", field.LABEL_OPTIONAL)])):
        proto = file.message_type.add(name=message)
        for name, number, type_name, label in fields:
            proto.field.add(name=name, number=number, type=field.TYPE_MESSAGE, type_name=type_name, label=label)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"handtracking.{name}"))
            for name in ("Matrix4x4", "Skeleton", "Hand", "HandUpdate")}


MESSAGES = _messages()
HandUpdate = MESSAGES["HandUpdate"]


def discovery_request(client_ipv4: str) -> object:
    """The HandUpdate a client opens the stream with (module docstring); ``client_ipv4`` dotted, e.g. 10.0.0.5."""
    try:
        parts = [float(p) for p in ipaddress.IPv4Address(client_ipv4).packed]
    except ValueError:
        raise ValueError(f"not an IPv4 address: {client_ipv4!r}") from None
    request = HandUpdate()
    head = request.Head
    head.m00, head.m01, head.m02, head.m03, head.m10 = DISCOVERY_MARKER, *parts
    head.m30 = CLIENT_VERSION_CODE
    return request


def matrix(message: object) -> np.ndarray:
    """A Matrix4x4 → (4, 4); the last row as sent (a pose's is 0, 0, 0, 1; an absent matrix is all zeros)."""
    return np.array([getattr(message, name) for name in _MATRIX_FIELDS], dtype=float).reshape(4, 4)


def set_matrix(message: object, M: np.ndarray) -> None:
    """Fill a Matrix4x4 with (4, 4) ``M``."""
    for name, value in zip(_MATRIX_FIELDS, np.asarray(M, dtype=float).ravel().tolist(), strict=True):
        setattr(message, name, value)
