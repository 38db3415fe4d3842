"""The built-in standing controller: leg IK with both feet fixed, the centre of mass over the feet, the
contact-consistent torques, and the controller in closed loop with MuJoCo (no ROS, no gantry), also with Dex3
hands."""

from __future__ import annotations

from types import SimpleNamespace

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from g1_teleop.control.balance import Balance, BalanceGains
from g1_teleop.control.gains import JointGains
from g1_teleop.control.leg_ik import LegIK, PelvisPose, StanceError, StanceModel
from g1_teleop.control.squat_command import SquatCommand, SquatCommandLimits
from g1_teleop.control.standing_controller import StandingController
from g1_teleop.control.whole_body_target import WholeBodyTargetBuilder
from g1_teleop.core.dex3_description import load_dex3
from g1_teleop.core.limits import JointCommand
from g1_teleop.core.mujoco_model import build_mujoco_model
from g1_teleop.sim.simulator import Push, SimConfig, Simulator, parse_pushes


@pytest.fixture(scope="module")
def stance(robot) -> StanceModel:
    return StanceModel.for_robot(robot)


def test_the_default_pose_puts_the_pelvis_at_the_spawn_height(robot, stance):
    # config/g1_29dof.yaml's spawn height is the pelvis height with the contact spheres on the floor
    assert stance.default_pelvis.height_m == pytest.approx(robot.spawn_height, abs=1e-4)
    assert LegIK(stance).pelvis_of(robot.default_q).height_m == pytest.approx(robot.spawn_height, abs=1e-4)


def test_leg_ik_keeps_both_soles_where_they_stand_in_mujoco(robot, mj_model, stance):
    """Solve a squatting, leaning pose, then place the solution in MuJoCo: the feet's contact spheres lie
    flat on the floor at the default pose's place and the pelvis is where it was asked to be."""
    ik = LegIK(stance)
    pose = PelvisPose(-0.06, 0.01, 0.6, 0.3)
    q = ik.solve(pose, robot.default_q)
    sim = Simulator(robot, mj_model, SimConfig(gantry=False))
    spheres_at = {}
    for name, joints in (("default", robot.default_q), ("solved", q)):
        sim.reset(joints)
        world_T_pelvis = pin.SE3(pin.Quaternion(*sim.data.qpos[3:7]).matrix(), sim.data.qpos[:3].copy())
        spheres = []
        for g in np.flatnonzero(mj_model.geom_type == mujoco.mjtGeom.mjGEOM_SPHERE):
            if "ankle_roll" in mj_model.body(mj_model.geom_bodyid[g]).name:
                spheres.append(world_T_pelvis.actInv(sim.data.geom_xpos[g].copy()))
        spheres_at[name] = np.array(spheres)  # pelvis frame
    # In the support frame, each sphere of the solved pose is where it is at the default pose.
    support_T_pelvis = pose.support_T_pelvis()
    default_T = stance.default_pelvis.support_T_pelvis()
    solved = spheres_at["solved"] @ support_T_pelvis.rotation.T + support_T_pelvis.translation
    default = spheres_at["default"] @ default_T.rotation.T + default_T.translation
    np.testing.assert_allclose(solved, default, atol=1e-5)


def test_leg_ik_refuses_a_pelvis_out_of_the_legs_reach(robot, stance):
    with pytest.raises(StanceError, match="residual"):
        LegIK(stance).solve(PelvisPose(0.0, 0.0, 1.2, 0.0), robot.default_q)  # legs 0.7 m long at most


