"""launch_testing test of sim.launch.py, for ROS 2 distributions (`colcon test --packages-select g1_teleop`).

No PyPI registry has launch_testing, so this file runs only on a ROS distribution (Humble, Jazzy,
Kilted). It stays thin: it launches the graph through sim.launch.py, records it with the same Recorder as
`g1-teleop sim`, and judges the recording with the same checks as tests/integration/test_sim_graph.py.
"""

import os
import time
import unittest

import launch_testing
import launch_testing.actions
import pytest
import rclpy
from ament_index_python.packages import get_package_share_directory
from launch.launch_description_sources import PythonLaunchDescriptionSource
from rclpy.executors import SingleThreadedExecutor

import launch
from g1_teleop.core.pinocchio_model import build_pinocchio_model
from g1_teleop.core.robot_description import load_robot
from g1_teleop.retarget.arm_ik import DualArmIK
from g1_teleop.tools.run_recorder import Recorder
from support.checks import check_arm_slew, check_pelvis_above, check_recorded, check_wrist_tracking

DURATION_S = 20.0


@pytest.mark.launch_test
def generate_test_description():
    sim_launch = os.path.join(get_package_share_directory("g1_teleop"), "launch", "sim.launch.py")
    return launch.LaunchDescription([
        launch.actions.IncludeLaunchDescription(
            PythonLaunchDescriptionSource(sim_launch), launch_arguments={"lockstep": "true"}.items()),
        launch_testing.actions.ReadyToTest(),
    ])


class TestSimGraph(unittest.TestCase):
    def test_default_scenario_is_tracked(self):
        robot = load_robot()
        rclpy.init()
        recorder = Recorder(robot.joint_names, node_name="launch_test_recorder")
        executor = SingleThreadedExecutor()
        executor.add_node(recorder)
        deadline = time.monotonic() + 600.0
        try:
            while recorder.sim_time_s < DURATION_S and time.monotonic() < deadline:
                executor.spin_once(timeout_sec=0.1)
        finally:
            executor.shutdown()
            rec = recorder.recording()
            recorder.destroy_node()
            rclpy.shutdown()
        fk = DualArmIK(build_pinocchio_model(robot, floating_base=False), robot.joint_names).end_effector_poses
        failures = (
            check_recorded(rec, min_sim_time_s=DURATION_S - 0.1)
            + check_wrist_tracking(rec, fk, max_p95_m=0.02, settle_s=1.0)
            + check_arm_slew(rec, max_step_rad=0.01)
            + check_pelvis_above(rec, min_z_m=0.6)
        )
        self.assertEqual(failures, [], "\n".join(failures))


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):
    def test_nodes_exit_cleanly(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info, allowable_exit_codes=[0, -2, -15])
