"""The robot's URDF with Dex3-1 hands on its wrists, written from config/dex3.yaml's hand model: what
robot_description says with ``dex3:=true`` (RViz and Foxglove draw the hands and move their fingers) and what
the Pinocchio model with hands is built from. ROS-free.

Each ``<side>_wrist_yaw_link`` loses its rubber hand (its box shapes) and takes the inertial it has with the palm;
``<side>_hand_palm_link`` hangs fixed from it; each finger link ``<side>_hand_<joint>_link`` hangs from the palm or
its parent finger by a revolute ``<side>_hand_<joint>_joint`` within that side's limits (config/dex3.yaml), drawn
as a cylinder from its origin to its child (or fingertip): the same names, links and shapes as the simulated hands
(:func:`g1_teleop.core.mujoco_model.add_dex3_hands`). Units: m, rad, kg, kg·m², N·m, rad/s.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin

from g1_teleop.core.dex3_description import FINGER_RADIUS_M, PALM_BOX_CENTER, PALM_BOX_HALF_SIZE, SIDES, Dex3, Inertial


class HandsOnUrdfError(ValueError):
    pass


def urdf_with_dex3_hands(urdf: str, dex3: Dex3) -> str:
    """``urdf`` (the body's URDF text) with a Dex3-1 hand on each wrist (module docstring); its comments kept."""
    root = ET.fromstring(urdf, parser=ET.XMLParser(target=ET.TreeBuilder(insert_comments=True)))
    hand = dex3.model
    for side in SIDES:
        wrist_name = f"{side}_wrist_yaw_link"
        wrist = root.find(f"link[@name='{wrist_name}']")
        if wrist is None:
            raise HandsOnUrdfError(f"Dex3 hands go on the wrist yaw links: the URDF has no link {wrist_name!r}")
        for element in [e for e in wrist if e.tag == "inertial" or e.find("geometry/box") is not None]:
            wrist.remove(element)
        wrist.insert(0, _inertial(hand.wrist_inertial(side)))
        palm = f"{side}_hand_palm_link"
        palm_link = ET.SubElement(root, "link", name=palm)
        _shape(palm_link, "box", np.eye(3), PALM_BOX_CENTER, size=_numbers(2.0 * PALM_BOX_HALF_SIZE))
        _joint(root, f"{side}_hand_palm_joint", "fixed", wrist_name, palm, hand.palm_origin(side))
        limits = dex3.limits[side]
        for i, link in enumerate(hand.links(side)):
            name = f"{side}_hand_{link.joint}"
            element = ET.SubElement(root, "link", name=f"{name}_link")
            element.append(_inertial(link.inertial))
            end = hand.drawn_segment_end(side, link)
            length = float(np.linalg.norm(end))
            along = pin.Quaternion.FromTwoVectors(np.array([0.0, 0.0, 1.0]), end / length).matrix()
            _shape(element, "cylinder", along, end / 2.0, radius=f"{FINGER_RADIUS_M:g}", length=f"{length:.9g}")
            parent = palm if link.parent == "palm" else f"{side}_hand_{link.parent}_link"
            joint = _joint(root, f"{name}_joint", "revolute", parent, f"{name}_link", link.origin)
            ET.SubElement(joint, "axis", xyz=_numbers(np.eye(3)["xyz".index(link.axis)]))
            ET.SubElement(joint, "limit", lower=f"{limits.q_lower[i]:.9g}", upper=f"{limits.q_upper[i]:.9g}",
                          effort=f"{limits.effort[i]:.9g}", velocity=f"{limits.velocity[i]:.9g}")
    ET.indent(root)
    return ET.tostring(root, encoding="unicode")


def _numbers(values: np.ndarray) -> str:
    return " ".join(f"{v:.9g}" for v in values)


def _origin(parent: ET.Element, R: np.ndarray, p: np.ndarray) -> None:
    ET.SubElement(parent, "origin", xyz=_numbers(p), rpy=_numbers(pin.rpy.matrixToRpy(R)))


def _inertial(inertial: Inertial) -> ET.Element:
    """A URDF inertial: the centre of mass and the principal axes as its origin, the principal moments."""
    element = ET.Element("inertial")
    w, x, y, z = inertial.quat
    _origin(element, pin.Quaternion(w, x, y, z).toRotationMatrix(), inertial.com)
    ET.SubElement(element, "mass", value=f"{inertial.mass:.9g}")
    ixx, iyy, izz = (f"{m:.9g}" for m in inertial.moments)
    ET.SubElement(element, "inertia", ixx=ixx, iyy=iyy, izz=izz, ixy="0", ixz="0", iyz="0")
    return element


def _shape(link: ET.Element, kind: str, R: np.ndarray, p: np.ndarray, **size: str) -> None:
    """A visual shape only: the hands touch nothing in the simulation either."""
    visual = ET.SubElement(link, "visual")
    _origin(visual, R, p)
    ET.SubElement(ET.SubElement(visual, "geometry"), kind, attrib=size)


def _joint(root: ET.Element, name: str, kind: str, parent: str, child: str, origin: np.ndarray) -> ET.Element:
    joint = ET.SubElement(root, "joint", name=name, type=kind)
    _origin(joint, np.eye(3), origin)
    ET.SubElement(joint, "parent", link=parent)
    ET.SubElement(joint, "child", link=child)
    return joint
