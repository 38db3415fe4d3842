"""MuJoCo G1 simulation with joint PD recomputed every physics step, ROS-free.

Frames: world is MuJoCo's (z up); the pelvis pose is the free joint's. Joint vectors are in DDS
motor order. Time is counted in whole physics steps so that stamps are exact multiples of the step.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from g1_teleop.core.foot_contacts import foot_contact_spheres
from g1_teleop.core.limits import JointCommand, pd_torque
from g1_teleop.core.mujoco_model import MjJointMap
from g1_teleop.core.robot_description import Robot
from g1_teleop.core.settings import check_settings, setting
from g1_teleop.sim.gantry import GANTRY_BODY, GantryConfig, gantry_force


@dataclass(frozen=True)
class Push:
    """An external force on the pelvis (at its centre of mass): ``force_n`` (N, world frame) applied from
    ``start_s`` for ``duration_s`` of simulated time."""

    start_s: float
    force_n: tuple[float, float, float]
    duration_s: float

    def __post_init__(self) -> None:
        if not (np.all(np.isfinite(self.force_n)) and len(self.force_n) == 3):
            raise ValueError(f"push force must be 3 finite values (N), got {self.force_n}")
        if not (np.isfinite(self.start_s) and self.start_s >= 0 and np.isfinite(self.duration_s)
                and self.duration_s > 0):
            raise ValueError(f"push needs start_s >= 0 and duration_s > 0, got {self.start_s}, {self.duration_s}")

    def active(self, t_s: float) -> bool:
        return self.start_s <= t_s < self.start_s + self.duration_s


def parse_pushes(text: str) -> tuple[Push, ...]:
    """Pushes from ``"START,FX,FY,FZ,DURATION; ..."`` (s, N, N, N, s), e.g. ``"5,0,40,0,0.2"``; "" is none."""
    pushes = []
    for item in filter(None, (part.strip() for part in text.split(";"))):
        try:
            start, fx, fy, fz, duration = (float(v) for v in item.split(","))
        except ValueError:
            raise ValueError(f"push {item!r}: write START,FX,FY,FZ,DURATION (s, N, N, N, s), "
                             "e.g. 5,0,40,0,0.2") from None
        pushes.append(Push(start, (fx, fy, fz), duration))
    return tuple(pushes)


@dataclass(frozen=True)
class SimConfig:
    """The simulation's time steps, its gantry and the pushes it applies."""

    physics_dt: float = setting(0.005, "MuJoCo step (s)", positive=True)
    control_dt: float = setting(0.02, "command period (s), a whole number of physics steps", positive=True)
    gantry: bool = setting(True, "the virtual gantry holds the torso (sim/gantry.py)")
    pushes: tuple[Push, ...] = setting((), "external forces on the pelvis")

    def __post_init__(self) -> None:
        check_settings(self)
        if self.physics_dt > self.control_dt:
            raise ValueError(f"need physics_dt ({self.physics_dt}) <= control_dt ({self.control_dt})")
        ratio = self.control_dt / self.physics_dt
        if abs(ratio - round(ratio)) > 1e-9:
            raise ValueError(
                f"control_dt ({self.control_dt}) must be a whole multiple of physics_dt ({self.physics_dt})")

    @property
    def decimation(self) -> int:
        return round(self.control_dt / self.physics_dt)

    @property
    def physics_dt_ns(self) -> int:
        return round(self.physics_dt * 1e9)


@dataclass(frozen=True)
class SimState:
    """One sample of the simulated robot.

    q, dq, tau: joint position (rad), velocity (rad/s), actuator torque (N·m), DDS order.
    world_p_pelvis (m), world_q_pelvis (w, x, y, z), world_v_pelvis (m/s, world frame),
    pelvis_v_pelvis (the same velocity in the pelvis frame), pelvis_w_pelvis (rad/s, pelvis frame: what
    the IMU gyro reads), pelvis_a_imu (m/s², pelvis frame, specific force: what the accelerometer reads).
    """

    stamp_ns: int
    q: np.ndarray
    dq: np.ndarray
    tau: np.ndarray
    world_p_pelvis: np.ndarray
    world_q_pelvis: np.ndarray
    world_v_pelvis: np.ndarray
    pelvis_v_pelvis: np.ndarray
    pelvis_w_pelvis: np.ndarray
    pelvis_a_imu: np.ndarray


@dataclass(frozen=True)
class HandState:
    """The hands' joints (``Simulator.hand_names`` order): q (rad), dq (rad/s), tau (N·m, the motors')."""

    q: np.ndarray
    dq: np.ndarray
    tau: np.ndarray


