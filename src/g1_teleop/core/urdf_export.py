"""A URDF of the robot model in use, written from its frame tree and Pinocchio model: for robot_description when
the model is a MJCF (neither MuJoCo nor Pinocchio writes a URDF). ROS-free.

The URDF has the frame tree's links and frames under the same names (what robot_state puts on /tf), the
joints with their axes, limits and origins, and the bodies' masses and inertias (Pinocchio's: a joint's
inertia holds the bodies fixed to it, so a fixed child link carries none; the total mass is the model's). It
has no geometry: the shapes stay in the MJCF (RViz and Foxglove show the frames, not the robot's shape).
"""

from __future__ import annotations

from xml.sax.saxutils import quoteattr

import numpy as np
import pinocchio as pin

from g1_teleop.core.frame_tree import FrameTree
from g1_teleop.core.robot_description import Robot

_AXES = {"RX": (1.0, 0.0, 0.0), "RY": (0.0, 1.0, 0.0), "RZ": (0.0, 0.0, 1.0)}


def _origin(T: np.ndarray) -> str:
    xyz = " ".join(f"{v:.9g}" for v in T[:3, 3])
    rpy = " ".join(f"{v:.9g}" for v in pin.rpy.matrixToRpy(T[:3, :3]))
    return f'<origin xyz="{xyz}" rpy="{rpy}"/>'


def _inertial(inertia: pin.Inertia) -> str:
    if inertia.mass <= 0.0:
        return ""
    I = inertia.inertia  # noqa: E741 (about the centre of mass, in the link's axes)
    com = " ".join(f"{v:.9g}" for v in inertia.lever)
    return (f'<inertial><origin xyz="{com}" rpy="0 0 0"/><mass value="{inertia.mass:.9g}"/>'
            f'<inertia ixx="{I[0, 0]:.9g}" ixy="{I[0, 1]:.9g}" ixz="{I[0, 2]:.9g}" iyy="{I[1, 1]:.9g}" '
            f'iyz="{I[1, 2]:.9g}" izz="{I[2, 2]:.9g}"/></inertial>')


def _joint(model: pin.Model, j: int, name: str, parent: str, child: str, origin: np.ndarray,
           effort_velocity: tuple[float, float] | None) -> str:
    kind = model.joints[j].shortname().removeprefix("JointModel")
    if kind in _AXES:
        axis, urdf_type = _AXES[kind], "revolute"
    elif kind == "RevoluteUnaligned":
        axis, urdf_type = tuple(model.joints[j].extract().axis), "revolute"
    elif kind in ("PX", "PY", "PZ"):
        axis, urdf_type = _AXES["R" + kind[1]], "prismatic"
    else:
        raise ValueError(f"joint {name!r}: a {kind} joint has no URDF equivalent")
    i = model.joints[j].idx_q
    v = model.joints[j].idx_v
    effort, velocity = effort_velocity or (model.effortLimit[v], model.velocityLimit[v])
    effort, velocity = (x if np.isfinite(x) else 0.0 for x in (effort, velocity))  # (a MJCF has no velocity limit)
    limit = (f'<limit lower="{model.lowerPositionLimit[i]:.9g}" upper="{model.upperPositionLimit[i]:.9g}" '
             f'effort="{effort:.9g}" velocity="{velocity:.9g}"/>')
    return (f'<joint name={quoteattr(name)} type="{urdf_type}">{_origin(origin)}<parent link={quoteattr(parent)}/>'
            f'<child link={quoteattr(child)}/><axis xyz="{" ".join(f"{a:.9g}" for a in axis)}"/>{limit}</joint>')


def urdf_of(robot: Robot, tree: FrameTree, model: pin.Model) -> str:
    """The URDF text of ``model``, the Pinocchio model of ``robot`` that ``tree`` was built from; the 29 joints
    take the robot's effort and velocity limits (config/g1_29dof.yaml: a MJCF has no velocity limits)."""
    name = robot.model_path.name
    limits = {n: (float(e), float(v)) for n, e, v in zip(robot.joint_names, robot.effort_limit, robot.velocity_limit,
                                                          strict=True)}
    ids = {f.name: i for i, f in reversed(list(enumerate(model.frames))) if f.name in tree.frames}
    data = model.createData()
    pin.framesForwardKinematics(model, data, pin.neutral(model))
    links = {tree.root: _inertial(data.oMf[ids[tree.root]].actInv(model.inertias[0]))}  # bodies fixed to the base
    joints = []
    for parent, child, parent_T_child in tree.static:
        links[child] = ""
        joints.append(f'<joint name={quoteattr(child + "_fixed")} type="fixed">{_origin(parent_T_child)}'
                      f'<parent link={quoteattr(parent)}/><child link={quoteattr(child)}/></joint>')
    for edge in tree.edges:
        if edge.fixed:
            continue
        frame, parent_frame = model.frames[ids[edge.child]], model.frames[ids[edge.parent]]
        j = frame.parentJoint
        if not np.allclose(frame.placement.homogeneous, np.eye(4), atol=1e-12) \
                or model.parents[j] != parent_frame.parentJoint:
            raise ValueError(f"link {edge.child!r}: not at its joint {model.names[j]!r}, or more than one joint "
                             f"from {edge.parent!r} (no URDF equivalent)")
        links[edge.child] = _inertial(model.inertias[j])
        parent_T_joint = np.linalg.solve(parent_frame.placement.homogeneous, model.jointPlacements[j].homogeneous)
        joints.append(_joint(model, j, model.names[j], edge.parent, edge.child, parent_T_joint,
                             limits.get(model.names[j])))
    body = "".join(f"<link name={quoteattr(link)}>{inertial}</link>\n" for link, inertial in links.items())
    return (f'<?xml version="1.0"?>\n<!-- written by g1_teleop from {name}: kinematics and inertias, '
            f"no geometry -->\n<robot name={quoteattr(name)}>\n{body}" + "\n".join(joints) + "\n</robot>\n")
