"""The real robot's side: Unitree's LowCmd/LowState layouts and CRC, the wireless remote, the Dex3 hands, the
bridge's safety state machine, and the LowCmd process that writes to the motors."""