class Simulator:
    """``hand_names``: joints beyond the body's 29 that :meth:`command_hands` drives (the Dex3 hands' 14, in
    hw_bridge's order), each with its motor in the model; their effort limits come from the model's ctrlrange."""

    def __init__(self, robot: Robot, model: mujoco.MjModel, config: SimConfig,
                 gantry: GantryConfig | None = None, hand_names: tuple[str, ...] = ()) -> None:
        self.robot = robot
        self.model = model
        self.config = config
        self.gantry_config = gantry or GantryConfig()
        model.opt.timestep = config.physics_dt
        self.data = mujoco.MjData(model)
        self.joints = MjJointMap.from_model(model, robot.joint_names)
        self.hand_names = hand_names
        self.hands = MjJointMap.from_model(model, hand_names) if hand_names else None
        self._hand_effort = model.actuator_ctrlrange[self.hands.actuator_id, 1] if self.hands else np.zeros(0)
        self._hand_command: JointCommand | None = None
        self._pelvis = model.body("pelvis").id
        self._gantry_body = model.body(GANTRY_BODY).id
        self._com_velocity = np.zeros(6)
        self._imu = {name: _sensor_adr(model, name) for name in ("imu_quat", "imu_gyro", "imu_acc")}
        self.steps = 0
        self._anchor = np.zeros(3)
        self.reset()

    @property
    def stamp_ns(self) -> int:
        return self.steps * self.config.physics_dt_ns

    def reset(self, q: np.ndarray | None = None) -> None:
        """Joints at ``q`` (default pose if None), at rest, the lowest foot point on the floor."""
        mujoco.mj_resetData(self.model, self.data)
        self.data.qpos[self.joints.qpos_adr] = self.robot.default_q if q is None else q
        mujoco.mj_kinematics(self.model, self.data)
        self.data.qpos[2] -= _lowest_foot_point(self.model, self.data)
        mujoco.mj_forward(self.model, self.data)
        self.steps = 0
        self._anchor = self.data.xipos[self._gantry_body].copy()

    def step(self, command: JointCommand) -> None:
        """One physics step with τ = PD(command) applied to every joint."""
        d = self.data
        q, dq = d.qpos[self.joints.qpos_adr], d.qvel[self.joints.dof_adr]
        d.ctrl[self.joints.actuator_id] = pd_torque(command, q, dq, self.robot.effort_limit)
        if self._hand_command is not None:
            hand = self.hands
            d.ctrl[hand.actuator_id] = pd_torque(self._hand_command, d.qpos[hand.qpos_adr], d.qvel[hand.dof_adr],
                                                 self._hand_effort)
        if self.config.gantry:
            # mjOBJ_BODY: velocity of the centre of mass, [angular, linear], world orientation.
            mujoco.mj_objectVelocity(self.model, d, mujoco.mjtObj.mjOBJ_BODY, self._gantry_body,
                                     self._com_velocity, 0)
            d.xfrc_applied[self._gantry_body, :3] = gantry_force(
                self.gantry_config, self._anchor, d.xipos[self._gantry_body], self._com_velocity[3:])
        if self.config.pushes:
            t_s = self.stamp_ns / 1e9
            d.xfrc_applied[self._pelvis, :3] = sum(
                (np.asarray(p.force_n) for p in self.config.pushes if p.active(t_s)), np.zeros(3))
        mujoco.mj_step(self.model, d)
        self.steps += 1

    def command_hands(self, command: JointCommand) -> None:
        """The hands' command from now on (``hand_names`` order). Its kd acts as the joints' damping, which MuJoCo
        integrates implicitly (light finger links under an explicit kd would diverge), the rest by the motors."""
        self.model.dof_damping[self.hands.dof_adr] = command.kd
        self._hand_command = JointCommand(command.q, np.zeros_like(command.q), command.tau_ff + command.kd * command.dq,
                                          command.kp, np.zeros_like(command.q))

    def hand_state(self) -> HandState:
        d, hand = self.data, self.hands
        return HandState(d.qpos[hand.qpos_adr].copy(), d.qvel[hand.dof_adr].copy(),
                         d.actuator_force[hand.actuator_id].copy())

    def step_still(self) -> None:
        """One physics step of time with the robot held where it is, at rest (nothing integrates): real time
        before the first command, so that the robot stands up the same way however late the controller starts."""
        self.data.qvel[:] = 0.0
        self.data.time += self.config.physics_dt
        self.steps += 1

    def step_control_period(self, command: JointCommand) -> None:
        for _ in range(self.config.decimation):
            self.step(command)

    def state(self) -> SimState:
        d = self.data
        # mj_step evaluates sensors before it integrates: bring the position and velocity sensors (IMU
        # orientation and gyro) to the current state. The accelerometer keeps the last step's value.
        mujoco.mj_kinematics(self.model, d)
        mujoco.mj_comPos(self.model, d)
        mujoco.mj_sensorPos(self.model, d)
        mujoco.mj_comVel(self.model, d)
        mujoco.mj_sensorVel(self.model, d)
        quat = _read(d, self._imu["imu_quat"], 4, fallback=d.qpos[3:7])
        return SimState(
            stamp_ns=self.stamp_ns,
            q=d.qpos[self.joints.qpos_adr].copy(),
            dq=d.qvel[self.joints.dof_adr].copy(),
            tau=d.actuator_force[self.joints.actuator_id].copy(),
            world_p_pelvis=d.qpos[0:3].copy(),
            world_q_pelvis=quat,
            world_v_pelvis=d.qvel[0:3].copy(),
            pelvis_v_pelvis=d.xmat[self._pelvis].reshape(3, 3).T @ d.qvel[0:3],
            pelvis_w_pelvis=_read(d, self._imu["imu_gyro"], 3, fallback=d.qvel[3:6]),
            pelvis_a_imu=_read(d, self._imu["imu_acc"], 3, fallback=np.array([0.0, 0.0, 9.81])),
        )


def _sensor_adr(model: mujoco.MjModel, name: str) -> int | None:
    sensor_id = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, name)
    return None if sensor_id < 0 else int(model.sensor_adr[sensor_id])


def _read(data: mujoco.MjData, adr: int | None, size: int, fallback: np.ndarray) -> np.ndarray:
    return np.array(fallback, dtype=float) if adr is None else data.sensordata[adr:adr + size].copy()


def _lowest_foot_point(model: mujoco.MjModel, data: mujoco.MjData) -> float:
    """World z (m) of the lowest point of the foot contact spheres (0 when the model has none)."""
    lowest = np.inf
    for body, (centres, radii) in foot_contact_spheres(model).items():
        body_id = model.body(body).id
        world_z = data.xpos[body_id][2] + centres @ data.xmat[body_id].reshape(3, 3)[2]
        lowest = min(lowest, float(np.min(world_z - radii)))
    return 0.0 if not np.isfinite(lowest) else lowest
