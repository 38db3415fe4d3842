"""The real-robot graph end to end against the virtual robot: every node of real.yaml (virtual robot,
hw_bridge, policy, retarget, xr_input) as a separate process, the robot's topics on CycloneDDS over lo.

This process is the operator (hw_bridge's start and activate services) and records the graph's topics
once the bridge is ACTIVE and the scenario plays (xr_input/play), judging the run with the same checks as
the simulated graph.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path

import numpy as np
import pytest
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from std_srvs.srv import Trigger

from g1_teleop.launching.graph_description import load_graph
from g1_teleop.launching.process_runner import GraphProcesses
from g1_teleop.tools.robot_probe import RobotProbe
from g1_teleop.tools.run_analysis import tracking_lag, wrist_errors
from support.checks import check_arm_slew

pytestmark = pytest.mark.integration

POLICIES = Path(__file__).resolve().parents[3] / "shared" / "policies" / "openwbt"
SDK_MISSING = "unitree_sdk2py not installed (scripts/install_robot_sdk.sh installs it): hw_bridge needs it"
QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10, reliability=ReliabilityPolicy.RELIABLE)
# A command late by 45 ms is held (the shipped timeout), damping when none came for the grace. The whole real-time
# graph takes ~175 % of this machine's 2 cores (`g1-teleop soak`: 7 processes at 12-29 % each), unlike a robot
# whose computer runs only the bridge and the policy: it stalls now and then (the virtual robot at 0.2× real time
# for a second, ~100 ms stalls even at nice -10, past the bridge's 0.1 s LowState timeout), and starved the policy
# past the shipped 0.5 s grace in 3 of 12 runs of this test here. The test gives the grace 1 s and the LowState
# timeout 0.25 s (the launch arguments of a user running the graph beside a simulator on a small machine); both
# shipped timeouts are tested in test_hw_bridge.
COMMAND_GRACE_S = 1.0
STATE_TIMEOUT_S = 0.25
ACTIVE_S = 14.0  # seconds of the default scenario played while ACTIVE: via and reach (0-11 s), its hold, the move begun
SETTLE_S = 1.0  # after play, as in the simulated graph's check
# In real time the wrists trail their targets by the latency of xr_input → retarget → policy (50 Hz) →
# bridge → robot and by the arms' own dynamics; on 2 idle cores of the usual machine p95 6 mm at no lag. On a machine
# ~2.5× slower (this one and CI's) the policy gets 28-42 ticks a second, not 50: with the arm limiter counted per tick
# (0.01 rad, OpenWBT's) the arms fell behind on the scenario's fast moves, p95 36-70 mm at no lag, 160 mm in one CI
# check, 10-24 mm at the best lag of 0.2-0.6 s; counted per control period (a tick after skipped ones takes their
# steps) p95 23-26 mm at no lag, 7.5-9.7 mm at the best lag, 0.20-0.21 s. What this test judges is the path: the
# error at the lag (≤ MAX_LAG_S) that fits best, which arms that stay put, a wrong joint order or a wrong sign fail by
# far. Both figures are printed.
MAX_LAG_S = 0.8
# The wrists are measured in the pelvis frame, so the waist moves them too: OpenWBT's learned policy drives the waist
# itself, and starved (a CI-like check: 37 ticks a second) swayed it by 0.20-0.29 rad, putting both wrists 57-60 mm
# p95 off at the best lag (0.28 s) while the built-in controller held it; hence its own bound.
MAX_WRIST_P95_M = {"builtin": 0.05, "openwbt": 0.1}


@pytest.fixture
def robot_domain(ros_domain) -> int:
    pytest.importorskip("unitree_sdk2py", reason=SDK_MISSING)
    return 1 + (ros_domain - 101) % 100


# (controller:=hold, a debugging controller for the gantry, is run in the simulated graph: test_sim_gains)
@pytest.mark.parametrize("controller", ["builtin", "openwbt"])
def test_real_launch_with_the_virtual_robot_starts_up_and_tracks(rclpy_context, robot_domain, controller, tmp_path,
                                                                 robot, fk):
    from g1_teleop.tools.run_recorder import Recorder

    if controller == "openwbt" and not POLICIES.is_dir():
        pytest.skip(f"OpenWBT policies not found at {POLICIES}: the reference data is not beside the repo")
    # (the bridge's timeouts of this test: see COMMAND_GRACE_S)
    nodes = load_graph("real").resolve({"robot": "virtual", "network_interface": "lo",
                                        "robot_domain_id": str(robot_domain), "controller": controller,
                                        "policy_dir": str(POLICIES) if controller == "openwbt" else "",
                                        "lowstate_timeout_s": str(STATE_TIMEOUT_S),
                                        "command_grace_s": str(COMMAND_GRACE_S)})
    assert [n.name for n in nodes] == ["virtual_robot", "hw_bridge", "policy", "retarget", "xr_input", "robot_state"]
    lines: list[str] = []
    graph = GraphProcesses(nodes, output=lines.append)
    node = rclpy.create_node("operator", context=rclpy_context)
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(node)
    states: list[tuple[float, str]] = []  # (time.monotonic(), bridge state) from its diagnostics

    def on_diagnostics(msg: DiagnosticArray) -> None:
        states.extend((time.monotonic(), s.message.split(":")[0]) for s in msg.status if s.name.endswith("hw_bridge"))

    node.create_subscription(DiagnosticArray, "diagnostics", on_diagnostics, QOS)
    clients = {name: node.create_client(Trigger, name) for name in ("hw_bridge/start", "hw_bridge/activate",
                                                                    "xr_input/play")}

    def spin_until(condition, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() > deadline:
                return False
            executor.spin_once(timeout_sec=0.01)
            failure = graph.check()
            assert failure is None, f"{failure}\n" + "\n".join(lines[-60:])
        return True

    def call(name: str) -> Trigger.Response:
        assert spin_until(clients[name].service_is_ready, 30.0), f"no service {name}"
        future = clients[name].call_async(Trigger.Request())
        assert spin_until(future.done, 5.0), f"{name} did not answer"
        return future.result()

    def wait_state(state: str, timeout_s: float) -> None:
        assert spin_until(lambda: states and states[-1][1] == state, timeout_s), \
            f"hw_bridge did not reach {state} (now {states[-1][1] if states else 'no diagnostics'}):\n" \
            + "\n".join(lines[-60:])

    stale_trips: list[str] = []  # bring-up's damping on a late LowState (below)

    def bring_up() -> None:
        """start → HOLD → activate (once the policy's commands arrive) → ACTIVE, as an operator does. A LowState
        that comes late meanwhile damps, as it must: on these 2 cores a process starting up beside the virtual
        robot (the restarted policy) starved it past the 0.25 s timeout once in a CI check. The operator then
        starts again; so does the test, once."""
        for attempt in range(2):
            started = call("hw_bridge/start")
            assert started.success, started.message
            held_or_damped = functools.partial(lambda since: states[-1][1] == "HOLD" or any(
                " → DAMP: " in line for line in lines[since:]), len(lines))
            assert spin_until(held_or_damped, 5.0), "\n".join(lines[-60:])
            for _ in range(20):  # the policy's first commands may still be on their way
                activated = call("hw_bridge/activate")
                if activated.success or "no valid joint_command" not in activated.message:
                    break
                spin_until(lambda: False, 0.5)
            if activated.success or attempt:
                break
            trips = [line for line in lines[-80:] if " → DAMP: LowState " in line and "ACTIVE →" not in line]
            assert trips, f"{activated.message}\n" + "\n".join(lines[-60:])
            stale_trips.append(trips[-1])
        assert activated.success, f"{activated.message}\n" + "\n".join(lines[-60:])
        wait_state("ACTIVE", 2.0)

    recorder = None
    probe = RobotProbe(robot_domain)  # every LowCmd as the robot gets it
    damping_kd = robot.gains("damping")[1]
    graph.start()
    try:
        wait_state("ZERO_TORQUE", 60.0)
        bring_up()
        recorder = Recorder(robot.joint_names, node_name="real_launch_recorder", context=rclpy_context)
        executor.add_node(recorder)
        spin_until(lambda: False, 1.0)  # the 1 s blend from the hold command to the policy's
        played_at = node.get_clock().now().nanoseconds / 1e9
        played = call("xr_input/play")
        assert played.success, played.message
        spin_until(lambda: False, ACTIVE_S)
        assert states[-1][1] == "ACTIVE", "\n".join(lines[-60:])
        # The policy process dies: the robot gets damping on the missing commands, and the bridge says so.
        executor.remove_node(recorder)  # (the tracking figures are those of ACTIVE)
        killed_at = time.monotonic()
        graph.kill("policy")
        assert spin_until(lambda: any(s.t > killed_at and np.all(s.kp == 0) and np.allclose(s.kd, damping_kd)
                                      for s in probe.lowcmds[-50:]), COMMAND_GRACE_S + 2.0), \
            "no damping LowCmd after the policy died:\n" + "\n".join(lines[-60:])
        wait_state("DAMP", 10.0)
        if controller == "builtin":
            # Restarted, the policy takes over again without restarting the graph: start ramps from the
            # measured (damped) pose, activate blends in its commands, and the robot gets them.
            graph.restart("policy")
            bring_up()
            active_at = time.monotonic()
            # 150 of them (0.3 s at the nominal 500 Hz; a CI check's probe, whose reader keeps the newest sample
            # only, counted 189 a second on the loaded machine, and 24 a second in the 1.5 s after the restart) and
            # none of them damping
            assert spin_until(lambda: len([s for s in probe.lowcmds if s.t > active_at]) >= 150, 10.0), \
                "\n".join(lines[-60:])
            assert states[-1][1] == "ACTIVE", "\n".join(lines[-60:])
            after = [s for s in probe.lowcmds if s.t > active_at]
            assert not any(np.all(s.kp == 0) for s in after), [s.t - active_at for s in after if np.all(s.kp == 0)]
    finally:
        codes = graph.stop()
        probe.close()
        executor.shutdown()
        node.destroy_node()
        if recorder is not None:
            recorder.destroy_node()
    log = "\n".join(lines)
    assert codes["hw_bridge"] in (0, -15), (codes, log[-3000:])
    # The only damping is the one after the policy died (besides a bring-up's on a late LowState, started again):
    # no fault while the scenario ran. Its reason is the missing commands (or, on a starved machine, a LowState that
    # came late first).
    damped = [line for line in log.splitlines()
              if "→ DAMP" in line and "(bridge shutdown)" not in line and line not in stale_trips]
    assert len(damped) == 1, log[-3000:]
    reason = log.split("ACTIVE → DAMP: ")[1].splitlines()[0]
    assert reason.startswith(("no valid joint_command for", "LowState ")), reason

    rec = recorder.recording()
    rec.save(tmp_path / "recording.npz")
    # enough samples to judge the tracking by: hw_bridge publishes 200 joint states a second, this test's own
    # process on the loaded 2-core machine received 90 a second in one CI check (48 on the slower one), and on a
    # machine ~2.5× slower than
    # the usual one 34-36 joint_commands a second, twice, and 26 with a load of 40 % of a core beside (it is not the
    # figure under test)
    assert len(rec.state_t) > ACTIVE_S * 25 and len(rec.command_t) > ACTIVE_S * 20, \
        (len(rec.state_t), len(rec.command_t))
    settle_s = played_at + SETTLE_S
    lag_s, lagged = tracking_lag(rec, fk, settle_s=settle_s, max_lag_s=MAX_LAG_S)

    def figures(errors: dict[str, np.ndarray]) -> str:
        return ", ".join(f"{side} p50 {np.percentile(e, 50) * 1e3:.1f} p95 {np.percentile(e, 95) * 1e3:.1f} "
                         f"max {e.max() * 1e3:.1f} mm" for side, e in errors.items())

    print(f"\nreal.launch robot:=virtual controller:={controller}, default scenario while ACTIVE "
          f"({len(rec.command_t) / ACTIVE_S:.0f} commands/s): wrist error at no lag "
          f"{figures(wrist_errors(rec, fk, settle_s=settle_s))}; at the best lag {lag_s:.2f} s {figures(lagged)}")
    bound_m = MAX_WRIST_P95_M[controller]
    failures = [f"{side} wrist p95 {np.percentile(e, 95) * 1e3:.1f} mm >= {bound_m * 1e3:.0f} mm at its best "
                f"lag {lag_s:.2f} s" for side, e in lagged.items()
                if len(e) == 0 or np.percentile(e, 95) >= bound_m]
    failures += check_arm_slew(rec, max_step_rad=0.01)
    assert not failures, "\n".join([*failures, f"recording: {tmp_path / 'recording.npz'}"])


def test_real_launch_reaches_active_against_a_unitree_mujoco_like_robot(rclpy_context, robot_domain):
    """The real graph against the virtual robot behaving as Unitree's simulator (virtual_peer:=unitree_mujoco:
    LowState at 200 Hz with tick, crc and mode_machine 0, PD once per LowCmd) with lowstate_crc_check:=false, as
    with unitree_mujoco itself: start, activate, ACTIVE with the built-in controller, mode_machine 0 echoed."""
    nodes = load_graph("real").resolve({"robot": "virtual", "network_interface": "lo", "virtual_peer": "unitree_mujoco",
                                        "lowstate_crc_check": "false", "robot_domain_id": str(robot_domain),
                                        "controller": "builtin", "lowstate_timeout_s": str(STATE_TIMEOUT_S)})
    lines: list[str] = []
    graph = GraphProcesses(nodes, output=lines.append)
    node = rclpy.create_node("operator", context=rclpy_context)
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(node)
    states: list[str] = []
    node.create_subscription(DiagnosticArray, "diagnostics", lambda msg: states.extend(
        s.message.split(":")[0] for s in msg.status if s.name.endswith("hw_bridge")), QOS)
    clients = {name: node.create_client(Trigger, f"hw_bridge/{name}") for name in ("start", "activate")}

    def spin_until(condition, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() > deadline:
                return False
            executor.spin_once(timeout_sec=0.01)
            failure = graph.check()
            assert failure is None, f"{failure}\n" + "\n".join(lines[-60:])
        return True

    def call(name: str) -> Trigger.Response:
        assert spin_until(clients[name].service_is_ready, 30.0), f"no service {name}"
        future = clients[name].call_async(Trigger.Request())
        assert spin_until(future.done, 5.0), f"{name} did not answer"
        return future.result()

    def wait_state(state: str, timeout_s: float) -> None:
        assert spin_until(lambda: states and states[-1] == state, timeout_s), \
            f"hw_bridge did not reach {state} (now {states[-1] if states else 'none'}):\n" + "\n".join(lines[-60:])

    def tripped_since(since: int) -> bool:
        return any(" → DAMP: " in line for line in lines[since:])

    probe = RobotProbe(robot_domain)
    graph.start()
    try:
        wait_state("ZERO_TORQUE", 60.0)
        for trips in range(4):
            # Like Unitree's simulator, this peer computes its PD once per LowCmd and holds the torque until the
            # next: when the loaded VM delays LowCmds (CPU-starved on these 2 cores, the full graph's processes
            # beside the simulator), the legs swinging in the ramp, or kicking in ACTIVE, pass a velocity limit and
            # the bridge damps, as it must (or, the robot thrown about in its gantry, on its tilt; or on a LowState
            # late past the timeout, 0.25 s here as in the test above). An operator starts again; so does the test,
            # three times at most (a trip leaves the legs swinging: a start right after may trip again), and the last
            # try runs 3 s in ACTIVE.
            since = len(lines)  # (the diagnostics may still say DAMP: a trip is known by its line)
            for _ in range(5):  # the other processes starting up on a loaded machine can delay a LowState, and the
                started = call("start")  # limp legs on the gantry can still swing (beyond a velocity limit)
                if started.success or ("no fresh LowState" not in started.message
                                       and "beyond its limit" not in started.message):
                    break
                spin_until(lambda: False, 0.5)
            # (refused as already ramping or holding: an earlier start, answered late on the loaded machine, took)
            already = any(f"(now {state})" in started.message for state in ("RAMP", "HOLD"))
            assert started.success or already, (started.message, "\n".join(lines[-60:]))
            assert spin_until(functools.partial(lambda k: states[-1] == "HOLD" or tripped_since(k), since), 10.0), \
                "\n".join(lines[-60:])
            if not tripped_since(since):
                for _ in range(5):  # the policy's first commands may still be on their way
                    activated = call("activate")
                    if activated.success or "no valid joint_command" not in activated.message:
                        break
                    spin_until(lambda: False, 0.5)
                assert activated.success or "(now DAMP)" in activated.message, activated.message
                spin_until(lambda: states[-1] == "DAMP", 3.0 if activated.success else 0.0)
                if states[-1] == "ACTIVE":
                    break
            recent = "\n".join(lines[since:])
            assert trips < 3 and "→ DAMP" in recent and any(f in recent for f in ("velocity", "tilt", "LowState ")), \
                recent
            spin_until(lambda: False, 2.0)
        assert states[-1] == "ACTIVE", "\n".join(lines[-60:])
        t = np.array(probe.lowstate_times[-400:])
        rate = (len(t) - 1) / (t[-1] - t[0])
        assert 150 < rate < 230, rate  # (200 Hz sent; this process, starved, heard 169 once)
        assert probe.lowcmds and all(s.mode_machine == 0 for s in probe.lowcmds)
    finally:
        graph.stop()
        probe.close()
        executor.shutdown()
        node.destroy_node()
    log = "\n".join(lines)
    active = log[log.rindex("HOLD → ACTIVE"):]  # (limp legs before start may trip)
    assert active.count("→ DAMP") == 1 and "ACTIVE → DAMP: operator e-stop (bridge shutdown)" in active, log[-3000:]
    assert "CRC does not match" not in log
    print(f"\nreal.launch virtual_peer:=unitree_mujoco: ACTIVE, LowState at {rate:.0f} Hz, mode_machine 0 echoed")
