"""The operator's head → the waist: yaw and pitch of the head's forward axis, relative to the reference, through the
deadband and the gains; across ±π; a new reference at the engage."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from g1_teleop.retarget.head_waist import HeadWaist, HeadWaistConfig, head_yaw_pitch
from g1_teleop.retarget.retarget_settings import RetargetSettings


def head(yaw: float, pitch: float, roll: float = 0.0) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = Rotation.from_euler("ZYX", [yaw, pitch, roll]).as_matrix()
    T[:3, 3] = (0.2, 0.0, 1.5)
    return T


def test_yaw_and_pitch_of_the_head_whatever_its_roll():
    assert head_yaw_pitch(head(0.4, 0.3, roll=0.7)) == pytest.approx((0.4, 0.3))


def test_the_waist_follows_the_head_since_the_reference_beyond_the_deadband():
    waist = HeadWaist(HeadWaistConfig(yaw_gain=1.0, pitch_gain=0.5, deadband_rad=0.05))
    np.testing.assert_allclose(waist.waist(head(0.3, 0.1)), 0.0)  # the first pose is the reference
    np.testing.assert_allclose(waist.waist(head(0.33, 0.14)), 0.0)  # within the deadband
    np.testing.assert_allclose(waist.waist(head(0.7, 0.5)), [0.35, 0.0, 0.5 * 0.35])
    np.testing.assert_allclose(waist.waist(head(-0.1, -0.3)), [-0.35, 0.0, -0.5 * 0.35])
    waist.reset(head(math.pi - 0.1, 0.0))  # the engage: looking back over the shoulder
    np.testing.assert_allclose(waist.waist(head(-math.pi + 0.2, 0.0)), [0.25, 0.0, 0.0], atol=1e-12)


def test_the_node_settings_build_the_configuration_and_refuse_bad_values():
    settings = RetargetSettings(waist="head", waist_yaw_gain=0.8, waist_pitch_gain=0.0)
    assert settings.head_waist_config() == HeadWaistConfig(0.8, 0.0, 0.05)
    with pytest.raises(ValueError, match="waist"):
        RetargetSettings(waist="torso")
    with pytest.raises(ValueError, match="yaw_gain"):
        RetargetSettings(waist_yaw_gain=-1.0)
