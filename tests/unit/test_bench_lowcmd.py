import numpy as np

from g1_teleop.tools.bench.lowcmd import ELBOW_STEP_RAD, MAX_LATENCY_S, _latencies
from g1_teleop.tools.robot_probe import LowCmdSample

ELBOW = 3


def lowcmd(t, elbow):
    q = np.zeros(29)
    q[ELBOW] = np.float32(elbow)  # the LowCmd carries float32
    return LowCmdSample(t, q, np.zeros(29), np.zeros(29), 5, True)


def test_latency_is_publish_to_the_first_lowcmd_carrying_the_target():
    base = 1.0
    published = [(10.000, base), (10.020, base + ELBOW_STEP_RAD), (10.040, base + 2 * ELBOW_STEP_RAD)]
    lowcmds = [lowcmd(10.001, base - ELBOW_STEP_RAD),  # an older target
               lowcmd(10.003, base), lowcmd(10.005, base),  # the first one counts
               lowcmd(10.027, base + ELBOW_STEP_RAD),
               # the third target never comes; the same value much later is not its LowCmd
               lowcmd(10.040 + MAX_LATENCY_S + 0.01, base + 2 * ELBOW_STEP_RAD)]
    latencies, missing = _latencies(published, lowcmds, ELBOW)
    np.testing.assert_allclose(latencies, [0.003, 0.007], atol=1e-9)
    assert missing == 1


def test_a_lowcmd_before_the_publish_does_not_count():
    latencies, missing = _latencies([(5.0, 1.0)], [lowcmd(4.999, 1.0)], ELBOW)
    assert latencies == [] and missing == 1
