"""`g1-teleop body-stream demo OUT.npz`: a body stream of known G1 motions, for the whole-body path without a
headset (xr_input source body, `g1-teleop sim --body-stream`).

The motions are those of the retargeting's round trip (``retarget.whole_body_motion.DEMO_SEGMENTS``: 2 s standing
still, the calibration, then arm swings, waist turns, a squat, all of them while turning), seen as the 24 body
points of an operator of GMR's table (1.8 m) for whom the retargeting gives them back
(``WholeBodyRetargeter.body_points``). Written in the body stream format (``operator.body_stream``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from g1_teleop.core.robot_description import load_robot
from g1_teleop.operator.body_stream import BodyStream, save_body_stream
from g1_teleop.retarget.whole_body import WholeBodyRetargeter
from g1_teleop.retarget.whole_body_motion import DEMO_SEGMENTS, body_frames, demo_motion


def write_demo_body_stream(out: Path, rate_hz: float = 30.0, log: Callable[[str], None] = print) -> BodyStream:
    """Write the demo stream at ``rate_hz`` (frames per second) to ``out``; returns it."""
    if not rate_hz > 0:
        raise ValueError(f"--rate must be positive, got {rate_hz}")
    retargeter = WholeBodyRetargeter(load_robot())
    motion = demo_motion(retargeter, rate_hz)
    log(f"{motion.stamps.size} frames ({', '.join(f'{name} {s:g} s' for name, s in DEMO_SEGMENTS)}): body points …")
    positions, quat = body_frames(retargeter, motion)
    stream = BodyStream(motion.stamps, positions, quat)
    out.parent.mkdir(parents=True, exist_ok=True)
    save_body_stream(out, stream)
    log(f"wrote {out} ({len(stream)} frames, {motion.stamps[-1]:.1f} s)")
    return stream
