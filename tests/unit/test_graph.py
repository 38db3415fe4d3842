import sys

import pytest

from g1_teleop.core.cpu_affinity import cpu_list, parse_cpu_list, usable_cpus
from g1_teleop.core.paths import config_path
from g1_teleop.launching.graph_description import GraphError, load_graph, processes
from g1_teleop.launching.process_runner import container_command, node_command, params_document, process_command
from g1_teleop.tools.cli import build_parser
from g1_teleop.tools.soak import SoakConfig
from g1_teleop.tools.virtual_graph import GraphPriorities, VirtualGraphConfig, last_lines, virtual_graph_nodes


def test_sim_graph_resolves_typed_arguments():
    graph = load_graph("sim")
    nodes = {n.name: n for n in graph.resolve({"lockstep": "false", "physics_dt": "0.002"})}
    assert set(nodes) == {"sim_bridge", "policy", "retarget", "xr_input", "robot_state"}
    assert nodes["sim_bridge"].parameters["lockstep"] is False
    assert nodes["sim_bridge"].parameters["physics_dt"] == 0.002
    assert nodes["policy"].parameters["use_sim_time"] is True
    assert nodes["xr_input"].parameters["scenario"] == "default"


def test_bad_argument_values_and_names_are_reported():
    graph = load_graph("sim")
    with pytest.raises(GraphError, match="lockstep:='maybe'"):
        graph.resolve({"lockstep": "maybe"})
    with pytest.raises(GraphError, match="unknown argument"):
        graph.resolve({"lokstep": "true"})


def test_unknown_graph_lists_the_known_ones():
    with pytest.raises(GraphError, match="known graphs"):
        load_graph("nope")


def test_a_live_device_has_its_own_process_in_real_time_however_the_bool_is_written():
    graph = load_graph("sim")
    for lockstep, container in (("true", "control"), ("True", "control"), ("1", "control"), ("false", ""),
                                ("FALSE", ""), ("0", "")):
        for source in ("webxr", "avp", "pico"):
            xr = [n for n in graph.resolve({"source": source, "lockstep": lockstep}) if n.executable == "xr_input"]
            assert [n.container for n in xr] == [container], (source, lockstep)
        scenario = [n for n in graph.resolve({"lockstep": lockstep}) if n.executable == "xr_input"]
        assert [n.container for n in scenario] == ["control"]
    eyes = [n.name for n in graph.resolve({"eyes": "True"})]
    assert "eyes" in eyes
    with pytest.raises(GraphError, match="not one of"):
        graph.resolve({"source": "webxrr"})


def test_real_graph_runs_the_virtual_robot_only_when_asked():
    graph = load_graph("real")
    real = graph.resolve()
    assert [n.name for n in real] == ["hw_bridge", "policy", "retarget", "xr_input", "robot_state"]
    assert real[0].parameters["robot_domain_id"] == 0 and real[0].parameters["network_interface"] == "eth0"
    virtual = graph.resolve({"robot": "virtual", "network_interface": "lo", "robot_domain_id": "1"})
    assert virtual[0].name == "virtual_robot" and not virtual[0].ros
    assert virtual[0].arguments == ("--domain-id", "1", "--interface", "lo", "--gantry", "--dex3", "false",
                                    "--peer", "g1", "--priority", "0")
    assert virtual[1].parameters["lowstate_crc_check"] is True
    hands = graph.resolve({"robot": "virtual", "dex3": "true"})
    assert hands[0].arguments[-6:-4] == ("--dex3", "true") and hands[1].parameters["dex3"] is True
    assert {n.name: n.priority for n in real if n.priority} == {}  # normal scheduling unless asked
    fifo = graph.resolve({"robot": "virtual", "lowcmd_priority": "50", "control_priority": "40",
                          "operator_priority": "35"})
    assert {n.name: n.priority for n in fifo if n.priority} == {"hw_bridge": 40, "policy": 40, "retarget": 35,
                                                                "xr_input": 35}
    operator = {"operator_priority": "35", "dex3": "true"}
    assert {n.name: n.priority for n in graph.resolve({**operator, "source": "body"}) if n.priority} == {
        "hand_retarget": 35, "body_retarget": 35, "xr_input": 35}
    assert GraphPriorities.under(50).arguments() == {"lowcmd_priority": "50", "control_priority": "40",
                                                     "operator_priority": "35"}
    assert GraphPriorities.under(0) == GraphPriorities()
    assert fifo[0].arguments[-2:] == ("--priority", "50") and fifo[1].parameters["lowcmd_priority"] == 50
    with pytest.raises(GraphError, match=r"node hw_bridge: priority must be 0 .* SCHED_FIFO priority 1–99, got 100"):
        graph.resolve({"control_priority": "100"})
    mujoco = graph.resolve({"robot": "virtual", "virtual_peer": "unitree_mujoco", "lowstate_crc_check": "false"})
    assert mujoco[0].arguments[-4:-2] == ("--peer", "unitree_mujoco")
    assert mujoco[1].parameters["lowstate_crc_check"] is False
    assert all(n.parameters.get("lockstep", False) is False for n in virtual[1:])


