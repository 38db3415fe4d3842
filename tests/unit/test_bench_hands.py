"""`g1-teleop bench hands`' optional dex-retargeting section, without the package: left out with one line saying
how to get it, and the Dex3 hand it would be given (from Unitree's official body file) is the project's."""

import dataclasses
import sys

import numpy as np
import pinocchio as pin
import pytest

from g1_teleop.core.dex3_description import SIDES, load_dex3
from g1_teleop.retarget.hand_retarget import PALM_R_LANDMARKS
from g1_teleop.retarget.hand_retarget_kinematics import Dex3Kinematics
from g1_teleop.tools.bench import hands_dex
from g1_teleop.tools.bench.hands import bench_hands


def test_without_the_package_the_section_is_absent_with_one_line_saying_how(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "dex_retargeting", None)  # import fails, installed or not
    monkeypatch.setitem(sys.modules, "dex_retargeting.retargeting_config", None)
    figures = bench_hands(cycles=1)
    assert not [name for name in figures if name.startswith("dex_")]
    for side in SIDES:
        assert figures[f"{side}_retargets_per_cpu_s"] > 0 and figures[f"{side}_tip_err_p50_mm"] > 0
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "dex_retargeting section skipped" in lines[0] and "torch==2.13.0" in lines[0]


@pytest.mark.parametrize("side", SIDES)
def test_the_packages_hand_is_the_projects_dex3_in_the_landmark_frame(side):
    body = hands_dex.models_dir() / "g1_body29_hand14.urdf"
    if not body.is_file():
        pytest.skip(f"official G1 + Dex3 model not found: {body} is absent")
    dex3 = load_dex3()
    model = pin.buildModelFromXML(hands_dex.dex3_hand_urdf(side, body, dex3))
    data = model.createData()
    names = dex3.joint_names(side)
    order = [model.getJointId(name) - 1 for name in names]  # one q per revolute joint
    lower, upper = dex3.limits[side].q_lower, dex3.limits[side].q_upper
    np.testing.assert_allclose(model.lowerPositionLimit[order], lower, atol=1e-5)  # the body file: 8 digits
    np.testing.assert_allclose(model.upperPositionLimit[order], upper, atol=1e-5)
    ours = Dex3Kinematics(side, dataclasses.replace(dex3.model, tip_along_distal=hands_dex._TIP_ALONG_M))
    rng = np.random.default_rng(0)
    for _ in range(20):
        q_ours = rng.uniform(lower, upper)
        q = np.empty(model.nq)
        q[order] = q_ours
        pin.framesForwardKinematics(model, data, q)
        tips = [data.oMf[model.getFrameId(name)].translation for name in ("thumb_tip", "index_tip", "middle_tip")]
        np.testing.assert_allclose(tips, ours.tips(q_ours) @ PALM_R_LANDMARKS[side], atol=1e-9)
