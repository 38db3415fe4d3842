"""Learned lower-body policies as the community ships them: their configuration, files, observation vectors,
gait clocks and inference (ONNX or TorchScript)."""
