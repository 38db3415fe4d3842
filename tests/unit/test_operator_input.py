"""Bags (g1_teleop.core.rosbag) and the operator-input players (g1_teleop.operator.input_sources), ROS-free: bags are
written here with rosbags' own serializer, as a recorder would receive the messages."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from g1_teleop.core.paths import scenario_path
from g1_teleop.core.rosbag import TYPESTORE, BagError, BagWriter, read_messages
from g1_teleop.core.rotations import matrix_from_wxyz
from g1_teleop.operator.input_sources import OperatorRecording, ScenarioPlayer, pose_vector
from g1_teleop.operator.scenario import Scenario

T = TYPESTORE.types
POSE = "geometry_msgs/msg/PoseStamped"
JOY = "sensor_msgs/msg/Joy"


def header(stamp_ns: int, frame: str = "pelvis"):
    stamp = T["builtin_interfaces/msg/Time"](sec=stamp_ns // 1_000_000_000, nanosec=stamp_ns % 1_000_000_000)
    return T["std_msgs/msg/Header"](stamp=stamp, frame_id=frame)


def pose_cdr(stamp_ns: int, pose: np.ndarray) -> bytes:
    point = T["geometry_msgs/msg/Point"](x=pose[0], y=pose[1], z=pose[2])
    quat = T["geometry_msgs/msg/Quaternion"](w=pose[3], x=pose[4], y=pose[5], z=pose[6])
    msg = T[POSE](header=header(stamp_ns), pose=T["geometry_msgs/msg/Pose"](position=point, orientation=quat))
    return TYPESTORE.serialize_cdr(msg, POSE)


def joy_cdr(stamp_ns: int, axes: list[float], buttons: list[int]) -> bytes:
    msg = T[JOY](header=header(stamp_ns, "joy"), axes=np.array(axes, dtype=np.float32),
                 buttons=np.array(buttons, dtype=np.int32))
    return TYPESTORE.serialize_cdr(msg, JOY)


def random_pose(rng) -> np.ndarray:
    """Position (m) and orientation (w, x, y, z), in either sign."""
    return np.concatenate([rng.uniform(-0.5, 0.5, 3), Rotation.random(random_state=rng).as_quat(scalar_first=True)])


@pytest.fixture
def operator_bag(tmp_path):
    """Wrist pairs every 20 ms from t = 1 s (the right wrist of the third one missing), heads every 40 ms, a
    joystick sample at 1.02 s; log times = stamps, in a namespace (/g1) as a recorder writes them."""
    rng = np.random.default_rng(4)
    stamps = [1_000_000_000 + 20_000_000 * k for k in range(5)]
    poses = {"left": [random_pose(rng) for _ in stamps], "right": [random_pose(rng) for _ in stamps],
             "head": [random_pose(rng) for _ in stamps]}
    with BagWriter(tmp_path / "bag") as bag:
        for k, stamp in enumerate(stamps):
            if k % 2 == 0:
                bag.write("/g1/xr/head", POSE, stamp, pose_cdr(stamp, poses["head"][k]))
            bag.write("/g1/xr/left_wrist", POSE, stamp, pose_cdr(stamp, poses["left"][k]))
            if k != 2:
                bag.write("/g1/xr/right_wrist", POSE, stamp, pose_cdr(stamp, poses["right"][k]))
            if k == 1:
                bag.write("/g1/joy", JOY, stamp, joy_cdr(stamp, [0.0, 0.5], [1, 0]))
        string = T["std_msgs/msg/String"](data="SQUAT")
        bag.write("/g1/teleop/mode", string.__msgtype__, stamps[0], TYPESTORE.serialize_cdr(string, string.__msgtype__))
        counts = dict(bag.counts)
    return tmp_path / "bag", poses, counts


def test_a_written_bag_reads_back_in_log_time_order_under_relative_names(operator_bag):
    path, poses, counts = operator_bag
    assert counts == {"/g1/xr/head": 3, "/g1/xr/left_wrist": 5, "/g1/xr/right_wrist": 4, "/g1/joy": 1,
                      "/g1/teleop/mode": 1}
    assert (path / "metadata.yaml").is_file() and len(list(path.glob("*.mcap"))) == 1
    messages = list(read_messages(path, ["xr/left_wrist", "joy"]))
    assert [topic for topic, _, _ in messages].count("xr/left_wrist") == 5
    assert [t for _, t, _ in messages] == sorted(t for _, t, _ in messages)
    first = next(m for topic, _, m in messages if topic == "xr/left_wrist")
    p = first.pose.position
    assert (p.x, p.y, p.z) == tuple(poses["left"][0][:3])
    joy = next(m for topic, _, m in messages if topic == "joy")
    assert list(joy.axes) == [0.0, 0.5] and list(joy.buttons) == [1, 0]


def test_bag_errors_name_the_path_and_the_fix(tmp_path, operator_bag):
    with pytest.raises(BagError, match="not a rosbag2 bag"):
        list(read_messages(tmp_path / "nothing", ["joy"]))
    with pytest.raises(BagError, match="exists"):
        BagWriter(operator_bag[0])
    with BagWriter(tmp_path / "two") as bag:
        for name in ("/a/joy", "/b/joy"):
            bag.write(name, JOY, 0, joy_cdr(0, [], []))
    with pytest.raises(BagError, match="several topics"):
        list(read_messages(tmp_path / "two", ["joy"]))
    with BagWriter(tmp_path / "state_only") as bag:
        bag.write("/joy", JOY, 0, joy_cdr(0, [], []))
    with pytest.raises(BagError, match="no xr/left_wrist and xr/right_wrist"):
        OperatorRecording.load(tmp_path / "state_only")


def test_the_recording_plays_the_latest_complete_pair_with_the_head_and_joystick_in_force(operator_bag):
    path, poses, _ = operator_bag
    recording = OperatorRecording.load(path)
    assert np.allclose(recording.t, [1.0, 1.02, 1.06, 1.08])  # the pair at 1.04 s lacks its right wrist
    assert recording.duration == pytest.approx(0.08) and recording.sample_rate_hz == pytest.approx(50.0)
    start = recording.frame(-1.0)  # before the start: the first sample
    assert np.array_equal(start.left_wrist, poses["left"][0]) and np.array_equal(start.head, poses["head"][0])
    assert start.joy_axes == () and start.joy_buttons == ()
    mid = recording.frame(0.05)  # 1.05 s: the pair of 1.02 s, the head of 1.00 s, the joystick of 1.02 s
    assert np.array_equal(mid.left_wrist, poses["left"][1]) and np.array_equal(mid.right_wrist, poses["right"][1])
    assert np.array_equal(mid.head, poses["head"][0])
    assert mid.joy_axes == (0.0, 0.5) and mid.joy_buttons == (1, 0)
    exact = recording.frame(0.06)  # a stamp exactly: that sample (the head of 1.04 s by then)
    assert np.array_equal(exact.right_wrist, poses["right"][3]) and np.array_equal(exact.head, poses["head"][2])
    end = recording.frame(10.0)  # after the end: the last sample held
    assert np.array_equal(end.right_wrist, poses["right"][4]) and np.array_equal(end.head, poses["head"][4])
    with pytest.raises(ValueError, match="finite"):
        recording.frame(float("nan"))


def test_the_scenario_player_publishes_the_scenarios_targets_through_the_headset_round_trip():
    scenario = Scenario.load(scenario_path("default"))
    player = ScenarioPlayer(scenario)
    for t in (0.0, 3.3, 7.0, scenario.duration + 1.0):
        sample, frame = scenario.sample(t), player.frame(t)
        for T, pose in ((sample.world_T_head, frame.head), (sample.pelvis_T_left_wrist, frame.left_wrist),
                        (sample.pelvis_T_right_wrist, frame.right_wrist)):
            assert np.allclose(pose[:3], T[:3, 3], atol=1e-9)
            assert np.allclose(matrix_from_wxyz(pose[3:]), T[:3, :3], atol=1e-9)
        assert (frame.joy_axes, frame.joy_buttons) == (sample.joy_axes, sample.joy_buttons)
    assert np.array_equal(pose_vector(np.eye(4)), [0, 0, 0, 1, 0, 0, 0])
    with pytest.raises(ValueError, match="wrist_reference"):
        ScenarioPlayer(scenario, "chest")
