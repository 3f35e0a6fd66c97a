"""``docs/scenario-reference.md``: every field, type, default and an example of every scenario section, read
from the pydantic models of :mod:`simsched.scenario` (and of the ``autotuning:`` section), with one line of
meaning per field (:data:`FIELD_DOCS`) and a YAML example per model (:data:`EXAMPLES`); the generator and
importer parameter tables from the signatures and docstrings of ``GENERATORS`` and ``IMPORTERS``.
"""

from __future__ import annotations

import inspect

from simsched.report.reference_docs.tables import HEADER, doc_first, model_table, models_under, signature_table

FIELD_DOCS: dict[str, dict[str, str]] = {
    "ScenarioModel": {
        "name": "Shown in tables and results; default: the file name without `.yaml`.",
        "description": "Free text.",
        "seed": "Base seed: repetition `r` uses `seed + r`; a generated workload is drawn from `seed`.",
        "repetitions": "Runs per scheduler; each draws new noise (same draws for every scheduler).",
        "platform": "Processors and network (required unless the scenario has only `autotuning`).",
        "workload": "What is run: inline `tasks`/`edges`, `generator: NAME` + parameters, or `FORM: path` "
                    "(see below; required unless only `autotuning`).",
        "noise": "Multiplicative duration noise, one factor per task per repetition.",
        "schedulers": "Registered names (`simsched list`), `{name: ..., param: value}`, or a plug-in "
                      "`module:Class` (required unless only `autotuning`).",
        "autotuning": "Autotuning jobs on servers (see the autotuning section below and "
                      "[autotuning.md](autotuning.md)).",
        "capacity": "The question of `simsched capacity`: `objective` (e.g. `makespan <= 150`), `resource`, "
                    "`days`, `on_days`, `max`, `schedulers` (see [capacity.md](capacity.md)).",
        "limits": "Raise (or lower) the size limits for this scenario (see `LimitsSpec`).",
        "failures": "Processor failures: `mtbf`/`mttr` per processor (defaults, `types: {TYPE: {mtbf, mttr}}`, "
                    "`processors: {NAME: {...}}`) and/or `trace: down.csv` (see [streams.md](streams.md)).",
        "stragglers": "Straggler episodes: `{rate, duration, slowdown}` per processor "
                      "(see [streams.md](streams.md)).",
    },
    "LimitsSpec": {
        "max_tasks": "Most tasks in the workload (default 2,000,000; also `SIMSCHED_MAX_TASKS`).",
        "max_processors": "Most processors in the platform (default 2,000; also `SIMSCHED_MAX_PROCESSORS`).",
        "max_memory_mb": "Most memory for the tasks x processors and processors x processors matrices, "
                         "estimated before they are made (default 4096; also `SIMSCHED_MAX_MEMORY_MB`).",
    },
    "PlatformSpec": {
        "processors": "At least one processor entry; order matters for inline `cost` lists.",
        "network": "Default transfer parameters between processors.",
        "links": "Per-pair overrides of the network (both directions).",
        "affinity": "`affinity[kind][type]`: speed multiplier of a task kind on a processor type "
                    "(missing = 1, 0 = may not run there).",
        "power": "Watts per processor type (and per processor): idle, busy, P-states, powered off, failed; "
                 "adds `energy_j` to every results row (see [energy.md](energy.md)).",
        "prices": "Money: `kwh` and per type `hourly`/`billing` or `purchase`/`lifetime_hours`; adds `cost_usd`.",
        "carbon": "Grid intensity (gCO2/kWh): a constant `intensity` or a CSV `trace`; adds `carbon_g`.",
        "overheads": "Workflow-system overheads (seconds): a profile name (`pegasus`, `makeflow`, `nextflow`), "
                     "the fields, or both (see `OverheadsSpec`, [execution-model.md](execution-model.md)); "
                     "off when absent.",
        "storage": "A storage service tasks read and write their files through, its bandwidth shared fairly "
                   "(see `StorageSpec`, [execution-model.md](execution-model.md)); off when absent.",
    },
    "OverheadsSpec": {
        "profile": "Start from a workflow system's documented defaults: `pegasus`, `makeflow` or `nextflow`.",
        "submit": "Seconds from a task becoming ready (parents done) to the dispatcher seeing it.",
        "dispatch_interval": "The dispatcher releases at most one task every this many seconds (FIFO).",
        "dispatch_per_queued": "Seconds added to the dispatcher's interval per task waiting ahead in its queue.",
        "cycle": "Released tasks become runnable only at the next multiple of this (0: at once).",
        "pre": "Seconds on the processor before the runtime (the record's start is when it begins).",
        "post": "Seconds after the runtime, off the processor; children and the makespan wait for it.",
        "startup": "Seconds once per workflow (per job of a stream) before its first task is submitted.",
    },
    "StorageSpec": {
        "bandwidth": "Bytes per second of the storage service, shared fairly among concurrent transfers.",
        "latency": "Seconds per transfer (a task's reads are one transfer, its writes another).",
        "data_unit": "Bytes per unit of the workload's edge data (default: the importer's `data_unit` "
                     "option, else 1e6: the WfFormat and DAX importers' megabytes).",
    },
    "PowerSection": {
        "types": "A power entry per processor type; every processor needs its type's or its own.",
        "processors": "Per processor name: overrides its type's entry.",
        "link_energy": "Joules per unit of data moved between two different processors.",
        "time_unit_s": "Seconds per simulated time unit (watts x seconds = joules).",
    },
    "PowerSpec": {
        "idle": "Watts when on and idle (with `busy`: one P-state of speed 1).",
        "busy": "Watts when running a task (>= `idle`).",
        "pstates": "Instead of idle/busy: P-states `{speed, busy, idle}`, the first the nominal one.",
        "powered_off": "Watts when powered off (not `off`: YAML reads a bare `off` as false).",
        "failed": "Watts while failed, until repaired (default: `powered_off`).",
        "switch_latency": "Time a P-state switch takes (in the idle gap before the task).",
        "switch_energy": "Joules per P-state switch.",
        "on_delay": "Time to power on (the end of an off interval).",
        "on_energy": "Joules per power-on.",
        "off_delay": "Time to power off (the start of an off interval).",
        "off_energy": "Joules per power-off.",
    },
    "PStateSpec": {
        "speed": "Speed factor (> 0): a task takes `1 / speed` times its nominal time.",
        "busy": "Watts when busy in this P-state.",
        "idle": "Watts when idle in this P-state (<= `busy`).",
    },
    "PricesSection": {
        "kwh": "Money per kWh drawn.",
        "types": "A price per processor type.",
    },
    "PriceSpec": {
        "hourly": "On-demand price per processor-hour, for the whole run.",
        "billing": "`second` (pro rata) or `hour` (every started hour is billed).",
        "purchase": "Purchase price, amortised per hour over `lifetime_hours`.",
        "lifetime_hours": "Hours over which `purchase` is amortised.",
    },
    "CarbonSection": {
        "intensity": "A constant gCO2/kWh (or give `trace`).",
        "trace": "CSV `time,intensity` (times from 0, increasing), relative to the scenario file.",
        "interpolation": "`step` (hold each value) or `linear` between rows.",
        "types": "Per processor type: its own trace file (another site or grid).",
    },
    "ProcessorSpec": {
        "name": "Processor name (with `count`: the prefix, `cpu` -> `cpu0 .. cpu{count-1}`).",
        "type": "Processor type, used by `affinity` (e.g. `cpu`, `gpu`).",
        "speed": "Execution time of a `work` task is `work / (speed x affinity)`.",
        "cores": "`c > 1`: a host of c one-core slots `<name>/c0 .. <name>/c{c-1}` (with `count`: `<name>0/c0 ..`), "
                 "each running one task at a time; power per slot (per core); `count x cores` slots count against "
                 "`limits.max_processors`. See model.md#cores.",
        "memory": "A task whose `memory` exceeds this may not run here.",
        "host": "Host name; processors on one host use `host_bandwidth`/`host_latency` (default: own host).",
        "count": "Expand into `count` identical processors.",
        "host_memory": "Memory of the host these processors sit on (each processor its own host unless `host` "
                       "or `cores` groups them), shared by every task running on it at once: a task needing `m` "
                       "(its `memory`) starts only while the host has `m` free, else waits; a task needing more "
                       "than the whole may not run there. Units of the tasks' `memory`. Entries on one host "
                       "share one value. See execution-model.md#host-memory.",
    },
    "NetworkSpec": {
        "bandwidth": "Between hosts: transfer time = `latency + data / bandwidth`.",
        "latency": "Between hosts: start-up time of every transfer.",
        "host_bandwidth": "Within a host (default: infinite, i.e. only the latency).",
        "host_latency": "Within a host.",
    },
    "LinkSpec": {
        "from": "A processor or host name.",
        "to": "A processor or host name.",
        "bandwidth": "Bandwidth of this pair.",
        "latency": "Latency of this pair.",
    },
    "NoiseSpec": {
        "model": "`none`, `lognormal` (mean 1), `normal` (1 + sigma N(0,1), clipped at 0.001) or "
                 "`uniform` ([1 - sigma, 1 + sigma]).",
        "sigma": "Spread of the factors (at most 10 for `lognormal` and `normal`, 1 for `uniform`).",
    },
    "InlineWorkload": {
        "tasks": "The tasks (names must be unique).",
        "edges": "Precedence edges with the data they carry.",
    },
    "TaskSpec": {
        "name": "Task name (numbers are read as text).",
        "cost": "Execution time on each processor, in platform order (`null`/`.inf`: may not run there).",
        "work": "Amount of work; time = `work / (speed x affinity)` (when no `cost`).",
        "kind": "Task kind, for `affinity` and Gantt colours.",
        "arrival": "Earliest start (online arrivals).",
        "priority": "Priority (used by some policies).",
        "memory": "Memory needed; processors with less may not run it.",
        "cores": "Cores needed at once: `k > 1` is a rigid gang of k slots of one host (`procs: k` with "
                 "`same_host`; gang-aware schedulers only); refused where no host has k cores. See model.md#cores.",
        "procs": "Processors of one type it needs at once: `k` (rigid; `cost`/`work` is its time on k) or "
                 "`[k_min, k_max]` (moldable: the scheduler chooses k; time at k_min, Amdahl's law). "
                 "Gang-aware schedulers only (heft, online-heft, srjf-eft, fair-eft). See model.md.",
        "serial": "Serial fraction f of a moldable task, in [0, 1]: `t(k) = t(1) (f + (1 - f) / k)` (Amdahl 1967).",
        "speedup": "A moldable task's speedup model instead of `serial`: `{model: downey, A, sigma}` (Downey 1997) "
                   "or `{model: amdahl, serial}` (see `SpeedupSpec`).",
        "same_host": "`true`: all of its processors on one host (and of one type); a task no host can hold is "
                     "refused.",
    },
    "SpeedupSpec": {
        "model": "`amdahl` (serial fraction) or `downey` (average parallelism and variance).",
        "serial": "Amdahl's serial fraction f in [0, 1] (default 0).",
        "A": "Downey's average parallelism A >= 1: the speedup never exceeds A.",
        "sigma": "Downey's variance sigma >= 0 (0: speedup min(k, A); <= 1 low, >= 1 high variance).",
    },
    "EdgeSpec": {
        "from": "Producer task.",
        "to": "Consumer task.",
        "data": "Data moved when the two run on different processors.",
    },
    "FailuresSection": {
        "mtbf": "Default mean time between failures of every processor (exponential; with `mttr`).",
        "mttr": "Default mean time to repair (exponential; with `mtbf`).",
        "types": "Per processor type: `{TYPE: {mtbf, mttr}}`, over the default.",
        "processors": "Per processor name: `{NAME: {mtbf, mttr}}`, over its type's.",
        "trace": "CSV of planned down intervals `processor,start,end` (relative to the scenario file).",
    },
    "FailureRates": {
        "mtbf": "Mean time between failures.",
        "mttr": "Mean time to repair.",
    },
    "StragglersSection": {
        "rate": "Slowdown episodes per processor per unit of time (Poisson).",
        "duration": "Mean length of an episode (exponential).",
        "slowdown": "A task started during an episode takes this many times longer.",
    },
    "StreamSection": {
        "jobs": "One job source or a list of them: any workload form (`generator: NAME` + parameters, "
                "`FORM: path`), plus `weight` (> 0, how often it is drawn; default 1), `priority` (finite; "
                "default 0), `name` (for traces and tables), `procs`/`serial` (every task of its jobs needs k "
                "or [k_min, k_max] processors of one type at once, as a task's `procs`), `speedup`/`same_host` "
                "(as a task's) and, for a generator, "
                "`tasks: [lo, hi]` (each job draws its task count in that range).",
        "arrivals": "The arrival process (see `ArrivalsSpec`).",
        "count": "Number of jobs (give `count` or `horizon`; neither with a `trace`).",
        "horizon": "Jobs arrive until this time.",
        "deadline": "Optional deadline of every job (see `DeadlineSpec`).",
        "procs": "`[lo, hi]`: every task is rigid and needs k processors of one type at once, k drawn in "
                 "[lo, hi]; such streams run under the batch policies (see [cluster-traces.md](cluster-traces.md)).",
    },
    "BatchTraceSection": {
        "swf": "A Standard Workload Format file (Parallel Workloads Archive), relative to the scenario file.",
        "sacct": "Slurm accounting: the output of `sacct -a -P --format=...`, relative to the scenario (see "
                 "[cluster-traces.md](cluster-traces.md#slurm-accounting-sacct)).",
        "gpu_trace": "A GPU-cluster CSV `job,submit,gpus,duration[,user][,requested]`, relative to the scenario.",
        "limit": "Keep only the first `limit` jobs (after dropping those the archive's conventions drop).",
        "window": "`[start, end)` seconds after the first submit (SWF and sacct).",
        "scale": "Load factor: submit times are divided by it (1.3 = 30% more load).",
        "too_wide": "`drop` (with a count) or `refuse` jobs wider than the platform.",
        "kill": "Kill a job at its requested time, as resource managers do.",
        "on_failure": "With a `failures` section: `requeue` (start again, in its submit-order place) or "
                      "`lost` (never completes) a job whose processor fails (see "
                      "[cluster-traces.md](cluster-traces.md#failures)).",
        "procs_from": "SWF and sacct: a job's processors from `allocated` (SWF field 5, else 8, the archive's "
                      "definition; sacct `AllocCPUS`...), `requested` (field 8, else 5; `ReqCPUS`...) or `max` "
                      "(the larger).",
        "keep": "SWF and sacct: `completed` jobs (status 1 or -1, `COMPLETED`; the others dropped with a count) "
                "or `all` that have a run time (failed and cancelled ones held their processors too; checkpoint "
                "parts, status 2-4, and sacct's pending, running and requeued records are still dropped).",
        "resource": "sacct only: what one processor of the platform is, `cpus` (the default), `gpus` (the "
                    "`gres/gpu` count of `AllocTRES`) or `nodes`.",
        "estimates": "A job without a requested time runs with its run time in its place (perfect estimates); "
                     "`recorded` refuses a policy that observes requested times (`learned-priority`) on such a "
                     "log, `perfect` accepts that foresight (RLScheduler's protocol on the Lublin logs).",
        "windows": "SWF and sacct: each day a window of consecutive jobs from an empty machine, RLScheduler's "
                   "protocol (`WindowsSection`; [rlscheduler.md](rlscheduler.md)); `run -r N` reports N windows.",
    },
    "WindowsSection": {
        "jobs": "Consecutive jobs per window (RLScheduler: 1,024); the log must hold `2 x jobs + 2`.",
        "within": "Draw window starts among the first `within` jobs only (RLScheduler: 10,000 for SDSC-SP2, HPC2N).",
        "queue": "Policies see at most this many waiting jobs, the first in submit order (default: all).",
        "draw": "`seed`: each window's start from the day's seed (seed spaces apply); `rlscheduler`: "
                "RLScheduler's starts for the scenario's seed (day `seed + k`: its `k`-th window).",
    },
    "ArrivalsSpec": {
        "poisson": "Jobs per unit of time, exponential gaps; the offered load `simsched validate` prints "
                   "is proportional to it (see [streams.md](streams.md#choosing-an-arrival-rate)).",
        "rates": "Piecewise constant Poisson rates `[[time, rate], ...]` from time 0 (times increasing).",
        "trace": "CSV `time,job[,deadline][,priority]` (relative to the scenario file): `job` is a workflow "
                 "file or the `name` of a `jobs` entry; times sorted.",
    },
    "DeadlineSpec": {
        "slack": "A job's deadline is its arrival plus `slack` x its critical path alone on the platform.",
    },
}
"""One line per field of the scenario models; :func:`scenario_reference` refuses a field without one."""

