"""The MuJoCo model of the robot, built from its description: motors, joint dynamics, frames, IMU, eye cameras,
collision filters, the standing keyframe and, when asked, the Dex3-1 hands. ROS-free."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import mujoco
import numpy as np

from g1_teleop.core.dex3_description import FINGER_RADIUS_M, PALM_BOX_CENTER, PALM_BOX_HALF_SIZE, SIDES, Dex3
from g1_teleop.core.model_files import mjspec_from_file
from g1_teleop.core.robot_description import DEFAULT_KEYFRAME, FREE_JOINT_NAME, Robot, SelfCollision, frozen_indices

IMU_SITE = "imu"
IMU_SENSORS = ("imu_quat", "imu_gyro", "imu_acc")
EYE_FOVY_DEG = 60.0
COLLISION_GEOM_GROUP = 3  # hidden by default in MuJoCo's renderer; visual geoms stay in group 1
_FLOOR_BIT = 1  # contype/conaffinity bit shared by every collision geom and the floor
_IMU_SENSOR_TYPES = (mujoco.mjtSensor.mjSENS_FRAMEQUAT, mujoco.mjtSensor.mjSENS_GYRO,
                     mujoco.mjtSensor.mjSENS_ACCELEROMETER)
# Dex3 finger joints: Unitree's description gives them no rotor inertia; a finger link's own inertia (~1e-5 kg·m²)
# under the hand loop's kp 1.5 N·m/rad would make the explicit PD diverge at a 5 ms step (ω·dt ≈ 1.7). This
# reflected rotor inertia of a small geared motor keeps ω·dt ≈ 0.6; the hand loop's kd acts as joint damping,
# which MuJoCo integrates implicitly.
HAND_ARMATURE = 1e-4  # kg·m²


def build_mujoco_model(robot: Robot, timestep: float = 0.005, floor: bool = True,
                       hands: Dex3 | None = None) -> mujoco.MjModel:
    """MuJoCo model of the robot, with physics step ``timestep`` (s); with ``hands``, Dex3-1 hands on the wrists
    of a URDF body (:func:`add_dex3_hands`).

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
        if hands is not None:
            add_dex3_hands(spec, hands)
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


def add_dex3_hands(spec: mujoco.MjSpec, dex3: Dex3) -> None:
    """Replace the body's rubber hands (the box on each ``<side>_wrist_yaw_link``) by Dex3-1 hands as
    config/dex3.yaml's ``hand_model`` describes them: the wrist yaw link takes the inertial it has with the palm,
    the palm link is a frame on it, and each finger joint a hinge within the hand's limits with a torque motor
    (ctrl N·m, ± its effort limit). The finger links are drawn as capsules that touch nothing (visual only)."""
    hand = dex3.model
    for side in SIDES:
        wrist = spec.body(f"{side}_wrist_yaw_link")
        for geom in [g for g in wrist.geoms if g.type == mujoco.mjtGeom.mjGEOM_BOX]:
            spec.delete(geom)
        _set_inertial(wrist, hand.wrist_inertial(side))
        palm = wrist.add_body(name=f"{side}_hand_palm_link", pos=hand.palm_origin(side))
        bodies = {"palm": palm}
        links = hand.links(side)
        limits = dex3.limits[side]
        for i, link in enumerate(links):
            name = f"{side}_hand_{link.joint}"
            body = bodies[link.joint] = bodies[link.parent].add_body(name=f"{name}_link", pos=link.origin)
            _set_inertial(body, link.inertial)
            axis = np.eye(3)["xyz".index(link.axis)]
            joint = body.add_joint(name=f"{name}_joint", type=mujoco.mjtJoint.mjJNT_HINGE, axis=axis,
                                   range=[limits.q_lower[i], limits.q_upper[i]], armature=HAND_ARMATURE)
            joint.limited = mujoco.mjtLimited.mjLIMITED_TRUE
            joint.damping[0] = dex3.kd
            end = hand.drawn_segment_end(side, link)
            body.add_geom(type=mujoco.mjtGeom.mjGEOM_CAPSULE, fromto=[0.0, 0.0, 0.0, *end], size=[FINGER_RADIUS_M,
                          0.0, 0.0], contype=0, conaffinity=0, group=1, density=0.0, rgba=[0.3, 0.3, 0.3, 1.0])
            motor = spec.add_actuator(name=name, target=f"{name}_joint", trntype=mujoco.mjtTrn.mjTRN_JOINT)
            motor.set_to_motor()
            motor.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
            motor.ctrlrange = [-limits.effort[i], limits.effort[i]]
        palm.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, pos=PALM_BOX_CENTER, size=PALM_BOX_HALF_SIZE, contype=0,
                      conaffinity=0, group=1, density=0.0, rgba=[0.3, 0.3, 0.3, 1.0])


def _set_inertial(body: mujoco.MjsBody, inertial) -> None:
    body.explicitinertial = True
    body.fullinertia = [np.nan, 0.0, 0.0, 0.0, 0.0, 0.0]  # (unset: the principal moments below are used)
    body.mass, body.ipos, body.iquat, body.inertia = inertial.mass, inertial.com, inertial.quat, inertial.moments


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




