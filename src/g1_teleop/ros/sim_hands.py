"""The simulated Dex3 hands' ROS side in sim_bridge (``dex3:=true``): teleop/hand_target drives the hands' PD in
the simulator through the same per-hand limits as on the robot (:class:`g1_teleop.hardware.dex3.HandSafety`,
always ACTIVE: the simulator has no bring-up), and hand_states come out as hw_bridge publishes them (one
sensor_msgs/JointState per hand: q, dq and the motors' torque), at the Dex3's rate in simulated time.
"""

from __future__ import annotations

import time

import numpy as np
from rclpy.node import Node

from g1_teleop.core.decimator import Decimator
from g1_teleop.core.dex3_description import NUM_HAND_MOTORS, RATE_HZ, SIDES, Dex3
from g1_teleop.core.limits import JointCommand
from g1_teleop.hardware.bridge_link import HandCommand, HandState
from g1_teleop.hardware.bridge_safety import SafetyState
from g1_teleop.hardware.dex3 import HandSafety, HandSample, HandTarget
from g1_teleop.ros.dex3_topics import HandTopics
from g1_teleop.ros.diagnostics import WarnOnce
from g1_teleop.sim.simulator import Simulator


class SimulatedHands:
    """Call :meth:`update` after each simulated step that is published: every Dex3 period of simulated time it
    publishes the hands' state and gives the simulator their next command (the PD holds it in between)."""

    def __init__(self, node: Node, dex3: Dex3, sim: Simulator, warn: WarnOnce) -> None:
        self.sim = sim
        self.topics = HandTopics(node, dex3, self._on_target, warn)
        self.safety = {side: HandSafety(dex3, side) for side in SIDES}
        self.targets: dict[str, HandTarget] = {}
        self.motors = {side: slice(i * NUM_HAND_MOTORS, (i + 1) * NUM_HAND_MOTORS) for i, side in enumerate(SIDES)}
        self.due = Decimator(RATE_HZ)

    def _on_target(self, command: HandCommand) -> None:
        self.targets[command.side] = command.target

    def update(self, sim_time_s: float) -> None:
        if not self.due(sim_time_s):
            return
        now_s = time.monotonic()  # (the clock of the targets' arrival times)
        state = self.sim.hand_state()
        commands = []
        for side in SIDES:
            motors = self.motors[side]
            self.topics.publish(HandState(side, state.q[motors], state.dq[motors], state.tau[motors]))
            sample = HandSample(now_s, state.q[motors], state.dq[motors])
            commands.append(self.safety[side].step(now_s, SafetyState.ACTIVE, sample, self.targets.get(side)))
        self.sim.command_hands(JointCommand(*(np.concatenate([getattr(c, field) for c in commands])
                                              for field in ("q", "dq", "tau_ff", "kp", "kd"))))
