"""The scenario loader: YAML with line numbers, typed validation, platform expansion, workload forms."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import numpy as np
import pytest

from simsched.errors import SimschedError
from simsched.scenario import ScenarioError, build_problem, load_scenario
from simsched.workloads.taskgraph import TaskGraph
from simsched.yamlio import load_yaml, parse_yaml

ROOT = Path(__file__).resolve().parents[1]

PLATFORM = """\
name: platform
platform:
  processors:
    - {name: cpu, type: cpu, speed: 1.0, count: 4, memory: 16}
    - {name: gpu, type: gpu, speed: 4.0, count: 2, host: node, memory: 16}
    - {name: big, type: cpu, cores: 8, memory: 64}
  network: {bandwidth: 10.0, latency: 0.5}
  links:
    - {from: cpu0, to: big, bandwidth: 100.0, latency: 0.01}
  affinity: {conv: {gpu: 10.0, cpu: 0.5}}
workload:
  tasks:
    - {name: x, work: 8, kind: conv}
    - {name: y, work: 4, memory: 32}
  edges:
    - {from: x, to: y, data: 20}
schedulers: [heft, {name: mct}]
"""


def write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# --------------------------------------------------------------------------- yamlio
def test_yaml_lines_for_nested_fields() -> None:
    doc = parse_yaml("a: 1\nb:\n  - x: 2\n    y: [1,\n        2]\n  - z: 3\n")
    assert doc.data == {"a": 1, "b": [{"x": 2, "y": [1, 2]}, {"z": 3}]}
    assert doc.line_of(("a",)) == 1
    assert doc.line_of(("b", 0, "y")) == 4
    assert doc.line_of(("b", 0, "y", 1)) == 5
    assert doc.line_of(("b", 1, "z")) == 6
    assert doc.line_of(("b", 1, "missing")) == 6  # falls back to the parent


def test_yaml_aliases_and_merge_keys() -> None:
    doc = parse_yaml("base: &b {speed: 2, type: gpu}\np:\n  <<: *b\n  speed: 3\nq: *b\n")
    assert doc.data["p"] == {"speed": 3, "type": "gpu"}
    assert doc.data["q"] == {"speed": 2, "type": "gpu"}
    assert doc.line_of(("q", "speed")) == 5


def test_yaml_refuses_alias_bomb_quickly() -> None:
    text = 'a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n' + "".join(
        f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 12))
    with pytest.raises(SimschedError, match="alias bomb"):
        parse_yaml(text)


def test_yaml_refuses_recursive_alias_unsafe_tag_and_duplicates() -> None:
    with pytest.raises(SimschedError, match="recursive YAML alias"):
        parse_yaml("a: &a [1, *a]\n")
    with pytest.raises(SimschedError, match="unsupported YAML tag|constructor") as info:
        parse_yaml("a: 1\nb: !!python/object/apply:os.system ['true']\n")
    assert info.value.line == 2
    with pytest.raises(SimschedError, match="duplicate key 'a'") as info:
        parse_yaml("a: 1\nb: 2\na: 3\n")
    assert info.value.line == 3


def test_yaml_file_errors(tmp_path: Path) -> None:
    with pytest.raises(SimschedError, match="no such file"):
        load_yaml(tmp_path / "nope.yaml")
    with pytest.raises(SimschedError, match="is empty"):
        load_yaml(write(tmp_path, "# nothing\n"))
    (tmp_path / "bin.yaml").write_bytes(b"a: 1\nb: \xff\n")
    with pytest.raises(SimschedError, match="UTF-8") as info:
        load_yaml(tmp_path / "bin.yaml")
    assert info.value.line == 2


# --------------------------------------------------------------------------- platform
def test_count_expands_names_and_hosts(tmp_path: Path) -> None:
    s = load_scenario(write(tmp_path, PLATFORM))
    procs = s.platform.processors
    big = [f"big/c{i}" for i in range(8)]  # cores: 8 is a host of 8 one-core slots
    assert [p.name for p in procs] == ["cpu0", "cpu1", "cpu2", "cpu3", "gpu0", "gpu1", *big]
    assert [p.host for p in procs] == ["cpu0", "cpu1", "cpu2", "cpu3", "node", "node", *["big"] * 8]
    assert procs[4].speed == 4.0 and procs[4].type == "gpu"
    assert all(p.cores == 1 and p.memory == 64 for p in procs[6:])
    assert [p.core for p in procs] == [None] * 6 + list(range(8))
    pf = s.platform
    assert pf.host_names == ("cpu0", "cpu1", "cpu2", "cpu3", "node", "big") and pf.n_hosts == 6
    assert pf.host_cores.tolist() == [1, 1, 1, 1, 2, 8] and pf.core_slots
    assert pf.size_text() == "6 hosts, 14 slots"


def test_network_and_links(tmp_path: Path) -> None:
    s = load_scenario(write(tmp_path, PLATFORM))
    pf = s.platform
    i, j, k = pf.index("cpu0"), pf.index("big/c3"), pf.index("cpu1")  # a link to a host: to each of its slots
    assert pf.bandwidth[i, j] == pf.bandwidth[j, i] == 100.0
    assert pf.latency[i, j] == 0.01
    assert pf.bandwidth[i, k] == 10.0 and pf.latency[i, k] == 0.5
    g0, g1 = pf.index("gpu0"), pf.index("gpu1")
    assert pf.latency[g0, g1] == 0.0 and np.isinf(pf.bandwidth[g0, g1])  # same host


def test_affinity_and_memory_reach_the_cost_model(tmp_path: Path) -> None:
    s = load_scenario(write(tmp_path, PLATFORM))
    problem = build_problem(s)
    pf = s.platform
    assert problem.W[0, pf.index("gpu0")] == pytest.approx(8 / (4.0 * 10.0))
    assert problem.W[0, pf.index("cpu0")] == pytest.approx(8 / 0.5)
    assert np.isinf(problem.W[1, pf.index("cpu0")])  # y needs memory 32: only "big" (any of its 8 cores) may run it
    assert problem.eligible[1].sum() == 8


def test_link_to_unknown_processor(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario(write(tmp_path, PLATFORM.replace("to: big", "to: bigg")))
    assert info.value.line == 9 and info.value.field == "platform.links[0].to"
    assert "did you mean 'big'?" in info.value.message


def test_duplicate_processor_names(tmp_path: Path) -> None:
    text = PLATFORM.replace("{name: big,", "{name: cpu1,").replace("to: big", "to: cpu1")
    with pytest.raises(ScenarioError, match="'cpu1' is used twice") as info:
        load_scenario(write(tmp_path, text))
    assert info.value.line == 6 and info.value.field == "platform.processors[2].name"


# --------------------------------------------------------------------------- top level
def test_defaults_and_fields(tmp_path: Path) -> None:
    s = load_scenario(write(tmp_path, PLATFORM))
    assert s.name == "platform" and s.seed == 0 and s.repetitions == 1
    assert s.noise.deterministic
    assert [spec.label for spec in s.schedulers] == ["heft", "mct"]
    assert s.autotuning is None


def test_name_defaults_to_file_stem(tmp_path: Path) -> None:
    s = load_scenario(write(tmp_path, PLATFORM.replace("name: platform\n", ""), name="my-case.yaml"))
    assert s.name == "my-case"


def test_autotuning_section_is_kept_opaque(tmp_path: Path) -> None:
    section = "autotuning:\n  servers: [{name: ws, cores: 16, gpus: 1}]\n  jobs: [{model: resnet18}]\n"
    s = load_scenario(write(tmp_path, PLATFORM + section))
    assert s.autotuning.model_dump(exclude_unset=True) == {
        "servers": [{"name": "ws", "cores": 16, "gpus": 1}], "jobs": [{"model": "resnet18"}]}
    assert s.has_task_graph


def test_every_problem_is_reported_with_its_line(tmp_path: Path) -> None:
    text = (PLATFORM.replace("speed: 4.0", "speed: -4").replace("[heft, {name: mct}]", "[heft, mctt]")
            + "noise: {model: gaussian}\n")
    with pytest.raises(ScenarioError) as info:
        load_scenario(write(tmp_path, text))
    found = {(p.field, p.line) for p in info.value.problems}
    assert ("platform.processors[1].speed", 5) in found
    assert ("noise.model", 18) in found
    assert ("schedulers[1]", 17) in found


def test_uniform_noise_sigma_checked(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="sigma <= 1") as info:
        load_scenario(write(tmp_path, PLATFORM + "noise: {model: uniform, sigma: 2}\n"))
    assert info.value.field == "noise"


def test_scheduler_parameters_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="no parameter 'depth'") as info:
        load_scenario(write(tmp_path, PLATFORM.replace("{name: mct}", "{name: mct, depth: 3}")))
    assert info.value.field == "schedulers[1].depth" and info.value.line == 17  # located at the parameter


# --------------------------------------------------------------------------- workload forms
def test_inline_workload_explicit_costs_with_ineligible(tmp_path: Path) -> None:
    text = """\
