"""The robot's eyes: a MuJoCo copy of the robot, posed from a joint state and a base pose, rendering the eye cameras
``left_eye`` and ``right_eye`` offscreen on the CPU (Mesa). ROS-free.

No physics runs here: the copy is only posed (forward kinematics) and drawn, so the process that renders it (the
``eyes`` node) never slows the simulator's. Offscreen OpenGL comes from EGL (Mesa's llvmpipe, Debian's libegl1 and
libgl1-mesa-dri) or OSMesa (libosmesa6); :func:`choose_gl_backend` picks the first that creates a context, probing
each in a child process (PyOpenGL binds one platform per process, so a failed EGL could not fall back to OSMesa in
the same process), and sets ``MUJOCO_GL`` for this process. The GL context belongs to the thread that made the
renderer: set poses and render from that thread only.

Cost on the CPU (640×480, llvmpipe on 2 cores): shadows cost ≈ 5× the render and multisampling ≈ 2×, so both are
off by default (``shadows``; ``model.vis.quality.offsamples`` = 0). MuJoCo draws a plane as a grid of quads, up to
``mjMAXPLANEGRID`` (200) lines a side, made when the render context is: an infinite floor is 40 000 quads that
llvmpipe transforms and sets up on the CPU in every frame, two thirds of an eye's render. The copy's planes are
drawn as a few large quads instead (:func:`coarse_plane_size`): the same image (textures repeat per metre, the
lights are directional), both eyes in ≈ 15 ms instead of ≈ 33 ms.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import mujoco
import numpy as np

from g1_teleop.core.camera_images import SIDES, intrinsics
from g1_teleop.core.mujoco_model import MjJointMap, build_mujoco_model
from g1_teleop.core.robot_description import DEFAULT_KEYFRAME, Robot

GL_BACKENDS = ("egl", "osmesa")
PLANE_CELLS = 2  # grid cells a side of a rendered plane (see the module docstring)
VISUAL_GEOM_GROUPS = (0, 1, 2)  # MuJoCo's default visible groups: the floor (0) and the robot's visual geoms (1)
FAR_EXTENTS = 1000.0  # far clipping plane in model extents: 50 (MuJoCo's) ends the floor below the horizon
_PROBE = "from mujoco.{0} import GLContext; c = GLContext(16, 16); c.make_current(); c.free()"


class RendererUnavailable(RuntimeError):
    """No offscreen OpenGL, or a model without the eye cameras; the message says what to do."""


def _probe(backend: str) -> str | None:
    """None if ``backend`` creates a GL context in a child process, else the last line of its error."""
    env = {**os.environ, "MUJOCO_GL": backend, "PYOPENGL_PLATFORM": backend}
    try:
        proc = subprocess.run([sys.executable, "-c", _PROBE.format(backend)], env=env, capture_output=True,
                              text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return "timed out after 60 s"
    if proc.returncode == 0:
        return None
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    return lines[-1] if lines else f"exit code {proc.returncode}"


def choose_gl_backend(requested: str = "") -> str:
    """The offscreen OpenGL to render with: ``requested`` (egl or osmesa) if given, else MUJOCO_GL if it names one
    of them, else EGL if it works, else OSMesa; sets MUJOCO_GL and PYOPENGL_PLATFORM for this process.
    RendererUnavailable when none works, naming each one's error and the packages to install."""
    wanted = requested or os.environ.get("MUJOCO_GL", "").strip().lower()
    candidates = (wanted,) if wanted in GL_BACKENDS else GL_BACKENDS
    errors = []
    for backend in candidates:
        error = _probe(backend)
        if error is None:
            os.environ["MUJOCO_GL"] = os.environ["PYOPENGL_PLATFORM"] = backend
            return backend
        errors.append(f"{backend}: {error}")
    raise RendererUnavailable("no offscreen OpenGL for the eye cameras (" + "; ".join(errors) + "): install Mesa "
                              "(apt-get install libegl1 libgl1-mesa-dri libosmesa6, scripts/apt-packages.txt) or "
                              "use source teleimager")


