"""`g1-teleop bench hands`, optional section: the ``dex-retargeting`` package (PyPI) on the same landmark sets.

Built as Unitree's xr_teleoperate builds it for the Dex3: the configuration OpenWBT ships from there
(``unitree_dex3.yml`` in Unitree's official models folder: vector retargeting, for thumb, index and middle the
vector from a point near the palm (``base_link_thumb`` …) to a fingertip link 5 cm along the distal link matched
to the operator's wrist → fingertip vector × ``scaling_factor`` (1.0), Huber loss, SLSQP with PyTorch's gradient
of the loss, low-pass ``low_pass_alpha`` 0.2), and as xr_teleoperate feeds it (landmarks[tip] − landmarks[wrist]).
The hand: the palm and fingers of the official ``g1_body29_hand14.urdf`` read where it lies, under a root link in
xr/*_hand's landmark frame (xr_teleoperate's ``base_link``: fingers along −y; its hand frame is the same) with
Unitree's auxiliary points, and joint limits cut to config/dex3.yaml's (the bridges' limits: the body file's
thumb_1 goes 0.13 rad further). Absent package or models: the section is left out, one line on stderr says why.

Not a dependency: the package needs PyTorch. A scratch venv that runs ``g1-teleop bench hands`` with it (Python of
this venv's version; the CPU wheel of torch first, or pip takes the CUDA build; 0.5.0 also needs ``six``)::

    python -m venv /tmp/dexvenv
    /tmp/dexvenv/bin/pip install torch==2.13.0
    /tmp/dexvenv/bin/pip install dex-retargeting six
    # then /tmp/dexvenv/lib/python3.11/site-packages/zz_g1_teleop.pth, two lines: this project's src/, and one
    # line that puts V/lib and V/lib/python3.11/site-packages/ros_*.libs (V: this venv) in os.environ's
    # LD_LIBRARY_PATH and then calls site.addsitedir("V/lib/python3.11/site-packages") (its packages after the
    # scratch venv's own; its ROS bootstrap re-executes Python with that library path)
    /tmp/dexvenv/bin/python -m g1_teleop.tools.cli bench hands --json
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin
import yaml

from g1_teleop.core.dex3_description import Dex3
from g1_teleop.core.paths import share_dir
from g1_teleop.retarget.hand_retarget import PALM_R_LANDMARKS

MODELS_ENV = "G1_OFFICIAL_MODELS"  # Unitree's official G1 files (default: ../shared/models/unitree_g1)
HINT = ("pip install torch==2.13.0, then dex-retargeting six, in a scratch venv that sees this project through a "
        ".pth file (tools/bench/hands_dex.py says how)")
# Unitree's auxiliary points of the Dex3 hand for dex-retargeting (unitree_dex3_{left,right}.urdf, m), in the root
# (landmark) frame of the left hand; the right hand's z is negated. Fingertip links: along the distal link.
_ORIGINS = {"base_link_thumb": (-0.015, 0.015, 0.02), "base_link_index": (-0.015, 0.0, 0.0),
            "base_link_middle": (-0.015, 0.0, -0.03)}
_TIP_ALONG_M = 0.05
_TIPS = {"thumb_tip": ("thumb_2", (0.0, -1.0, 0.0)), "index_tip": ("index_1", (1.0, 0.0, 0.0)),
         "middle_tip": ("middle_1", (1.0, 0.0, 0.0))}  # left hand; the right thumb's y is negated


def models_dir() -> Path:
    return Path(os.environ.get(MODELS_ENV) or share_dir().parent / "shared" / "models" / "unitree_g1")


def skip_reason() -> str | None:
    """Why the section cannot run here (None: it can)."""
    try:
        import dex_retargeting.retargeting_config  # noqa: F401
    except ImportError as exc:
        return f"dex_retargeting is not importable ({exc}): {HINT}"
    missing = [n for n in ("g1_body29_hand14.urdf", "unitree_dex3.yml") if not (models_dir() / n).is_file()]
    return f"{', '.join(missing)} not in {models_dir()} (set {MODELS_ENV})" if missing else None


def _fixed(parent: str, child: str, xyz: Sequence[float], rpy: Sequence[float] = (0.0, 0.0, 0.0)) -> ET.Element:
    joint = ET.Element("joint", name=f"{parent}_to_{child}", type="fixed")
    ET.SubElement(joint, "parent", link=parent)
    ET.SubElement(joint, "child", link=child)
    ET.SubElement(joint, "origin", xyz=" ".join(f"{v:.9g}" for v in xyz), rpy=" ".join(f"{v:.9g}" for v in rpy))
    return joint


def dex3_hand_urdf(side: str, body_urdf: Path, dex3: Dex3) -> str:
    """One Dex3 hand for dex-retargeting: the official body file's palm and fingers (no meshes) under ``base_link``
    (the landmark frame), with Unitree's auxiliary points and fingertip links; limits cut to dex3's."""
    body = ET.parse(body_urdf).getroot()
    prefix, mirror = f"{side}_hand_", 1.0 if side == "left" else -1.0
    lower, upper = dex3.limits[side].q_lower, dex3.limits[side].q_upper
    names = dex3.joint_names(side)
    robot = ET.Element("robot", name=f"dex3_{side}")
    joints = [j for j in body.iter("joint") if j.get("name", "").startswith(prefix) and j.get("type") == "revolute"]
    links = {f"{prefix}palm_link"} | {j.find("child").get("link") for j in joints}  # type: ignore[union-attr]
    for link in body.iter("link"):
        if link.get("name") in links:
            for shape in [*link.findall("visual"), *link.findall("collision")]:
                link.remove(shape)
            robot.append(link)
    for joint in joints:
        limit, i = joint.find("limit"), names.index(joint.get("name", ""))
        assert limit is not None
        limit.set("lower", str(max(float(limit.get("lower", "-inf")), lower[i])))
        limit.set("upper", str(min(float(limit.get("upper", "inf")), upper[i])))
        robot.append(joint)
    for name in ("base_link", *_ORIGINS, *_TIPS):
        ET.SubElement(robot, "link", name=name)
    rpy = pin.rpy.matrixToRpy(PALM_R_LANDMARKS[side].T)  # palm axes in the landmark frame
    robot.append(_fixed("base_link", f"{prefix}palm_link", (0.0, 0.0, 0.0), rpy))
    for name, (x, y, z) in _ORIGINS.items():
        robot.append(_fixed("base_link", name, (x, y, mirror * z)))
    for name, (joint_name, (x, y, z)) in _TIPS.items():
        robot.append(_fixed(f"{prefix}{joint_name}_link", name, _TIP_ALONG_M * np.array([x, mirror * y, z])))
    return ET.tostring(robot, encoding="unicode")


class PackageRetargeter:
    """dex-retargeting's retargeter for one Dex3 hand; ``update`` as HandRetargeter's (landmarks → motor order)."""

    def __init__(self, side: str, dex3: Dex3) -> None:
        from dex_retargeting.retargeting_config import RetargetingConfig

        cfg: dict[str, Any] = yaml.safe_load((models_dir() / "unitree_dex3.yml").read_text())[side]
        with tempfile.TemporaryDirectory(prefix="g1_dex3_") as tmp:
            urdf = Path(tmp) / f"dex3_{side}.urdf"
            urdf.write_text(dex3_hand_urdf(side, models_dir() / "g1_body29_hand14.urdf", dex3))
            self.retargeting = RetargetingConfig.from_dict({**cfg, "urdf_path": str(urdf)}).build()
        self.human = self.retargeting.optimizer.target_link_human_indices  # (2, 3): wrist, fingertips
        self.order = [self.retargeting.joint_names.index(name) for name in dex3.joint_names(side)]

    def update(self, landmarks: np.ndarray) -> np.ndarray:
        return self.retargeting.retarget(landmarks[self.human[1]] - landmarks[self.human[0]])[self.order]

    def own_error(self, landmarks: np.ndarray) -> np.ndarray:
        """(3,) its own objective's vector errors (m) at its last unfiltered solution, with its fingertip links."""
        opt = self.retargeting.optimizer
        robot = opt.robot
        robot.compute_forward_kinematics(self.retargeting.get_qpos())
        pos = {n: robot.get_link_pose(robot.get_link_index(n))[:3, 3]
               for n in (*opt.origin_link_names, *opt.task_link_names)}
        vectors = np.array([pos[t] - pos[o] for o, t in zip(opt.origin_link_names, opt.task_link_names, strict=True)])
        target = opt.scaling * (landmarks[self.human[1]] - landmarks[self.human[0]])
        return np.linalg.norm(vectors - target, axis=1)


def bench_package(dex3: Dex3, sequences: dict[str, list[np.ndarray]], cycles: int) -> dict[str, list[Any]]:
    """Per side: the package's outputs (motor order) for ``cycles`` passes over the landmark sets, its thread CPU
    and wall time per retarget, and its own objective's fingertip vector errors (m)."""
    runs: dict[str, list[Any]] = {}
    for side, frames in sequences.items():
        retargeter = PackageRetargeter(side, dex3)
        outputs, cpu, wall, own = [], [], [], []
        for _ in range(cycles):
            for landmarks in frames:
                start, start_cpu = time.perf_counter(), time.thread_time()
                outputs.append(retargeter.update(landmarks))
                cpu.append(time.thread_time() - start_cpu)
                wall.append(time.perf_counter() - start)
                own.append(retargeter.own_error(landmarks))
        runs[side] = [outputs, cpu, wall, own]
    return runs


def say_skipped(reason: str) -> None:
    print(f"bench hands: dex_retargeting section skipped: {reason}", file=sys.stderr)