EXAMPLES: dict[str, str] = {
    "ScenarioModel": "name: quickstart\nseed: 42\nrepetitions: 5\nplatform:\n  processors: [{name: cpu, count: 8}]\n"
                     "workload: {generator: random, tasks: 100}\nnoise: {model: lognormal, sigma: 0.1}\n"
                     "schedulers: [heft, {name: ga, generations: 200}]\n",
    "PlatformSpec": "processors:\n  - {name: cpu, type: cpu, speed: 1.0, count: 8}\n"
                    "  - {name: gpu, type: gpu, speed: 4.0, count: 2}\nnetwork: {bandwidth: 10.0, latency: 0.1}\n"
                    "links: [{from: cpu0, to: gpu0, bandwidth: 100}]\naffinity: {conv: {gpu: 10.0}, io: {gpu: 0}}\n",
    "PowerSection": "types:\n  cpu: {idle: 20, busy: 95, powered_off: 2}\n"
                    "  gpu: {pstates: [{speed: 1.0, busy: 300, idle: 50}, {speed: 0.6, busy: 140, idle: 40}]}\n"
                    "processors: {gpu1: {idle: 60, busy: 320}}\nlink_energy: 0.5\n",
    "OverheadsSpec": "{profile: pegasus, cycle: 10, post: 5}\n",
    "StorageSpec": "{bandwidth: 1.0e+8, latency: 0.01, data_unit: 1.0e+6}\n",
    "PowerSpec": "{idle: 20, busy: 95, powered_off: 2, failed: 0, on_delay: 30, on_energy: 900}\n",
    "PStateSpec": "{speed: 0.6, busy: 140, idle: 40}\n",
    "PricesSection": "kwh: 0.25\ntypes: {gpu: {hourly: 2.5, billing: hour}}\n",
    "PriceSpec": "{purchase: 4000, lifetime_hours: 26280}\n",
    "CarbonSection": "{intensity: 350}\n",
    "ProcessorSpec": "{name: gpu, type: gpu, speed: 4.0, memory: 16, host: node1, count: 2}\n",
    "NetworkSpec": "{bandwidth: 10.0, latency: 0.1, host_bandwidth: 100.0, host_latency: 0.0}\n",
    "LinkSpec": "{from: node1, to: node2, bandwidth: 1.0, latency: 0.5}\n",
    "NoiseSpec": "{model: lognormal, sigma: 0.2}\n",
    "LimitsSpec": "{max_tasks: 5000000, max_memory_mb: 16384}\n",
    "InlineWorkload": "tasks:\n  - {name: a, cost: [14, 16, 9]}\n  - {name: b, cost: [13, .inf, 18]}\n"
                      "edges:\n  - {from: a, to: b, data: 18}\n",
    "TaskSpec": "{name: load, work: 5.0, kind: io, arrival: 2.0, memory: 4}\n",
    "SpeedupSpec": "{model: downey, A: 3, sigma: 0.5}\n",
    "EdgeSpec": "{from: load, to: train, data: 120}\n",
    "FailuresSection": "mtbf: 2000\nmttr: 50\ntypes: {gpu: {mtbf: 500, mttr: 100}}\n"
                       "processors: {cpu0: {mtbf: 100, mttr: 10}}\n",
    "FailureRates": "{mtbf: 500, mttr: 100}\n",
    "StragglersSection": "{rate: 0.001, duration: 100, slowdown: 3}\n",
    "StreamSection": "jobs:\n  - {weight: 3, generator: random, tasks: [10, 40], ccr: 0.5}\n"
                     "  - {weight: 1, generator: fork_join, priority: 1, name: fj}\n"
                     "arrivals: {poisson: 0.02}\ncount: 200\ndeadline: {slack: 3.0}\n",
    "ArrivalsSpec": "{rates: [[0, 0.01], [500, 0.04]]}\n",
    "DeadlineSpec": "{slack: 3.0}\n",
    "BatchTraceSection": "{swf: data/lublin_256.swf, limit: 2000, scale: 1.3}\n",
    "WindowsSection": "{jobs: 1024, within: 10000, draw: rlscheduler}\n",
}
"""A YAML example per model (``tests/test_docs.py`` validates each against its model)."""


