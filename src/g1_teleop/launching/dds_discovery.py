"""The Fast DDS participant profile of the graph's processes (config/dds/fastdds_discovery.xml), ROS-free.

ROS 2's default middleware (rmw_fastrtps) reads a default profile file from an environment variable:
``FASTRTPS_DEFAULT_PROFILES_FILE`` on Humble (Fast DDS 2.6), ``FASTDDS_DEFAULT_PROFILES_FILE`` on later
distributions (which warn that the former is deprecated). The project's profile only lengthens the initial
participant announcements, so that processes started together discover each other within a burst instead of at
Fast DDS's 3 s announcement period (the file's comment has the figures). A profile file the user gives, or another
middleware (``RMW_IMPLEMENTATION``), is left alone.
"""

from __future__ import annotations

from collections.abc import Mapping

from g1_teleop.core.paths import config_path

PROFILE_VARIABLES = ("FASTDDS_DEFAULT_PROFILES_FILE", "FASTRTPS_DEFAULT_PROFILES_FILE")


def discovery_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables to add to ``environ`` (a process's environment) for the project's Fast DDS profile; none when
    another middleware is chosen or a profile file is already given."""
    rmw = environ.get("RMW_IMPLEMENTATION", "")
    if (rmw and not rmw.startswith("rmw_fastrtps")) or any(environ.get(v) for v in PROFILE_VARIABLES):
        return {}
    variable = PROFILE_VARIABLES[1] if environ.get("ROS_DISTRO") == "humble" else PROFILE_VARIABLES[0]
    return {variable: str(config_path("dds", "fastdds_discovery.xml"))}
