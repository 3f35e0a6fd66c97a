"""Learned schedulers' torch runtime: one inference thread by default (configurable), device auto."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from simsched.learned.deepsched.scheduler import DeepSched  # noqa: E402
from simsched.learned.runtime import ENV_THREADS, inference_threads, resolve_device, torch_threads  # noqa: E402
from simsched.simulator.instances import bench_problem  # noqa: E402


def test_threads_default_to_one_and_follow_parameter_then_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_THREADS, raising=False)
    assert inference_threads() == 1
    monkeypatch.setenv(ENV_THREADS, "3")
    assert inference_threads() == 3
    assert inference_threads(2) == 2  # the parameter wins over the environment
    for bad in ("0", "-1", "two", "1.5"):
        monkeypatch.setenv(ENV_THREADS, bad)
        with pytest.raises(ValueError, match=ENV_THREADS):
            inference_threads()
    for bad_param in (0, -2, True, 1.0):
        with pytest.raises(ValueError, match="threads"):
            inference_threads(bad_param)  # type: ignore[arg-type]


def test_device_auto_selects_cuda_only_when_present() -> None:
    assert resolve_device("auto", cuda_available=False) == "cpu"
    assert resolve_device("auto", cuda_available=True) == "cuda"
    assert resolve_device("cpu", cuda_available=True) == "cpu"
    assert resolve_device("cuda", cuda_available=False) == "cuda"  # explicit: as asked, torch fails if absent
    assert resolve_device("auto") == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ValueError, match="device"):
        resolve_device("tpu")


def test_torch_threads_restores_the_previous_count() -> None:
    before = torch.get_num_threads()
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with pytest.raises(RuntimeError), torch_threads(1):
        raise RuntimeError("restored even on error")
    assert torch.get_num_threads() == before


def _forward_threads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record torch's thread count at every DeepSched forward pass."""
    from simsched.learned.deepsched import infer

    seen: list[int] = []
    real = infer.forward

    def spy(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(infer, "forward", spy)
    return seen


def test_deepsched_infers_on_one_thread_by_default_on_a_many_threaded_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_THREADS, raising=False)
    seen = _forward_threads(monkeypatch)
    problem = bench_problem(30, 4, seed=0)
    before = torch.get_num_threads()
    with torch_threads(2):  # what torch picks on a 2-core machine; more on bigger ones
        default = DeepSched(device="auto").plan(problem)
        assert torch.get_num_threads() == 2  # restored after the plan
        DeepSched(threads=2).plan(problem)
        monkeypatch.setenv(ENV_THREADS, "2")
        env = DeepSched().plan(problem)
    assert torch.get_num_threads() == before
    assert seen == [1, 2, 2]
    assert np.array_equal(default.processor, env.processor)  # threads change speed, never the plan
    assert np.allclose(default.finish, env.finish)


def test_deepsched_rejects_bad_threads_and_device_at_construction(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="threads"):
        DeepSched(threads=0)
    with pytest.raises(ValueError, match="device"):
        DeepSched(device="gpu")
    monkeypatch.setenv(ENV_THREADS, "many")
    with pytest.raises(ValueError, match=ENV_THREADS):
        DeepSched()


def test_rl_policy_runs_on_one_thread_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    from simsched.learned.rl.policy import RLPolicy
    from simsched.simulator.engine import run_online

    monkeypatch.delenv(ENV_THREADS, raising=False)
    problem = bench_problem(12, 3, seed=1)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)  # the default numpy forward leaves torch alone (its BLAS: test_rl_fastnet)
        run_online(problem, RLPolicy(), rng=np.random.default_rng(0))
        assert torch.get_num_threads() == 2
        policy = RLPolicy()
        policy.torch_forward = True  # the torch forward runs on one thread by default
        run_online(problem, policy, rng=np.random.default_rng(0))
        assert torch.get_num_threads() == 1
        torch.set_num_threads(2)
        policy = RLPolicy(threads=2)
        policy.torch_forward = True
        run_online(problem, policy, rng=np.random.default_rng(0))
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
