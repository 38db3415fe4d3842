"""ament_python package: `colcon build` on a ROS 2 distribution, `pip install -e .` elsewhere."""

from glob import glob

from setuptools import find_packages, setup

PACKAGE = "g1_teleop"
NODES = ["xr_input", "retarget", "policy", "sim_bridge", "hw_bridge", "robot_state", "eyes", "hand_retarget",
         "body_retarget"]

setup(
    name=PACKAGE,
    version="0.1.0",
    package_dir={"": "src"},
    packages=find_packages("src"),
    package_data={"g1_teleop.operator": ["web/*.js"]},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*.py")),
        (f"share/{PACKAGE}/config", glob("config/*.yaml")),
        (f"share/{PACKAGE}/config/scenarios", glob("config/scenarios/*.yaml")),
        (f"share/{PACKAGE}/config/graphs", glob("config/graphs/*.yaml")),
        (f"share/{PACKAGE}/config/policies", glob("config/policies/*.yaml")),
        (f"share/{PACKAGE}/config/foxglove", glob("config/foxglove/*.json")),
        (f"share/{PACKAGE}/config/dds", glob("config/dds/*.xml")),
        (f"share/{PACKAGE}/urdf", glob("urdf/*")),
    ],
    install_requires=["setuptools"],
    # TorchScript policies (unitree_rl_gym's motion.pt). PyPI's torch for Linux x86_64 brings NVIDIA's CUDA
    # libraries (several GB); the CPU build is on PyTorch's index: pip install torch --index-url
    # https://download.pytorch.org/whl/cpu
    extras_require={"torch": ["torch"]},
    zip_safe=False,
    maintainer="g1_teleop maintainers",
    maintainer_email="g1-teleop@example.com",
    description="Teleoperation graph for the Unitree G1 humanoid, in MuJoCo and on the robot.",
    license="Apache-2.0",
    python_requires=">=3.10",
    entry_points={
        "console_scripts": [
            "g1-teleop = g1_teleop.tools.cli:main",
            *[f"{node} = g1_teleop.nodes.{node}:main" for node in NODES],
        ],
    },
)
