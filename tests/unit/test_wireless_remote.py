import pytest

from g1_teleop.hardware.wireless_remote import (
    BUTTONS,
    WirelessRemote,
    combo_pressed,
    encode_wireless_remote,
    parse_combo,
    parse_wireless_remote,
)

# head 55 AA; keys 0x0101 = R1 (bit 0) + A (bit 8); lx 0.5, rx -1.0, ry 0.25, L2 1.0, ly -0.5 as float32 LE
FIXTURE = bytes.fromhex(
    "55aa" "0101" "0000003f" "000080bf" "0000803e" "0000803f" "000000bf" + "00" * 16
)
# keys 0x8004 = start (bit 2) + left (bit 15); every axis 0
START_AND_LEFT = bytes.fromhex("0000" "0480" + "00" * 36)


def test_parse_reads_sticks_trigger_and_buttons_at_their_offsets():
    remote = parse_wireless_remote(FIXTURE)
    assert (remote.lx, remote.ly, remote.rx, remote.ry, remote.l2) == (0.5, -0.5, -1.0, 0.25, 1.0)
    assert remote.pressed == {"R1", "A"}
    assert remote.keys == 0x0101
    assert remote.axes == (0.5, -0.5, -1.0, 0.25, 1.0)
    assert remote.buttons == tuple(name in ("R1", "A") for name in BUTTONS)


def test_key_bits_follow_the_unitree_bitfield():
    assert parse_wireless_remote(START_AND_LEFT).pressed == {"start", "left"}
    assert BUTTONS[2] == "start" and BUTTONS[15] == "left" and BUTTONS[5] == "L2"


def test_parse_accepts_the_sdk_list_of_ints():
    assert parse_wireless_remote(list(FIXTURE)) == parse_wireless_remote(FIXTURE)


def test_encode_is_the_inverse_of_parse():
    remote = WirelessRemote(lx=0.5, ly=-0.5, rx=-1.0, ry=0.25, l2=1.0, pressed={"A", "R1"})
    assert encode_wireless_remote(remote, head=b"\x55\xaa") == FIXTURE
    assert encode_wireless_remote(WirelessRemote(pressed={"start", "left"})) == START_AND_LEFT


def test_malformed_readings_are_refused():
    with pytest.raises(ValueError, match="40 bytes"):
        parse_wireless_remote(FIXTURE[:24])
    nan_lx = FIXTURE[:4] + bytes.fromhex("0000c07f") + FIXTURE[8:]
    with pytest.raises(ValueError, match="non-finite"):
        parse_wireless_remote(nan_lx)
    with pytest.raises(ValueError, match="unknown remote buttons"):
        WirelessRemote(pressed={"Z"})


def test_combos_parse_by_name():
    assert parse_combo("L1 + B") == {"L1", "B"}
    for bad in ("L1+Q", ""):
        with pytest.raises(ValueError, match="button combination"):
            parse_combo(bad)


def test_combo_fires_once_when_its_last_button_joins():
    combo = {"L1", "B"}
    l1 = WirelessRemote(pressed={"L1"})
    both = WirelessRemote(pressed={"L1", "B", "up"})
    assert not combo_pressed(None, l1, combo)
    assert combo_pressed(l1, both, combo)
    assert combo_pressed(None, both, combo)
    assert not combo_pressed(both, both, combo)  # still held: no new press
    assert not combo_pressed(both, l1, combo)
