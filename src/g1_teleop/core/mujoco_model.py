"""The MuJoCo model of the robot, built from its description: motors, joint dynamics, frames, IMU, eye cameras,
collision filters and the standing keyframe. ROS-free."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import mujoco
import numpy as np

from g1_teleop.core.model_files import mjspec_from_file
from g1_teleop.core.robot_description import DEFAULT_KEYFRAME, FREE_JOINT_NAME, Robot, SelfCollision, frozen_indices

IMU_SITE = "imu"
IMU_SENSORS = ("imu_quat", "imu_gyro", "imu_acc")
EYE_FOVY_DEG = 60.0
COLLISION_GEOM_GROUP = 3  # hidden by default in MuJoCo's renderer; visual geoms stay in group 1
_FLOOR_BIT = 1  # contype/conaffinity bit shared by every collision geom and the floor
_IMU_SENSOR_TYPES = (mujoco.mjtSensor.mjSENS_FRAMEQUAT, mujoco.mjtSensor.mjSENS_GYRO,
                     mujoco.mjtSensor.mjSENS_ACCELEROMETER)


def build_mujoco_model(robot: Robot, timestep: float = 0.005, floor: bool = True) -> mujoco.MjModel:
    """MuJoCo model of the robot, with physics step ``timestep`` (s).

    From a URDF (ours by default): a free joint on the base link at ``spawn_height``, one torque motor per
    joint in DDS order (ctrl = N·m, ctrlrange = ± effort limit), the configured joint dynamics, the fixed
    frames as bodies (added where the URDF lacks them), site ``imu`` with sensors imu_quat / imu_gyro /
    imu_acc, cameras on the eye frames, keyframe ``default`` (standing at default_q), collision geoms in
    group 3 touching the floor and, for the configured group pairs, each other. From a MJCF: the file as
    it is, except that body joints the file gives no dynamics at all (armature, damping and friction loss all
    0, as in Unitree's ``g1_body29_hand14.xml``) get the configured ones: the motors' reflected inertia is
    physical, and without it the wrists' PD diverges at a 5 ms step. With ``floor``, a floor plane and a light
    are added where the model has no plane.
    """
    spec = mjspec_from_file(robot.model_path)
    spec.option.timestep = timestep
    if robot.model_is_mjcf:
        _complete_joint_dynamics(spec, robot)
    else:
        _complete_urdf_spec(spec, robot)
    if floor and not any(g.type == mujoco.mjtGeom.mjGEOM_PLANE for g in spec.worldbody.geoms):
        _add_floor(spec)
    model = spec.compile()
    if robot.model_is_mjcf:
        return model
    # the keyframe needs the compiled qpos layout (a user URDF may have more joints than the 29)
    standing = model.qpos0.copy()
    standing[MjJointMap.from_model(model, robot.joint_names).qpos_adr] = robot.default_q
    spec.add_key(name=DEFAULT_KEYFRAME, qpos=standing)
    return spec.compile()


def _complete_joint_dynamics(spec: mujoco.MjSpec, robot: Robot) -> None:
    for i, name in enumerate(robot.joint_names):
        joint = spec.joint(name)
        if joint.armature == 0.0 and joint.damping[0] == 0.0 and joint.frictionloss == 0.0:
            _set_joint_dynamics(joint, robot, i)


def _set_joint_dynamics(joint: mujoco.MjsJoint, robot: Robot, i: int) -> None:
    joint.armature = robot.armature[i]
    joint.damping[0] = robot.damping[i]  # linear term of the damping polynomial
    joint.frictionloss = robot.frictionloss[i]


def _complete_urdf_spec(spec: mujoco.MjSpec, robot: Robot) -> None:
    spec.compiler.fusestatic = False  # fixed links are frames we need
    base = spec.body(robot.base_link)
    base.pos = [0.0, 0.0, robot.spawn_height]
    base.add_freejoint(name=FREE_JOINT_NAME)

    for i, name in enumerate(robot.joint_names):
        _set_joint_dynamics(spec.joint(name), robot, i)
        motor = spec.add_actuator(name=name.removesuffix("_joint"), target=name,
                                  trntype=mujoco.mjtTrn.mjTRN_JOINT)
        motor.set_to_motor()
        motor.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
        motor.ctrlrange = [-robot.effort_limit[i], robot.effort_limit[i]]

    frame_bodies = {}
    for role, frame in robot.frames.items():
        body = spec.body(frame.name)
        if body is None:
            body = spec.body(frame.parent).add_body(name=frame.name, pos=frame.position, quat=frame.quat_wxyz)
        frame_bodies[role] = body
    frame_bodies["imu"].add_site(name=IMU_SITE, size=[0.01, 0.01, 0.01])
    for name, sensor_type in zip(IMU_SENSORS, _IMU_SENSOR_TYPES, strict=True):
        spec.add_sensor(name=name, type=sensor_type, objtype=mujoco.mjtObj.mjOBJ_SITE, objname=IMU_SITE)
    for role in ("left_eye", "right_eye"):
        frame_bodies[role].add_camera(name=robot.frames[role].name, fovy=EYE_FOVY_DEG)

    _set_collision_filters(spec, robot.self_collision)


def _set_collision_filters(spec: mujoco.MjSpec, self_collision: SelfCollision) -> None:
    """Collision geoms (the URDF's <collision>) touch the floor, and each other for the configured pairs."""
    bit = {group: 1 << (i + 1) for i, group in enumerate(self_collision.groups)}
    partners = dict.fromkeys(self_collision.groups, 0)
    for a, b in self_collision.pairs:
        partners[a] |= bit[b]
        partners[b] |= bit[a]
    group_of = {link: group for group, links in self_collision.groups.items() for link in links}
    for geom in spec.geoms:
        if geom.contype == 0 and geom.conaffinity == 0:
            continue  # visual geom
        group = group_of.get(geom.parent.name)
        geom.group = COLLISION_GEOM_GROUP
        geom.contype = _FLOOR_BIT | (bit[group] if group else 0)
        geom.conaffinity = partners[group] if group else 0


def _add_floor(spec: mujoco.MjSpec) -> None:
    spec.add_texture(name="floor", type=mujoco.mjtTexture.mjTEXTURE_2D,
                     builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER, rgb1=[0.2, 0.3, 0.4], rgb2=[0.1, 0.2, 0.3],
                     width=300, height=300)
    spec.add_material(name="floor", textures=["", "floor"], texrepeat=[5.0, 5.0], texuniform=True)
    spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0.0, 0.0, 0.05],
                            material="floor", contype=_FLOOR_BIT, conaffinity=_FLOOR_BIT)
    spec.worldbody.add_light(name="sun", pos=[0.0, 0.0, 3.0], dir=[0.0, 0.0, -1.0],
                             type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL)


