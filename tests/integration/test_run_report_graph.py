"""`g1-teleop report`, `g1-teleop latency --json` and `g1-teleop dataset` (tests/support/dataset_checks.py) on a short
sim run (lockstep: the same figures on a loaded machine; the real-time paths have unit tests with made-up stamps);
its bag read alike by rosbags and mcap-ros2-support; `g1-teleop record` joining after robot_description was
published still records it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from g1_teleop.core.rosbag import read_bag
from g1_teleop.tools.bag_analysis import read_run_bag, recording_from_bag
from support.bag_readers import assert_readers_agree
from support.dataset_checks import DURATION_S, assert_run_exports_as_a_dataset_of_its_commands_at_50_hz

pytestmark = pytest.mark.integration


def cli(*args: str, timeout_s: float = 120.0) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "g1_teleop.tools.cli", *args], capture_output=True, text=True,
                          timeout=timeout_s)
    assert proc.returncode == 0, f"g1-teleop {' '.join(args)} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    return proc


def figures_table(page: str) -> dict[str, str]:
    table = page.split("<table class='figures'>")[1].split("</table>")[0]
    return dict(re.findall(r"<tr><td>([^<]*)</td><td>([^<]*)</td></tr>", table))


def test_report_latency_and_dataset_of_a_run_and_its_bag(sim_job, robot, tmp_path, monkeypatch, capsys):
    run = sim_job("--duration", str(DURATION_S), "--report", name="lockstep")
    bag_dir = run.out / "bag"

    assert f"report: {run.out / 'report.html'}" in run.stdout  # every g1-teleop sim run writes its report
    cli("report", str(bag_dir))
    page, alone = (run.out / "report.html").read_text(), (run.out / "bag_report.html").read_text()
    assert figures_table(page) == figures_table(alone)  # a run directory's report is its bag's
    for stem in ("wrist_error", "joints", "modes_events", "loop_periods", "realtime", "latency"):
        assert f"<img id='{stem}'" in page
    table = figures_table(page)
    assert 0 < float(table["realtime_factor"]) < 10  # (from /clock's publish times; the summary's includes start-up)
    assert table["latency_clock"] == "lockstep simulation" and table["commands_published"] == "151"  # 0 … 3 s: stop_at
    assert float(table["joint_command_period_nominal_ms"]) == pytest.approx(20.0)
    assert float(table["left_wrist_err_p95_m"]) == pytest.approx(run.summary["left_wrist_err_p95_m"], rel=0.05)

    figures = json.loads(cli("latency", str(bag_dir), "--json").stdout)
    hops = figures["hops"]
    assert figures["clock"] == "lockstep simulation" and figures["counts"]["samples_used_by_a_command"] >= 149
    for hop in ("operator_to_xr", "xr_to_arm_target", "tick_to_command", "operator_to_command"):
        assert hops[hop]["measured"] and 0 < hops[hop]["p50_ms"] <= hops[hop]["p99_ms"], (hop, hops[hop])
    assert hops["arm_target_to_tick"]["p99_ms"] == 0.0  # lockstep: the arm target starts the tick
    assert hops["operator_to_command"]["p50_ms"] == hops["operator_to_command_without_wait"]["p50_ms"]
    assert hops["operator_to_command"]["p50_ms"] > max(hops[h]["p50_ms"] for h in ("operator_to_xr", "tick_to_command"))
    assert not hops["operator_to_lowcmd"]["measured"] and "--robot-interface" in hops["operator_to_lowcmd"]["why"]

    # the bag's reading is the recorder's: the same samples over the recording's span
    recording = run.recording()
    from_bag = recording_from_bag(read_run_bag(bag_dir), robot.joint_names)
    for name in ("state_t", "state_q", "command_t", "command_q", "wrist_t", "wrist_left", "trace_origin_t"):
        ours, theirs = getattr(recording, name), getattr(from_bag, name)
        assert len(theirs) >= len(ours) > 10, name
        np.testing.assert_array_equal(theirs[: len(ours)], ours, err_msg=name)

    bag = read_bag(bag_dir, ["robot_description", "/tf_static"])
    assert "<robot" in bag.get("robot_description")[0].msg.data and bag.get("/tf_static")
    assert assert_readers_agree(bag_dir) > 1000

    assert_run_exports_as_a_dataset_of_its_commands_at_50_hz(run, tmp_path, monkeypatch, capsys)


def test_record_joining_late_gets_the_latched_description_and_both_readers_agree(rclpy_context, tmp_path):
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from sensor_msgs.msg import JointState, Joy
    from std_msgs.msg import String

    from g1_teleop.ros.qos import QOS_LATCHED, QOS_SENSOR, QOS_STATE

    node = Node("late_join_publisher", context=rclpy_context)
    description = node.create_publisher(String, "robot_description", QOS_LATCHED)
    states = node.create_publisher(JointState, "joint_states", QOS_STATE)
    joy = node.create_publisher(Joy, "joy", QOS_SENSOR)
    description.publish(String(data="<robot name='late_join'/>"))  # before any recorder exists
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(node)
    stop = threading.Event()

    def publish_states() -> None:
        k = 0
        while not stop.is_set():
            msg = JointState(name=["a", "b"], position=[0.01 * k, -0.5], velocity=[0.0, 1.0])
            msg.header.stamp = node.get_clock().now().to_msg()
            states.publish(msg)
            # the operator presses X (button 2) for 0.1 s every second: episodes start and end
            press = Joy(buttons=[0, 0, int(k % 50 < 5), 0])
            press.header.stamp = msg.header.stamp
            joy.publish(press)
            k += 1
            time.sleep(0.02)

    thread = threading.Thread(target=publish_states, daemon=True)
    thread.start()
    try:
        out = tmp_path / "late"
        recorder = subprocess.Popen([sys.executable, "-m", "g1_teleop.tools.cli", "record", "--duration", "4",
                                     "--out", str(out), "--topics", "robot_description", "joint_states", "joy"],
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 60
        while recorder.poll() is None and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
        output = recorder.communicate(timeout=30)[0]
        assert recorder.returncode == 0, output
    finally:
        stop.set()
        thread.join()
        executor.shutdown()
        node.destroy_node()
    bag = read_bag(out, ["robot_description", "joint_states", "joy"])
    assert [m.msg.data for m in bag.get("robot_description")] == ["<robot name='late_join'/>"]
    states_read = bag.get("joint_states")
    assert len(states_read) > 20
    assert all(abs(m.log_time_ns - m.publish_time_ns) < 1e9 for m in states_read)  # both on the system clock
    assert assert_readers_agree(out) == len(states_read) + len(bag.get("joy")) + 1
    assert "episode 1 started" in output and "episode 1 ended" in output, output  # told as they happen


def test_the_record_argument_exports_the_marked_episode_when_the_graph_stops(rclpy_context, tmp_path, monkeypatch):
    """record:=dataset: the graph's own recorder; the operator (this test, as the gamepad) presses X twice, 2 s of
    simulated time apart; the graph is stopped as Ctrl-C would, and the recorder exports that episode before it
    exits, into datasets/ beside its bag in the working directory."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import Joy
    from std_msgs.msg import Empty

    from g1_teleop.launching.graph_description import load_graph
    from g1_teleop.launching.process_runner import GraphProcesses
    from g1_teleop.ros.qos import QOS_LATCHED, QOS_SENSOR, QOS_STATE

    monkeypatch.chdir(tmp_path)
    lines: list[str] = []
    # In real time, as a teleoperation session is recorded. In lockstep the simulation does not wait for the
    # recorder, whose queues (200 messages) then hold 0.2 s of wall time instead of 1 s: in a full check the
    # recorder stood still for a moment, kept 110 of ~700 /clock messages and lost an X press (no episode end).
    graph = GraphProcesses(load_graph("sim").resolve({"record": "dataset", "wait_for_start": "true",
                                                      "lockstep": "false"}), output=lines.append)
    node = rclpy.create_node("gamepad", context=rclpy_context)
    joy = node.create_publisher(Joy, "joy", QOS_SENSOR)
    start = node.create_publisher(Empty, "sim/start", QOS_LATCHED)
    clock: list[Clock] = [Clock()]
    node.create_subscription(Clock, "/clock", lambda m: clock.__setitem__(0, m), QOS_STATE)
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(node)
    graph.start()

    def spin_until(t_s: float) -> None:
        deadline = time.monotonic() + 90.0
        while clock[0].clock.sec + clock[0].clock.nanosec * 1e-9 < t_s:
            assert time.monotonic() < deadline and not graph.check(), "\n".join(lines[-40:])
            executor.spin_once(timeout_sec=0.02)

    try:
        deadline = time.monotonic() + 60.0
        while not any("recording into" in line for line in lines) or joy.get_subscription_count() < 2:
            assert time.monotonic() < deadline and not graph.check(), "\n".join(lines[-40:])
            executor.spin_once(timeout_sec=0.05)  # the recorder and the policy hear the gamepad
        start.publish(Empty())
        for press_s in (1.0, 3.0):  # X down 0.2 s: the episode starts, then ends
            for t_s, x in ((press_s, 1), (press_s + 0.2, 0)):
                spin_until(t_s)
                press = Joy(buttons=[0, 0, x, 0])
                press.header.stamp = clock[0].clock
                joy.publish(press)
        spin_until(3.5)
    finally:
        codes = graph.stop()
        executor.shutdown()
        node.destroy_node()
    log = "\n".join(lines)
    assert codes["recorder"] == 0, log[-3000:]
    assert "episode 1 started" in log and "episode 1 ended" in log, log[-3000:]
    (bag,) = (tmp_path / "bags").iterdir()
    info = json.loads((tmp_path / "datasets" / bag.name / "meta/info.json").read_text())
    assert info["total_episodes"] == 1 and abs(info["total_frames"] - 2.0 * info["fps"]) <= 0.25 * info["fps"], info