def test_balanced_pose_puts_the_centre_of_mass_over_the_feet_and_respects_the_ankles(robot, stance):
    ik = LegIK(stance)
    pose, q = ik.balanced(PelvisPose(-0.03, 0.0, 0.75, 0.0), robot.default_q, np.zeros(2), iterations=6)
    # the centre of mass from MuJoCo-independent Pinocchio data: subtree mass-weighted body positions
    model = stance.model
    data = model.createData()
    pin.forwardKinematics(model, data, stance.configuration(pose.support_T_pelvis(), q))
    com = sum(model.inertias[i].mass * data.oMi[i].act(model.inertias[i].lever) for i in range(1, model.njoints))
    np.testing.assert_allclose(com[:2] / stance.mass, [0.0, 0.0], atol=1e-4)
    np.testing.assert_allclose(ik.com_in_support(pose, q), com / stance.mass, atol=1e-12)  # the compiled one
    assert pose.pitch_rad == 0.0  # standing: no extra lean
    deep, q_deep = ik.balanced(PelvisPose(pose.x_m, 0.0, 0.5, 0.0), q, np.zeros(2), iterations=30)
    assert q_deep[[4, 10]].min() >= robot.q_lower[4] + 0.05 - 1e-3  # ankles kept off their limit
    assert 0.2 < deep.pitch_rad < 0.5  # leaning forward to keep the centre of mass over the feet
    np.testing.assert_allclose(ik.com_in_support(deep, q_deep)[0], 0.0, atol=2e-3)


def test_gravity_torques_with_the_feet_on_the_ground_balance_the_body(robot, stance):
    """At rest with no feedback, the ankle pitch torque is the static one of a hand computation."""
    balance = Balance(stance, BalanceGains())
    state = SimpleNamespace(q=robot.default_q, dq=np.zeros(29), world_q_pelvis=np.array([1.0, 0, 0, 0]),
                            pelvis_w_pelvis=np.zeros(3))
    # The centre-of-mass target where the centre of mass is: no feedback acceleration, gravity only.
    torques = balance.torques(state, com_offset_xy=balance.torques(state).com_error_m)
    np.testing.assert_allclose(torques.com_accel_m_s2, 0.0, atol=1e-9)
    # Symmetric pose: left and right leg torques mirror each other (hip pitch, knee, ankle pitch).
    np.testing.assert_allclose(torques.tau[[0, 3, 4]], torques.tau[[6, 9, 10]], atol=0.05)  # the model is
    # symmetric to a few grams and millimetres
    model, data = stance.model, stance.model.createData()
    config = stance.configuration(pin.SE3.Identity(), robot.default_q)
    pin.framesForwardKinematics(model, data, config)
    left_ankle = data.oMi[model.getJointId("left_ankle_pitch_joint")].translation
    com = pin.centerOfMass(model, data, config)
    # Half the weight on each foot, its centre of pressure under the centre of mass: the ankle pitch torque
    # holds the moment about the ankle of that reaction less the foot's own weight (+y: leaning forward).
    foot_mass = sum(model.inertias[i].mass for i in range(model.getJointId("left_ankle_pitch_joint"), model.njoints)
                    if model.names[i].startswith("left_ankle"))
    expected = (stance.mass / 2 - foot_mass) * 9.81 * (com[0] - left_ankle[0])
    assert torques.tau[4] == pytest.approx(expected, abs=0.3)


