"""Write slurm_sacct_600.txt: a synthetic Slurm accounting log (seeded; no site's data), as
``sacct -a -P --format=JobID,JobName,Partition,User,Submit,Start,End,Elapsed,Timelimit,ReqCPUS,AllocCPUS,
    AllocTRES,State``
prints it for two days of a 16-node cluster (32 cores and 4 GPUs a node): plain jobs, array tasks, a pending
array range, heterogeneous jobs (``+0``/``+1``), the ``.batch``/``.extern``/``.0`` steps of every job that
started, failed, timed-out, out-of-memory and cancelled jobs (some before they started), and the jobs still
running or pending when the log was taken.  Start times come from a first-come-first-served replay on the
512 cores, so waits are those of a busy machine.

    python tools/make_sacct_log.py scenarios/data/traces/slurm_sacct_600.txt
"""

import sys
from datetime import datetime, timedelta

import numpy as np

HEADER = ("JobID|JobName|Partition|User|Submit|Start|End|Elapsed|Timelimit|ReqCPUS|AllocCPUS|AllocTRES|"
          "State")
T0 = datetime(2026, 3, 2, 8, 0, 0)
CORES, NODE = 512, 32


def stamp(t: float) -> str:
    return (T0 + timedelta(seconds=int(t))).strftime("%Y-%m-%dT%H:%M:%S")


def hms(s: float) -> str:
    s = int(s)
    d, s = divmod(s, 86400)
    text = f"{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"
    return f"{d}-{text}" if d else text


def main(out: str) -> None:
    rng = np.random.default_rng(43)
    n = 600
    users = ["alice", "bob", "chen", "dana", "emeka", "farah"]
    submit = np.floor(np.cumsum(rng.exponential(130.0, n)))
    for i in range(n):  # array tasks (every 40th job and the three after it) are submitted together
        if i % 40 in (8, 9, 10):
            submit[i] = submit[i - 1]
    cores = rng.choice([1, 4, 8, 16, 32, 64, 128], size=n, p=[0.25, 0.2, 0.2, 0.15, 0.1, 0.07, 0.03])
    limit_min = rng.choice([30, 60, 240, 720, 1440, 2880], size=n)
    run = np.minimum(np.ceil(rng.lognormal(7.6, 1.3, n)), limit_min * 60.0)
    state = rng.choice(["COMPLETED", "FAILED", "TIMEOUT", "OUT_OF_MEMORY", "CANCELLED", "NODE_FAIL"], size=n,
                       p=[0.82, 0.06, 0.04, 0.02, 0.055, 0.005])
    run[state == "TIMEOUT"] = limit_min[state == "TIMEOUT"] * 60.0
    gpu = rng.random(n) < 0.2
    cores[gpu] = np.minimum(cores[gpu], 32)
    # first-come-first-served on 512 cores: each job starts when enough cores are free, in submit order
    free_at = np.zeros(CORES)
    start = np.empty(n)
    for i in range(n):
        free_at.sort()
        start[i] = max(submit[i], free_at[cores[i] - 1])
        free_at[: cores[i]] = start[i] + run[i]
    taken = float(np.quantile(start + run, 0.95))  # sacct was run then: 5% of the jobs pending or running
    lines = [HEADER]
    array_id = None
    for i in range(n):
        job = 41000 + i
        who, part = users[rng.integers(len(users))], "gpu" if gpu[i] else ("debug" if limit_min[i] <= 30 else "cpu")
        gpus = int(max(1, cores[i] // 8)) if gpu[i] else 0
        tres = f"billing={cores[i]},cpu={cores[i]},{f'gres/gpu={gpus},' if gpus else ''}mem={cores[i] * 4}G," \
               f"node={max(1, -(-cores[i] // NODE))}"
        st = state[i]
        ident, name = str(job), f"job{i}"
        if i % 40 == 7:  # an array: this job is task 0 of a small array of identical jobs
            array_id = job
            ident, name = f"{job}_0", f"sweep{i}"
        elif array_id is not None and i % 40 in (8, 9, 10):
            ident, name = f"{array_id}_{i % 40 - 7}", f"sweep{array_id - 41000}"
        if start[i] > taken:  # not started when the log was taken
            lines.append(f"{ident}|{name}|{part}|{who}|{stamp(submit[i])}|Unknown|Unknown|00:00:00|"
                         f"{hms(limit_min[i] * 60)}|{cores[i]}|0||PENDING")
            continue
        if start[i] + run[i] > taken:
            lines.append(f"{ident}|{name}|{part}|{who}|{stamp(submit[i])}|{stamp(start[i])}|Unknown|"
                         f"{hms(taken - start[i])}|{hms(limit_min[i] * 60)}|{cores[i]}|{cores[i]}|{tres}|RUNNING")
            continue
        if st == "CANCELLED" and rng.random() < 0.4:  # cancelled while it waited
            lines.append(f"{ident}|{name}|{part}|{who}|{stamp(submit[i])}|None|{stamp(submit[i] + 600)}|00:00:00|"
                         f"{hms(limit_min[i] * 60)}|{cores[i]}|0||CANCELLED by {1000 + users.index(who)}")
            continue
        if st == "CANCELLED":
            st = f"CANCELLED by {1000 + users.index(who)}"
        end = start[i] + run[i]
        het = i % 97 == 50 and cores[i] >= 8
        common = f"{stamp(submit[i])}|{stamp(start[i])}|{stamp(end)}|{hms(run[i])}"
        if het:  # two components starting together: half the cores each
            half = cores[i] // 2
            for k in (0, 1):
                lines.append(f"{job}+{k}|{name}|{part}|{who}|{common}|{hms(limit_min[i] * 60)}|{half}|{half}|"
                             f"billing={half},cpu={half},mem={half * 4}G,node=1|{st}")
                lines.append(f"{job}+{k}.batch|batch|||{common}||{half}|{half}|cpu={half},mem={half * 4}G,node=1|{st}")
            continue
        lines.append(f"{ident}|{name}|{part}|{who}|{common}|{hms(limit_min[i] * 60)}|{cores[i]}|{cores[i]}|{tres}|{st}")
        step_state = "CANCELLED" if st.startswith("CANCELLED") else ("FAILED" if st == "TIMEOUT" else st)
        lines.append(f"{ident}.batch|batch|||{common}||{cores[i]}|{cores[i]}|cpu={cores[i]},mem={cores[i] * 4}G,"
                     f"node=1|{step_state}")
        lines.append(f"{ident}.extern|extern|||{common}||{cores[i]}|{cores[i]}|{tres}|COMPLETED")
        if cores[i] > 1:
            lines.append(f"{ident}.0|srun|||{common}||{cores[i]}|{cores[i]}|cpu={cores[i]},node=1|{step_state}")
    lines.append(f"{41000 + n}_[0-9%4]|sweep-next|cpu|{users[0]}|{stamp(taken + 60)}|Unknown|Unknown|00:00:00|"
                 f"01:00:00|4|0||PENDING")
    with open(out, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