@dataclass(frozen=True, eq=False)
class MjJointMap:
    """DDS joint index -> MuJoCo ``qpos_adr``, ``dof_adr`` and ``actuator_id``, each of shape (29,)."""

    qpos_adr: np.ndarray
    dof_adr: np.ndarray
    actuator_id: np.ndarray

    @classmethod
    def from_model(cls, model: mujoco.MjModel, joint_names: Sequence[str]) -> MjJointMap:
        """Look the joints up by name; raise KeyError naming joints (or actuators) the model lacks."""
        joint_ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, n) for n in joint_names]
        missing = [n for n, j in zip(joint_names, joint_ids, strict=True) if j < 0]
        if missing:
            raise KeyError(f"model lacks joints: {', '.join(missing)}")
        hinge = mujoco.mjtJoint.mjJNT_HINGE
        not_hinge = [n for n, j in zip(joint_names, joint_ids, strict=True) if model.jnt_type[j] != hinge]
        if not_hinge:
            raise KeyError(f"not hinge joints: {', '.join(not_hinge)}")
        by_joint = {
            int(model.actuator_trnid[a, 0]): a
            for a in range(model.nu)
            if model.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT
        }
        unactuated = [n for n, j in zip(joint_names, joint_ids, strict=True) if j not in by_joint]
        if unactuated:
            raise KeyError(f"no actuator drives joints: {', '.join(unactuated)}")
        return cls(
            qpos_adr=frozen_indices(model.jnt_qposadr[joint_ids]),
            dof_adr=frozen_indices(model.jnt_dofadr[joint_ids]),
            actuator_id=frozen_indices([by_joint[j] for j in joint_ids]),
        )




