"""A live operator end to end: the simulation graph (real time, as a live operator runs it; its nodes over DDS) with
``source:=webxr``, driven by a simulated headset page speaking vuer's real protocol (msgpackr events over a TLS
WebSocket, ``operator.webxr_client``) to xr_input's WebXR server.

The page streams at 60 Hz of wall time; the operator's motions are functions of the simulated time the test sees,
and every figure (how far a wrist moved, when the clutch held or went home) is read in simulated time from
joint_states and teleop/arm_target. (In lockstep the simulation outran the page on a loaded machine: 200 ms of
simulated time were 40 ms of wall time, so a page late by that much was tracking lost to the clutch. With two busy
loops beside it the test failed 3 runs of 4 in lockstep and passed 4 of 4 in real time.)

Before the operator engages the arms do not follow; the ENGAGE gesture (both hands pinched 0.5 s) engages with no
jump and the wrists follow the operator's motions since then; teleop/pause holds, teleop/engage resumes
re-anchored; when the page stops sending, the arms hold after 200 ms and after 2 s go home (the default arm pose) at
most 0.1 m/s; the hands' landmarks come out on xr/left_hand, xr/right_hand; a controller's A button reaches the
policy, which refuses LOCOMOTION (the built-in controller has no walking policy) with its reason.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from collections.abc import Callable

import numpy as np
import pytest
import rclpy
from geometry_msgs.msg import PoseArray, PoseStamped
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState, Joy
from std_msgs.msg import String
from std_srvs.srv import Trigger

from g1_teleop.launching.graph_description import NodeSpec, load_graph
from g1_teleop.launching.process_runner import GraphProcesses
from g1_teleop.operator.webxr_client import (
    ControllerInput,
    HeadsetPage,
    camera_move,
    controller_move,
    hand_move,
    page_ssl_context,
    synthetic_hand,
)
from g1_teleop.operator.webxr_events import HAND_JOINTS, INDEX_TIP, THUMB_TIP
from g1_teleop.operator.xr_certificates import make_certificates
from g1_teleop.operator.xr_frames import DEFAULT_WORLD_T_HEAD, robot_to_openxr
from support.ports import free_port

pytestmark = pytest.mark.integration

RELIABLE = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100, reliability=ReliabilityPolicy.RELIABLE)
BEST_EFFORT = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100, reliability=ReliabilityPolicy.BEST_EFFORT)
LATCHED = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
HOME_SPEED_M_S = 0.1  # retarget's home_speed_m_s (ClutchConfig's default)
WALL_TIMEOUT_S = 30.0


def at(x: float, y: float, z: float) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = (x, y, z)
    return T


def seconds(stamp) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


class Observer:
    """The test's ROS side, spinning in a thread: what the graph publishes, with the simulated time of its arrival."""

    def __init__(self, context, joint_names: tuple[str, ...]) -> None:
        self.node = rclpy.create_node("webxr_graph_observer", context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.joint_names = joint_names
        self.states: list[tuple[float, np.ndarray]] = []
        self.arm_targets: list[tuple[float, dict[str, float]]] = []
        self.clutch: list[tuple[float, str]] = []
        self.hands: dict[str, PoseArray] = {}
        self.wrists: list[tuple[float, np.ndarray]] = []
        self.joys: list[Joy] = []
        self.status: list[str] = []
        n = self.node
        n.create_subscription(JointState, "joint_states", self.on_state, RELIABLE)
        n.create_subscription(JointState, "teleop/arm_target", lambda m: self.arm_targets.append(
            (seconds(m.header.stamp), dict(zip(m.name, m.position, strict=True)))), RELIABLE)
        n.create_subscription(String, "teleop/clutch", lambda m: self.clutch.append((self.now(), m.data)), LATCHED)
        n.create_subscription(String, "xr/status", lambda m: self.status.append(m.data), LATCHED)
        for side in ("left", "right"):
            n.create_subscription(PoseArray, f"xr/{side}_hand", lambda m, side=side: self.hands.__setitem__(side, m),
                                  BEST_EFFORT)
        n.create_subscription(PoseStamped, "xr/left_wrist", lambda m: self.wrists.append(
            (seconds(m.header.stamp), np.array([m.pose.position.x, m.pose.position.y, m.pose.position.z]))),
            BEST_EFFORT)
        n.create_subscription(Joy, "joy", self.joys.append, BEST_EFFORT)
        self.engage = n.create_client(Trigger, "teleop/engage")
        self.pause = n.create_client(Trigger, "teleop/pause")
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self.spin, daemon=True)
        self.thread.start()

    def spin(self) -> None:
        while not self._stop.is_set():
            self.executor.spin_once(timeout_sec=0.05)

    def close(self) -> None:
        self._stop.set()
        self.thread.join(timeout=5)
        self.executor.shutdown()
        self.node.destroy_node()

    def on_state(self, msg: JointState) -> None:
        self.states.append((seconds(msg.header.stamp), np.asarray(msg.position)))

    def now(self) -> float:
        """The simulated time: the newest joint state's stamp (0 before the first)."""
        return self.states[-1][0] if self.states else 0.0

    def clutch_state(self) -> str | None:
        return self.clutch[-1][1] if self.clutch else None

    def engage_when_tracked(self, timeout_s: float = 10.0) -> Trigger.Response:
        """teleop/engage, again every 0.2 s while retarget answers that it has no valid hand tracking or no joint
        state yet (as an operator does when told to wait: at start-up the first samples and states may still be on
        the way; a full check once called before retarget's first state)."""
        deadline = time.monotonic() + timeout_s
        while not (answer := self.call(self.engage)).success and any(
                waiting in answer.message for waiting in ("no valid hand tracking", "no joint state yet")):
            if time.monotonic() > deadline:
                break
            time.sleep(0.2)
        return answer

    def call(self, client, timeout_s: float = WALL_TIMEOUT_S) -> Trigger.Response:
        assert client.wait_for_service(timeout_sec=timeout_s), f"no {client.srv_name} service"
        future = client.call_async(Trigger.Request())
        deadline = time.monotonic() + timeout_s
        while not future.done():
            assert time.monotonic() < deadline, f"{client.srv_name} gave no answer"
            time.sleep(0.01)
        return future.result()


