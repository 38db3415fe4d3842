"""A recorded stream of the operator's body: the 24 XRobot body points (``core.body_points``) with timestamps,
read from and written to a file. ROS-free.

Frames: positions (m) and orientations (w, x, y, z) in a z-up world frame (x forward, y left); each point's
body frame keeps XRobot's own axes, which is what GMR's ``xrobot_to_g1`` offsets expect.

File format: a NumPy ``.npz`` archive with

    stamps     (N,)        s, strictly increasing
    positions  (N, 24, 3)  m
    quat_wxyz  (N, 24, 4)  unit quaternions (w, x, y, z)
    points     (24,)       the point names, XRobot's order (``XROBOT_BODY_POINTS``), checked on reading

``body_stream_from_xrobot`` turns XRobot's raw samples ([x, y, z, qx, qy, qz, qw] per point, Unity's
left-handed y-up frame) into this frame as GMR's reader does (louislelay/GMR,
general_motion_retargeting/xrobot_utils.py): p' = M·p and q' = quat(M) ⊗ q, M = [[1, 0, 0], [0, 0, −1], [0, 1, 0]].
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from g1_teleop.core.body_points import BODY_POINT_COUNT, XROBOT_BODY_POINTS
from g1_teleop.core.rotations import wxyz_from_matrix

_NORM_TOLERANCE = 1e-3
_UNITY_TO_Z_UP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])


class BodyStreamError(ValueError):
    """A body stream file or array that cannot be used; the message says which and why."""


@dataclass(frozen=True, eq=False)
class BodyStream:
    """N body frames: ``stamps`` (N,) s, ``positions`` (N, 24, 3) m, ``quat_wxyz`` (N, 24, 4), XRobot's point
    order, z-up world frame. Validated on construction (BodyStreamError)."""

    stamps: np.ndarray
    positions: np.ndarray
    quat_wxyz: np.ndarray

    def __post_init__(self) -> None:
        n = self.stamps.shape[0] if self.stamps.ndim == 1 else -1
        shapes = {"stamps": (self.stamps.shape, (n,)), "positions": (self.positions.shape, (n, BODY_POINT_COUNT, 3)),
                  "quat_wxyz": (self.quat_wxyz.shape, (n, BODY_POINT_COUNT, 4))}
        for name, (shape, expected) in shapes.items():
            if n < 1 or shape != expected:
                raise BodyStreamError(f"{name} has shape {shape}; expected {expected if n > 0 else '(N ≥ 1, …)'}")
        for name in shapes:
            if not np.all(np.isfinite(getattr(self, name))):
                raise BodyStreamError(f"{name} has non-finite values")
        if np.any(np.diff(self.stamps) <= 0.0):
            raise BodyStreamError("stamps must strictly increase")
        norms = np.linalg.norm(self.quat_wxyz, axis=-1)
        if np.any(np.abs(norms - 1.0) > _NORM_TOLERANCE):
            raise BodyStreamError(f"quat_wxyz: quaternion norms from {norms.min():.4f} to {norms.max():.4f}; "
                                  "they must be unit (w, x, y, z)")

    def __len__(self) -> int:
        return int(self.stamps.size)

    def window(self, seconds: float) -> BodyStream:
        """The frames of the first ``seconds`` (s) from the first stamp (at least one frame)."""
        count = max(1, int(np.searchsorted(self.stamps, self.stamps[0] + seconds, side="right")))
        return BodyStream(self.stamps[:count], self.positions[:count], self.quat_wxyz[:count])


def save_body_stream(path: Path, stream: BodyStream) -> None:
    """Write ``stream`` as the documented .npz archive."""
    np.savez_compressed(Path(path), stamps=stream.stamps, positions=stream.positions, quat_wxyz=stream.quat_wxyz,
                        points=np.array(XROBOT_BODY_POINTS))


def load_body_stream(path: Path) -> BodyStream:
    """Read a body stream .npz; BodyStreamError naming the file and the problem."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as archive:
            missing = [k for k in ("stamps", "positions", "quat_wxyz", "points") if k not in archive]
            if missing:
                raise BodyStreamError(f"{path}: missing arrays {missing} (see g1_teleop.operator.body_stream)")
            points = tuple(str(p) for p in archive["points"])
            if points != XROBOT_BODY_POINTS:
                raise BodyStreamError(f"{path}: points must be XRobot's 24 in order ({', '.join(XROBOT_BODY_POINTS)})")
            return BodyStream(*(np.asarray(archive[k], dtype=float) for k in ("stamps", "positions", "quat_wxyz")))
    except BodyStreamError as exc:
        raise BodyStreamError(str(exc) if str(exc).startswith(str(path)) else f"{path}: {exc}") from None
    except (OSError, ValueError) as exc:
        raise BodyStreamError(f"{path}: not a readable .npz archive ({exc})") from None


def body_stream_from_xrobot(stamps: np.ndarray, raw: np.ndarray) -> BodyStream:
    """A stream of XRobot's raw samples: ``raw`` (N, 24, 7) = [x, y, z, qx, qy, qz, qw] per point in Unity's
    frame (m), ``stamps`` (N,) s; converted to the z-up frame (module docstring)."""
    raw = np.asarray(raw, dtype=float)
    if raw.ndim != 3 or raw.shape[1:] != (BODY_POINT_COUNT, 7):
        raise BodyStreamError(f"XRobot body samples have shape {raw.shape}; expected (N, 24, 7)")
    w, x, y, z = wxyz_from_matrix(_UNITY_TO_Z_UP)
    qw, qx, qy, qz = raw[..., 6], raw[..., 3], raw[..., 4], raw[..., 5]
    quat = np.stack([w * qw - x * qx - y * qy - z * qz, w * qx + x * qw + y * qz - z * qy,
                     w * qy - x * qz + y * qw + z * qx, w * qz + x * qy - y * qx + z * qw], axis=-1)  # quat(M) ⊗ q
    return BodyStream(np.asarray(stamps, dtype=float), raw[..., :3] @ _UNITY_TO_Z_UP.T, quat)
