"""Fixtures for tests that start real nodes as separate processes over DDS.

Every test gets its own ROS_DOMAIN_ID (and discovery stays on this machine), so tests and parallel
runs never hear each other.
"""

from __future__ import annotations

import itertools
import os

import pytest

_domains = itertools.count(0)


@pytest.fixture
def ros_domain(monkeypatch) -> int:
    """A ROS_DOMAIN_ID private to this test (101–200, spread by process id), set in os.environ."""
    domain = 101 + (os.getpid() * 7 + next(_domains)) % 100
    monkeypatch.setenv("ROS_DOMAIN_ID", str(domain))
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    return domain


@pytest.fixture
def rclpy_context(ros_domain):
    """An rclpy context on the test's domain, shut down afterwards."""
    import rclpy

    context = rclpy.Context()
    rclpy.init(context=context, domain_id=ros_domain)
    yield context
    context.try_shutdown()
