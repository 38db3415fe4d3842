"""The operator's body stream: XRobot's 24 points, its .npz file and the conversion of XRobot's raw samples."""

import numpy as np
import pytest

from g1_teleop.core.body_points import XROBOT_BODY_POINTS, body_point_index
from g1_teleop.core.rotations import matrix_from_wxyz, wxyz_from_rpy
from g1_teleop.operator.body_stream import (
    BodyStream,
    BodyStreamError,
    body_stream_from_xrobot,
    load_body_stream,
    save_body_stream,
)


def stream(n=5):
    rng = np.random.default_rng(0)
    quat = rng.normal(size=(n, 24, 4))
    return BodyStream(np.arange(n) * 0.02, rng.normal(size=(n, 24, 3)), quat / np.linalg.norm(quat, axis=-1,
                                                                                             keepdims=True))


def test_points_follow_xrobots_order():
    assert len(XROBOT_BODY_POINTS) == 24 and len(set(XROBOT_BODY_POINTS)) == 24
    assert body_point_index("Pelvis") == 0 and body_point_index("Spine3") == 9 and body_point_index("Right_Hand") == 23
    with pytest.raises(KeyError, match="unknown body point 'Tail'"):
        body_point_index("Tail")


def test_file_round_trip_and_window(tmp_path):
    original = stream(50)
    save_body_stream(tmp_path / "s.npz", original)
    loaded = load_body_stream(tmp_path / "s.npz")
    for name in ("stamps", "positions", "quat_wxyz"):
        np.testing.assert_array_equal(getattr(loaded, name), getattr(original, name))
    assert len(loaded.window(0.5)) == 26  # stamps 0 … 0.5 s at 50 Hz


@pytest.mark.parametrize(("change", "message"), [
    (lambda s: {**s, "stamps": s["stamps"][::-1]}, "stamps must strictly increase"),
    (lambda s: {**s, "positions": s["positions"][:, :23]}, r"positions has shape \(5, 23, 3\)"),
    (lambda s: {**s, "quat_wxyz": 2 * s["quat_wxyz"]}, "must be unit"),
    (lambda s: {**s, "points": np.array(XROBOT_BODY_POINTS[::-1])}, "points must be XRobot's 24 in order"),
    (lambda s: {k: v for k, v in s.items() if k != "stamps"}, r"missing arrays \['stamps'\]"),
])
def test_bad_files_are_refused_with_the_reason(tmp_path, change, message):
    good = stream()
    arrays = {"stamps": good.stamps, "positions": good.positions, "quat_wxyz": good.quat_wxyz,
              "points": np.array(XROBOT_BODY_POINTS)}
    np.savez(tmp_path / "bad.npz", **change(arrays))
    with pytest.raises(BodyStreamError, match=message) as error:
        load_body_stream(tmp_path / "bad.npz")
    assert str(error.value).startswith(str(tmp_path / "bad.npz"))


def test_not_an_archive(tmp_path):
    (tmp_path / "x.npz").write_text("hello")
    with pytest.raises(BodyStreamError, match=r"not a readable \.npz archive"):
        load_body_stream(tmp_path / "x.npz")


def test_xrobot_samples_are_turned_z_up():
    raw = np.zeros((1, 24, 7))
    raw[0, :, :3] = [0.1, 1.0, 0.3]  # Unity: y up
    raw[0, :, 3:] = [0.0, 0.0, 0.0, 1.0]  # identity (x, y, z, w)
    raw[0, 5, 3:] = np.roll(wxyz_from_rpy(0.0, 0.0, 0.7), -1)
    converted = body_stream_from_xrobot(np.array([0.0]), raw)
    np.testing.assert_allclose(converted.positions[0, 0], [0.1, -0.3, 1.0])  # p' = M·p, height on z
    M = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])
    np.testing.assert_allclose(matrix_from_wxyz(converted.quat_wxyz[0, 0]), M, atol=1e-12)
    np.testing.assert_allclose(matrix_from_wxyz(converted.quat_wxyz[0, 5]),
                               M @ matrix_from_wxyz(wxyz_from_rpy(0.0, 0.0, 0.7)), atol=1e-12)
    with pytest.raises(BodyStreamError, match=r"expected \(N, 24, 7\)"):
        body_stream_from_xrobot(np.array([0.0]), raw[:, :, :6])
