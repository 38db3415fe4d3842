"""hw_bridge against the virtual robot: the start-up sequence, the faults and the e-stop, over real DDS.

Per test: the virtual robot (MuJoCo G1 on its gantry, CycloneDDS domain private to the test, on lo) and
hw_bridge as separate processes; this process plays the policy (joint_command at 50 Hz on the test's
ROS domain), the operator (services, a Joy device, the wireless remote through rt/wirelesscontroller)
and a probe on the robot's topics that timestamps every LowCmd and LowState on arrival. The bridge's
state is read from its diagnostics (published on every transition) and from the LowCmd gains.
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable

import numpy as np
import pytest
import rclpy
import yaml
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState, Joy
from std_srvs.srv import Trigger

from g1_teleop.core.realtime_loop import Pacer
from g1_teleop.core.robot_description import load_robot
from g1_teleop.launching.graph_description import NodeSpec
from g1_teleop.launching.process_runner import GraphProcesses
from g1_teleop.ros.messages import stamp_ns
from g1_teleop.ros.qos import QOS_LATCHED
from g1_teleop.tools.robot_probe import LowCmdSample, RobotProbe

pytestmark = pytest.mark.integration

SDK_MISSING = "unitree_sdk2py not installed (scripts/install_robot_sdk.sh installs it): hw_bridge needs it"
QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10, reliability=ReliabilityPolicy.RELIABLE)
JOY_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
ROBOT = load_robot()
NAMES = list(ROBOT.joint_names)
ELBOW = NAMES.index("left_elbow_joint")
HOLD_KP = ROBOT.gains("default")[0]
DAMPING_KD = ROBOT.gains("damping")[1]
POLICY_PERIOD_S = 0.01  # the fake policy's (the graph's runs at 50 Hz): margin for a loaded test machine
COMMAND_TIMEOUT_S = 0.045  # BridgeSafetyConfig's defaults: a command this old is late, held for the grace
GRACE_S = 0.5
# Elsewhere a longer one, so that a loaded test machine (a process starved for ~50 ms, seen on 2 shared
# cores) does not end an ACTIVE phase early.
# Timeouts for tests of something else than the timeouts: the virtual robot shares 2 slow cores with the bridge and
# this process, and full checks saw it send a LowState 102 ms late, past the shipped 0.1 s (the bridge damped, as it
# must), and a full CI run saw this process (the policy's thread) starved for 0.5 s while the virtual robot ran at a
# third of real time: the command grace goes to 1.5 s. The shipped values are what the timeout tests (make_rig()
# without parameters) check.
STATE_TIMEOUT_S = 0.25
RELAXED = {"command_timeout_s": 0.25, "command_grace_s": 1.5, "state_timeout_s": STATE_TIMEOUT_S}
TRIALS = 10  # damping trials of the grace test
RAMP_S = 0.4  # shorter than the default 2 s, so that the repeated bring-ups stay quick


@pytest.fixture
def robot_domain(ros_domain) -> int:
    """A CycloneDDS domain for the robot's topics, private to the test: 1–100, never a ROS domain
    of these tests (101–200), whose RTPS ports it would share."""
    pytest.importorskip("unitree_sdk2py", reason=SDK_MISSING)
    return 1 + (ros_domain - 101) % 100


class VirtualRobotProcess:
    def __init__(self, domain_id: int, lines: list[str], options: tuple[str, ...] = ()) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "g1_teleop.tools.virtual_robot", "--domain-id", str(domain_id), "--interface", "lo",
             "--gantry", *options], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            text=True, bufsize=1, start_new_session=True)
        self._pump = threading.Thread(target=self._read, args=(lines,), daemon=True)
        self._pump.start()

    def _read(self, lines: list[str]) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            lines.append("[virtual_robot] " + line.rstrip("\n"))

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(5.0)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._pump.join(timeout=2.0)


class Rig:
    """The two processes, the probe, and a ROS node playing the policy and the operator."""

    def __init__(self, context, robot_domain: int, parameters: dict | None = None, robot_first: bool = True,
                 dex3: bool = False, robot_options: tuple[str, ...] = ()) -> None:
        self.lines: list[str] = []
        self.robot_domain = robot_domain
        self.robot_options = (*robot_options, "--dex3") if dex3 else robot_options
        self.probe = RobotProbe(robot_domain, hands=dex3)
        self.robot: VirtualRobotProcess | None = None
        if robot_first:
            self.start_robot()
        params = {"robot_domain_id": robot_domain, "network_interface": "lo", "ramp_duration_s": RAMP_S,
                  "dex3": dex3, **(parameters or {})}
        self.graph = GraphProcesses([NodeSpec("hw_bridge", "hw_bridge", True, params)], output=self.lines.append)
        self.graph.start()
        self.node = rclpy.create_node("bridge_test", context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.command_pub = self.node.create_publisher(JointState, "joint_command", QOS)
        self.joy_pub = self.node.create_publisher(Joy, "joy", JOY_QOS)
        self.gains_pub = self.node.create_publisher(JointState, "teleop/gains", QOS_LATCHED)
        self.diagnostics: list[tuple[float, DiagnosticStatus]] = []
        self.joint_states: list[JointState] = []
        self.node.create_subscription(DiagnosticArray, "diagnostics", self._on_diagnostics, QOS)
        self.node.create_subscription(JointState, "joint_states", self.joint_states.append, QOS)
        self.clients = {name: self.node.create_client(Trigger, f"hw_bridge/{name}")
                        for name in ("start", "activate", "estop")}
        self.target = ROBOT.default_q.copy()
        self.publishing = False
        self.publish_times: list[float] = []  # time.monotonic() just before each publish
        self.malformed: list[JointState] = []  # sent one by one, each 3 ms before a good command
        self._closing = threading.Event()
        self._silent = threading.Event()  # the policy thread has seen ``publishing`` false
        self._policy = threading.Thread(target=self._play_policy, daemon=True)
        self._policy.start()

    def start_robot(self) -> None:
        self.robot = VirtualRobotProcess(self.robot_domain, self.lines, self.robot_options)

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        # when the bridge said it (its stamp, on this process's monotonic clock), not when this busy process heard it
        t = stamp_ns(msg.header.stamp) / 1e9 - (time.time() - time.monotonic())
        self.diagnostics.extend((t, s) for s in msg.status if s.name.endswith("hw_bridge"))

    @property
    def log(self) -> str:
        return "\n".join(self.lines)

    @property
    def state(self) -> str:
        return self.diagnostics[-1][1].message.split(":")[0] if self.diagnostics else ""

    def _play_policy(self) -> None:
        """joint_command = ``target`` every POLICY_PERIOD_S while ``publishing`` (its own thread, so that
        spinning never delays it)."""
        pacer = Pacer(POLICY_PERIOD_S, max_lag_s=POLICY_PERIOD_S)
        while not self._closing.is_set():
            pacer.wait()
            if not self.publishing:
                self._silent.set()
            else:
                self._silent.clear()
                if self.malformed:  # before the good one: joint_command keeps one message (depth 1)
                    self.command_pub.publish(self.malformed.pop(0))
                    time.sleep(0.003)
                self.publish_times.append(time.monotonic())
                self.command_pub.publish(JointState(name=NAMES, position=self.target.tolist()))

    def stop_publishing(self) -> float:
        """Stop the policy; returns when its last joint_command was published (time.monotonic())."""
        self.publishing = False
        self._silent.clear()
        assert self._silent.wait(1.0)
        return self.publish_times[-1]

    def spin(self, seconds: float, until: Callable[[], bool] | None = None) -> bool:
        """Spin for ``seconds``, or until ``until()`` holds (returns whether it did)."""
        deadline = time.monotonic() + seconds
        while True:
            if until is not None and until():
                return True
            if time.monotonic() >= deadline:
                return until is None
            self.executor.spin_once(timeout_sec=0.005)

    def wait_state(self, state: str, timeout_s: float = 5.0) -> None:
        assert self.spin(timeout_s, lambda: self.state == state), \
            f"hw_bridge did not reach {state} (now {self.state or 'no diagnostics'}):\n{self.log}"

    def call(self, name: str) -> Trigger.Response:
        client = self.clients[name]
        assert self.spin(10.0, client.service_is_ready), f"no service hw_bridge/{name}:\n{self.log}"
        future = client.call_async(Trigger.Request())
        assert self.spin(3.0, future.done), f"hw_bridge/{name} did not answer:\n{self.log}"
        return future.result()

    def bring_up(self) -> None:
        """ZERO_TORQUE or DAMP → start → HOLD → (commands flowing) activate → ACTIVE."""
        response = self.call("start")
        assert response.success, response.message
        self.wait_state("HOLD", RAMP_S + 2.0)
        self.publishing = True
        self.spin(0.1)
        for _ in range(3):  # a starved process can leave a command gap at the moment of activation
            response = self.call("activate")
            if response.success or "no valid joint_command" not in response.message:
                break
        assert response.success, response.message
        self.wait_state("ACTIVE", 1.0)

    def close(self) -> None:
        if self._closing.is_set():
            return
        self._closing.set()
        self._policy.join(timeout=1.0)
        self.graph.stop()
        if self.robot is not None:
            self.robot.stop()
        self.executor.shutdown()
        self.node.destroy_node()
        self.probe.close()


@pytest.fixture
def make_rig(rclpy_context, robot_domain):
    rigs: list[Rig] = []

    def make(**kwargs) -> Rig:
        rigs.append(Rig(rclpy_context, robot_domain, **kwargs))
        return rigs[-1]

    yield make
    for rig in rigs:
        rig.close()


def damping(sample: LowCmdSample) -> bool:
    return bool(np.all(sample.kp == 0) and np.allclose(sample.kd, DAMPING_KD))


def percentiles_ms(values: list[float]) -> str:
    a = np.array(values) * 1e3
    return (f"n {len(a)}, min {a.min():.1f}, p50 {np.percentile(a, 50):.1f}, p90 {np.percentile(a, 90):.1f}, "
            f"max {a.max():.1f} ms")


def bridge_values(rig: Rig) -> dict[str, str]:
    """The bridge's diagnostic values (counters, LowCmd loop figures) from the latest that carry figures."""
    for _, status in reversed(rig.diagnostics):
        values = {kv.key: kv.value for kv in status.values}
        if "lowcmd_period_p99_ms" in values:
            return values
    return {}


