"""The eye renderer: the robot sees its own hands where forward kinematics and the published intrinsics put them,
with the left arm on the left, up on top, and the right eye's view shifted by the stereo disparity; the eyes follow
the base pose; K follows the cameras' fovy; the GL back-end is chosen or refused in one line."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

from g1_teleop.core.camera_images import OPTICAL_R_CAMERA, project
from g1_teleop.core.rotations import transform, wxyz_from_rpy
from g1_teleop.sim import eye_renderer
from g1_teleop.sim.eye_renderer import EyeRenderer, RendererUnavailable, choose_gl_backend

WIDTH, HEIGHT = 320, 240  # smaller than the node's default: the same projection, a quarter of the pixels
ROBOT_GROUP = 1  # the robot's visual geoms (the floor is group 0)
CHANGED = 30  # a pixel differs from the empty scene when its channels differ by more than this in all


@pytest.fixture(scope="module")
def renderer(robot):
    r = EyeRenderer(robot, WIDTH, HEIGHT, backend=choose_gl_backend())
    yield r
    r.close()


@pytest.fixture(scope="module")
def reach_q(robot) -> np.ndarray:
    """The left arm raised in front of the eyes (shoulder pitch −1.2 rad), the right one at its default (below the
    view): an asymmetric pose, so that a mirrored or flipped projection lands on the empty floor."""
    q = robot.default_q.copy()
    q[robot.joint_names.index("left_shoulder_pitch_joint")] = -1.2
    return q


def robot_mask(renderer: EyeRenderer, side: str) -> np.ndarray:
    """Pixels where the robot is: the image against the same scene with the robot's geoms hidden."""
    seen = renderer.render(side).astype(int)
    renderer.option.geomgroup[ROBOT_GROUP] = 0
    try:
        empty = renderer.render(side).astype(int)
    finally:
        renderer.option.geomgroup[ROBOT_GROUP] = 1
    return np.abs(seen - empty).sum(axis=2) > CHANGED


def pixel_of(renderer: EyeRenderer, side: str, body: str) -> np.ndarray:
    """(u, v) where the published intrinsics project a body's origin (forward kinematics of the renderer's pose)."""
    world_T_camera = renderer.world_T_camera(side)
    p = renderer.data.xpos[renderer.model.body(body).id]
    return project(renderer.K(side), world_T_camera[:3, :3].T @ (p - world_T_camera[:3, 3]))


def test_K_follows_the_cameras_fovy(renderer) -> None:
    for side in ("left", "right"):
        assert renderer.fovy_deg(side) == 60.0
        K = renderer.K(side)
        f = (HEIGHT / 2) / math.tan(math.radians(30.0))
        np.testing.assert_allclose(K, [[f, 0, (WIDTH - 1) / 2], [0, f, (HEIGHT - 1) / 2], [0, 0, 1]])


def test_the_eyes_see_the_hand_where_kinematics_and_K_put_it(renderer, robot, reach_q) -> None:
    renderer.set_pose(reach_q)
    mask = robot_mask(renderer, "left")
    assert 0.02 < mask.mean() < 0.5, f"the robot covers {mask.mean():.1%} of the image"
    u, v = pixel_of(renderer, "left", "left_ee")
    assert 0 <= u < WIDTH and 0 <= v < HEIGHT, (u, v)
    iu, iv = round(u), round(v)
    assert mask[iv - 2:iv + 3, iu - 2:iu + 3].all(), f"no robot around the left hand's pixel ({u:.0f}, {v:.0f})"
    # the left arm is in the left half and comes up from the bottom: the image is neither mirrored nor upside down
    assert u < WIDTH / 2 and mask[:, :WIDTH // 2].sum() > 10 * mask[:, WIDTH // 2:].sum()
    assert mask[-3:].any() and not mask[:20].any()
    _, right_v = pixel_of(renderer, "left", "right_ee")  # the right hand hangs below the view
    assert right_v > HEIGHT


def test_the_right_eye_sees_the_hand_shifted_by_the_stereo_disparity(renderer, robot, reach_q) -> None:
    renderer.set_pose(reach_q)
    columns = {}
    for side in ("left", "right"):
        mask = robot_mask(renderer, side)
        _, v = pixel_of(renderer, side, "left_ee")
        row = mask[round(v)]
        columns[side] = np.flatnonzero(row).mean()  # the middle of the hand along the hand's row
    world_T_left = renderer.world_T_camera("left")
    hand = renderer.data.xpos[renderer.model.body("left_ee").id]
    depth = (OPTICAL_R_CAMERA @ world_T_left[:3, :3].T @ (hand - world_T_left[:3, 3]))[2]
    baseline = np.linalg.norm(renderer.world_T_camera("right")[:3, 3] - world_T_left[:3, 3])
    disparity = renderer.K("left")[0, 0] * baseline / depth
    assert baseline == pytest.approx(0.04, abs=1e-9)
    assert columns["left"] - columns["right"] == pytest.approx(disparity, rel=0.25), (columns, disparity)


def test_the_eyes_follow_the_base(renderer, robot) -> None:
    renderer.set_pose(robot.default_q, np.zeros(3), np.array([1.0, 0, 0, 0]))
    pelvis_T_camera = renderer.world_T_camera("left")
    p, q = np.array([1.0, -2.0, 0.7]), wxyz_from_rpy(0.1, -0.2, 1.5)
    renderer.set_pose(robot.default_q, p, q)
    np.testing.assert_allclose(renderer.world_T_camera("left"), transform(p, q) @ pelvis_T_camera, atol=1e-9)
    renderer.set_pose(robot.default_q)  # the base stays where it was
    np.testing.assert_allclose(renderer.world_T_camera("left"), transform(p, q) @ pelvis_T_camera, atol=1e-9)


def test_the_floor_drawn_as_a_few_quads_looks_as_mujocos_infinite_plane(renderer, robot, reach_q) -> None:
    """The renderer's floor (a finite plane of PLANE_CELLS quads a side) against the floor MuJoCo draws for the
    model's infinite plane (a fresh render context made from the original plane size: MuJoCo builds a plane's grid
    with the context)."""
    import mujoco

    floor = renderer.model.geom("floor").id
    reach_m = renderer.model.vis.map.zfar * renderer.model.stat.extent
    half = np.ceil(reach_m / 0.2) * 0.2  # a whole number of the floor's texture periods (texrepeat 5 per metre)
    np.testing.assert_allclose(renderer.model.geom_size[floor], [half, half, half])
    renderer.set_pose(reach_q)
    coarse = {side: renderer.render(side).astype(int) for side in ("left", "right")}
    renderer.model.geom_size[floor] = [0.0, 0.0, 0.05]  # the model's infinite plane (core.mujoco_model)
    renderer._mjr.free()
    renderer._mjr = mujoco.MjrContext(renderer.model, mujoco.mjtFontScale.mjFONTSCALE_100)
    mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN, renderer._mjr)
    try:
        for side, image in coarse.items():
            fine = renderer.render(side).astype(int)
            difference = np.abs(image - fine).max(axis=2)
            # the checkers in phase (a half-period shift differs by 26 levels on a quarter of the pixels); the
            # shading within a few levels (lit at the quads' corners: MuJoCo's fixed-function lighting)
            assert (difference > 16).mean() < 0.001 and difference.mean() < 3.0, (side, difference.mean())
    finally:
        renderer.model.geom_size[floor] = [half, half, half]
        renderer._mjr.free()
        renderer._mjr = mujoco.MjrContext(renderer.model, mujoco.mjtFontScale.mjFONTSCALE_100)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN, renderer._mjr)


