"""QoS profiles of the topic contract (README, "Topics")."""

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

# Device-rate operator samples: newest wins.
QOS_SENSOR = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1, reliability=ReliabilityPolicy.BEST_EFFORT)
# Targets and commands: reliable, newest wins.
QOS_COMMAND = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1, reliability=ReliabilityPolicy.RELIABLE)
# Robot state: reliable, a few samples deep.
QOS_STATE = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=5, reliability=ReliabilityPolicy.RELIABLE)
# An observer that must not miss a sample (recorders, benches, checks): reliable, a second of 200 Hz deep, so that
# a receiver busy with images for a moment still gets every state.
QOS_OBSERVER = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=200, reliability=ReliabilityPolicy.RELIABLE)
# Mode and descriptions: latched for late joiners.
QOS_LATCHED = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
# /tf as tf2_ros publishes it (deep: many transforms a period), /tf_static latched as tf2_ros's static broadcaster.
QOS_TF = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100, reliability=ReliabilityPolicy.RELIABLE)
QOS_TF_STATIC = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1, reliability=ReliabilityPolicy.RELIABLE,
                           durability=DurabilityPolicy.TRANSIENT_LOCAL)
# Its listener as tf2_ros's static listener (100 deep): /tf_static has a publisher per node that owns fixed frames
# (robot_state, eyes), each latching its last message, and a 1-deep reader keeps only one of them.
QOS_TF_STATIC_LISTENER = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=100,
                                    reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
