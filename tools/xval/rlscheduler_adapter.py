"""Replay an SWF file through RLScheduler's batch environment and print every job's start.

RLScheduler (Zhang et al., SC'20) is the public repository DIR-LAB/deep-batch-scheduler; this
adapter was run against its commit cd433e3d62a01705f255bd48cb55b393862800e7.  It uses the
environment's own heuristic replay, ``HPCEnv.schedule_curr_sequence_reset`` with the FCFS or SJF
score and with or without its backfilling (``backfil=True``), over the whole file instead of a random
window of 256 jobs, and records each job's ``scheduled_time`` when the environment scores it.  The
environment module imports tensorflow and gym at load time but the heuristic replay uses neither,
so both are replaced by empty stand-ins here.

Usage: python rlscheduler_adapter.py RLSCHEDULER_DIR FILE.swf fcfs|sjf [backfill]
Prints one line per job the environment kept: job submit start run processors requested.
"""

import contextlib
import io
import sys
import types

import numpy as np


def _stand_ins() -> None:
    tf = types.ModuleType("tensorflow")
    gym = types.ModuleType("gym")
    spaces = types.ModuleType("gym.spaces")
    utils = types.ModuleType("gym.utils")
    seeding = types.ModuleType("gym.utils.seeding")

    class Space:
        def __init__(self, *args, **kwargs):
            pass

    spaces.Box = spaces.Discrete = Space
    seeding.np_random = lambda seed=None: (np.random.RandomState(seed), seed)
    gym.Env, gym.spaces, gym.utils, utils.seeding = object, spaces, utils, seeding
    sys.modules.update({"tensorflow": tf, "gym": gym, "gym.spaces": spaces, "gym.utils": utils,
                        "gym.utils.seeding": seeding})


def main() -> None:
    tool_dir, path, policy = sys.argv[1], sys.argv[2], sys.argv[3]
    backfill = len(sys.argv) > 4 and sys.argv[4] == "backfill"
    _stand_ins()
    sys.path.insert(0, tool_dir)
    with contextlib.redirect_stdout(io.StringIO()):  # the environment prints progress
        from HPCSimPickJobs import HPCEnv

        env = HPCEnv(backfil=backfill, job_score_type=0)
        env.my_init(workload_file=path)
    n = env.loads.size()
    env.cluster.reset()
    env.loads.reset()
    env.job_queue, env.running_jobs = [], []
    env.start, env.num_job_in_batch, env.last_job_in_batch = 0, n, n  # the whole file, not a window
    env.current_timestamp = env.loads[0].submit_time
    env.job_queue.append(env.loads[0])
    env.next_arriving_job_idx = 1
    starts = {}
    score = env.job_score

    def record(job):
        starts[job.job_id] = job.scheduled_time
        return score(job)

    env.job_score = record
    env.schedule_curr_sequence_reset({"fcfs": env.fcfs_score, "sjf": env.sjf_score}[policy])
    for j in env.loads.all_jobs:
        print(j.job_id, j.submit_time, starts[j.job_id], j.run_time, j.request_number_of_processors,
              j.request_time)


if __name__ == "__main__":
    main()