def test_start_up_sequence_tracking_and_malformed_commands(make_rig):
    rig = make_rig(parameters=RELAXED, robot_first=False)
    # No LowState: nothing is written.
    rig.wait_state("WAIT_FOR_STATE", 20.0)
    rig.spin(0.5)
    assert not rig.probe.lowcmds, "LowCmd written before any LowState"
    rig.start_robot()
    rig.wait_state("ZERO_TORQUE", 20.0)
    rig.spin(0.3)
    zero_s = next(t for t, s in rig.diagnostics if s.message.startswith("ZERO_TORQUE"))
    zero = [s for s in rig.probe.lowcmds if s.t > zero_s]
    assert zero and all(np.all(s.kp == 0) and np.all(s.kd == 0) for s in zero)
    refused = rig.call("activate")
    assert not refused.success and "only from HOLD" in refused.message, refused.message

    t_start = time.monotonic()
    assert rig.call("start").success
    rig.wait_state("HOLD", RAMP_S + 2.0)
    ramp = [t for t, s in rig.diagnostics if s.message.startswith("RAMP")]
    hold = [t for t, s in rig.diagnostics if s.message.startswith("HOLD")]
    assert ramp and hold and hold[0] - ramp[0] == pytest.approx(RAMP_S, abs=0.1)
    rig.spin(1.0)  # settle at the default pose on the gantry
    q = np.array(rig.joint_states[-1].position)
    assert np.max(np.abs(q - ROBOT.default_q)) < 0.1, dict(zip(NAMES, np.round(q - ROBOT.default_q, 3), strict=True))

    rig.target[ELBOW] = 0.6
    rig.publishing = True
    rig.spin(0.1)
    assert rig.call("activate").success
    rig.wait_state("ACTIVE", 1.0)
    rig.spin(2.0)  # the 1 s blend from the hold command, then tracking
    assert abs(rig.joint_states[-1].position[ELBOW] - 0.6) < 0.05, rig.joint_states[-1].position[ELBOW]

    # Malformed commands between the good ones: none reaches a LowCmd, the good ones keep it ACTIVE.
    nan = rig.target.copy()
    nan[ELBOW] = math.nan
    bad = [JointState(name=NAMES, position=nan.tolist()),  # NaN
           JointState(name=NAMES[:-1], position=[1.5] * (len(NAMES) - 1)),  # a joint missing
           JointState(name=NAMES, position=[1.5] * (len(NAMES) - 2)),  # fewer positions than names
           JointState(name=[*NAMES[:-1], "tail_joint"], position=[1.5] * len(NAMES)),  # unknown name
           JointState(name=NAMES, position=rig.target.tolist(), velocity=[math.inf] * len(NAMES))]
    t_bad = time.monotonic()
    rig.malformed = bad * 10
    assert rig.spin(3.0, lambda: not rig.malformed)
    rig.spin(0.1)
    window = [s for s in rig.probe.lowcmds if s.t > t_bad]
    assert window and all(np.all(np.isfinite(s.q)) for s in window)
    assert max(abs(s.q[ELBOW] - 0.6) for s in window) < 1e-6, "a malformed command moved the elbow target"
    assert rig.state == "ACTIVE", rig.log
    # (the LowCmd loop checks the newest command each tick: a burst counts once; 21 of the 50 were counted once on
    # the slow machine, beside the suite's other processes)
    rig.spin(1.1, lambda: int(bridge_values(rig).get("commands_rejected", 0)) >= len(bad) * 5)
    assert int(bridge_values(rig)["commands_rejected"]) >= len(bad) * 2, bridge_values(rig)
    assert all(s.crc_ok and s.mode_machine == 5 for s in rig.probe.lowcmds)  # the virtual robot's mode_machine
    figures = bridge_values(rig)
    arrivals = np.diff([s.t for s in rig.probe.lowcmds if s.t > t_start]) * 1e3
    print(f"\nLowCmd loop (bridge's diagnostics): {figures}\nLowCmd arrivals at the probe: period p50 "
          f"{np.percentile(arrivals, 50):.2f}, p99 {np.percentile(arrivals, 99):.2f}, max {arrivals.max():.2f} ms")

    # Stopped while ACTIVE, the bridge damps for 50 ms before it stops writing, and exits cleanly.
    t_stop = time.monotonic()
    codes = rig.graph.stop()
    assert codes["hw_bridge"] in (0, -signal.SIGTERM), (codes, rig.log)
    after = [s for s in rig.probe.lowcmds if s.t > t_stop]
    assert after and damping(after[-1]) and sum(damping(s) for s in after) >= 10, rig.log
    assert "ACTIVE → DAMP: operator e-stop (bridge shutdown)" in rig.log
    assert rig.log.count("rejected joint_command") == 3, rig.log  # one warning per kind: non-finite, size, names
    assert rig.robot is not None
    rig.robot.stop()
    summary = json.loads(rig.log.split("virtual_robot summary: ")[-1].splitlines()[0])
    assert summary["lowcmd_applied"] == summary["lowcmd_received"] > 0, summary  # no NaN, CRC or mode drops


