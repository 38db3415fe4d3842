"""Commands around the graph: the `g1-teleop` CLI, the main job, recorders and analysis, the virtual robot and the
benchmarks."""