platform: {processors: [{name: A}, {name: B}]}
workload:
  tasks:
    - {name: 1, cost: [2, null]}
    - {name: 2, cost: [3, .inf], arrival: 1, priority: 2}
  edges: [{from: 1, to: 2, data: 5}]
schedulers: [heft]
"""
    s = load_scenario(write(tmp_path, text))
    problem = build_problem(s)
    assert problem.graph.names == ("1", "2")
    assert problem.eligible.tolist() == [[True, False], [True, False]]
    assert problem.graph.arrival.tolist() == [0.0, 1.0]


def test_edge_to_unknown_task_is_located(tmp_path: Path) -> None:
    text = PLATFORM.replace("{from: x, to: y, data: 20}", "{from: x, to: z, data: 20}")
    with pytest.raises(SimschedError, match="unknown task 'z'") as info:
        build_problem(load_scenario(write(tmp_path, text)))
    assert info.value.field == "workload.edges[0]" and info.value.line == 16


def test_duplicate_task_name_is_located(tmp_path: Path) -> None:
    text = PLATFORM.replace("    - {name: y, work: 4, memory: 32}\n", "    - {name: x, work: 4}\n").replace(
        "to: y", "to: x")
    with pytest.raises(SimschedError, match="duplicate task name 'x'") as info:
        build_problem(load_scenario(write(tmp_path, text)))
    assert info.value.field == "workload.tasks[1]" and info.value.line == 14


def test_workload_without_a_form(tmp_path: Path) -> None:
    text = PLATFORM.split("workload:")[0] + "workload: {size: 3}\nschedulers: [heft]\n"
    with pytest.raises(ScenarioError, match="generator: NAME") as info:
        load_scenario(write(tmp_path, text))
    assert info.value.field == "workload"


def generator_scenario(extra: str) -> str:
    return ("platform: {processors: [{name: cpu, count: 3}]}\n"
            f"workload: {{generator: random, tasks: 12{extra}}}\nschedulers: [heft]\nseed: 7\n")


def test_generator_gets_processors_and_seed(tmp_path: Path) -> None:
    s = load_scenario(write(tmp_path, generator_scenario("")))
    a, b = build_problem(s), build_problem(s)
    assert a.graph.n_tasks == 12
    assert a.graph.cost is not None and a.graph.cost.shape == (12, 3)  # processors passed automatically
    assert np.array_equal(a.W, b.W)  # same seed, same graph
    assert not np.array_equal(a.W, build_problem(s, seed=8).W)


def test_generator_processors_null_uses_speeds(tmp_path: Path) -> None:
    s = load_scenario(write(tmp_path, generator_scenario(", processors: null")))
    assert build_problem(s).graph.cost is None


def test_generator_costs_follow_speeds_and_affinity(tmp_path: Path) -> None:
    """The platform's speeds and affinities drive a generator's cost matrix; its spread stays."""
    def problem(speed: float, affinity: str = "") -> np.ndarray:
        text = ("platform:\n  processors: [{name: c, type: cpu, count: 2}, {name: g, type: gpu, speed: "
                f"{speed}}}]\n{affinity}workload: {{generator: series_parallel, tasks: 20}}\n"
                "schedulers: [heft]\nseed: 3\n")
        return build_problem(load_scenario(write(tmp_path, text, f"s{speed}{len(affinity)}.yaml"))).W

    unit, fast = problem(1.0), problem(4.0)
    assert np.allclose(fast[:, :2], unit[:, :2]) and np.allclose(fast[:, 2], unit[:, 2] / 4)
    assert not np.allclose(unit[:, 0], unit[:, 1])  # heterogeneity: a spread between processors
    boosted = problem(4.0, "  affinity: {compute: {gpu: 10}}\n")
    graph = build_problem(load_scenario(tmp_path / "s4.00.yaml")).graph
    compute = graph.kind == graph.kind_names.index("compute")
    assert np.allclose(boosted[compute, 2], fast[compute, 2] / 10)
    assert np.allclose(boosted[~compute], fast[~compute])


def test_affinity_that_would_have_no_effect_is_refused(tmp_path: Path) -> None:
    base = ("platform:\n  processors: [{name: c, type: cpu}, {name: g, type: gpu, speed: 4}]\n"
            "  affinity: AFF\nworkload: {generator: random, tasks: 10}\nschedulers: [heft]\n")
    with pytest.raises(SimschedError, match="no task of kind 'conv' in the workload") as info:
        build_problem(load_scenario(write(tmp_path, base.replace("AFF", "{conv: {gpu: 10}}"))))
    assert info.value.field == "platform.affinity.conv" and info.value.line == 3
    with pytest.raises(ScenarioError, match="no processor has type 'gpus'.*did you mean 'gpu'") as info:
        load_scenario(write(tmp_path, base.replace("AFF", "{task: {gpus: 10}}"), "t.yaml"))
    assert info.value.field == "platform.affinity.task.gpus"
    ones = "cost: [" + ", ".join(["1"] * 14) + "]"  # one per processor: big's 8 cores are 8 slots
    inline = PLATFORM.replace("work: 8", ones).replace("work: 4", ones)
    with pytest.raises(SimschedError, match="explicit per-processor costs, so the affinity"):
        build_problem(load_scenario(write(tmp_path, inline, "u.yaml")))
    no_aff = inline.replace("  affinity: {conv: {gpu: 10.0, cpu: 0.5}}\n", "")
    with pytest.raises(SimschedError, match="the speed 4 of processor 'gpu0' would have no effect") as info:
        build_problem(load_scenario(write(tmp_path, no_aff, "v.yaml")))
    assert info.value.field == "platform.processors[1].speed"


def test_generator_unknown_parameter_lists_accepted(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario(write(tmp_path, generator_scenario(", out_degre: 2")))
    msg = info.value.message
    assert "no parameter 'out_degre'" in msg and "did you mean 'out_degree'?" in msg and "ccr" in msg
    assert info.value.field == "workload.out_degre" and info.value.line == 2


def test_generator_parameter_type(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="valid number") as info:
        load_scenario(write(tmp_path, generator_scenario(", ccr: lots")))
    assert info.value.field == "workload.ccr"


def test_unknown_generator(tmp_path: Path) -> None:
    text = generator_scenario("").replace("generator: random", "generator: randm")
    with pytest.raises(ScenarioError, match="unknown generator 'randm'.*did you mean 'random'"):
        load_scenario(write(tmp_path, text))


@pytest.fixture
def fake_importers(monkeypatch: pytest.MonkeyPatch) -> list:
    """Stand-in ``simsched.workloads.importers`` with one importer form ``chain``."""
    calls: list = []

    def chain(path: Path, *, scale: float = 1.0) -> TaskGraph:
        """A chain with one task per line of the file."""
        calls.append((path, scale))
        names = Path(path).read_text().split()
        return TaskGraph(names, [(i, i + 1) for i in range(len(names) - 1)], work=scale)

    module = types.ModuleType("simsched.workloads.importers")
    module.IMPORTERS = {"chain": chain}
    monkeypatch.setitem(sys.modules, "simsched.workloads.importers", module)
    return calls


def test_importer_form_resolves_path_and_checks_options(tmp_path: Path, fake_importers: list) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "g.txt").write_text("a b c\n")
    text = "platform: {processors: [{name: P}]}\nworkload: {chain: data/g.txt, scale: 2}\nschedulers: [heft]\n"
    s = load_scenario(write(tmp_path, text))
    assert s.workload.form == "chain"
    problem = build_problem(s)
    assert problem.graph.names == ("a", "b", "c")
    assert fake_importers == [(tmp_path / "data" / "g.txt", 2.0)]

    with pytest.raises(ScenarioError, match="importer 'chain' has no parameter 'scal'"):
        load_scenario(write(tmp_path, text.replace("scale", "scal"), name="t.yaml"))
    with pytest.raises(ScenarioError, match="nope.txt: does not exist") as info:
        load_scenario(write(tmp_path, text.replace("data/g.txt", "nope.txt"), name="u.yaml"))
    assert info.value.field == "workload.chain" and info.value.line == 2


HEAVY_SCENARIOS: dict[str, str] = {}
"""Shipped scenarios whose loading is slow (marked ``slow``), with the reason (none: the 8,192-core
RICC scenario's platform keeps its network in O(m), see tests/test_platform_memory.py)."""


@pytest.mark.parametrize("path", [pytest.param(p, marks=pytest.mark.slow) if p.name in HEAVY_SCENARIOS else p
                                  for p in sorted((ROOT / "scenarios").rglob("*.yaml"))], ids=lambda p: p.name)
def test_shipped_scenarios_load(path: Path, skip_on_missing_extra) -> None:
    data = load_yaml(path).data
    if "data" in path.parts or not isinstance(data, dict) or not {"platform", "workload"} <= set(data):
        return  # study and training files, autotuning-only scenarios, data files
    try:
        with skip_on_missing_extra():  # a WfCommons recipe without the workflows extra: skipped, with the line
            scenario = load_scenario(path)
    except ScenarioError as exc:  # a newcomer path's scenario: its checkpoint is trained first, into out/
        if "traces/rlscheduler/" in str(exc) and "no such file" in str(exc):
            pytest.skip("RLScheduler's logs are fetched, not shipped (tools/fetch_rlscheduler_traces.sh)")
        assert "checkpoint out/" in str(exc) and "train one" in str(exc), (path, str(exc))
        return
    if scenario.workload.form == "batch":  # a cluster log: rigid jobs, not a task graph
        assert scenario.workload.options["batch"].trace.n > 0, path
        return
    with skip_on_missing_extra():
        assert build_problem(scenario).n_tasks > 0, path


def test_missing_sections_are_required(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as info:
        load_scenario(write(tmp_path, "name: x\nseed: 1\n"))
    assert [p.field for p in info.value.problems] == ["platform", "workload", "schedulers"]


def test_autotuning_only_scenario(tmp_path: Path) -> None:
    pytest.importorskip("simsched.run.autotune")
    text = ("name: at\nseed: 1\nautotuning:\n  servers: [{name: ws, cores: 16, gpus: 1}]\n"
            "  jobs: [{model: resnet18, count: 2, trials_per_task: 100}]\n  policies: [sequential]\n")
    s = load_scenario(write(tmp_path, text))
    assert not s.has_task_graph and s.autotuning.policies == ["sequential"]
    with pytest.raises(SimschedError, match="only an autotuning section"):
        build_problem(s)
    with pytest.raises(ScenarioError) as info:
        load_scenario(write(tmp_path, text.replace("policies:", "polices:"), name="bad.yaml"))
    assert info.value.line == 6 and "autotuning.polices" in str(info.value)
