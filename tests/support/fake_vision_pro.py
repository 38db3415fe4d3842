"""A fake Apple Vision Pro for tests: a gRPC server of the Vision Pro app's hand-tracking service built with
avp-stream's own generated code (avp_stream.grpc_msg: the messages and servicer of the package users install), so
that what g1_teleop's client speaks is checked against software it did not write, byte for byte.

Run as a process: ``python tests/support/fake_vision_pro.py --port P [--rate 90]``. It streams an operator standing
with the head at the default pose and both wrists in front (pelvis frame (0.3, ±0.25, 0.1) m plus an offset), as a
headset reports them, with a model hand's 25 joints per side; each wrist is sent in axes of the app's own (ARKit's
hand anchor is not OpenXR's wrist joint: here a fixed rotation of it), the joints relative to that anchor, as the
app does. Lines on its stdin move the operator: ``offset X Y Z`` (m, pelvis frame), ``head YAW PITCH`` (rad, robot
basis: yaw left, pitch down), ``pinch L R`` (each hand: 0 open … 1 thumb tip on the index tip; both at once is the
clutch's ENGAGE gesture). It prints one line per client request (the discovery marker and version it carried) and
exits on SIGTERM.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time

import numpy as np
from avp_stream.grpc_msg import handtracking_pb2, handtracking_pb2_grpc
from grpc_fake import serve_until_signalled  # (run as a script: its folder is on the path)
from scipy.spatial.transform import Rotation

from g1_teleop.operator.xr_frames import DEFAULT_WORLD_T_HEAD, robot_to_openxr
from g1_teleop.tools.bench.hand_poses import hand_joint_points

ANCHOR_R_WRIST = {"left": Rotation.from_euler("xyz", [90, 0, -90], degrees=True).as_matrix(),
                  "right": Rotation.from_euler("xyz", [-90, 0, 90], degrees=True).as_matrix()}


def put(message, M: np.ndarray) -> None:
    for r in range(4):
        for c in range(4):
            setattr(message, f"m{r}{c}", float(M[r, c]))


def hand(message, side: str, xr_T_wrist: np.ndarray, pinch: float) -> None:
    """The app's Hand: the anchor (the wrist in ARKit-like axes) in the world, the joints relative to it."""
    anchor = xr_T_wrist.copy()
    anchor[:3, :3] = xr_T_wrist[:3, :3] @ ANCHOR_R_WRIST[side].T
    points = hand_joint_points(side, pinch=pinch) @ xr_T_wrist[:3, :3].T + xr_T_wrist[:3, 3]
    put(message.wristMatrix, anchor)
    inverse = np.linalg.inv(anchor)
    for p in points:
        joint = np.eye(4)
        joint[:3, 3] = p
        put(message.skeleton.jointMatrices.add(), inverse @ joint)
    for _ in range(2):  # forearmWrist, forearmArm (newer apps send 27)
        put(message.skeleton.jointMatrices.add(), np.eye(4))


class FakeApp(handtracking_pb2_grpc.HandTrackingServiceServicer):
    def __init__(self, rate_hz: float) -> None:
        self.rate_hz = rate_hz
        self.offset, self.pinch = np.zeros(3), {"left": 0.0, "right": 0.0}
        self.head_yaw_pitch = (0.0, 0.0)
        self.stopped = threading.Event()

    def read_commands(self) -> None:
        for line in sys.stdin:
            words = line.split()
            if words[:1] == ["offset"]:
                self.offset = np.array([float(v) for v in words[1:4]])
            elif words[:1] == ["head"]:
                self.head_yaw_pitch = (float(words[1]), float(words[2]))
            elif words[:1] == ["pinch"]:
                self.pinch = {"left": float(words[1]), "right": float(words[2])}

    def StreamHandUpdates(self, request, context):  # (the service's method name)
        head = request.Head
        print(f"request: marker {head.m00:g}, client {head.m01:g}.{head.m02:g}.{head.m03:g}.{head.m10:g}, "
              f"version {head.m30:g}", flush=True)
        while context.is_active() and not self.stopped.is_set():
            wrists = []
            for y in (0.25, -0.25):
                pelvis_T_wrist = np.eye(4)
                pelvis_T_wrist[:3, 3] = np.array([0.3, y, 0.1]) + self.offset
                wrists.append(pelvis_T_wrist)
            xr = robot_to_openxr(DEFAULT_WORLD_T_HEAD, *wrists, hand_tracking=True)
            world_T_head = DEFAULT_WORLD_T_HEAD.copy()  # turned and tilted in place (robot basis: z up, y left)
            world_T_head[:3, :3] = Rotation.from_euler("ZY", self.head_yaw_pitch).as_matrix()
            update = handtracking_pb2.HandUpdate()
            put(update.Head, robot_to_openxr(world_T_head, *wrists, hand_tracking=True).xr_T_head)
            hand(update.left_hand, "left", xr.xr_T_left_wrist, self.pinch["left"])
            hand(update.right_hand, "right", xr.xr_T_right_wrist, self.pinch["right"])
            yield update
            time.sleep(1.0 / self.rate_hz)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--rate", type=float, default=90.0)
    args = parser.parse_args()
    app = FakeApp(args.rate)
    threading.Thread(target=app.read_commands, daemon=True).start()
    serve_until_signalled("fake Vision Pro app", args.port,
                          lambda server: handtracking_pb2_grpc.add_HandTrackingServiceServicer_to_server(app, server),
                          app.stopped)

if __name__ == "__main__":
    main()
