"""The Fast DDS profile given to the graph's processes: which variable per distribution, and left alone when the
user chose a profile or another middleware; the file is a profile Fast DDS reads (a node starts with it, no
complaint)."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET

from g1_teleop.core.paths import config_path
from g1_teleop.launching.dds_discovery import discovery_environment

PROFILE = str(config_path("dds", "fastdds_discovery.xml"))


def test_the_variable_follows_the_distribution_and_a_users_choice_is_kept():
    assert discovery_environment({}) == {"FASTDDS_DEFAULT_PROFILES_FILE": PROFILE}
    assert discovery_environment({"ROS_DISTRO": "jazzy"}) == {"FASTDDS_DEFAULT_PROFILES_FILE": PROFILE}
    assert discovery_environment({"ROS_DISTRO": "humble"}) == {"FASTRTPS_DEFAULT_PROFILES_FILE": PROFILE}
    fast = {"RMW_IMPLEMENTATION": "rmw_fastrtps_cpp"}
    assert discovery_environment(fast) == {"FASTDDS_DEFAULT_PROFILES_FILE": PROFILE}
    assert discovery_environment({"RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"}) == {}
    assert discovery_environment({"FASTDDS_DEFAULT_PROFILES_FILE": "/mine.xml"}) == {}
    assert discovery_environment({"ROS_DISTRO": "humble", "FASTRTPS_DEFAULT_PROFILES_FILE": "/mine.xml"}) == {}


def test_the_profile_lengthens_the_initial_announcements_and_fast_dds_takes_it():
    announcements = ET.parse(PROFILE).getroot().find(".//{*}initialAnnouncements")
    count, period_ns = int(announcements.find("{*}count").text), int(announcements.find(".//{*}nanosec").text)
    assert count * period_ns / 1e9 >= 5.0  # a graph's start on a small machine
    env = {k: v for k, v in os.environ.items() if not k.endswith("_DEFAULT_PROFILES_FILE")}
    env.update(discovery_environment(env), ROS_DOMAIN_ID="199", ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    started = subprocess.run([sys.executable, "-c", "import rclpy; rclpy.init(); rclpy.create_node('profiled'); "
                              "print('created')"], env=env, capture_output=True, text=True, timeout=60)
    assert started.returncode == 0 and "created" in started.stdout, started.stderr
    assert "error" not in started.stderr.lower() and "profile" not in started.stderr.lower(), started.stderr