class Operator:
    """The simulated headset page's operator: both wrists at a base pose plus ``offset`` (pelvis frame, m), hands
    open or pinched; ``stream`` sends CAMERA_MOVE and HAND_MOVE at 60 Hz while ``sending``."""

    LEFT, RIGHT = at(0.3, 0.25, 0.1), at(0.3, -0.25, 0.1)

    def __init__(self) -> None:
        self.offset = np.zeros(3)
        self.pinch = False
        self.sending = True
        self.sent = 0

    def wrists(self) -> tuple[np.ndarray, np.ndarray]:
        return at(*(self.LEFT[:3, 3] + self.offset)), at(*(self.RIGHT[:3, 3] + self.offset))

    async def stream(self, page: HeadsetPage) -> None:
        while True:
            if self.sending:
                xr = robot_to_openxr(DEFAULT_WORLD_T_HEAD, *self.wrists(), hand_tracking=True)
                pinch_m = 0.01 if self.pinch else 0.06
                await page.send(camera_move(xr.xr_T_head))
                await page.send(hand_move(synthetic_hand(xr.xr_T_left_wrist, pinch_m),
                                          synthetic_hand(xr.xr_T_right_wrist, pinch_m), time.time() * 1000.0))
                self.sent += 1
            await asyncio.sleep(1 / 60)


def graph_nodes(cert_dir: str, hands_port: int, controllers_port: int) -> list[NodeSpec]:
    nodes = [n for n in load_graph("sim").resolve({"source": "webxr", "xr_port": str(hands_port), "lockstep": "false"})
             if n.name != "robot_state"]
    xr_input = next(n for n in nodes if n.name == "xr_input")
    hands = dataclasses.replace(xr_input, parameters={**xr_input.parameters, "host": "127.0.0.1",
                                                      "cert_dir": cert_dir})
    controllers = dataclasses.replace(hands, name="xr_input_controllers", required=False, container="", parameters={
        **hands.parameters, "port": controllers_port, "input": "controllers"})
    return [n for n in nodes if n.name != "xr_input"] + [hands, controllers]