def _model_section(model: type) -> str:
    """A ``###`` section of one model: its first docstring paragraph, its field table, its example."""
    name = model.__name__
    return (f"### `{name}`\n\n{doc_first(model)}\n\n{model_table(model, FIELD_DOCS[name])}\n\n"
            f"Example:\n\n```yaml\n{EXAMPLES[name]}```\n")


def scenario_reference() -> str:
    """The text of ``docs/scenario-reference.md``."""
    from simsched.scenario import InlineWorkload, ScenarioModel
    from simsched.scenario.autotuning import AutotuningSection
    from simsched.workloads.generators import GENERATORS
    from simsched.workloads.importers import IMPORTERS

    out = [HEADER, "# Scenario reference\n",
           "A scenario is a YAML file validated by `simsched validate` (exit 2 with one line per problem, "
           "naming the field path and the line). Unknown fields are refused everywhere. This page is "
           "generated from the pydantic models in `simsched/scenario/__init__.py`, the generator and "
           "importer signatures and `simsched/scenario/autotuning.py`. Worked examples: "
           "[getting-started.md](getting-started.md), `scenarios/`. From Python or a notebook, the same fields "
           "as a `dict` (or the file's path) run with `simsched.run(...)`: see [notebooks.md](notebooks.md).\n"]
    sections = [(ScenarioModel, "top level"), *[(m, None) for m in list(models_under(ScenarioModel))[1:]],
                *[(m, "workload: inline form") for m in models_under(InlineWorkload)]]
    for model, where in sections:
        title = model.__name__
        out.append(f"## `{title}`" + (f" ({where})" if where else "") + "\n")
        out.append(doc_first(model) + "\n")
        out.append(model_table(model, FIELD_DOCS[title]) + "\n")
        out.append("Example:\n\n```yaml\n" + EXAMPLES[title] + "```\n")
    from simsched.scenario.stream_section import BatchTraceSection, StreamSection, WindowsSection

    out.append("## Workload: `stream` (jobs arriving over time)\n")
    out.append("`workload: {stream: ...}` sends DAG jobs drawn from other workload forms over time; "
               "`simsched validate` and `simsched run` print its offered load. See [streams.md](streams.md).\n")
    out.extend(_model_section(model) for model in models_under(StreamSection))
    out.append("## Workload: `stream` of a cluster log (rigid jobs)\n")
    out.append("`workload: {stream: {swf: ...}}`, `{stream: {sacct: ...}}` or `{stream: {gpu_trace: ...}}` replays "
               "a cluster's log as rigid "
               "jobs under the batch policies. See [cluster-traces.md](cluster-traces.md).\n")
    out.append(_model_section(BatchTraceSection))
    out.append(_model_section(WindowsSection))
    out.append("## Workload: `generator: NAME`\n")
    out.append("Every generator is drawn from the scenario seed. `processors` (for those that take it) is "
               "filled in from the platform: the generator then draws a cost matrix that spreads each "
               "task's time around `work / (speed x affinity)` by `heterogeneity` (cost on processor p = "
               "work x U[1 - h/2, 1 + h/2] / (speed_p x affinity)), so the platform's speeds and affinities "
               "always count; write `processors: null` for exactly `work / (speed x affinity)`. An "
               "affinity for a kind the workload does not have is an error. "
               "See [workloads.md](workloads.md) for the shapes and papers.\n")
    for name, func in GENERATORS.items():
        out.append(f"### `generator: {name}`\n\n{doc_first(func)}\n\n{signature_table(func)}\n")
    out.append("## Workload: `FORM: path` (importers)\n")
    out.append("`FORM: path` (relative to the scenario file) plus the importer's options. Formats: "
               "[workloads.md](workloads.md).\n")
    for name, func in IMPORTERS.items():
        first = next(iter(inspect.signature(func).parameters))
        out.append(f"### `{name}: ...`\n\n{doc_first(func)}\n\n{signature_table(func, skip=('rng', first))}\n")
    out.append("## `autotuning` section\n")
    out.append("Jobs and servers for the autotuning model; meanings in [autotuning.md](autotuning.md). "
               "A scenario with this section may omit `platform`, `workload` and `schedulers`.\n")
    for model in models_under(AutotuningSection):
        out.append(f"### `{model.__name__}`\n")
        if doc_first(model):
            out.append(doc_first(model) + "\n")
        out.append(model_table(model, None) + "\n")
    return "\n".join(out)
