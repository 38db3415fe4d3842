"""ROS wiring shared by the node executables: QoS profiles, declared parameters, diagnostics, the node main loop
and conversions between the standard messages and the core's types."""
