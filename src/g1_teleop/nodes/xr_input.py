"""xr_input: operator input → head and wrist poses in the robot's frames.

source "scenario": a YAML file of timed operator actions (g1_teleop.operator.scenario) is turned into the poses an
OpenXR headset would report and sent through the same XR→robot conversion a headset's data gets
(g1_teleop.operator.xr_frames). source "bag": the operator samples of a recorded run (a rosbag2 bag with xr/* and
joy, ``bag`` parameter) are published again exactly as recorded (g1_teleop.operator.input_sources). source "body": a
body stream file (``body_stream``) on xr/body (geometry_msgs/PoseArray: the 24 body points,
g1_teleop.ros.operator_messages) and its Head point on xr/head, for whole-body retargeting (body_retarget). source
"webxr": a live headset through the WebXR server (g1_teleop.operator.webxr_server; which samples and what of them:
g1_teleop.operator.webxr_source); source "avp": the Vision Pro app's hand-tracking stream over gRPC at ``avp_ip``
(g1_teleop.operator.avp_client), published as webxr's hand tracking; source "pico": PICO's SDK (operator.pico_client),
as webxr's hands or controllers, and its body tracking on xr/body. Publishes xr/head (headset world, robot basis),
xr/left_wrist, xr/right_wrist (pelvis frame: the IK targets of left_ee / right_ee) and joy, stamped with the sample
time; webxr also xr/left_hand, xr/right_hand (geometry_msgs/PoseArray: the 25 landmarks of a tracked hand in its
hand frame, WebXR Hand Input order, orientations identity) and xr/status (std_msgs/String, latched: the link's
one-line status, logged on each change), and shows the robot's camera frames in the headset (operator.webxr_video):
each eye's JPEG from ``video_camera``'s topics, paired by stamp, or a side-by-side JPEG from ``video_topic``.
Lockstep: one sample per simulation clock tick (webxr: the newest headset sample, if new); otherwise samples at the
source's device rate (webxr: each as it arrives).

Playback starts with the first sample when ``autoplay`` is true. Otherwise the first sample is published
(the operator holding still) until a call of the service xr_input/play (std_srvs/Trigger), which plays the
source from its start; each call restarts it. On a robot: activate the bridge, then play. (webxr: nothing to
play; retarget's clutch waits for the operator to engage.)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticStatus
from rclpy.clock import Clock as RclClock
from rclpy.clock import ClockType
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from std_msgs.msg import String
from std_srvs.srv import Trigger

from g1_teleop.core.paths import scenario_path
from g1_teleop.core.settings import setting
from g1_teleop.core.xr_input_contract import LIVE_SOURCES, SOURCES
from g1_teleop.operator.body_stream import load_body_stream
from g1_teleop.operator.input_sources import WRIST_REFERENCES, BodyStreamPlayer, OperatorRecording, ScenarioPlayer
from g1_teleop.operator.live_sources import LiveSourceConfig, open_live_source
from g1_teleop.operator.scenario import Scenario
from g1_teleop.operator.webxr_samples import XrSample
from g1_teleop.operator.webxr_server import WebXrServer
from g1_teleop.operator.webxr_source import NewestOnce, publication
from g1_teleop.operator.webxr_status import LinkState, StatusLog
from g1_teleop.ros.diagnostics import Diagnostics
from g1_teleop.ros.headset_video import HeadsetVideo
from g1_teleop.ros.messages import stamp_ns, to_stamp
from g1_teleop.ros.node_main import run
from g1_teleop.ros.operator_topics import OperatorTopics
from g1_teleop.ros.parameters import declare_config
from g1_teleop.ros.qos import QOS_LATCHED, QOS_STATE


@dataclass(frozen=True)
class XrInputConfig(LiveSourceConfig):
    """xr_input's ROS parameters (read once at start-up): its own and the live sources' (webxr, avp)."""

    source: str = setting("scenario", "where operator samples come from: a scenario played through a simulated "
                          "headset, the operator topics of a recorded bag, or a live headset over WebXR",
                          choices=SOURCES)
    scenario: str = setting("default", "source scenario: a name in config/scenarios/ or a YAML path")
    bag: str = setting("", "source bag: a rosbag2 folder with the operator topics (g1-teleop record, a sim run's bag/)")
    body_stream: str = setting("", "source body: a body stream file (.npz, g1_teleop.operator.body_stream; "
                               "g1-teleop body-stream demo writes one)")
    rate_hz: float = setting(0.0, "samples per second when not in lockstep (Hz); 0: the source's device rate",
                             minimum=0.0)
    lockstep: bool = setting(True, "one sample per /clock tick; false: samples on a timer at rate_hz")
    autoplay: bool = setting(True, "play from the start; false: hold the first sample until xr_input/play")
    video_camera: str = setting("camera", "source webxr: the camera whose eyes are shown in the headset: its "
                                "{left,right}/image_raw/compressed (sensor_msgs/CompressedImage, JPEG; the eyes "
                                "node's), paired by stamp; empty, with video_topic empty: no video")
    video_topic: str = setting("", "source webxr: a side-by-side stereo topic (sensor_msgs/CompressedImage, JPEG "
                               "left | right, e.g. camera/stereo/image_raw/compressed) shown instead of "
                               "video_camera's eyes; each frame is split here (≈ 6 ms of CPU for 1280×480)")
    wrist_reference: str = setting(
        "head", "head: wrists relative to the head position (OpenWBT/televuer); body: relative to a body-fixed "
        "frame (the neck pivot, heading calibrated on the first sample), so turning the head does not move the "
        "arms", choices=WRIST_REFERENCES)

    def __post_init__(self) -> None:
        super().__post_init__()  # every setting's check (check_settings), then the gestures' thresholds
        if self.source == "bag" and not self.bag:
            raise ValueError("source bag needs the bag parameter: the folder of a recorded bag")
        if self.source == "body" and not self.body_stream:
            raise ValueError("source body needs the body_stream parameter: a body stream file (.npz)")


class XrInput(Node):
    """Publishes a player's (input_sources) or a headset's (webxr_source) samples on xr/* and joy (module docstring)."""

    def __init__(self) -> None:
        super().__init__("xr_input")
        cfg = self.cfg = declare_config(self, XrInputConfig)
        self.topics = OperatorTopics(self, cfg.lockstep, hands=cfg.source in LIVE_SOURCES)
        self.samples, self.last_stamp_ns = 0, -1
        self.start_ns: int | None = None
        self.playing = cfg.autoplay
        self.server: WebXrServer | None = None
        if cfg.source in LIVE_SOURCES:
            self.diagnostics = Diagnostics(self, self.live_values)
            self.start_live()
        else:
            self.player = self.load_player()
            self.diagnostics = Diagnostics(self, lambda: {"source": cfg.source, "samples": self.samples,
                                                          "playing": self.playing})
            self.get_logger().info(f"{cfg.source} {self.player.source}: {self.player.description} "
                                   f"({self.player.duration:g} s)")
        self.create_service(Trigger, "xr_input/play", self.on_play)
        if cfg.lockstep:
            self.create_subscription(Clock, "/clock", self.on_clock, QOS_STATE)
        elif self.server is None:
            self.create_timer(1.0 / (cfg.rate_hz or self.player.sample_rate_hz), self.on_timer)

    def load_player(self) -> ScenarioPlayer | OperatorRecording | BodyStreamPlayer:
        cfg = self.cfg
        if cfg.source == "scenario":
            return ScenarioPlayer(Scenario.load(scenario_path(cfg.scenario)), cfg.wrist_reference)
        if cfg.source == "body":
            return BodyStreamPlayer(load_body_stream(cfg.body_stream), cfg.body_stream)
        return OperatorRecording.load(cfg.bag)

    def start_live(self) -> None:
        """The headset's server or the app's client: samples published per /clock tick (lockstep) or from its thread
        as they come."""
        cfg = self.cfg
        self.pub_status = self.create_publisher(String, "xr/status", QOS_LATCHED)
        self.server, link, where = open_live_source(cfg.source, cfg, cfg.wrist_reference,
                                                    None if cfg.lockstep else self.on_headset_sample)
        self.newest, self.status_log = NewestOnce(), StatusLog(link=link)
        self.video = HeadsetVideo(self, self.server, cfg.video_camera, cfg.video_topic) \
            if isinstance(self.server, WebXrServer) else None
        self.create_timer(0.2, self.on_status_timer, clock=RclClock(clock_type=ClockType.STEADY_TIME))
        pace = "the newest sample per /clock tick" if cfg.lockstep else "each sample as it arrives"
        self.get_logger().info(f"{where} ({pace}), video: {self.video.description if self.video else 'none'}")
        self.on_status_timer()

    def destroy_node(self) -> None:
        if self.server is not None:
            self.server.stop()
        super().destroy_node()

    def live_values(self) -> dict[str, object]:
        assert self.server is not None
        return {"source": self.cfg.source, "input": self.cfg.input, "samples": self.samples, **self.server.figures(),
                **(self.video.figures() if self.video else {})}

    def on_status_timer(self) -> None:
        """The link's status: logged, on xr/status and in the diagnostics on each change (rate-limited)."""
        assert self.server is not None
        status = self.server.status()
        line = self.status_log.update(time.monotonic(), status)
        if line is None:
            return
        ok = status.state is LinkState.CONNECTED
        if ok:  # (an rclpy call site logs at one severity only)
            self.get_logger().info(line)
        else:
            self.get_logger().warning(line)
        self.pub_status.publish(String(data=status.text))
        self.diagnostics.set(DiagnosticStatus.OK if ok else DiagnosticStatus.WARN, status.text)

    def on_play(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        response.success = self.server is None
        if self.server is not None:
            response.message = (f"source {self.cfg.source} follows a live operator: nothing to play (g1-teleop call "
                                "engage)")
            return response
        self.playing, self.start_ns = True, None
        response.message = f"playing {self.player.source} from its start ({self.player.duration:g} s)"
        self.get_logger().info(response.message)
        return response

    def on_clock(self, msg: Clock) -> None:
        if self.server is None:
            self.publish_sample(stamp_ns(msg.clock))
        elif (sample := self.newest.take(self.server.newest())) is not None:
            self.publish_headset(sample, msg.clock)

    def on_headset_sample(self, sample: XrSample) -> None:
        """Real time, in the server's thread: publish at once, stamped with the sample's arrival."""
        if not self.context.ok():
            return  # shutting down: the server stops with the node
        now_ns = self.get_clock().now().nanoseconds - round((time.monotonic() - sample.received_s) * 1e9)
        self.publish_headset(sample, to_stamp(now_ns))

    def publish_headset(self, sample: XrSample, stamp: Time) -> None:
        """One headset sample (webxr_source.publication; PICO's body tracking too)."""
        out = publication(sample, "hands" if self.cfg.source == "avp" else self.cfg.input)
        self.topics.publish_headset(out, getattr(sample, "body", None), stamp)
        self.samples += 1

    def on_timer(self) -> None:
        self.publish_sample(self.get_clock().now().nanoseconds)

    def publish_sample(self, now_ns: int) -> None:
        """Publish the operator sample for ``now_ns``; the same stamp again is published again (lockstep
        re-publication), in the same form."""
        if self.start_ns is None and self.playing:
            self.start_ns = now_ns
        frame = self.player.frame(0.0 if self.start_ns is None else (now_ns - self.start_ns) / 1e9)
        self.topics.publish_frame(frame, to_stamp(now_ns))
        if now_ns != self.last_stamp_ns:
            self.samples += 1
            self.last_stamp_ns = now_ns


def main(args: list[str] | None = None) -> None:
    run(XrInput, args)


if __name__ == "__main__":
    main()
