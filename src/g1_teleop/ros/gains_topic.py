"""A bridge's side of ``teleop/gains``: a message checked against the robot's gain limits and taken into the gains
in force (:mod:`g1_teleop.core.gains_in_force`), or refused with a warning once per kind."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from rclpy.impl.rcutils_logger import RcutilsLogger
from sensor_msgs.msg import JointState

from g1_teleop.core.gains_in_force import GainsInForce
from g1_teleop.core.joint_vector import JointIndex, MalformedJointMessage
from g1_teleop.ros.messages import gains_from_msg


def take_gains(msg: JointState, gains: GainsInForce, index: JointIndex, gain_limits: tuple[np.ndarray, np.ndarray],
               now_s: float, warn: Callable[[str, str], None], logger: RcutilsLogger, replaces: str) -> None:
    """Take a ``teleop/gains`` message into ``gains`` at time ``now_s`` (s), logging the first one (it replaces
    ``replaces``, e.g. "gain profile 'default'"); a malformed or out-of-range one is refused and counted."""
    try:
        kp, kd = gains_from_msg(msg, index, *gain_limits)
    except MalformedJointMessage as exc:
        gains.refuse()
        warn(f"gains {exc.kind}", f"refused teleop/gains: {exc}; the gains in force stay ({gains.source})")
        return
    if gains.take(kp, kd, now_s):
        logger.info(f"teleop/gains received: the controller's gains replace {replaces} from the next joint_command on")
