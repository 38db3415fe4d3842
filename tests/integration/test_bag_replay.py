"""Bags: the main job records every topic of the graph into its run directory's bag/ (rosbag2, MCAP), on
the simulated clock; replaying that bag's operator input (xr_input source bag) into the same lockstep graph
repeats the run exactly; `g1-teleop record` records a running graph, and robot_description whatever the
topics; the recorder stores when each message was written (its DDS source timestamp), however late it takes it."""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np
import pytest
import yaml

from g1_teleop.core.rosbag import read_bag, read_messages
from g1_teleop.launching.graph_description import NodeSpec
from g1_teleop.launching.process_runner import GraphProcesses

pytestmark = pytest.mark.integration

DURATION_S = 6.0


def bag_counts(bag) -> dict[str, int]:
    info = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    return {t["topic_metadata"]["name"]: t["message_count"] for t in info["topics_with_message_count"]}


def test_a_recorded_run_replays_into_the_same_graph_exactly(sim_job):
    recorded = sim_job("--duration", str(DURATION_S), name="recorded")
    bag = recorded.out / "bag"
    counts = bag_counts(bag)
    periods = int(DURATION_S / 0.02)
    for topic in ("/xr/head", "/xr/left_wrist", "/xr/right_wrist", "/teleop/arm_target", "/joint_command",
                  "/joint_states", "/imu", "/odom", "/clock", "/teleop/trace", "/teleop/mode", "/diagnostics"):
        assert topic in counts, f"{topic} missing from the bag: {counts}"
    # joint_states is reliable: every one; xr/* is best-effort, and the recorder may miss a few of a lockstep graph's
    # bursts (a CI run: 293 of 300), as the matching below allows
    assert counts["/joint_states"] >= periods and counts["/xr/left_wrist"] >= 0.95 * periods, counts
    assert recorded.summary["bag_messages"] == sum(counts.values())
    # Log times are the simulated clock when the message arrived at the recorder (the last /clock before it, not the
    # wall clock): the message's own stamp, or at most a control period away when a state and its /clock cross,
    # however far the recorder's drains fall behind the graph running at several times real time (taken at the
    # drain, they lagged up to 3 periods: 2026-12-06).
    lags = np.array([t / 1e9 - (m.header.stamp.sec + m.header.stamp.nanosec / 1e9)
                     for _, t, m in read_messages(bag, ["joint_states"])])
    assert np.abs(lags).max() <= 0.02 + 1e-9, np.percentile(lags, [0, 50, 100])

    replayed = sim_job("--replay", str(bag), "--duration", str(DURATION_S), name="replayed")
    assert replayed.summary["nodes_alive"] == replayed.summary["nodes_total"]
    assert replayed.summary["scenario"] == str(bag)
    a, b = recorded.recording(), replayed.recording()
    # Samples matched by stamp (the recorder takes the best-effort xr/* topics as they come, so either run may
    # miss one): the same wrist targets, then the same joint angles to the last bit.
    for name, values in (("wrist", ("wrist_left", "wrist_right")), ("state", ("state_q", "state_dq"))):
        stamps, in_a, in_b = np.intersect1d(getattr(a, f"{name}_t"), getattr(b, f"{name}_t"), return_indices=True)
        assert len(stamps) >= 0.95 * periods, (name, len(stamps))
        for value in values:
            diff = np.abs(getattr(a, value)[in_a] - getattr(b, value)[in_b]).max()
            assert diff == 0.0, (value, diff)


def test_record_writes_a_running_graphs_topics_on_its_clock(tmp_path, ros_domain, robot):
    lines: list[str] = []
    graph = GraphProcesses([NodeSpec("sim_bridge", "sim_bridge", True, {"lockstep": False, "gantry": True}),
                            NodeSpec("robot_state", "robot_state", True, {})], output=lines.append)
    graph.start()
    bag = tmp_path / "bag"
    try:
        proc = subprocess.run([sys.executable, "-m", "g1_teleop.tools.cli", "record", "--out", str(bag),
                               "--use-sim-time", "--duration", "6",
                               "--topics", "joint_states", "/clock", "imu", "odom"],
                              capture_output=True, text=True, timeout=120)
        assert graph.alive() == ["sim_bridge", "robot_state"], "\n".join(lines)
    finally:
        graph.stop()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"bag: {bag.resolve()}" in proc.stdout
    counts = bag_counts(bag)
    # robot_description was not asked for: every bag has it (latched, once), the robot the graph ran
    assert set(counts) == {"/joint_states", "/clock", "/imu", "/odom", "/robot_description"}, counts
    assert [m.data for _, _, m in read_messages(bag, ["robot_description"])] == [robot.model_path.read_text()]
    assert counts["/joint_states"] > 100, counts  # 200 Hz in real time, the first seconds spent starting
    stamps = [(t, m.header.stamp.sec + m.header.stamp.nanosec / 1e9) for _, t, m in read_messages(bag, ["odom"])]
    lags = np.array([t / 1e9 - s for t, s in stamps])
    assert np.all(np.diff([s for _, s in stamps]) > 0)
    assert np.percentile(np.abs(lags), 50) < 0.02, lags  # logged on the simulated clock, not the wall clock


def test_the_recorder_stores_when_a_message_was_written_not_when_it_took_it(tmp_path, rclpy_context, robot):
    """The publish times `g1-teleop latency` measures hops by: a recorder that stamped its own takes counted its
    wake-ups into every hop (it did on rclpy's EventsExecutor, whose callbacks cannot have the source timestamp)."""
    from rclpy.node import Node
    from sensor_msgs.msg import JointState

    from g1_teleop.ros.executor import make_executor
    from g1_teleop.ros.messages import joint_state_msg, to_stamp
    from g1_teleop.ros.qos import QOS_COMMAND
    from g1_teleop.tools.bag_recorder import BagRecorder

    sender = Node("sender", context=rclpy_context)
    recorder = BagRecorder(tmp_path / "bag", topics=["joint_command"], context=rclpy_context)
    executor = make_executor(context=rclpy_context)
    executor.add_node(recorder)
    publisher = sender.create_publisher(JointState, "joint_command", QOS_COMMAND)
    end = time.monotonic() + 10.0
    while publisher.get_subscription_count() < 1 and time.monotonic() < end:
        executor.spin_once(timeout_sec=0.05)
    written: list[int] = []
    for k in range(20):
        written.append(time.time_ns())
        publisher.publish(joint_state_msg(robot.joint_names, to_stamp((k + 1) * 1_000_000_000), np.zeros(29)))
        time.sleep(0.01)
    time.sleep(0.3)  # the recorder busy elsewhere: nothing taken yet
    taken_from_ns = time.time_ns()
    end = time.monotonic() + 0.5
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.05)
    counts = recorder.close()
    executor.shutdown()
    sender.destroy_node()
    assert counts["/joint_command"] == 20, counts
    messages = read_bag(tmp_path / "bag", ["joint_command"]).messages["joint_command"]
    assert [m.msg.header.stamp.sec for m in messages] == list(range(1, 21))  # all, in order
    published = np.array([m.publish_time_ns for m in messages])
    assert np.all(published >= np.array(written)) and np.all(published - np.array(written) < 5e6), \
        (published - np.array(written)) / 1e6  # within 5 ms of the publish call, not at the take
    assert np.all(published < taken_from_ns - 2e8)
    # on the system clock the log time is the arrival, never before the write, and in order
    logged = np.array([m.log_time_ns for m in messages])
    assert np.all(logged >= published) and np.all(logged < taken_from_ns) and np.all(np.diff(logged) >= 0)