def gains_msg(kp: np.ndarray, kd: np.ndarray) -> JointState:
    return JointState(name=NAMES, position=[float(v) for v in kp], velocity=[float(v) for v in kd])


def test_the_policys_gains_reach_the_motors_in_active_only(make_rig):
    """teleop/gains at the robot: the default profile before; after activation the published gains (waist 900/9)
    blended in from the hold gains over activate_blend_s, then exactly; a refused message changes nothing; the
    damping profile after an e-stop."""
    hold_kp, hold_kd = ROBOT.gains("default")
    waist = [NAMES.index(n) for n in ("waist_yaw_joint", "waist_roll_joint", "waist_pitch_joint")]
    kp, kd = hold_kp.copy(), hold_kd.copy()
    kp[waist], kd[waist] = 900.0, 9.0
    assert not np.allclose(hold_kp[waist], 900.0)
    blend_s = 1.0  # BridgeSafetyConfig's activate_blend_s
    rig = make_rig(parameters=RELAXED)
    rig.wait_state("ZERO_TORQUE", 60.0)
    assert rig.call("start").success
    rig.wait_state("HOLD", RAMP_S + 2.0)
    rig.gains_pub.publish(gains_msg(kp, kd))  # with the first command, as the policy node does
    rig.publishing = True
    rig.spin(0.5)
    hold_s = time.monotonic() - 0.4
    held = [s for s in rig.probe.lowcmds if s.t > hold_s]
    assert held and all(np.array_equal(s.kp, hold_kp) and np.array_equal(s.kd, hold_kd) for s in held), \
        "HOLD does not keep the default profile"
    assert rig.spin(2.0, lambda: bridge_values(rig).get("gains", "").startswith("teleop/gains")), bridge_values(rig)

    response = rig.call("activate")
    assert response.success, (response.message, rig.log)
    rig.wait_state("ACTIVE", 1.0)
    active_s = rig.diagnostics[-1][0]
    rig.spin(blend_s + 0.8)
    active = [s for s in rig.probe.lowcmds if s.t > active_s]
    blending = [s for s in active if s.t < active_s + blend_s - 0.1]
    waist_kp = np.array([s.kp[waist[0]] for s in blending])
    assert len(blending) > 100 and np.all(np.diff(waist_kp) >= 0), "the waist kp does not ramp up"
    assert waist_kp[0] < hold_kp[waist[0]] + 200 and hold_kp[waist[0]] + 100 < waist_kp[-1] < 900.0, \
        (waist_kp[0], waist_kp[-1])
    # Once at the policy's gains, always at them (keyed on the first LowCmd that has them, not on this process's
    # arrival times: on a loaded machine a LowCmd of the blend's end can arrive here 0.1 s late)
    first_done = next((i for i, s in enumerate(active) if np.array_equal(s.kp, kp) and np.array_equal(s.kd, kd)),
                      len(active))
    done = active[first_done:]
    assert len(done) > 100 and done[0].t < active_s + blend_s + 0.3, "the blend does not end at the policy's gains"
    assert all(np.array_equal(s.kp, kp) and np.array_equal(s.kd, kd) for s in done), \
        next((s.kp[waist], s.kd[waist]) for s in done if not np.array_equal(s.kp, kp) or not np.array_equal(s.kd, kd))
    print(f"\nwaist kp/kd at the robot: HOLD {held[-1].kp[waist]}/{held[-1].kd[waist]}, blend "
          f"{waist_kp[0]:.1f} → {waist_kp[-1]:.1f} over {blending[-1].t - blending[0].t:.2f} s, ACTIVE "
          f"{done[-1].kp[waist]}/{done[-1].kd[waist]}")

    refused = kp.copy()
    refused[waist[0]] = 1e6  # beyond gain_limits
    t_refused = time.monotonic()
    rig.gains_pub.publish(gains_msg(refused, kd))
    rig.spin(0.2)  # (teleop/gains keeps one message)
    rig.gains_pub.publish(JointState(name=NAMES, position=kp.tolist()))  # no kd
    assert rig.spin(2.5, lambda: int(bridge_values(rig).get("gains_refused", 0)) == 2), (bridge_values(rig), rig.log)
    after = [s for s in rig.probe.lowcmds if s.t > t_refused]
    assert after and all(np.array_equal(s.kp, kp) and np.array_equal(s.kd, kd) for s in after)
    assert rig.state == "ACTIVE" and "refused teleop/gains" in rig.log, rig.log

    t_estop = time.monotonic()
    assert rig.call("estop").success
    rig.wait_state("DAMP", 1.0)
    rig.spin(0.2)
    # every LowCmd the robot gets once the bridge says DAMP (its diagnostics' stamp) damps; how soon after the
    # e-stop that is, is test_estop_from_every_source's figure
    said_at = next(t for t, s in rig.diagnostics if t > t_estop and s.message.startswith("DAMP"))
    damped = [s for s in rig.probe.lowcmds if s.t > said_at + 0.02]
    assert damped and all(damping(s) for s in damped), (said_at - t_estop, rig.log[-2000:])


