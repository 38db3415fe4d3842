"""eyes: the robot's head cameras as ROS images, in a process of its own so that rendering never slows the physics.

``source`` render (simulation, the virtual robot): a MuJoCo copy of the robot (``sim.eye_renderer``) follows
joint_states and the base pose (``base_pose`` odom: the simulator's ground truth; imu: the IMU's orientation with the
pelvis over its feet, as robot_state) and renders the ``left_eye``/``right_eye`` cameras offscreen on the CPU, at
most ``rate_hz`` frames per second of the robot's clock, each stamped with the joint_states it shows. The newest
state is rendered whenever the renderer is free (older ones are dropped, never queued).
``source`` teleimager (the real robot): the head camera's JPEG frames from Unitree's image service
(``hardware.teleimager``), stamped on arrival (the service sends no stamps); a binocular frame is published on the
stereo topic exactly as it came.

Publishes (``ros.image_messages``, reliable, depth 1) ``camera/{left,right}/image_raw`` (rgb8), ``…/compressed``
(JPEG), ``camera/{left,right}/camera_info``, ``camera/stereo/image_raw/compressed`` (left | right) in the optical
frames ``{left,right}_eye_optical`` that it adds to /tf_static; only the forms someone subscribes to are made.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus
from nav_msgs.msg import Odometry
from rclpy.node import Node
from sensor_msgs.msg import Imu, JointState

from g1_teleop.core.camera_images import SIDES, StereoFrame, intrinsics
from g1_teleop.core.joint_vector import JointIndex, MalformedJointMessage
from g1_teleop.core.robot_description import load_robot
from g1_teleop.core.settings import check_settings, setting
from g1_teleop.core.stamp_sync import StampSync
from g1_teleop.hardware.teleimager import CONFIG_PORT, DEFAULT_HOST, TeleimagerSource
from g1_teleop.ros.diagnostics import Diagnostics, WarnOnce
from g1_teleop.ros.image_messages import STEREO_TOPIC, EyePublishers
from g1_teleop.ros.messages import imu_orientation_wxyz, stamp_ns
from g1_teleop.ros.node_main import run
from g1_teleop.ros.parameters import ConfigError, declare_config
from g1_teleop.ros.qos import QOS_STATE

SOURCES = ("render", "teleimager")
BASE_POSES = ("odom", "imu", "none")
START_TIMEOUT_S = 120.0  # the renderer's set-up: GL probe, model, context


@dataclass(frozen=True)
class EyesConfig:
    """eyes' ROS parameters (read once at start-up)."""

    source: str = setting("render", "where the images come from: render (the MuJoCo eye cameras of a copy of the "
                          "robot) or teleimager (the real head camera through Unitree's image service)",
                          choices=SOURCES)
    width: int = setting(640, "render: one eye's image width (pixels)", minimum=16, maximum=4096)
    height: int = setting(480, "render: one eye's image height (pixels)", minimum=16, maximum=4096)
    rate_hz: float = setting(30.0, "render: at most this many frames per second of the robot's clock (the "
                             "joint_states stamps: simulated time in simulation) (Hz)", positive=True)
    jpeg_quality: int = setting(80, "JPEG quality of the compressed topics (televuer streams at 80)", minimum=1,
                                maximum=95)
    shadows: bool = setting(False, "render: draw shadows (about 5x the render time on the CPU)")
    gl: str = setting("", "render: offscreen OpenGL, egl or osmesa; empty: MUJOCO_GL if it names one, else EGL "
                      "if it works, else OSMesa", choices=("", "egl", "osmesa"))
    model: str = setting("", "render: robot model file (MJCF .xml or URDF); empty: the one robot_config names")
    robot_config: str = setting("", "robot configuration (YAML); empty: config/g1_29dof.yaml")
    base_pose: str = setting("odom", "render: where the robot stands: odom (nav_msgs/Odometry, the simulator's "
                             "ground truth), imu (IMU orientation, pelvis over its feet at x = y = 0) or none",
                             choices=BASE_POSES)
    image_server: str = setting(DEFAULT_HOST, "teleimager: the image service's host (the robot's PC2)")
    config_port: int = setting(CONFIG_PORT, "teleimager: TCP port of its configuration service (GET_DATA → JSON)",
                               minimum=1, maximum=65535)
    head_port: int = setting(0, "teleimager: TCP port of the head camera's JPEG stream; 0: the one the service's "
                             "configuration names (a server without that service: give it; frames wider than twice "
                             "their height count as left | right)", minimum=0, maximum=65535)
    nice: int = setting(10, "raise this process's niceness by this much at start, so that the renderer yields the "
                        "CPU to the simulator and the controllers (0: the same priority)", minimum=0, maximum=19)
    fovy_deg: float = setting(60.0, "teleimager: one eye's vertical field of view for camera_info (deg; the service "
                              "sends no intrinsics)", minimum=1.0, maximum=179.0)

    def __post_init__(self) -> None:
        check_settings(self)