def pinocchio_balance(stance, gains, state):
    """The balance torques through Pinocchio's own algorithms, written as the module doc states them: the load of
    the virtual gravity by RNEA, the sole wrenches by least squares on the base rows of the contact Jacobians."""
    model = stance.model.copy()
    data = model.createData()
    config = stance.configuration(pin.SE3(pin.Quaternion(*state.world_q_pelvis).matrix(), np.zeros(3)),
                                  state.q)
    velocity = np.zeros(model.nv)
    velocity[3:6] = state.pelvis_w_pelvis  # free flyer: [linear, angular] in the pelvis frame
    velocity[stance.joints.idx_v] = state.dq
    com = pin.centerOfMass(model, data, config, velocity)
    pin.updateFramePlacements(model, data)
    soles = [data.oMf[i].translation for i in stance.sole_ids]
    sole_velocities = [pin.getFrameVelocity(model, data, i, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED).linear
                       for i in stance.sole_ids]
    error = com[:2] - 0.5 * (soles[0][:2] + soles[1][:2])
    rate = data.vcom[0][:2] - 0.5 * (sole_velocities[0][:2] + sole_velocities[1][:2])
    accel = np.clip(-gains.kp_per_s2 * error - gains.kd_per_s * rate, -gains.max_accel_m_s2, gains.max_accel_m_s2)
    model.gravity.linear = np.array([-accel[0], -accel[1], -9.81])
    load = pin.computeGeneralizedGravity(model, data, config)
    pin.computeJointJacobians(model, data, config)
    contact = np.vstack([pin.getFrameJacobian(model, data, i, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
                         for i in stance.sole_ids])
    scale = np.tile([1.0, 1.0, 1.0] + [gains.moment_arm_m] * 3, 2)
    wrenches = scale * np.linalg.lstsq((contact.T * scale)[:6], load[:6], rcond=None)[0]
    return (load - contact.T @ wrenches)[stance.joints.idx_v], error, accel


@pytest.mark.parametrize("hands", [False, True])
def test_balance_torques_match_pinocchio_rnea_and_frame_jacobians(robot, stance, hands):
    stance = StanceModel.for_robot(robot, load_dex3()) if hands else stance
    gains = BalanceGains()
    balance = Balance(stance, gains)
    rng = np.random.default_rng(4)
    clipped = []
    for spread in np.repeat([0.01, 1.0], 10):  # leaning and moving a little (feedback within its bound), or a lot
        tilt = rng.normal(0.0, 0.1, 3)
        state = SimpleNamespace(q=robot.default_q + rng.normal(0.0, 0.2 * spread, 29),
                                dq=rng.normal(0.0, spread, 29), pelvis_w_pelvis=rng.normal(0.0, 0.5 * spread, 3),
                                world_q_pelvis=np.r_[1.0, 0.5 * tilt] / np.linalg.norm(np.r_[1.0, 0.5 * tilt]))
        tau, error, accel = pinocchio_balance(stance, gains, state)
        clipped.append(np.abs(accel).max() == gains.max_accel_m_s2)
        ours = balance.torques(state)
        np.testing.assert_allclose(ours.tau, tau, atol=1e-9)
        np.testing.assert_allclose(ours.com_error_m, error, atol=1e-12)
        np.testing.assert_allclose(ours.com_accel_m_s2, accel, atol=1e-12)
    assert 3 <= sum(clipped) <= 17  # both cases met


def test_controller_stands_squats_and_takes_a_push_in_closed_loop(robot, mj_model, stance):
    controller = StandingController(robot, stance)
    push = Push(start_s=3.0, force_n=(0.0, 40.0, 0.0), duration_s=0.2)
    sim = Simulator(robot, mj_model, SimConfig(gantry=False, pushes=(push,)))
    builder = WholeBodyTargetBuilder(robot, controller)
    z = []
    previous, legs = None, robot.group("legs")
    for tick in range(int(12.0 / 0.02)):
        t = tick * 0.02
        controller.command_squat(-1.0 if 6.0 <= t < 9.2 else 0.0, 0.0)
        target = builder.step(sim.state(), None, None)
        if previous is not None:
            assert np.abs(target.q[legs] - previous).max() <= 0.04 + 1e-12  # leg targets move ≤ 0.04 rad/tick
        previous = target.q[legs]
        assert np.all(np.abs(target.tau_ff) <= robot.effort_limit + 1e-9)
        assert target.gains == JointGains.profile(robot, "default")
        sim.step_control_period(JointCommand(target.q, np.zeros(29), target.tau_ff, target.gains.kp, target.gains.kd))
        z.append(sim.state().world_p_pelvis[2])
    z = np.array(z)
    times = np.arange(len(z)) * 0.02
    assert z[times < 6.0].min() > 0.74  # stands through the push at 3 s
    assert abs(controller.squat_command[0] - (0.75 - 3.2 * 0.08)) < 1e-9
    assert abs(z[-25:].mean() - 0.494) < 0.02  # squatting
    assert controller.ik_failures == 0
    controller.reset()  # as when walking ends: the command back to standing, the reference from the measurement
    assert controller.squat_command == pytest.approx([0.75, 0.0])
    legs = robot.group("legs")
    np.testing.assert_allclose(builder.step(sim.state(), None, None).q[legs], sim.state().q[legs], atol=0.04)


def test_with_dex3_hands_the_model_carries_them_and_the_waist_and_legs_hold_their_targets(robot):
    """A G1 with Dex3 hands in MuJoCo (1.06 kg more than the rubber hands), standing 4 s: the controller whose stance
    model has the hands holds the waist and legs at their targets (their feed-forward is right); the one without
    misses the waist pitch by millimetres at the hands."""
    dex3 = load_dex3()
    assert StanceModel.for_robot(robot, dex3).mass == pytest.approx(StanceModel.for_robot(robot).mass + 1.053, abs=1e-3)
    body = [*robot.group("waist"), *robot.group("legs")]
    error = {}
    for hands in (dex3, None):
        sim = Simulator(robot, build_mujoco_model(robot, hands=dex3), SimConfig(gantry=False),
                        hand_names=dex3.both_joint_names())
        builder = WholeBodyTargetBuilder(robot, StandingController(robot, StanceModel.for_robot(robot, hands)))
        errors = []
        for tick in range(200):
            state = sim.state()
            target = builder.step(state, None, None)
            sim.step_control_period(JointCommand(target.q, np.zeros(29), target.tau_ff, target.gains.kp,
                                                 target.gains.kd))
            if tick >= 100:
                errors.append(np.abs(state.q - target.q)[body])
        error[hands is not None] = np.mean(errors, axis=0).max()
    assert error[True] < 0.5e-3 and error[False] > 3e-3, error  # rad (mean over the last 2 s, worst joint)


def test_squat_command_integrates_and_clamps():
    command = SquatCommand(SquatCommandLimits((0.45, 0.75), (0.0, 0.5), (0.0016, 0.002), (0.75, 0.0)))
    command.integrate(-1.0, 2.0)  # the pitch stick is clipped to 1
    assert command.value == pytest.approx([0.7484, 0.002])
    for _ in range(1000):
        command.integrate(-1.0, 1.0)
    assert command.value == pytest.approx([0.45, 0.5])
    command.reset()
    assert command.value == pytest.approx([0.75, 0.0])
    with pytest.raises(ValueError, match="standing"):
        SquatCommandLimits((0.45, 0.75), (0.0, 0.5), (0.0016, 0.002), (0.8, 0.0))


def test_push_schedule_applies_the_force_for_its_duration(robot):
    assert parse_pushes("5,0,40,0,0.2; 16,0,-40,0,0.2") == (Push(5.0, (0.0, 40.0, 0.0), 0.2),
                                                            Push(16.0, (0.0, -40.0, 0.0), 0.2))
    assert parse_pushes("") == ()
    with pytest.raises(ValueError, match="START,FX,FY,FZ,DURATION"):
        parse_pushes("5,0,40")
    with pytest.raises(ValueError, match="duration_s > 0"):
        parse_pushes("5,0,40,0,0")
    # A free-floating body in zero gravity gains exactly F·T/m of momentum (on a model of its own: the
    # session's model must keep its gravity).
    push = Push(0.0, (0.0, 40.0, 0.0), 0.2)
    sim = Simulator(robot, build_mujoco_model(robot), SimConfig(gantry=True, pushes=(push,)))
    sim.model.opt.gravity[:] = 0.0
    sim.config = SimConfig(gantry=False, pushes=sim.config.pushes)
    sim.data.qpos[2] += 1.0  # off the floor
    kp, kd = np.zeros(29), np.zeros(29)
    for _ in range(int(0.3 / 0.005)):
        sim.step(JointCommand(sim.state().q, np.zeros(29), np.zeros(29), kp, kd))
    mujoco.mj_subtreeVel(sim.model, sim.data)
    momentum = sim.data.subtree_linvel[0] * sum(sim.model.body_mass)
    np.testing.assert_allclose(momentum, [0.0, 40.0 * 0.2, 0.0], atol=0.05)