def test_missing_commands_hold_for_the_grace_then_damp(make_rig):
    """A policy that stops publishing (its publisher still there: a hung or killed process before discovery says
    so): the last command is held for command_grace_s, never less, then the bridge damps within grace + 50 ms by
    its own clock in each of 10 trials, and the first damping LowCmd reaches the robot (the probe in this process)
    between grace and grace + 50 ms in at least 9 and within grace + 0.5 s in all. Every trial is kept: one that damped
    before the policy stopped (a false trip) or for another reason counts against the test, and the test says so.
    The end-to-end figure over many trials, with the real-time priority a robot computer gives the LowCmd
    process, is `g1-teleop bench damping`'s; this shared 2-core machine at normal priority has delayed one
    LowCmd of 20 by 0.4 s (CI), which a test of every trial would blame on the bridge."""
    rig = make_rig()
    rig.wait_state("ZERO_TORQUE", 60.0)
    latencies: list[float] = []  # the test's last publish → the first damping LowCmd at the probe
    detected: list[float] = []  # the bridge's own figure: age of the last command it received, at DAMP
    false_trips: list[str] = []  # ACTIVE phases damped before the test stopped commanding, and why
    others: list[str] = []  # damped after the stop for another reason than the missing commands
    bring_up_retries = 0  # bring-ups that failed on a starved machine (a stale LowState): not part of the figure
    while len(latencies) + len(false_trips) + len(others) < TRIALS:
        try:
            rig.bring_up()
        except AssertionError:
            bring_up_retries += 1
            assert bring_up_retries <= 5, f"this machine is too slow to bring the bridge up:\n{rig.log[-3000:]}"
            rig.wait_state("DAMP", 2.0)
            continue
        active_s = rig.diagnostics[-1][0]
        rig.spin(0.3)
        last = rig.stop_publishing()
        early = [s.message for t, s in rig.diagnostics if active_s < t <= last and "→ DAMP" in s.message]
        if early or any(damping(s) for s in rig.probe.lowcmds if active_s < s.t <= last):
            false_trips.append(early[0] if early else "damping LowCmd before the stop")
            rig.wait_state("DAMP", 1.0)
            continue
        assert rig.spin(2.0, lambda last=last: damping(rig.probe.lowcmds[-1]) and rig.probe.lowcmds[-1].t > last), \
            rig.log
        first_damp = next(s for s in rig.probe.lowcmds if s.t > last and damping(s))
        rig.wait_state("DAMP", 0.5)
        reason = next(s.message for t, s in reversed(rig.diagnostics) if t > last and "→ DAMP" in s.message)
        age = re.search(r"no valid joint_command for ([0-9.]+) s \(grace", reason)
        if age is None:
            others.append(reason)
            continue
        latencies.append(first_damp.t - last)
        detected.append(float(age.group(1)))
    within = sum(GRACE_S - 0.005 < latency <= GRACE_S + 0.05 for latency in latencies)
    print(f"\nlast joint_command published → first damping LowCmd at the probe: {percentiles_ms(latencies)}"
          f"\nlast joint_command received → DAMP (the bridge's figure): {percentiles_ms(detected)}"
          f"\n(grace {GRACE_S * 1e3:.0f} ms; from grace to grace + 50 ms end to end: {within}/{TRIALS}; false trips: "
          f"{false_trips}; damped for another reason: {others}; bring-ups retried: {bring_up_retries})")
    assert not false_trips and not others, f"{len(false_trips)} false trips, {len(others)} other damping"
    assert min(detected) >= GRACE_S and max(detected) <= GRACE_S + 0.05, \
        f"the bridge held the last command for {min(detected):.3f}–{max(detected):.3f} s (grace {GRACE_S} s)"
    # End to end, one trial of 10 may be off: in a CI check the bridge's ROS side once received nothing for 0.42 s
    # before the test stopped, and damped 83 ms after the test's last command, 0.5 s after its own last one
    assert within >= TRIALS - 1 and max(latencies) <= GRACE_S + 0.5, \
        f"damping reached the robot early or late: {sorted(latencies)} s after the last command"


