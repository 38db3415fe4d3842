"""Control, the third stage: the lower-body controllers (built-in standing and squat, learned policies in
``learned/``) and the assembly of the 29-joint command from the lower body and the arm targets."""
