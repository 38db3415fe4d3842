"""xr_input's Apple Vision Pro source: a gRPC client of the Vision Pro app's hand-tracking stream (avp_protocol),
turning each HandUpdate into the operator samples a WebXR headset gives (webxr_samples). ROS-free.

Per HandUpdate: the head is the device pose; each hand's 25 landmarks are its skeleton's joints placed by its
wrist matrix, in the app's world (OpenXR's basis); the wrist pose in OpenXR's hand-joint axes is found from those
landmarks (hand_landmark_frame: ARKit's anchor axes differ), so the samples go through the same XR → robot
conversion, clutch gestures and hand landmarks as WebXR hand tracking. A matrix of zeros (the app's untracked
hand or head) makes that pose invalid, as in WebXR.

The client connects in a thread of its own, retries every ``retry_s`` while the app is not reachable, and says in
one status line what to check (the same ``XrLinkStatus`` as the WebXR server's, for xr/status and the logs).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import grpc
import numpy as np

from g1_teleop.operator import avp_protocol
from g1_teleop.operator.hand_landmark_frame import wrist_from_landmarks
from g1_teleop.operator.webxr_events import HAND_JOINTS, HandJoints, HandsTracking, HeadPose
from g1_teleop.operator.webxr_samples import SampleAssembler, XrSample
from g1_teleop.operator.webxr_status import LinkState, XrLinkStatus
from g1_teleop.operator.xr_joy import XrJoyConfig

APP = "the Vision Pro app (avp-stream's Tracking Streamer)"


@dataclass(frozen=True)
class AvpLink:
    """Where the app is and how the link is judged: ``host``:``port`` (the app shows its address), samples older
    than ``stale_after_s`` make the link stale, a failed connection is retried every ``retry_s`` (s)."""

    host: str
    port: int = avp_protocol.DEFAULT_PORT
    stale_after_s: float = 0.5
    retry_s: float = 2.0

    def __post_init__(self) -> None:
        if not self.host:
            raise ValueError("source avp needs avp_ip: the Vision Pro's address, shown by the app")
        if not 0 < self.port < 65536:
            raise ValueError(f"avp_port must be a TCP port, got {self.port}")


def hands_tracking(update: object) -> tuple[HeadPose, HandsTracking]:
    """One HandUpdate → the head pose and both hands as WebXR hand tracking gives them (module docstring)."""
    hands = []
    for side, hand in (("left", update.left_hand), ("right", update.right_hand)):
        world_T_anchor = avp_protocol.matrix(hand.wristMatrix)
        joints = [avp_protocol.matrix(j) for j in hand.skeleton.jointMatrices][:len(HAND_JOINTS)]
        if len(joints) < len(HAND_JOINTS) or not world_T_anchor[3, 3]:
            hands.append(None)
            continue
        points = (world_T_anchor @ np.stack(joints))[:, :3, 3]
        try:
            world_T_wrist = wrist_from_landmarks(side, points)
        except ValueError:
            hands.append(None)
            continue
        xr_T_joints = np.repeat(world_T_wrist[None], len(HAND_JOINTS), axis=0)
        xr_T_joints[:, :3, 3] = points
        hands.append(HandJoints(xr_T_joints))
    return HeadPose(avp_protocol.matrix(update.Head)), HandsTracking(hands[0], hands[1], None)


class AvpClient:
    """The app's stream for one operator, with the WebXR server's interface for xr_input (start, stop, newest,
    status, figures). ``on_sample(sample)`` runs in the client's thread for each sample; it must return quickly."""

    def __init__(self, link: AvpLink, joy_config: XrJoyConfig, wrist_reference: str = "head",
                 on_sample: Callable[[XrSample], None] | None = None) -> None:
        self.link, self.on_sample = link, on_sample
        self.address = f"{link.host}:{link.port}"
        self._assembler = SampleAssembler("hands", joy_config, wrist_reference)
        self._lock = threading.Lock()
        self._newest: XrSample | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._call: grpc.Future | None = None
        self._connected = False
        self._problem = ""
        self._samples, self._recent = 0, []
        self._last_tracked_s: float | None = None

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="avp-client", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        call = self._call
        if call is not None:
            call.cancel()
        if self._thread is not None:
            self._thread.join(timeout=5.0)
            self._thread = None

    def newest(self) -> XrSample | None:
        with self._lock:
            return self._newest

    def figures(self) -> dict[str, object]:
        status = self.status()
        return {"link": status.state.value, "app": self.address, "samples": self._samples,
                "rate_hz": round(status.rate_hz, 1)}

    def status(self, now_s: float | None = None) -> XrLinkStatus:
        """The link now (time.monotonic() s): what is wrong and what to check, in one line."""
        now_s = time.monotonic() if now_s is None else now_s
        with self._lock:
            recent, tracked_s, connected, problem = list(self._recent), self._last_tracked_s, self._connected, \
                self._problem
        age = None if not recent else now_s - recent[-1]
        tracked_age = None if tracked_s is None else now_s - tracked_s
        rate = (len(recent) - 1) / max(recent[-1] - recent[0], 1e-9) if len(recent) > 1 and age is not None \
            and age <= self.link.stale_after_s else 0.0
        if not connected:
            state, text = (LinkState.DROPPED if self._samples else LinkState.NO_CLIENT), (
                f"no Vision Pro at {self.address} ({problem or 'connecting'}): open {APP} on the headset and press "
                f"Start; avp_ip must be the address the app shows, on this machine's network; retrying every "
                f"{self.link.retry_s:g} s")
        elif tracked_age is None or tracked_age > self.link.stale_after_s:
            state, text = LinkState.STALE, (f"Vision Pro {self.address} connected, but head and both hands not "
                                            "tracked: keep both hands in view")
        else:
            state, text = LinkState.CONNECTED, f"Vision Pro {self.address} connected: hands at {rate:.0f} Hz"
        return XrLinkStatus(state, text, int(connected), self.address if connected else None, age, tracked_age,
                            rate)

    def _run(self) -> None:
        request = avp_protocol.discovery_request(_local_address(self.link.host))
        while not self._stop.is_set():
            channel = grpc.insecure_channel(self.address)
            try:
                grpc.channel_ready_future(channel).result(timeout=self.link.retry_s)
                stream = channel.unary_stream(avp_protocol.SERVICE_METHOD,
                                              request_serializer=lambda m: m.SerializeToString(),
                                              response_deserializer=avp_protocol.HandUpdate.FromString)
                self._call = stream(request)
                with self._lock:
                    self._connected, self._problem = True, ""
                for update in self._call:
                    self._take(update, time.monotonic())
                self._lost("the app ended the stream")
            except grpc.FutureTimeoutError:
                self._lost("not reachable")
            except grpc.RpcError as exc:
                self._lost(f"gRPC {exc.code().name.lower()}")
            finally:
                self._call = None
                channel.close()
            self._stop.wait(self.link.retry_s)

    def _lost(self, problem: str) -> None:
        with self._lock:
            self._connected, self._problem = False, problem

    def _take(self, update: object, received_s: float) -> None:
        head, hands = hands_tracking(update)
        self._assembler.put(head, received_s)
        sample = self._assembler.put(hands, received_s)
        if sample is None:
            return
        with self._lock:
            self._newest, self._samples = sample, self._samples + 1
            self._recent = [*self._recent[-63:], received_s]
            if sample.valid:
                self._last_tracked_s = received_s
        if self.on_sample is not None:
            self.on_sample(sample)


def _local_address(host: str) -> str:
    """This machine's IPv4 address on the route to ``host`` (the app's discovery request carries it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect((host, avp_protocol.DEFAULT_PORT))  # (UDP: nothing is sent)
            return probe.getsockname()[0]
        except OSError:
            return "127.0.0.1"