def test_a_policy_whose_publisher_goes_damps_without_the_grace(make_rig):
    """joint_command's publisher destroyed (a policy that exits, or that the graph stops): damping once the last
    command is older than command_timeout_s, well before the grace."""
    rig = make_rig()
    rig.wait_state("ZERO_TORQUE", 60.0)
    rig.bring_up()
    rig.spin(0.3)
    last = rig.stop_publishing()
    rig.node.destroy_publisher(rig.command_pub)
    assert rig.spin(2.0, lambda: any(damping(s) for s in rig.probe.lowcmds if s.t > last)), rig.log
    first_damp = next(s for s in rig.probe.lowcmds if s.t > last and damping(s))
    rig.wait_state("DAMP", 0.5)
    print(f"\npublisher destroyed → first damping LowCmd {(first_damp.t - last) * 1e3:.0f} ms after the last command")
    assert first_damp.t - last < GRACE_S - 0.1, (first_damp.t - last, rig.log)
    # the reason, from the bridge's log (its output reaches this process later than its diagnostics)
    assert rig.spin(3.0, lambda: "no publisher left on joint_command" in rig.log), rig.log


def test_stopped_robot_stops_the_writing_with_the_reason(make_rig):
    rig = make_rig()
    rig.wait_state("ZERO_TORQUE", 20.0)
    assert rig.call("start").success
    rig.wait_state("HOLD", RAMP_S + 2.0)
    rig.spin(0.3)
    assert rig.robot is not None
    rig.robot.stop(signal.SIGKILL)
    rig.spin(3.0, lambda: "LowCmd writing stopped" in rig.diagnostics[-1][1].message)
    rig.spin(0.3)
    last_state = rig.probe.lowstate_times[-1]
    last_cmd = rig.probe.lowcmds[-1].t
    said = next((t for t, s in rig.diagnostics if t > last_state and "LowCmd writing stopped" in s.message), None)
    assert said is not None, rig.log
    stopped = [s for t, s in rig.diagnostics if t > last_state]
    print(f"\nlast LowState → last LowCmd {(last_cmd - last_state) * 1e3:.1f} ms, → diagnostics saying why "
          f"{(said - last_state) * 1e3:.1f} ms: {[s.message for s in stopped]}")
    assert last_cmd - last_state < 0.15
    assert said - last_state < 0.15
    assert stopped[-1].level == DiagnosticStatus.ERROR and "LowState 0.1" in stopped[-1].message
    assert "LowCmd writing stopped: LowState" in rig.log

    # A robot coming back gets damping, not the hold gains: leaving DAMP needs the operator.
    rig.start_robot()
    assert rig.spin(20.0, lambda: rig.probe.lowcmds[-1].t > last_cmd + 0.5), rig.log
    rig.spin(0.3)
    resumed = [s for s in rig.probe.lowcmds if s.t > last_cmd + 0.5]
    assert resumed and all(damping(s) for s in resumed)
    assert "LowCmd writing resumed" in rig.log