class Eyes(Node):
    """The head cameras' images, camera_info and optical frames (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__("eyes")
        cfg = self.cfg = declare_config(self, EyesConfig)
        os.nice(cfg.nice)  # this thread, and the threads and processes it starts: the renderer, its GL probe
        self.robot = load_robot(Path(cfg.robot_config) if cfg.robot_config else None,
                                Path(cfg.model) if cfg.model else None)
        eyes = {side: self.robot.frames[f"{side}_eye"] for side in SIDES}
        self.out = EyePublishers(self, {side: eye.name for side, eye in eyes.items()},
                                 float(np.linalg.norm(np.subtract(eyes["right"].position, eyes["left"].position))))
        self.warn = WarnOnce(self)
        self.skipped = 0
        self.work_s = 0.0  # the last frame's render (or decode) and coding time
        self.detail = ""
        self.failure: Exception | None = None
        self.ready, self.halt = threading.Event(), threading.Event()
        self.wake = threading.Condition()
        self.pending: tuple[int, np.ndarray, np.ndarray | None, np.ndarray | None] | None = None
        self.diagnostics = Diagnostics(self, lambda: {"source": cfg.source, "frames_published": self.out.published,
                                                      "frames_unsubscribed": self.skipped, "detail": self.detail,
                                                      "work_ms": round(self.work_s * 1e3, 1)})
        if cfg.source == "render":
            self.start_render_inputs()
        self.worker = threading.Thread(target=self.work, name="eyes", daemon=True)
        self.worker.start()
        if not self.ready.wait(START_TIMEOUT_S) or self.failure is not None:
            self.stop_worker()
            raise ConfigError(f"eyes cannot use source {cfg.source}: {self.failure or 'no renderer within 120 s'}")
        self.get_logger().info(f"{cfg.source}: {self.detail}; topics camera/{{left,right}}/…, {STEREO_TOPIC}")

    def start_render_inputs(self) -> None:
        self.index = JointIndex(self.robot.joint_names)
        base = self.cfg.base_pose
        self.sync = StampSync(("joint_states",) if base == "none" else ("joint_states", "base"))
        self.last_slot = -1
        self.create_subscription(JointState, "joint_states", self.on_joint_states, QOS_STATE)
        if base == "odom":
            self.create_subscription(Odometry, "odom", self.on_odom, QOS_STATE)
        elif base == "imu":
            from g1_teleop.core.frame_tree import FrameTree
            from g1_teleop.core.pinocchio_model import build_pinocchio_model

            self.tree = FrameTree(self.robot, build_pinocchio_model(self.robot))
            self.create_subscription(Imu, "imu", lambda m: self.offer("base", m.header.stamp,
                                                                      (None, imu_orientation_wxyz(m))), QOS_STATE)

    def on_joint_states(self, msg: JointState) -> None:
        try:
            self.offer("joint_states", msg.header.stamp, self.index.parse(msg.name, msg.position).position)
        except MalformedJointMessage as exc:
            self.warn(exc.kind, f"ignored joint_states: {exc}")

    def on_odom(self, msg: Odometry) -> None:
        p, o = msg.pose.pose.position, msg.pose.pose.orientation
        self.offer("base", msg.header.stamp, (np.array([p.x, p.y, p.z]), np.array([o.w, o.x, o.y, o.z])))

    def offer(self, key: str, stamp, value: object) -> None:
        """A new input; once joint_states and the base share a stamp in a new frame slot, it is the next pose."""
        self.sync.put(key, stamp_ns(stamp), value)
        now = self.sync.stamp("joint_states")
        slot = int(now * self.cfg.rate_hz // 1_000_000_000)
        if now < 0 or slot == self.last_slot or not self.sync.complete(now):
            return
        self.last_slot = slot
        q = self.sync.value("joint_states")
        p, quat = self.sync.value("base") if self.cfg.base_pose != "none" else (None, None)
        if quat is not None and self.cfg.base_pose == "imu":
            p = np.array([0.0, 0.0, self.tree.pelvis_height(q, quat)])
        with self.wake:
            self.pending = (now, q, p, quat)
            self.wake.notify()

    def work(self) -> None:
        """The worker thread: renders or receives until halted. A signal that shuts the context down first ends it
        quietly (its next publish fails), as the executor's own stop."""
        try:
            self.render_loop() if self.cfg.source == "render" else self.teleimager_loop()
        except Exception:
            if self.context.ok() and not self.halt.is_set():
                raise

    def render_loop(self) -> None:
        from g1_teleop.sim.eye_renderer import EyeRenderer, choose_gl_backend, gl_renderer_name

        try:
            backend = choose_gl_backend(self.cfg.gl)
            renderer = EyeRenderer(self.robot, self.cfg.width, self.cfg.height, backend, self.cfg.shadows)
        except Exception as exc:  # reported by the constructor, in one line
            self.failure = exc
            self.ready.set()
            return
        K = {side: renderer.K(side) for side in SIDES}
        self.detail = f"{backend.upper()}, {gl_renderer_name()}, {self.cfg.width}x{self.cfg.height} per eye"
        self.diagnostics.set(DiagnosticStatus.OK, "rendering")
        self.ready.set()
        try:
            while True:
                with self.wake:
                    self.wake.wait_for(lambda: self.pending is not None or self.halt.is_set())
                    if self.halt.is_set():
                        return
                    pending, self.pending = self.pending, None
                if pending is None:
                    continue
                stamp, q, p, quat = pending
                if not self.out.subscribed():
                    self.skipped += 1
                    continue
                start = time.perf_counter()
                renderer.set_pose(q, p, quat)
                left, right = renderer.render_both()
                self.out.publish(StereoFrame(left=left, right=right, quality=self.cfg.jpeg_quality), stamp, K)
                self.work_s = time.perf_counter() - start
        finally:
            renderer.close()

    def teleimager_loop(self) -> None:
        cfg = self.cfg
        source = TeleimagerSource(cfg.image_server, cfg.config_port, cfg.head_port, cfg.jpeg_quality)
        self.detail = source.describe()
        self.diagnostics.set(DiagnosticStatus.WARN, "waiting for the image service")
        self.ready.set()  # the service may come up after this node: keep asking
        if not source.connect(self.halt, lambda message: self.warn("teleimager", message)):
            return
        self.detail = source.describe()
        self.diagnostics.set(DiagnosticStatus.OK, "receiving")
        self.get_logger().info(f"teleimager: {self.detail}")
        try:
            while not self.halt.is_set():
                try:
                    frame = source.receive(timeout_s=0.2)
                except ValueError as exc:
                    self.warn("frame", f"ignored a frame from the head camera: {exc}")
                    continue
                if frame is None:
                    continue
                if not self.out.subscribed():
                    self.skipped += 1
                    continue
                height, width = frame.shape
                K = intrinsics(cfg.fovy_deg, width, height)
                self.out.publish(frame, self.get_clock().now().nanoseconds, {side: K for side in SIDES})
        finally:
            source.close()

    def stop_worker(self) -> None:
        with self.wake:
            self.halt.set()
            self.wake.notify()
        self.worker.join(timeout=5.0)

    def destroy_node(self) -> None:
        self.stop_worker()
        super().destroy_node()


def main(args: list[str] | None = None) -> None:
    run(Eyes, args)


if __name__ == "__main__":
    main()
