"""Observation vectors of learned lower-body policies, ROS-free, as OpenWBT builds them
(``compute_observation`` of ``SquatLowLevelPolicy`` and ``LocoLowLevelPolicy`` in its
``deploy/helpers/policy_unified.py``) and unitree_rl_gym for its G1 (``Controller.run`` in
``deploy/deploy_real/deploy_real.py``).

Every layout is built from the same terms, each scaled as configured:

* command c ⊙ cmd_scale (squat: height m, pitch rad; loco: vx, vy m/s, wz rad/s);
* the unit gravity direction in the pelvis frame, pelvis_R_world · (0, 0, −1)
  (:func:`g1_teleop.core.rotations.gravity_in_body`);
* pelvis angular velocity (gyro, pelvis frame, rad/s) · ang_vel_scale;
* (q − default_angles)[dof_idx] · dof_pos_scale and dq[dof_idx] · dof_vel_scale;
* the previous action (as :class:`g1_teleop.control.learned.inference.PolicyInference` returned it, i.e.
  clipped as configured);
* two clock values (loco layouts: :mod:`g1_teleop.control.learned.gait_clock`).

Order per layout: see :class:`g1_teleop.control.learned.policy_config.ObservationLayout`. The result is float32 of
length num_obs, clipped to ±clip_observations when configured.
"""

from __future__ import annotations

import numpy as np

from g1_teleop.control.learned.policy_config import LearnedPolicyConfig, ObservationLayout
from g1_teleop.control.proprioception import Proprioception
from g1_teleop.core.rotations import gravity_in_body


def build_observation(config: LearnedPolicyConfig, state: Proprioception, command: np.ndarray,
                      last_action: np.ndarray, clock: np.ndarray | None = None) -> np.ndarray:
    """The observation of ``config.observation`` for one control tick (float32, shape (num_obs,)).

    ``command`` has the layout's command size (unscaled, physical units); ``last_action`` num_actions
    values; ``clock`` the two gait-clock values for the loco layouts (None for squat).
    """
    layout = config.observation
    command = np.asarray(command, dtype=float)
    if command.shape != (layout.command_size,):
        raise ValueError(f"{layout.value}: command must have {layout.command_size} values, got {command.shape}")
    if np.shape(last_action) != (config.num_actions,):
        raise ValueError(f"{layout.value}: last_action must have {config.num_actions} values, "
                         f"got {np.shape(last_action)}")
    if layout.clock_size and np.shape(clock) != (layout.clock_size,):
        raise ValueError(f"{layout.value}: needs {layout.clock_size} gait-clock values, got {clock!r}")
    if not layout.clock_size and clock is not None:
        raise ValueError(f"{layout.value}: has no gait clock, got {clock!r}")

    joints = config.dof_idx
    scaled_command = command * config.cmd_scale
    gravity = gravity_in_body(state.world_q_pelvis)
    angular_velocity = np.asarray(state.pelvis_w_pelvis, dtype=float) * config.ang_vel_scale
    joint_position = (np.asarray(state.q)[joints] - config.default_angles[joints]) * config.dof_pos_scale
    joint_velocity = np.asarray(state.dq)[joints] * config.dof_vel_scale
    if layout is ObservationLayout.OPENWBT_SQUAT:
        parts = [scaled_command, gravity, angular_velocity, joint_position, joint_velocity, last_action]
    elif layout is ObservationLayout.OPENWBT_LOCO:
        parts = [scaled_command, gravity, angular_velocity, joint_position, joint_velocity, last_action, clock]
    else:
        parts = [angular_velocity, gravity, scaled_command, joint_position, joint_velocity, last_action, clock]
    observation = np.concatenate(parts).astype(np.float32)
    if config.clip_observations is not None:
        np.clip(observation, -config.clip_observations, config.clip_observations, out=observation)
    return observation