def test_estop_from_every_source(make_rig):
    rig = make_rig(parameters={**RELAXED, "joy_start_button": 0, "joy_estop_button": 3})
    rig.wait_state("ZERO_TORQUE", 20.0)

    def reason() -> str:
        return rig.diagnostics[-1][1].message

    def joy(frame_id: str, pressed: int | None) -> None:
        """A Joy device's reading, three times (best effort, as a device streams it)."""
        msg = Joy(buttons=[int(i == pressed) for i in range(8)], axes=[0.0] * 4)
        msg.header.frame_id = frame_id
        for _ in range(3):
            rig.joy_pub.publish(msg)
            rig.spin(0.01)

    # Service: start, activate, e-stop.
    rig.bring_up()
    response = rig.call("estop")
    assert response.success and "ACTIVE → DAMP: operator e-stop (service)" in response.message, response.message
    rig.wait_state("DAMP", 0.5)
    again = rig.call("estop")
    assert again.success and again.message == "already DAMP", again.message
    rig.publishing = False

    # Wireless remote: start; then a Joy device's e-stop button, which this node's own joy must not trigger.
    rig.probe.press("start")
    rig.wait_state("RAMP", 1.0)
    assert "operator start (wireless remote)" in reason()
    rig.probe.press()
    rig.wait_state("HOLD", RAMP_S + 2.0)
    joy("wireless_remote", 3)
    rig.spin(0.3)
    assert rig.state == "HOLD", reason()
    joy("wireless_remote", None)
    rig.spin(0.05)
    joy("gamepad", 3)
    rig.wait_state("DAMP", 0.5)
    assert "operator e-stop (joy button 3)" in reason()
    joy("gamepad", None)

    # Joy start, remote activate (combination "A"), remote e-stop (combination "select").
    rig.spin(0.05)
    joy("gamepad", 0)
    rig.wait_state("HOLD", RAMP_S + 2.0)
    joy("gamepad", None)
    rig.publishing = True
    rig.spin(0.1)
    rig.probe.press("A")
    rig.wait_state("ACTIVE", 1.0)
    assert "operator activate (wireless remote)" in reason()
    rig.probe.press()
    rig.spin(0.1)
    t_press = time.monotonic()
    rig.probe.press("select")
    rig.wait_state("DAMP", 0.5)
    assert "operator e-stop (wireless remote)" in reason()
    assert rig.spin(0.5, lambda: damping(rig.probe.lowcmds[-1]))
    first_damp = next(s for s in rig.probe.lowcmds if s.t > t_press and damping(s))
    print(f"\nremote e-stop → first damping LowCmd {(first_damp.t - t_press) * 1e3:.1f} ms")
    assert first_damp.t - t_press < 0.1