def test_a_plane_is_drawn_with_few_quads_to_the_horizon() -> None:
    size = eye_renderer.coarse_plane_size
    np.testing.assert_allclose(size(np.array([0.0, 0.0, 0.05]), 1600.0, np.zeros(2)), [1600.0, 1600.0, 1600.0])
    np.testing.assert_allclose(size(np.array([0.0, 0.0, 0.05]), 1600.1, np.array([0.2, 0.3])),
                               [1600.2, 1600.2, 1600.2])  # whole texture periods
    np.testing.assert_allclose(size(np.array([5.0, 2.0, 0.05]), 1600.0, np.zeros(2)), [5.0, 2.0, 5.0])  # finite
    np.testing.assert_allclose(size(np.array([3.0, 0.0, 0.1]), 1600.0, np.zeros(2)), [3.0, 1600.0, 1600.0])


def test_a_model_without_eye_cameras_is_refused_in_one_line(robot, mj_model) -> None:
    import dataclasses

    frames = dict(robot.frames)
    frames["left_eye"] = dataclasses.replace(frames["left_eye"], name="no_such_camera")
    with pytest.raises(RendererUnavailable, match=r"no camera no_such_camera.*source teleimager") as info:
        EyeRenderer(dataclasses.replace(robot, frames=frames), 64, 48, backend="egl", model=mj_model)
    assert "\n" not in str(info.value)


def test_the_gl_backend_is_the_first_that_works_and_none_is_refused_with_the_fix(monkeypatch) -> None:
    tried = []
    monkeypatch.setattr(eye_renderer, "_probe", lambda b: tried.append(b) or ("no EGL device" if b == "egl" else None))
    monkeypatch.delenv("MUJOCO_GL", raising=False)
    monkeypatch.delenv("PYOPENGL_PLATFORM", raising=False)
    assert choose_gl_backend() == "osmesa" and tried == ["egl", "osmesa"]
    assert os.environ["MUJOCO_GL"] == os.environ["PYOPENGL_PLATFORM"] == "osmesa"
    monkeypatch.setattr(eye_renderer, "_probe", lambda b: f"lib{b} missing")
    monkeypatch.delenv("MUJOCO_GL")  # else the choice just made is honoured
    with pytest.raises(RendererUnavailable) as info:
        choose_gl_backend()
    message = str(info.value)
    assert "egl: libegl missing" in message and "osmesa: libosmesa missing" in message
    assert "apt-get install libegl1 libgl1-mesa-dri libosmesa6" in message and "\n" not in message
    tried.clear()
    monkeypatch.setattr(eye_renderer, "_probe", lambda b: tried.append(b))
    assert choose_gl_backend("osmesa") == "osmesa" and tried == ["osmesa"]  # asked for: no other tried


def test_a_real_probe_finds_egl_here() -> None:
    """This machine has Mesa's EGL (scripts/apt-packages.txt): the child-process probe says so."""
    assert eye_renderer._probe("egl") is None