async def connect(port: int, ca: str, timeout_s: float = 60.0) -> HeadsetPage:
    """The page, once xr_input's server listens."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            page = HeadsetPage(f"wss://127.0.0.1:{port}/", page_ssl_context(ca))
            await page.__aenter__()
            await page.receive()  # the Hands/MotionControllers element the server asks the page to stream
            return page
        except OSError:
            assert time.monotonic() < deadline, f"xr_input's WebXR server did not listen on {port}"
            await asyncio.sleep(0.5)


def test_a_live_operator_drives_the_arms_through_the_clutch(rclpy_context, tmp_path, fk, robot) -> None:
    files = make_certificates(tmp_path / "xr", ("127.0.0.1",), ("localhost",))
    hands_port, controllers_port = free_port(), free_port()
    lines: list[str] = []
    nodes = graph_nodes(str(files.folder), hands_port, controllers_port)
    graph = GraphProcesses(nodes, output=lines.append)
    graph.start()
    seen = Observer(rclpy_context, robot.joint_names)
    arm_index = {name: i for i, name in enumerate(robot.joint_names)}
    home = np.array([T[:3, 3] for T in fk(robot.default_q)])
    figures: dict[str, float] = {}

    def log() -> str:
        return "\n".join(lines[-80:])

    def reached(q: np.ndarray) -> np.ndarray:
        """(2, 3) the wrists (left_ee, right_ee) of joints q, pelvis frame."""
        return np.array([T[:3, 3] for T in fk(q)])

    def robot_wrists() -> np.ndarray:
        return reached(seen.states[-1][1])

    async def until(predicate: Callable[[], bool], what: str, timeout_s: float = WALL_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout_s
        while not predicate():
            assert graph.check() is None, f"{graph.failure}\n{log()}"
            assert time.monotonic() < deadline, f"{what}: not within {timeout_s} s\n{log()}"
            await asyncio.sleep(0.01)

    async def sim_wait(duration_s: float) -> float:
        end = seen.now() + duration_s
        await until(lambda: seen.now() >= end, f"the simulation to reach {end:.2f} s")
        return seen.now()

    async def move(operator: Operator, delta: np.ndarray, duration_s: float) -> None:
        """The operator's wrists move by ``delta`` at constant speed over ``duration_s`` of simulated time."""
        start, origin = seen.now(), operator.offset.copy()
        while (s := (seen.now() - start) / duration_s) < 1.0:
            operator.offset = origin + delta * s
            await asyncio.sleep(0.005)
            assert graph.check() is None, log()
        operator.offset = origin + delta

    async def session() -> None:
        await until(lambda: seen.now() > 0.1 and seen.clutch_state() is not None, "the graph running", timeout_s=90)
        operator = Operator()
        page = await connect(hands_port, str(files.ca))
        streaming = asyncio.ensure_future(operator.stream(page))
        try:
            # The page is followed: landmarks in the hand frame, 25 in WebXR order, the thumb 6 cm from the index.
            await until(lambda: "left" in seen.hands and "right" in seen.hands, "xr/left_hand and xr/right_hand")
            for side in ("left", "right"):
                poses = seen.hands[side].poses
                assert len(poses) == len(HAND_JOINTS) and seen.hands[side].header.frame_id == f"xr_{side}_hand"
                points = np.array([[p.position.x, p.position.y, p.position.z] for p in poses])
                assert np.linalg.norm(points[0]) < 1e-6  # the wrist is the hand frame's origin
                assert abs(np.linalg.norm(points[THUMB_TIP] - points[INDEX_TIP]) - 0.06) < 1e-4
            await until(lambda: any(s.startswith("headset 127.0.0.1 connected: hands") for s in seen.status),
                        f"xr/status connected (got {seen.status})")
            assert seen.clutch_state() == "disengaged"

            # 1. Not engaged: the operator moves 6 cm, the arms stay.
            await sim_wait(1.0)
            before, operator_before = robot_wrists(), seen.wrists[-1][1]
            await move(operator, np.array([0.06, 0.0, 0.0]), 0.6)
            await sim_wait(0.8)
            assert np.linalg.norm(seen.wrists[-1][1] - operator_before) > 0.055  # the operator did move
            still = np.linalg.norm(robot_wrists() - before, axis=1)
            figures["not_engaged_mm"] = still.max() * 1e3
            assert still.max() < 0.005, f"the arms followed before the engage: {still * 1e3} mm"

            # 2. ENGAGE gesture (both pinched for 0.5 s): engaged, no jump.
            operator.pinch = True
            await until(lambda: seen.clutch_state() == "engaged", "the clutch engaged by the pinch")
            operator.pinch = False
            anchor, at_engage = robot_wrists(), seen.now()
            await until(lambda: any("clutch engaged (Joy button)" in line for line in lines), "retarget's log line")
            await sim_wait(0.5)
            jump = np.linalg.norm(robot_wrists() - anchor, axis=1)
            figures["engage_jump_mm"] = jump.max() * 1e3
            assert jump.max() < 0.004, f"the wrists moved {jump * 1e3} mm after the engage at {at_engage:.2f} s"

            # 3. The wrists follow the operator's motion since the engage.
            d1 = np.array([0.04, 0.0, 0.05])
            await move(operator, d1, 1.0)
            await sim_wait(1.5)
            followed = robot_wrists() - anchor
            error = np.linalg.norm(followed - d1, axis=1)
            figures["follow_error_mm"] = error.max() * 1e3
            assert error.max() < 0.015, f"followed {followed * 1e3} mm for {d1 * 1e3} mm"

            # 4. Pause: the arms hold while the operator moves.
            answer = seen.call(seen.pause)
            assert answer.success and answer.message == "paused by the operator", answer
            await until(lambda: seen.clutch_state() == "disengaged", "the clutch paused")
            held = robot_wrists()
            await move(operator, np.array([0.0, 0.0, -0.05]), 0.5)
            await sim_wait(0.8)
            drift = np.linalg.norm(robot_wrists() - held, axis=1)
            figures["paused_drift_mm"] = drift.max() * 1e3
            assert drift.max() < 0.004, f"the arms moved {drift * 1e3} mm while paused"

            # 5. Resume: re-anchored where the arms are (no jump), then relative again.
            answer = seen.call(seen.engage)
            assert answer.success and answer.message == "engaged by the operator", answer
            resumed = robot_wrists()
            await sim_wait(0.5)
            jump = np.linalg.norm(robot_wrists() - resumed, axis=1)
            figures["resume_jump_mm"] = jump.max() * 1e3
            assert jump.max() < 0.004, f"the wrists moved {jump * 1e3} mm at the resume"
            d2 = np.array([0.03, 0.0, 0.0])
            await move(operator, d2, 0.8)
            await sim_wait(1.5)
            error = np.linalg.norm(robot_wrists() - resumed - d2, axis=1)
            figures["resume_follow_error_mm"] = error.max() * 1e3
            assert error.max() < 0.015, f"after the resume: {(robot_wrists() - resumed) * 1e3} mm for {d2 * 1e3}"

            # 6. Tracking lost (the page stops sending): hold after 200 ms, home after 2 s.
            operator.sending = False
            await until(lambda: seen.clutch_state() == "homing", "the clutch homing")
            last_sample = seen.wrists[-1][0]
            await until(lambda: np.linalg.norm(robot_wrists() - home, axis=1).max() < 0.01 or
                        seen.now() > last_sample + 6.0, "the arms home")
            await sim_wait(0.3)
        finally:
            streaming.cancel()
            await page.__aexit__(None, None, None)

        # (checked here, after the page closed; the figures are in simulated time)
        # The clutch's states in the order they came, timed by the simulated time the test had seen then (it may
        # lag the graph by a few ticks); the start of the homing from the arm targets themselves (stamped).
        # (An "engaged" first: the page's stream had paused over 200 ms just before it stopped, and its last samples
        # brought tracking back: seen once in a full check, on a loaded machine.)
        transitions = [(t - last_sample, s) for t, s in seen.clutch if t > last_sample - 0.1]
        while transitions and transitions[0][1] == "engaged":
            transitions.pop(0)
        assert [s for _, s in transitions] == ["holding", "homing"], transitions
        holding = transitions[0][0]
        states = [(t, reached(q)) for t, q in seen.states if t > last_sample]
        hold = [w for t, w in states if 0.5 <= t - last_sample <= 1.9]
        drift = max(np.linalg.norm(w - hold[0], axis=1).max() for w in hold)
        figures["holding_drift_mm"] = drift * 1e3
        assert drift < 0.003, f"the arms moved {drift * 1e3:.1f} mm while holding"
        targets = [(t, reached(target_q(seen, t, arms, arm_index))) for t, arms in seen.arm_targets
                   if t > last_sample + 0.5]
        held_target = targets[0][1]
        homing = next(t for t, w in targets if np.linalg.norm(w - held_target, axis=1).max() > 0.001) - last_sample
        figures.update(holding_after_s=holding, homing_after_s=homing)
        assert 0.1 < holding < 0.5 and 1.98 < homing < 2.15, (transitions, homing)
        targets = [(t, w) for t, w in targets if t >= last_sample + homing]
        speeds = [np.linalg.norm(b - a, axis=1).max() / (tb - ta)
                  for (ta, a), (tb, b) in zip(targets[::10], targets[10::10], strict=False)]
        figures["homing_speed_max_m_s"] = max(speeds)
        assert max(speeds) <= HOME_SPEED_M_S * 1.15, f"homing at {max(speeds):.3f} m/s"
        assert np.linalg.norm(targets[-1][1] - home, axis=1).max() < 0.01, (targets[-1][1], home)
        away = np.linalg.norm(hold[0] - home, axis=1).max()
        assert away > 0.05, f"the arms were only {away * 1e3:.0f} mm from home: homing not shown"
        final = np.linalg.norm(robot_wrists() - home, axis=1).max()
        figures.update(away_from_home_mm=away * 1e3, final_from_home_mm=final * 1e3)
        assert final < 0.015, f"{final * 1e3:.1f} mm from home at the end"

    async def controllers() -> None:
        """The controllers' page: A reaches the policy through joy (frame xr_controllers)."""
        page = await connect(controllers_port, str(files.ca))
        try:
            xr = robot_to_openxr(DEFAULT_WORLD_T_HEAD, *Operator().wrists(), hand_tracking=False)
            await page.send(camera_move(xr.xr_T_head))
            for a in (False, True, True, False):
                await page.send(controller_move(ControllerInput(xr.xr_T_left_wrist),
                                                ControllerInput(xr.xr_T_right_wrist, a=a), time.time() * 1000.0))
                await sim_wait(0.1)
            await until(lambda: any("LOCOMOTION refused (joy)" in line for line in lines), "the policy's answer to A")
        finally:
            await page.__aexit__(None, None, None)
        joy = next(j for j in seen.joys if j.header.frame_id == "xr_controllers" and j.buttons[0] == 1)
        assert len(joy.axes) == 8 and len(joy.buttons) == 12
        refusal = next(line for line in lines if "LOCOMOTION refused (joy)" in line)
        assert "[policy]" in refusal and "no locomotion policy" in refusal, refusal

    started = time.monotonic()
    try:
        asyncio.run(session())
        asyncio.run(controllers())
        assert sorted(graph.alive()) == sorted(n.name for n in nodes), log()
    finally:
        graph.stop()
        seen.close()
    figures["wall_s"] = time.monotonic() - started
    print({k: round(v, 3) for k, v in figures.items()})
    assert figures["wall_s"] < 90, f"took {figures['wall_s']:.0f} s"


def target_q(seen: Observer, t: float, arms: dict[str, float], arm_index: dict[str, int]) -> np.ndarray:
    """The joints the arm target stamped ``t`` asks for: its arm joints on the body measured then."""
    q = next(q for ts, q in reversed(seen.states) if ts <= t + 1e-9).copy()
    for name, value in arms.items():
        q[arm_index[name]] = value
    return q
