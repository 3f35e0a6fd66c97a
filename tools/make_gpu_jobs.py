"""Write gpu_jobs_300.csv: a synthetic GPU-cluster trace (seeded), the shape of the public GPU logs
(Microsoft Philly, Alibaba PAI) reduced to job, submit, gpus, duration, user, requested.

    python tools/make_gpu_jobs.py scenarios/data/traces/gpu_jobs_300.csv
"""

import sys

import numpy as np

rng = np.random.default_rng(31)
n = 300
gpus = rng.choice([1, 1, 1, 2, 4, 8, 8, 16], size=n)
duration = np.ceil(rng.lognormal(7.5, 1.4, n))
requested = np.where(rng.random(n) < 0.7, np.ceil(duration * rng.uniform(1.0, 4.0, n)), -1)
load, machine = 1.5, 64  # arrivals at 1.5x what 64 GPUs serve on average (a busy spell)
submit = np.floor(np.cumsum(rng.exponential(float(np.mean(gpus * duration)) / (load * machine), n)))
users = rng.choice(["alice", "bob", "carol", "dave", "erin"], size=n, p=[0.4, 0.25, 0.15, 0.1, 0.1])
with open(sys.argv[1], "w", encoding="utf-8") as fh:
    fh.write("job,submit,gpus,duration,user,requested\n")
    for i in range(n):
        req = "" if requested[i] < 0 else str(int(requested[i]))
        fh.write(f"job{i + 1},{int(submit[i] - submit[0])},{gpus[i]},{int(duration[i])},{users[i]},{req}\n")