def process_running(pid: int) -> bool:
    """Whether ``pid`` is a process that has not exited (a zombie has)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):  # gone; or reaped between the open and the read (seen in CI)
        return False


def test_unitree_mujoco_lowstate_is_refused_by_default_and_taken_without_the_crc_check(make_rig):
    """The virtual robot as Unitree's simulator (tick, crc, mode_machine 0, LowState at 200 Hz): with the CRC check
    (the default) nothing is written and the log says what to do; with lowstate_crc_check false the bridge starts
    and holds, echoing mode_machine 0."""
    peer = ("--peer", "unitree_mujoco")
    rig = make_rig(robot_options=peer)
    line = "dropped rt/lowstate: its CRC does not match (carried 0)"
    assert rig.spin(60.0, lambda: line in rig.log), rig.log
    assert "launch with lowstate_crc_check:=false" in rig.log
    assert rig.spin(3.0, lambda: rig.state != ""), "no diagnostics from hw_bridge (1 Hz) within 3 s"
    assert rig.state == "WAIT_FOR_STATE" and not rig.probe.lowcmds, rig.log
    assert rig.log.count(line) == 1  # once, then counted
    assert rig.spin(2.0, lambda: int(bridge_values(rig).get("lowstate_dropped", 0)) > 100), bridge_values(rig)
    rig.close()

    rig = make_rig(robot_options=peer, parameters={"lowstate_crc_check": False, **RELAXED})
    rig.wait_state("ZERO_TORQUE", 20.0)
    rig.bring_up()
    rig.spin(3.0)
    assert rig.state == "ACTIVE", rig.log
    # 200 Hz, not the G1's 500 Hz: over 3 s, which a burst after a stall of this VM (the peer catching up its late
    # samples: 266 Hz over the last 1 s once in CI) does not move out of the bounds
    t = np.array(rig.probe.lowstate_times[-600:])
    rate = (len(t) - 1) / (t[-1] - t[0])
    assert 160 < rate < 300, rate
    assert all(s.mode_machine == 0 for s in rig.probe.lowcmds)
    print(f"\nunitree_mujoco peer: LowState at {rate:.0f} Hz, ACTIVE, mode_machine 0 echoed")


def test_a_robot_interface_that_does_not_exist_is_a_clear_error(robot_domain, tmp_path):
    params = tmp_path / "hw_bridge.yaml"
    params.write_text(yaml.safe_dump({"/**": {"ros__parameters": {"network_interface": "nosuch0",
                                                                  "robot_domain_id": robot_domain}}}))
    proc = subprocess.run([sys.executable, "-m", "g1_teleop.nodes.hw_bridge", "--ros-args", "--params-file",
                           str(params)], capture_output=True, text=True, timeout=60)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 2, output
    assert "cannot start: cannot open the robot's DDS domain" in output and "'nosuch0'" in output, output
    assert "Traceback" not in output, output


def test_a_ros_side_standing_still_does_not_stop_the_lowcmd_loop(make_rig):
    """The ROS side stopped (SIGSTOP, as a DDS publish blocked with the GIL held would stop it): the LowCmd
    process damps on the missing commands, and the remote's e-stop still acts."""
    parameters = {**RELAXED, "command_grace_s": 0.3}
    rig = make_rig(parameters=parameters)
    rig.wait_state("ZERO_TORQUE", 20.0)
    ros_side = rig.graph.pid("hw_bridge")
    rig.bring_up()
    rig.spin(0.3)
    t_stop = time.monotonic()
    os.kill(ros_side, signal.SIGSTOP)  # (the test's policy goes on publishing: nothing takes it)
    try:
        assert rig.spin(2.0, lambda: any(s.t > t_stop and damping(s) for s in rig.probe.lowcmds)), rig.log
        first_damp = next(s for s in rig.probe.lowcmds if s.t > t_stop and damping(s))
        rig.spin(0.3)
        after = [s for s in rig.probe.lowcmds if s.t >= first_damp.t]
    finally:
        os.kill(ros_side, signal.SIGCONT)
    print(f"\nROS side stopped → first damping LowCmd {(first_damp.t - t_stop) * 1e3:.1f} ms "
          f"(grace {parameters['command_grace_s'] * 1e3:.0f} ms), {len(after)} damping LowCmds in the next 0.3 s")
    # The last command is held for the grace (the policy's source is not known gone: the ROS side only stands
    # still), then damping: within the grace of the stop, plus a tick and the delivery to this probe.
    assert first_damp.t - t_stop < parameters["command_grace_s"] + 0.1
    assert len(after) > 100 and all(damping(s) for s in after)  # 500 Hz, damping all along
    rig.wait_state("DAMP", 2.0)
    assert "no valid joint_command" in rig.diagnostics[-1][1].message, rig.diagnostics[-1][1].message

    # In HOLD with the ROS side stopped, the wireless remote's e-stop damps.
    rig.publishing = False
    assert rig.call("start").success
    rig.wait_state("HOLD", RAMP_S + 2.0)
    rig.probe.press()
    rig.spin(0.1)
    os.kill(ros_side, signal.SIGSTOP)
    try:
        t_press = time.monotonic()
        rig.probe.press("select")
        assert rig.spin(1.0, lambda: any(s.t > t_press and damping(s) for s in rig.probe.lowcmds)), rig.log
    finally:
        os.kill(ros_side, signal.SIGCONT)
    rig.wait_state("DAMP", 2.0)
    assert "operator e-stop (wireless remote)" in rig.diagnostics[-1][1].message