def test_node_command_carries_name_params_and_remaps(tmp_path):
    spec = load_graph("sim").resolve()[0]
    cmd = node_command(spec, tmp_path / "p.yaml", namespace="/g1")
    assert cmd[1:3] == ["-m", "g1_teleop.nodes.sim_bridge"]
    assert "__node:=sim_bridge" in cmd and "__ns:=/g1" in cmd and str(tmp_path / "p.yaml") in cmd


def test_conditional_plain_processes(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text(
        "arguments:\n  robot: {default: real}\n  domain: {type: int, default: '1'}\n"
        "nodes:\n"
        "  - executable: tools.virtual_robot\n    ros: false\n    when: {robot: virtual}\n"
        "    arguments: ['--domain-id', '$(arg domain)', '--gantry']\n"
        "  - executable: policy\n"
    )
    graph = load_graph(str(path))
    assert [n.name for n in graph.resolve()] == ["policy"]
    virtual = graph.resolve({"robot": "virtual", "domain": "7"})[0]
    assert virtual.arguments == ("--domain-id", "7", "--gantry") and not virtual.ros
    assert node_command(virtual, tmp_path / "unused.yaml")[1:] == [
        "-m", "g1_teleop.tools.virtual_robot", "--domain-id", "7", "--gantry"]


def test_a_node_may_run_for_one_of_several_values_and_the_body_source_swaps_the_retargeting():
    for name in ("sim", "real"):
        graph = load_graph(name)
        for source in ("scenario", "bag", "webxr", "avp"):
            names = [n.name for n in graph.resolve({"source": source})]
            assert "retarget" in names and "body_retarget" not in names, (name, source)
        names = [n.name for n in graph.resolve({"source": "body", "body_stream": "b.npz"})]
        assert "body_retarget" in names and "retarget" not in names, name
        xr_input = next(n for n in graph.resolve({"source": "body", "body_stream": "b.npz"}) if n.name == "xr_input")
        assert xr_input.parameters["body_stream"] == "b.npz"


def test_observers_yield_the_cpu_and_a_bad_niceness_is_refused(tmp_path):
    nodes = {n.name: n for n in load_graph("sim").resolve({"foxglove": "true"})}
    assert nodes["robot_state"].nice == nodes["foxglove_bridge"].nice == 10
    assert {nodes[name].nice for name in ("sim_bridge", "policy", "retarget", "xr_input")} == {0}
    assert node_command(nodes["robot_state"], tmp_path / "p.yaml")[:4] == ["nice", "-n", "10", sys.executable]
    assert node_command(nodes["policy"], tmp_path / "p.yaml")[0] == sys.executable
    path = tmp_path / "g.yaml"
    path.write_text("nodes:\n  - executable: policy\n    nice: -5\n")
    with pytest.raises(GraphError, match=r"nodes\[0\] \(policy\): nice must be an integer 0–19, got -5"):
        load_graph(str(path))


def test_the_control_chain_shares_one_process_unless_compose_is_false(tmp_path):
    graph = load_graph("sim")
    assert [[m.name for m in members] for members in processes(graph.resolve())] == [
        ["sim_bridge", "policy", "retarget", "xr_input"], ["robot_state"]]
    assert [m.name for m in processes(graph.resolve({"source": "body"}))[0]] == [
        "sim_bridge", "policy", "body_retarget", "xr_input"]
    assert all(len(members) == 1 for members in processes(graph.resolve({"compose": "false"})))
    chain = processes(graph.resolve())[0]
    cmd = process_command(chain, tmp_path / "p.yaml", namespace="/g1")
    assert cmd[1:7] == ["-m", "g1_teleop.nodes.container", "sim_bridge", "policy", "retarget", "xr_input"]
    assert "__ns:=/g1" in cmd and not any("__node" in arg for arg in cmd)
    document = params_document(chain)
    assert list(document) == ["/**/sim_bridge", "/**/policy", "/**/retarget", "/**/xr_input"]
    assert document["/**/policy"]["ros__parameters"]["controller"] == "builtin"
    assert list(params_document(processes(graph.resolve())[1])) == ["/**"]


def test_the_simulated_control_chain_takes_its_priority_as_one_process_a_live_devices_server_not():
    graph = load_graph("sim")
    assert [m.priority for m in processes(graph.resolve())[0]] == [0, 0, 0, 0]
    for source, chain in (("scenario", 4), ("body", 4), ("webxr", 3)):
        members = processes(graph.resolve({"lockstep": "false", "control_priority": "40", "source": source}))
        assert [(len(m), m[0].priority) for m in members] == [(chain, 40), *[(1, 0)] * (len(members) - 1)], source
    with pytest.raises(GraphError, match="control_priority:='high'"):
        graph.resolve({"control_priority": "high"})


def test_the_simulated_control_chain_keeps_its_cores_as_one_process_every_other_process_keeps_off_them():
    graph = load_graph("sim")
    usable = frozenset({0, 1, 2, 3})
    assert {n.cpus for n in graph.resolve({}, usable)} == {""}  # any core unless asked
    kept = graph.resolve({"control_cpus": "3", "dex3": "true", "record": "bag"}, usable)
    assert {n.name: n.cpus for n in kept} == {"sim_bridge": "3", "policy": "3", "retarget": "3", "xr_input": "3",
                                              "robot_state": "0-2", "recorder": "0-2", "hand_retarget": "0-2"}
    assert [(len(m), m[0].cpus) for m in processes(kept)] == [(4, "3"), *[(1, "0-2")] * 3]  # the chain: one process
    # in real time a live device's server has a process of its own, off the chain's cores
    live = graph.resolve({"control_cpus": "2-3", "lockstep": "false", "source": "webxr"}, usable)
    assert {n.name: n.cpus for n in live} == {"sim_bridge": "2-3", "policy": "2-3", "retarget": "2-3",
                                              "xr_input": "0-1", "robot_state": "0-1"}
    with pytest.raises(GraphError, match=r"keep every usable core \(0-3\) for \['policy', 'retarget', 'sim_bridge', "
                                         r"'xr_input'\]: leave at least one core"):
        graph.resolve({"control_cpus": "0-3"}, usable)


def test_a_container_addresses_each_node_and_takes_ros_nodes_only(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text("arguments:\n  compose: {type: bool, default: 'true'}\n"
                    "nodes:\n  - {executable: policy, name: p2, container: c, remappings: {joint_states: js}}\n"
                    "  - {executable: retarget, container: c}\n  - {executable: xr_input}\n")
    members, alone = processes(load_graph(str(path)).resolve())
    cmd = container_command(members, tmp_path / "p.yaml")
    assert cmd[cmd.index("--ros-args"):] == ["--ros-args", "--params-file", str(tmp_path / "p.yaml"),
                                             "-r", "policy:__node:=p2", "-r", "p2:joint_states:=js"]
    assert [m.name for m in alone] == ["xr_input"]
    path.write_text("nodes:\n  - {executable: tools.virtual_robot, ros: false, container: c}\n")
    with pytest.raises(GraphError, match=r"nodes\[0\] \(tools.virtual_robot\): only a ROS node can share"):
        load_graph(str(path))
    path.write_text("nodes:\n  - {executable: policy, container: c, priority: 30}\n  - {executable: retarget, "
                    "container: c}\n")
    with pytest.raises(GraphError, match=r"container 'c': its nodes ask different priority \[30, 0\]"):
        processes(load_graph(str(path)).resolve())
    path.write_text("nodes:\n  - {executable: policy, container: c, nice: 5}\n  - {executable: retarget, "
                    "container: c}\n")
    with pytest.raises(GraphError, match=r"container 'c': its nodes ask different nice \[5, 0\]"):
        processes(load_graph(str(path)).resolve())
    path.write_text("nodes:\n  - {executable: policy, container: c}\n"
                    "  - {executable: policy, name: p2, container: c}\n")
    with pytest.raises(GraphError, match=r"container 'c': two nodes of one executable \(\['policy', 'policy'\]\)"):
        processes(load_graph(str(path)).resolve())


def test_a_graph_file_with_a_key_twice_is_refused(tmp_path):
    text = config_path("graphs", "real.yaml").read_text()
    twice = text.replace("    cpus: $(arg control_cpus)\n    parameters:\n      source:",
                         "    cpus: $(arg control_cpus)\n    priority: 40\n    parameters:\n      source:", 1)
    assert twice != text
    path = tmp_path / "real.yaml"
    path.write_text(twice)
    with pytest.raises(GraphError, match=r"(?s)real\.yaml: not a valid graph file: .*found the key 'priority' a "
                                         r"second time .* in \".*real\.yaml\", line 219"):
        load_graph(str(path))


def test_cpu_lists_read_and_write_as_taskset_does():
    assert parse_cpu_list("") == frozenset()
    assert parse_cpu_list("1") == {1}
    assert parse_cpu_list("0-2, 5,7-8") == {0, 1, 2, 5, 7, 8}
    assert cpu_list({8, 0, 1, 2, 5, 7}) == "0-2,5,7-8" and cpu_list(()) == ""
    with pytest.raises(ValueError, match=r"'1-a' is not a CPU list \('1-a': use core numbers and ranges"):
        parse_cpu_list("1-a")
    with pytest.raises(ValueError, match="range '3-1' runs backwards"):
        parse_cpu_list("0,3-1")


def test_the_command_chain_keeps_its_cores_and_every_other_process_keeps_off_them(tmp_path, monkeypatch):
    graph = load_graph("real")
    usable = frozenset({0, 1, 2, 3})
    assert {n.cpus for n in graph.resolve({"robot": "virtual"}, usable)} == {""}  # any core unless asked
    nodes = graph.resolve({"robot": "virtual", "control_cpus": "2-3"}, usable)
    assert {n.name: n.cpus for n in nodes} == {"virtual_robot": "0-1", "hw_bridge": "0-1", "policy": "2-3",
                                               "retarget": "2-3", "xr_input": "2-3", "robot_state": "0-1"}
    body = graph.resolve({"source": "body", "dex3": "true", "record": "bag", "control_cpus": "3"}, usable)
    assert {n.name: n.cpus for n in body} == {"hw_bridge": "0-2", "hand_retarget": "3", "policy": "3",
                                              "body_retarget": "3", "xr_input": "3", "robot_state": "0-2",
                                              "recorder": "0-2"}
    by_name = {n.name: n for n in nodes}
    assert node_command(by_name["policy"], tmp_path / "p.yaml")[:4] == ["taskset", "-c", "2-3", sys.executable]
    assert node_command(by_name["robot_state"], tmp_path / "p.yaml")[:7] == [
        "nice", "-n", "10", "taskset", "-c", "0-1", sys.executable]
    assert node_command(by_name["virtual_robot"], tmp_path / "p.yaml")[:3] == ["taskset", "-c", "0-1"]
    with pytest.raises(GraphError, match=r"node policy: cpus '4': core\(s\) 4 are not among this machine's usable "
                                         r"cores \(0-3;"):
        graph.resolve({"control_cpus": "4"}, usable)
    with pytest.raises(GraphError, match=r"keep every usable core \(0-3\) for \['policy', 'retarget', 'xr_input'\]: "
                                         "leave at least one core"):
        graph.resolve({"control_cpus": "0-3"}, usable)
    with pytest.raises(GraphError, match=r"node policy: cpus: 'x' is not a CPU list"):
        graph.resolve({"control_cpus": "x"}, usable)
    # a core isolated from the scheduler (isolcpus=) is in no process's affinity: it may be kept, the rest stays off it
    monkeypatch.setattr("g1_teleop.launching.graph_description.isolated_cpus", lambda: frozenset({4, 5}))
    isolated = {n.name: n.cpus for n in graph.resolve({"control_cpus": "5"}, usable)}
    assert isolated["policy"] == "5" and isolated["hw_bridge"] == "0-3"
    monkeypatch.undo()
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(GraphError, match=r"needs taskset, which is not on PATH: install util-linux"):
        graph.resolve({"control_cpus": "3"}, usable)
    monkeypatch.undo()
    path = tmp_path / "g.yaml"
    path.write_text("nodes:\n  - {executable: policy, cpus: '1-'}\n")
    with pytest.raises(GraphError, match=r"nodes\[0\] \(policy\): cpus: '1-' is not a CPU list"):
        load_graph(str(path))
    path.write_text("nodes:\n  - {executable: policy, container: c, cpus: '1'}\n  - {executable: retarget, "
                    "container: c}\n")
    with pytest.raises(GraphError, match=r"container 'c': its nodes ask different cpus \['1', '0'\]"):
        processes(load_graph(str(path)).resolve(usable=frozenset({0, 1})))


def test_the_soak_keeps_the_chains_cores_as_the_graph_does():
    usable = usable_cpus()
    if len(usable) < 2:
        pytest.skip(f"one usable core ({cpu_list(usable)}): there is none to keep apart")
    kept = str(max(usable))
    args = build_parser().parse_args(["soak", "--duration", "1m", "--control-cpus", kept])
    assert args.control_cpus == kept and build_parser().parse_args(["soak"]).control_cpus == ""
    nodes = {n.name: n.cpus for n in virtual_graph_nodes(VirtualGraphConfig(229, 228, control_cpus=kept))}
    rest = cpu_list(usable - {int(kept)})
    assert nodes == {"virtual_robot": rest, "hw_bridge": rest, "policy": kept, "retarget": kept, "xr_input": kept,
                     "robot_state": rest}
    # the tool beside the graph (its readers, stress-ng) runs with the graph's other processes
    assert VirtualGraphConfig(229, 228, control_cpus=kept).other_cpus() == usable - {int(kept)}
    assert VirtualGraphConfig(229, 228).other_cpus() == usable
    assert SoakConfig(duration_s=60, control_cpus=kept).control_cpus == kept
    with pytest.raises(ValueError, match=r"--control-cpus: '1,,2' is not a CPU list"):
        SoakConfig(duration_s=60, control_cpus="1,,2")


def test_a_nodes_last_lines_are_not_hidden_by_another_nodes_repeated_ones():
    log = ["[policy       ] [WARN] no joint_states for 0.6 s: holding no command",
           *["[hw_bridge    ] [WARN] activate from service refused: no valid joint_command"] * 30,
           "[policy_helper] not the policy", "[runner] stopping the graph"]
    assert last_lines(log, 5, "policy") == log[0]
    assert last_lines(log, 2) == "\n".join(log[-2:])
    assert last_lines(log, 3, "hw_bridge").count("activate from service refused") == 3
