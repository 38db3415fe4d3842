"""Camera images: K from fovy with ROS pixel centres, projections in the optical convention, JPEG round trips,
the side-by-side stereo frame and its lazily made forms, and the eyes' ROS messages (camera_info's stereo P, the
optical frames)."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest
from PIL import Image as PilImage

from g1_teleop.core.camera_images import (
    StereoFrame,
    decode_jpeg,
    encode_jpeg,
    intrinsics,
    jpeg_size,
    project,
    side_by_side,
    split_side_by_side,
)


def gradient(height: int = 48, width: int = 64, shift: int = 0) -> np.ndarray:
    """A smooth RGB test image (JPEG codes it within a few levels)."""
    v, u = np.mgrid[0:height, 0:width]
    return np.stack([(u * 4 + shift) % 256, v * 5 % 256, np.full_like(u, 128)], axis=2).astype(np.uint8)


def test_K_from_fovy_puts_the_optical_axis_on_the_middle_pixel_centre() -> None:
    K = intrinsics(60.0, 640, 480)
    assert K[0, 0] == K[1, 1] == pytest.approx(240 / math.tan(math.radians(30)))
    assert (K[0, 2], K[1, 2]) == (319.5, 239.5)
    # MuJoCo camera frame: looking along −z, image-up +y. The top edge of the view is fovy/2 above the axis.
    top = np.array([0.0, math.tan(math.radians(30)), -1.0])
    np.testing.assert_allclose(project(K, top), [319.5, -0.5])  # the top edge of row 0
    np.testing.assert_allclose(project(K, np.array([1.0, 0.0, -1.0])), [319.5 + K[0, 0], 239.5])  # right is +u
    assert np.isnan(project(K, np.array([0.0, 0.0, 1.0]))).all()  # behind the camera
    with pytest.raises(ValueError, match="fovy"):
        intrinsics(180.0, 640, 480)


def test_jpeg_round_trip_and_refusal() -> None:
    image = gradient()
    data = encode_jpeg(image, quality=90)
    assert data[:2] == b"\xff\xd8"
    decoded = decode_jpeg(data)
    assert decoded.shape == image.shape and np.abs(decoded.astype(int) - image).mean() < 3
    with pytest.raises(ValueError, match="not a JPEG image \\(5 bytes\\)"):
        decode_jpeg(b"hello")
    assert jpeg_size(data) == (64, 48)  # (width, height) from the header
    png = io.BytesIO()
    PilImage.fromarray(image).save(png, format="PNG")
    for bad, why in ((b"hello", "not a JPEG image \\(5 bytes\\)"), (png.getvalue(), "not a JPEG image but PNG")):
        with pytest.raises(ValueError, match=why):
            jpeg_size(bad)


def test_stereo_frame_forms() -> None:
    left, right = gradient(), gradient(shift=100)
    stereo = side_by_side(left, right)
    assert stereo.shape == (48, 128, 3) and (stereo[:, :64] == left).all() and (stereo[:, 64:] == right).all()
    assert all((a == b).all() for a, b in zip(split_side_by_side(stereo), (left, right), strict=True))

    rendered = StereoFrame(left=left, right=right, quality=95)
    assert rendered.shape == (48, 64) and rendered.rgb("left") is left
    assert decode_jpeg(rendered.stereo_jpeg()).shape == (48, 128, 3)
    assert rendered.jpeg("right") is rendered.jpeg("right")  # coded once

    sent = encode_jpeg(stereo, quality=95)
    received = StereoFrame(stereo_jpeg=sent)
    assert received.shape == (48, 64)  # from the header
    assert received.stereo_jpeg() is sent  # published as it came
    assert np.abs(received.rgb("right").astype(int) - right).mean() < 3

    mono = StereoFrame(mono_jpeg=encode_jpeg(left))
    assert mono.shape == (48, 64) and mono.jpeg("left") is mono.jpeg("right")
    assert mono.rgb("left") is mono.rgb("right")
    with pytest.raises(ValueError, match="a stereo frame needs"):
        StereoFrame(left=left)
    with pytest.raises(ValueError, match="differ in shape"):
        side_by_side(left, gradient(width=32))


def test_camera_info_and_optical_frames() -> None:
    from builtin_interfaces.msg import Time

    from g1_teleop.ros.image_messages import (
        camera_info_msg,
        camera_T_optical,
        compressed_msg,
        image_msg,
        optical_transforms,
    )

    K = intrinsics(60.0, 640, 480)
    info = camera_info_msg(K, 640, 480, Time(sec=3), "right_eye_optical", baseline_m=0.04)
    assert (info.width, info.height, info.header.frame_id) == (640, 480, "right_eye_optical")
    np.testing.assert_allclose(np.reshape(info.k, (3, 3)), K)
    P = np.reshape(info.p, (3, 4))
    np.testing.assert_allclose(P[:, :3], K)
    assert P[0, 3] == pytest.approx(-K[0, 0] * 0.04)  # ROS stereo: Tx = −fx·B for the right camera
    assert list(info.d) == [0.0] * 5 and info.distortion_model == "plumb_bob"
    # optical: z forward (the MuJoCo camera's −z), x right (+x), y down (−y)
    T = camera_T_optical()
    np.testing.assert_allclose(T[:3, :3] @ [0, 0, 1], [0, 0, -1])
    np.testing.assert_allclose(T[:3, :3] @ [0, 1, 0], [0, -1, 0])
    assert [(p, c) for p, c, _ in optical_transforms(["left_eye", "right_eye"])] == [
        ("left_eye", "left_eye_optical"), ("right_eye", "right_eye_optical")]
    image = image_msg(gradient(), Time(sec=1), "left_eye_optical")
    assert (image.encoding, image.step, len(image.data)) == ("rgb8", 192, 48 * 64 * 3)
    assert bytes(image.data) == gradient().tobytes()
    assert compressed_msg(b"\xff\xd8", Time(), "x").format == "rgb8; jpeg compressed bgr8"
