"""The keyboard teleop's keys: teleop_twist_keyboard's layout, mapped to a body velocity and operator requests.

ROS-free. The velocity is (vx, vy, wz): m/s, m/s, rad/s in the pelvis frame (x forward, y left, z up), each
clamped to the locomotion policy's ±0.3; the policy treats components below 0.1 as 0, so the speeds stay
in [0.1, 0.3]. A movement key latches its motion until another movement key, a stop key or any unknown key
(which stops, as in teleop_twist_keyboard).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace

MAX_SPEED = 0.3  # the policy's |vx|, |vy| (m/s) and |wz| (rad/s) limit
MIN_SPEED = 0.1  # the policy's dead band: slower components count as 0
SPEED_STEP = 0.05

# key → (vx, vy, wz) direction. Lower case drives and turns; upper case (shift) strafes instead of turning.
MOVES: dict[str, tuple[int, int, int]] = {
    "u": (1, 0, 1), "i": (1, 0, 0), "o": (1, 0, -1),
    "j": (0, 0, 1), "l": (0, 0, -1),
    "m": (-1, 0, -1), ",": (-1, 0, 0), ".": (-1, 0, 1),
    "U": (1, 1, 0), "I": (1, 0, 0), "O": (1, -1, 0),
    "J": (0, 1, 0), "L": (0, -1, 0),
    "M": (-1, 1, 0), "<": (-1, 0, 0), ">": (-1, -1, 0),
}
SPEED_KEYS: dict[str, float] = {"+": SPEED_STEP, "=": SPEED_STEP, "-": -SPEED_STEP, "_": -SPEED_STEP}
# Arrow keys as the terminal sends them → the movement key they stand for.
ARROWS: dict[str, str] = {"\x1b[A": "i", "\x1b[B": ",", "\x1b[C": "l", "\x1b[D": "j"}


class Request(str, enum.Enum):
    """What a key asks beyond the velocity; the values name g1_teleop.tools.service_call's actions."""

    SQUAT = "squat"
    LOCOMOTION = "locomotion"
    ESTOP = "estop"
    QUIT = "quit"


REQUEST_KEYS: dict[str, Request] = {"1": Request.SQUAT, "2": Request.LOCOMOTION, "e": Request.ESTOP,
                                    "q": Request.QUIT, "\x03": Request.QUIT}

HELP = """\
g1-teleop teleop-keys: cmd_vel (vx, vy m/s, wz rad/s, pelvis frame) for the policy's LOCOMOTION mode
   u    i    o        i / ,   forward / back       j / l   turn left / right
   j    k    l        u o m . forward or back while turning
   m    ,    .        shift (U I O J L M < >): strafe instead of turning
                      arrow keys: forward, back, turn
   k or space: stop (so does any other key)      + / -: speed ±0.05 (0.1 … 0.3)
   1: SQUAT   2: LOCOMOTION (teleop/squat, teleop/locomotion)   e: e-stop (hw_bridge/estop) and stop
   q or Ctrl-C: send zero and quit"""


@dataclass(frozen=True)
class KeyCommand:
    """The latched motion and the speeds it is driven at (m/s for vx, vy; rad/s for wz)."""

    direction: tuple[int, int, int] = (0, 0, 0)
    linear_speed: float = 0.2
    angular_speed: float = 0.2

    @property
    def velocity(self) -> tuple[float, float, float]:
        """(vx, vy, wz), each within ±MAX_SPEED."""
        dx, dy, dz = self.direction
        return tuple(max(-MAX_SPEED, min(MAX_SPEED, v)) for v in
                     (dx * self.linear_speed, dy * self.linear_speed, dz * self.angular_speed))


def split_keys(text: str) -> list[str]:
    """The keys in what the terminal sent: single characters, arrow keys as their movement key."""
    keys, i = [], 0
    while i < len(text):
        arrow = next((seq for seq in ARROWS if text.startswith(seq, i)), None)
        keys.append(ARROWS[arrow] if arrow else text[i])
        i += len(arrow) if arrow else 1
    return keys


def apply_key(command: KeyCommand, key: str) -> tuple[KeyCommand, Request | None]:
    """The command after ``key``, and the request it makes (None: velocity or speed only)."""
    if key in MOVES:
        return replace(command, direction=MOVES[key]), None
    if key in SPEED_KEYS:
        def step(speed: float) -> float:
            return round(min(MAX_SPEED, max(MIN_SPEED, speed + SPEED_KEYS[key])), 3)

        return replace(command, linear_speed=step(command.linear_speed),
                       angular_speed=step(command.angular_speed)), None
    request = REQUEST_KEYS.get(key)
    if request in (Request.SQUAT, Request.LOCOMOTION):
        return command, request  # a mode switch keeps the motion: LOCOMOTION → SQUAT needs it stopped anyway
    return replace(command, direction=(0, 0, 0)), request  # k, space, e, q and any other key stop