def test_when_the_ros_side_dies_the_lowcmd_process_damps_and_exits(make_rig):
    rig = make_rig(parameters=RELAXED)
    rig.wait_state("ZERO_TORQUE", 20.0)
    rig.bring_up()
    assert rig.spin(3.0, lambda: "lowcmd_pid" in bridge_values(rig)), rig.log
    lowcmd_pid = int(bridge_values(rig)["lowcmd_pid"])
    assert process_running(lowcmd_pid)
    t_kill = time.monotonic()
    os.kill(rig.graph.pid("hw_bridge"), signal.SIGKILL)  # the ROS side only
    assert rig.spin(2.0, lambda: not process_running(lowcmd_pid)), "the LowCmd process outlived the ROS side"
    rig.spin(0.2)
    after = [s for s in rig.probe.lowcmds if s.t > t_kill]
    damped = [s for s in after if damping(s)]
    print(f"\nROS side killed → first damping LowCmd {(damped[0].t - t_kill) * 1e3:.1f} ms, last LowCmd "
          f"{(after[-1].t - t_kill) * 1e3:.1f} ms, {len(damped)} damping LowCmds")
    assert damped and damped[0].t - t_kill < 0.1
    assert all(damping(s) for s in after if s.t >= damped[0].t) and len(damped) >= 10  # 50 ms at 500 Hz
    last = after[-1].t
    rig.spin(0.3)
    assert rig.probe.lowcmds[-1].t == last, "LowCmds after the LowCmd process exited"


def test_dex3_hands_follow_their_targets_and_the_bridge_state(make_rig):
    from g1_teleop.core.dex3_description import load_dex3

    dex3 = load_dex3()
    left_names, right_names = list(dex3.joint_names("left")), list(dex3.joint_names("right"))
    rig = make_rig(parameters=RELAXED, dex3=True)
    hand_states: dict[str, JointState] = {}
    rig.node.create_subscription(JointState, "hand_states",
                                 lambda msg: hand_states.__setitem__(msg.name[0].split("_")[0], msg), QOS)
    target_pub = rig.node.create_publisher(JointState, "teleop/hand_target", QOS)
    rig.wait_state("ZERO_TORQUE", 20.0)
    assert rig.spin(3.0, lambda: len(rig.probe.handcmds["left"]) > 5 and "right" in hand_states), rig.log
    free = rig.probe.handcmds["left"][-1]
    assert np.all(free.kp == 0) and np.all(free.kd == 0)
    assert list(free.mode) == [0x10 + i for i in range(7)]  # motor index and status 1, no timeout bit

    rig.bring_up()
    closed = np.array([0.0, 0.5, 1.0, -1.0, -1.0, -1.0, -1.0])  # left hand, motor order, inside its limits

    def send(names: list[str], positions: list[float]) -> None:
        target_pub.publish(JointState(name=names, position=positions))
        rig.spin(0.02)

    for _ in range(75):  # 1.5 s at 50 Hz: the hand settles (time constant kd/kp ≈ 0.13 s)
        send(left_names + right_names, [*closed, *np.zeros(7)])  # both hands in one message
    np.testing.assert_allclose(hand_states["left"].position, closed, atol=0.03)
    np.testing.assert_allclose(hand_states["right"].position, 0.0, atol=0.03)  # held open
    assert np.all(rig.probe.handcmds["left"][-1].kp == dex3.kp)

    # Malformed targets never reach a HandCmd: NaN, part of a hand, an unknown joint.
    t_bad = time.monotonic()
    nan = closed.copy()
    nan[3] = math.nan
    for names, positions in ((left_names, nan.tolist()), (left_names[:4], [0.0] * 4),
                             ([*left_names[:-1], "left_hand_pinky_joint"], [0.0] * 7)):
        for _ in range(5):
            send(names, positions)
    sent = [s for s in rig.probe.handcmds["left"] if s.t > t_bad]
    assert sent and all(np.all(np.isfinite(s.q)) for s in sent)
    np.testing.assert_allclose(sent[-1].q, closed, atol=1e-6)  # still the last good target
    for _ in range(25):  # one hand alone
        send(right_names, [0.0, -0.5, -1.0, 1.0, 1.0, 1.0, 1.0])
    assert rig.probe.handcmds["right"][-1].q[2] < -0.3
    assert "rejected teleop/hand_target" in rig.log

    # E-stop: the hands damp with the body.
    t_stop = time.monotonic()
    assert rig.call("estop").success
    assert rig.spin(1.0, lambda: any(s.t > t_stop and np.all(s.kp == 0) for s in rig.probe.handcmds["right"]))
    damped = next(s for s in rig.probe.handcmds["left"] if s.t > t_stop and np.all(s.kp == 0))
    np.testing.assert_allclose(damped.kd, dex3.damping_kd)
