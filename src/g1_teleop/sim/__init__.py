"""The simulated robot: MuJoCo with joint PD every physics step, and the virtual gantry."""
