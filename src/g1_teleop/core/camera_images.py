"""Camera images as the eyes publish them: pinhole intrinsics from a vertical field of view, JPEG coding and the
side-by-side stereo frame. ROS-free.

Conventions:

- Images are numpy arrays (height, width, 3) of uint8 RGB, row 0 at the top.
- Intrinsics follow ROS (sensor_msgs/CameraInfo) and OpenCV: pixel (u, v) = (column, row) with integer values at
  pixel centres, in the *optical* frame (z forward, x right, y down). A MuJoCo camera looks along its −z with
  image-up +y (OpenGL's convention); its optical frame is the camera frame turned 180° about x
  (:data:`OPTICAL_R_CAMERA`). With fovy the vertical field of view, fx = fy = (height / 2) / tan(fovy / 2) and the
  principal point at ((width − 1) / 2, (height − 1) / 2): MuJoCo's symmetric frustum, pixel edges at 0 … width.
- JPEG: Pillow (libjpeg-turbo inside its wheels; already installed with matplotlib and vuer), which releases the
  GIL while it codes, so a coding thread does not hold up the node's executor.
- The stereo frame is left | right side by side (2·width × height), as OpenWBT and teleimager stream a binocular
  head camera to the headset.
"""

from __future__ import annotations

import io
import math

import numpy as np
from PIL import Image as PilImage

SIDES = ("left", "right")
# The optical frame's axes in the MuJoCo (OpenGL) camera frame: x the same, y and z reversed.
OPTICAL_R_CAMERA = np.diag([1.0, -1.0, -1.0])
JPEG_MIME = "jpeg"


def intrinsics(fovy_deg: float, width: int, height: int) -> np.ndarray:
    """K (3×3, pixels) of a camera of vertical field of view ``fovy_deg`` (°) and square pixels, image
    ``width`` × ``height`` (pixels); ROS/OpenCV pixel centres (see the module docstring)."""
    if not 0.0 < fovy_deg < 180.0:
        raise ValueError(f"fovy must be in (0, 180) degrees, got {fovy_deg}")
    f = (height / 2.0) / math.tan(math.radians(fovy_deg) / 2.0)
    return np.array([[f, 0.0, (width - 1) / 2.0], [0.0, f, (height - 1) / 2.0], [0.0, 0.0, 1.0]])


def project(K: np.ndarray, camera_p: np.ndarray) -> np.ndarray:
    """Pixels (u, v) of points given in the MuJoCo camera frame (…, 3), m; points behind the camera give NaN."""
    optical = np.asarray(camera_p, dtype=float) @ OPTICAL_R_CAMERA.T
    z = optical[..., 2:3]
    uvw = optical @ K.T
    return np.where(z > 0, uvw[..., :2] / np.where(z > 0, z, 1.0), np.nan)


def encode_jpeg(rgb: np.ndarray, quality: int = 80) -> bytes:
    """JPEG bytes of an RGB image (quality 1–95; televuer streams at 80)."""
    buffer = io.BytesIO()
    PilImage.fromarray(np.ascontiguousarray(rgb)).save(buffer, format="JPEG", quality=quality)
    return buffer.getvalue()


def decode_jpeg(data: bytes) -> np.ndarray:
    """The RGB image (height, width, 3) of JPEG bytes; ValueError with the reason when they are not a JPEG."""
    try:
        with PilImage.open(io.BytesIO(data)) as image:
            if image.format != "JPEG":
                raise ValueError(f"not a JPEG image but {image.format}")
            return np.asarray(image.convert("RGB"))
    except (OSError, SyntaxError) as exc:  # Pillow's errors for unreadable data
        raise ValueError(f"not a JPEG image ({len(data)} bytes): {exc}") from None


def jpeg_size(data: bytes) -> tuple[int, int]:
    """(width, height) of JPEG bytes from their header, nothing decoded; ValueError with the reason when they are
    not a JPEG."""
    try:
        with PilImage.open(io.BytesIO(data)) as image:
            if image.format != "JPEG":
                raise ValueError(f"not a JPEG image but {image.format}")
            return image.size
    except (OSError, SyntaxError) as exc:  # Pillow's errors for unreadable data
        raise ValueError(f"not a JPEG image ({len(data)} bytes): {exc}") from None


def side_by_side(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """The stereo frame: left | right (height, 2·width, 3)."""
    if left.shape != right.shape:
        raise ValueError(f"the eyes' images differ in shape: {left.shape} and {right.shape}")
    return np.concatenate([left, right], axis=1)


def split_side_by_side(stereo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(left, right) halves of a side-by-side stereo frame (views, no copy)."""
    if stereo.shape[1] % 2:
        raise ValueError(f"a side-by-side stereo frame has an even width, got {stereo.shape[1]}")
    half = stereo.shape[1] // 2
    return stereo[:, :half], stereo[:, half:]


class StereoFrame:
    """One stereo frame whose forms are made on first use and kept: the eyes' RGB images, their JPEGs and the
    side-by-side JPEG. Made from the two rendered eyes, or from the side-by-side JPEG a binocular camera sends
    (which then is published as it came, never re-coded), or from a monocular camera's JPEG (both eyes alike).
    A node asks only for the forms someone subscribes to."""

    def __init__(self, *, left: np.ndarray | None = None, right: np.ndarray | None = None,
                 stereo_jpeg: bytes | None = None, mono_jpeg: bytes | None = None, quality: int = 80) -> None:
        given = (left is not None and right is not None, stereo_jpeg is not None, mono_jpeg is not None)
        if sum(given) != 1:
            raise ValueError("a stereo frame needs both eyes' images, a side-by-side JPEG or a monocular JPEG")
        self.quality = quality
        self._rgb: dict[str, np.ndarray] = {} if left is None or right is None else {"left": left, "right": right}
        self._jpeg: dict[str, bytes] = {}
        self._stereo_jpeg = stereo_jpeg
        self._mono_jpeg = mono_jpeg

    def rgb(self, side: str) -> np.ndarray:
        """The eye's RGB image (height, width, 3)."""
        if side not in self._rgb:
            if self._mono_jpeg is not None:
                self._rgb["left"] = self._rgb["right"] = decode_jpeg(self._mono_jpeg)
            else:
                stereo = decode_jpeg(self.stereo_jpeg())
                self._rgb["left"], self._rgb["right"] = split_side_by_side(stereo)
        return self._rgb[side]

    def jpeg(self, side: str) -> bytes:
        """The eye's JPEG."""
        if side not in self._jpeg:
            self._jpeg[side] = self._mono_jpeg if self._mono_jpeg is not None else encode_jpeg(self.rgb(side),
                                                                                              self.quality)
        return self._jpeg[side]

    def stereo_jpeg(self) -> bytes:
        """The side-by-side JPEG (left | right)."""
        if self._stereo_jpeg is None:
            self._stereo_jpeg = encode_jpeg(side_by_side(self.rgb("left"), self.rgb("right")), self.quality)
        return self._stereo_jpeg

    @property
    def shape(self) -> tuple[int, int]:
        """(height, width) of one eye's image (pixels); a JPEG's from its header, without decoding it."""
        if self._rgb:
            height, width = self._rgb["left"].shape[:2]
            return height, width
        width, height = jpeg_size(self._mono_jpeg if self._mono_jpeg is not None else self.stereo_jpeg())
        return height, width if self._mono_jpeg is not None else width // 2