def coarse_plane_size(size: np.ndarray, reach_m: float, period_m: np.ndarray) -> np.ndarray:
    """A plane's size (half-length x, half-length y, grid spacing; m) to render it with ``PLANE_CELLS`` quads a side:
    an infinite side (size 0) reaches ``reach_m``, the farthest the camera draws, rounded up to a whole number of
    its texture's ``period_m`` (x, y; 0: untextured) so that the texture keeps the phase MuJoCo gives an infinite
    plane."""
    period = np.asarray(period_m, dtype=float)
    reach = np.where(period > 0, np.ceil(reach_m / np.where(period > 0, period, 1.0)) * period, reach_m)
    half = np.where(np.asarray(size[:2]) > 0, size[:2], reach)
    return np.array([half[0], half[1], 2.0 * float(half.max()) / PLANE_CELLS])


def _coarsen_planes(model: mujoco.MjModel) -> None:
    """Every plane of ``model`` drawn with a few quads (see the module docstring), but those whose texture is
    stretched over their size (``texuniform`` false), whose look would change; before the render context is made."""
    reach_m = float(model.vis.map.zfar * model.stat.extent)
    for i in np.flatnonzero(model.geom_type == mujoco.mjtGeom.mjGEOM_PLANE):
        material = model.geom_matid[i]
        textured = material >= 0 and bool((model.mat_texid[material] >= 0).any())
        if textured and not model.mat_texuniform[material]:
            continue
        repeat = model.mat_texrepeat[material] if textured else np.zeros(2)
        period = np.where(repeat > 0, 1.0 / np.where(repeat > 0, repeat, 1.0), 0.0)  # texuniform: repeats per metre
        model.geom_size[i] = coarse_plane_size(model.geom_size[i], reach_m, period)


def gl_renderer_name() -> str:
    """The current GL context's renderer, e.g. 'llvmpipe (LLVM 15.0.6, 256 bits)'."""
    from OpenGL import GL

    name = GL.glGetString(GL.GL_RENDERER)
    return name.decode() if isinstance(name, bytes) else str(name)


