import numpy as np
import pytest

from g1_teleop.core.limits import JointCommand
from g1_teleop.core.robot_description import ARM_INDICES
from g1_teleop.sim.simulator import SimConfig, Simulator


def hold(robot, q=None):
    kp, kd = robot.gains("default")
    return JointCommand.hold(robot.default_q if q is None else q, kp, kd)


def test_config_validation():
    with pytest.raises(ValueError, match="whole multiple"):
        SimConfig(physics_dt=0.003, control_dt=0.02)
    with pytest.raises(ValueError, match="physics_dt must be > 0"):
        SimConfig(physics_dt=0.0)
    with pytest.raises(ValueError, match=r"physics_dt \(0.04\) <= control_dt"):
        SimConfig(physics_dt=0.04)
    assert SimConfig(physics_dt=0.005, control_dt=0.02).decimation == 4


def test_starts_at_the_default_pose_with_feet_on_the_floor(robot, mj_model):
    sim = Simulator(robot, mj_model, SimConfig())
    state = sim.state()
    np.testing.assert_allclose(state.q, robot.default_q, atol=1e-12)
    assert state.stamp_ns == 0
    sim.step_control_period(hold(robot))
    assert sim.stamp_ns == 20_000_000
    assert sim.data.ncon >= 4  # foot spheres touch the floor


def test_held_still_until_the_first_command_then_the_same_motion_however_late_it_comes(robot, mj_model):
    late, on_time = Simulator(robot, mj_model, SimConfig()), Simulator(robot, mj_model, SimConfig())
    start = late.state()
    for _ in range(400):  # 2 s without a command: time runs, nothing moves
        late.step_still()
    still = late.state()
    assert still.stamp_ns == 2_000_000_000
    np.testing.assert_array_equal(still.q, start.q)
    np.testing.assert_array_equal(still.world_p_pelvis, start.world_p_pelvis)
    assert np.max(np.abs(still.dq)) == 0.0 and np.max(np.abs(still.pelvis_w_pelvis)) == 0.0
    for _ in range(10):
        late.step_control_period(hold(robot))
        on_time.step_control_period(hold(robot))
    np.testing.assert_allclose(late.state().q, on_time.state().q, atol=1e-9)
    np.testing.assert_allclose(late.state().world_p_pelvis, on_time.state().world_p_pelvis, atol=1e-9)


def test_gantry_holds_the_robot_up_and_pd_alone_does_not(robot, mj_model):
    held = Simulator(robot, mj_model, SimConfig(gantry=True))
    free = Simulator(robot, mj_model, SimConfig(gantry=False))
    for _ in range(150):  # 3 s
        held.step_control_period(hold(robot))
        free.step_control_period(hold(robot))
    assert held.state().world_p_pelvis[2] > 0.75
    assert free.state().world_p_pelvis[2] < 0.5  # joint PD alone: it tips over (within ~1.2 s)


def test_pd_tracks_an_arm_target(robot, mj_model):
    sim = Simulator(robot, mj_model, SimConfig())
    q = robot.default_q.copy()
    q[ARM_INDICES[3]] = 0.5  # left elbow
    for _ in range(100):
        sim.step_control_period(hold(robot, q))
    assert abs(sim.state().q[ARM_INDICES[3]] - 0.5) < 0.05


def test_lockstep_is_deterministic(robot, mj_model):
    runs = []
    for _ in range(2):
        sim = Simulator(robot, mj_model, SimConfig())
        for k in range(50):
            q = robot.default_q.copy()
            q[ARM_INDICES] += 0.005 * k
            sim.step_control_period(hold(robot, q))
        runs.append(sim.state().q)
    np.testing.assert_array_equal(runs[0], runs[1])


def test_imu_readings_are_those_of_the_current_state(robot, mj_model):
    sim = Simulator(robot, mj_model, SimConfig(gantry=False))
    for _ in range(30):  # falling: orientation and angular velocity change every step
        sim.step_control_period(hold(robot))
    state = sim.state()
    np.testing.assert_allclose(state.world_q_pelvis, sim.data.qpos[3:7], atol=1e-9)
    np.testing.assert_allclose(state.pelvis_w_pelvis, sim.data.qvel[3:6], atol=1e-9)


def test_no_viewer_without_a_display(robot, mj_model, monkeypatch):
    from g1_teleop.sim.viewer import open_passive_viewer

    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert open_passive_viewer(Simulator(robot, mj_model, SimConfig())) is None


def test_gantry_config_validation():
    from g1_teleop.sim.gantry import GantryConfig

    with pytest.raises(ValueError, match="stiffness_n_per_m must be >= 0"):
        GantryConfig(stiffness_n_per_m=-1.0)
    with pytest.raises(ValueError, match="damping_n_s_per_m must be finite"):
        GantryConfig(damping_n_s_per_m=float("nan"))