class EyeRenderer:
    """Both eye cameras of a posed copy of the robot, rendered offscreen at ``width`` × ``height`` pixels each.

    ``backend`` is egl or osmesa (:func:`choose_gl_backend`); ``model`` defaults to the robot's MuJoCo model with
    its floor (the renderer adapts its visual settings and plane sizes to drawing on the CPU). Images are RGB uint8
    (height, width, 3), row 0 at the top, as the camera sees them: MuJoCo's camera frame (looking along −z, image-up
    +y; the ROS optical frame is it turned 180° about x). ``option`` is the scene's MjvOption (``option.geomgroup``
    hides geom groups, e.g. the robot's visual group 1).
    """

    def __init__(self, robot: Robot, width: int = 640, height: int = 480, backend: str = "egl",
                 shadows: bool = False, model: mujoco.MjModel | None = None) -> None:
        if backend not in GL_BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(GL_BACKENDS)}, got {backend!r}")
        self.model = model if model is not None else build_mujoco_model(robot)
        self.width, self.height = width, height
        names = {side: robot.frames[f"{side}_eye"].name for side in SIDES}
        self.camera_ids = {side: mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_CAMERA, name)
                           for side, name in names.items()}
        missing = [names[side] for side, i in self.camera_ids.items() if i < 0]
        if missing:
            raise RendererUnavailable(f"{robot.model_path.name} has no camera {', '.join(missing)}: use a model with "
                                      "the eye cameras (the project's URDF adds them) or source teleimager")
        if self.model.njnt == 0 or self.model.jnt_type[0] != mujoco.mjtJoint.mjJNT_FREE:
            raise RendererUnavailable(f"{robot.model_path.name}: the robot's first joint is not a free joint; the "
                                      "eyes place the base by qpos[0:7]")
        self.joints = MjJointMap.from_model(self.model, robot.joint_names)
        self.model.vis.global_.offwidth = max(int(self.model.vis.global_.offwidth), width)
        self.model.vis.global_.offheight = max(int(self.model.vis.global_.offheight), height)
        self.model.vis.quality.offsamples = 0  # multisampling doubles the read-back on llvmpipe
        self.model.vis.map.zfar = max(float(self.model.vis.map.zfar), FAR_EXTENTS)  # the floor up to the horizon
        _coarsen_planes(self.model)
        self.data = mujoco.MjData(self.model)
        key = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_KEY, DEFAULT_KEYFRAME)
        if key >= 0:
            mujoco.mj_resetDataKeyframe(self.model, self.data, key)
        self._context = importlib.import_module(f"mujoco.{backend}").GLContext(width, height)
        self._context.make_current()
        self._mjr = mujoco.MjrContext(self.model, mujoco.mjtFontScale.mjFONTSCALE_100)
        mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN, self._mjr)
        self.scene = mujoco.MjvScene(self.model, maxgeom=max(1000, 2 * self.model.ngeom))
        self.scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = shadows
        self.scene.flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = False
        self.option = mujoco.MjvOption()
        self._camera = mujoco.MjvCamera()
        self._camera.type = mujoco.mjtCamera.mjCAMERA_FIXED
        self._rect = mujoco.MjrRect(0, 0, width, height)
        self._pixels = np.empty((height, width, 3), dtype=np.uint8)
        self.backend = backend
        self.set_pose(self.data.qpos[self.joints.qpos_adr].copy())

    def fovy_deg(self, side: str) -> float:
        """Vertical field of view of the eye (°), as the model declares it."""
        return float(self.model.cam_fovy[self.camera_ids[side]])

    def K(self, side: str) -> np.ndarray:
        """The eye's intrinsics (3×3, pixels; ROS optical convention, ``core.camera_images.intrinsics``)."""
        return intrinsics(self.fovy_deg(side), self.width, self.height)

    def set_pose(self, q: np.ndarray, world_p_pelvis: np.ndarray | None = None,
                 world_q_pelvis: np.ndarray | None = None) -> None:
        """Pose the copy: the 29 joints ``q`` (rad, DDS order) and the base in the world (m; w, x, y, z), the base
        kept where it is when not given."""
        self.data.qpos[self.joints.qpos_adr] = q
        if world_p_pelvis is not None:
            self.data.qpos[0:3] = world_p_pelvis
        if world_q_pelvis is not None:
            self.data.qpos[3:7] = world_q_pelvis
        mujoco.mj_kinematics(self.model, self.data)
        mujoco.mj_comPos(self.model, self.data)
        mujoco.mj_camlight(self.model, self.data)

    def world_T_camera(self, side: str) -> np.ndarray:
        """The eye camera's pose in the world (4×4, m; MuJoCo camera frame) at the current pose."""
        i = self.camera_ids[side]
        T = np.eye(4)
        T[:3, :3] = self.data.cam_xmat[i].reshape(3, 3)
        T[:3, 3] = self.data.cam_xpos[i]
        return T

    def render(self, side: str) -> np.ndarray:
        """The eye's image at the current pose (a new array)."""
        self._camera.fixedcamid = self.camera_ids[side]
        mujoco.mjv_updateScene(self.model, self.data, self.option, None, self._camera,
                               mujoco.mjtCatBit.mjCAT_ALL, self.scene)
        mujoco.mjr_render(self._rect, self.scene, self._mjr)
        mujoco.mjr_readPixels(self._pixels, None, self._rect, self._mjr)
        return np.flipud(self._pixels).copy()  # OpenGL's rows start at the bottom

    def render_both(self) -> tuple[np.ndarray, np.ndarray]:
        """(left, right) images at the current pose."""
        left, right = (self.render(side) for side in SIDES)
        return left, right

    def close(self) -> None:
        """Free the GL resources (from the thread that made the renderer)."""
        if self._mjr is not None:
            self._mjr.free()
            self._context.free()
            self._mjr = None
