"""The numpy inference path of rl-world's dream step gives torch's numbers (float32 rounding), the
job-ordered slot table puts the job with the least remaining work first, and `bench world` shows the
world-model step beside a real step."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("gymnasium")

from simsched.learned.rl.config import WorldConfig  # noqa: E402
from simsched.learned.rl.world import imagine  # noqa: E402
from simsched.learned.rl.world_model import WorldAgent, n_actions, slot_tables, z_size  # noqa: E402
from simsched.learned.rl.world_numpy import NumpyDream, time_unbatched  # noqa: E402

TOL = dict(rtol=1e-5, atol=2e-6)


def _agent(ensemble: int = 2, mixtures: int = 3, seed: int = 0) -> WorldAgent:
    torch.manual_seed(seed)
    w = WorldConfig(lstm=24, z_dim=6, slot_dim=3, mixtures=mixtures, task_slots=3, proc_slots=2, ensemble=ensemble,
                    pessimism=1.0 if ensemble > 1 else 0.0)
    agent = WorldAgent.create(w, 8, 1)
    with torch.no_grad():  # larger weights than the default init, so that rounding differences would show
        for m in agent.members:
            for p in m.parameters():
                p.mul_(3.0)
    return agent


def _inputs(agent: WorldAgent, rng: np.random.Generator):
    w = agent.w
    z = np.tanh(rng.standard_normal(z_size(w))).astype(np.float32)
    states = [(np.tanh(rng.standard_normal(w.lstm)).astype(np.float32),
               rng.standard_normal(w.lstm).astype(np.float32)) for _ in agent.members]
    return z, states


def _t(x):
    return torch.from_numpy(np.asarray(x))[None]


@pytest.mark.parametrize("ensemble", [1, 3])
def test_cell_mixture_and_policy_match_torch_for_every_action(ensemble):
    agent = _agent(ensemble)
    nd = NumpyDream(agent)
    rng = np.random.default_rng(1)
    A = n_actions(agent.w)
    for trial in range(3):
        z, states = _inputs(agent, rng)
        mask = rng.random(A) < 0.5
        mask[trial % A] = True
        with torch.no_grad():
            lp_t, _ = agent.ctrl(_t(z), _t(states[0][0]), _t(mask))
        np.testing.assert_allclose(nd.policy(z, states[0][0], mask)[mask], lp_t[0].numpy()[mask], **TOL)
        for a in range(A):  # the first, a middle and the last slot's columns and embedding
            for m, mn, (h, c) in zip(agent.members, nd.members, states):
                with torch.no_grad():
                    (h_t, c_t), (lpi, mu, ls), (r, _, vl) = m.step(_t(z), torch.tensor([a]), (_t(h), _t(c)))
                h_n, c_n = nd.cell(mn, z, a, (h, c))
                np.testing.assert_allclose(h_n, h_t[0].numpy(), **TOL)
                np.testing.assert_allclose(c_n, c_t[0].numpy(), **TOL)
                lpi_n, mu_n, ls_n = nd.mixture(mn, h_n)
                np.testing.assert_allclose(lpi_n, lpi[0].numpy(), **TOL)
                np.testing.assert_allclose(mu_n, mu[0].numpy(), **TOL)
                np.testing.assert_allclose(ls_n, ls[0].numpy(), **TOL)


@pytest.mark.parametrize("ensemble", [1, 2])
def test_step_at_tiny_temperature_is_torchs_imagined_step(ensemble, monkeypatch):
    """At tau -> 0 the mixture's most likely component's mean is drawn in both paths, so the whole
    step (next latent, reward, validity, states, disagreement) is deterministic and comparable;
    with an ensemble both paths must pick the same member, so the test pins it to the first."""
    agent = _agent(ensemble, seed=3)
    nd = NumpyDream(agent)
    rng = np.random.default_rng(2)
    z, states = _inputs(agent, rng)
    rr = np.array([-0.5, 0.5, 0.2], np.float32)
    tau = 1e-12  # torch still draws noise: sqrt(tau) * sigma * eps stays below 1e-5
    a = n_actions(agent.w) - 1
    z_n, r_n, mask_n, st_n, dis_n = nd.step(z, a, states, tau, _FirstMember(), rr, pessimism=1.0)
    with torch.no_grad():
        gen = torch.Generator().manual_seed(0)
        tstates = [(_t(h), _t(c)) for h, c in states]
        # pin torch's member choice (torch.randint(0, E, (B,), generator=...)) to the first member too
        monkeypatch.setattr(torch, "randint", lambda low, high, size, **kw: torch.zeros(size, dtype=torch.long))
        z_t, r_t, mask_t, st_t, dis_t = imagine(agent, _t(z), torch.tensor([a]), tstates, tau, gen,
                                                 torch.from_numpy(rr))
        assert z_t.shape == (1, z.size)
    np.testing.assert_allclose(z_n, z_t[0].numpy(), rtol=1e-4, atol=1e-5)
    assert r_n == pytest.approx(float(r_t[0]), rel=1e-5, abs=1e-6)
    assert np.array_equal(mask_n, mask_t[0].numpy())
    for (h_n, c_n), (h_t, c_t) in zip(st_n, st_t):
        np.testing.assert_allclose(h_n, h_t[0].numpy(), **TOL)
        np.testing.assert_allclose(c_n, c_t[0].numpy(), **TOL)
    assert dis_n == pytest.approx(float(dis_t[0]), rel=1e-4, abs=1e-6)
    assert (dis_n == 0.0) == (ensemble == 1)


class _FirstMember:
    """A numpy Generator stand-in that always picks the first member and draws zero noise."""

    def __init__(self) -> None:
        self._g = np.random.default_rng(0)

    def integers(self, n):
        return 0

    def choice(self, n, p):
        return int(np.argmax(p))

    def standard_normal(self, size):
        return np.zeros(size)


def test_no_valid_slot_predicted_falls_back_to_the_most_likely_one():
    agent = _agent(1)
    with torch.no_grad():
        agent.mdn.valid.bias.fill_(-1e3)
        agent.mdn.valid.bias[2] = -500.0
    nd = NumpyDream(agent)
    z, states = _inputs(agent, np.random.default_rng(4))
    _, r, mask, _, dis = nd.step(z, 0, states, 1.0, np.random.default_rng(0), np.array([-1.0, 1.0]), 0.0)
    assert mask.sum() == 1 and mask[2]
    assert -1.0 <= r <= 1.0 and dis == 0.0


def test_rewards_are_clipped_to_the_real_range_and_latents_to_tanhs():
    agent = _agent(2)
    with torch.no_grad():
        for m in agent.members:
            m.reward.bias.fill_(100.0)
            m.mdn.bias.fill_(50.0)  # means far outside [-1, 1]
    nd = NumpyDream(agent)
    z, states = _inputs(agent, np.random.default_rng(5))
    z2, r, _, _, _ = nd.step(z, 1, states, 1.0, np.random.default_rng(0), np.array([-2.0, 0.25, 0.1]), 1.0)
    assert r == pytest.approx(0.25)
    assert np.all(np.abs(z2) <= 1.0) and np.any(z2 == 1.0)


def test_unbatched_timing_is_a_positive_number_of_seconds():
    s = time_unbatched(_agent(2), steps=20)
    assert 0.0 < s < 1.0


def test_job_order_puts_the_job_with_least_remaining_work_first():
    from simsched.learned.rl.features import Observation

    n, m = 4, 2
    completion = np.array([[3.0, 1.0], [2.0, 5.0], [4.0, np.inf], [np.inf, np.inf]])
    jobs = np.zeros((2, 4), np.float32)
    jobs[:, 1] = [5.0, 1.0]  # job 1 has less remaining work
    obs = Observation(np.zeros((n, 12), np.float32), np.zeros((2, 0), np.int64), np.zeros((m, 4), np.float32),
                      np.zeros((n, m, 4), np.float32), jobs, np.array([0, 0, 1, 1]), np.zeros(4, np.float32),
                      np.array([True, True, True, False]), np.zeros((n, m), bool), completion)
    rank = np.array([9.0, 8.0, 1.0, 7.0])
    pairs, valid = slot_tables(obs, rank, 3, 2, "job")
    assert pairs[0].tolist() == [2, 0] and valid[0] and not valid[1]  # task 2 (job 1), its only processor
    assert pairs[2].tolist() == [0, 1] and pairs[4].tolist() == [1, 0]  # then job 0 by rank
    by_rank, _ = slot_tables(obs, rank, 3, 2)
    assert by_rank[0].tolist() == [0, 1] and by_rank[4].tolist() == [2, 0]
    with pytest.raises(ValueError, match="slot order"):
        slot_tables(obs, rank, 3, 2, "fifo")


def test_bench_world_rows_put_each_world_model_step_beside_a_real_step():
    from simsched.bench.world import world_checkpoints, world_rows

    paths = world_checkpoints()
    assert paths and paths[0].name.startswith("rl_world")
    rows = world_rows(paths[0], real_steps=20, dream_steps=20)
    real = {r["what"]: r["measured"] for r in rows if r["baseline"] is None}
    assert set(real) == {"real step (engine + features)", "real step with V's encoding"}
    assert 0 < real["real step (engine + features)"] <= real["real step with V's encoding"]
    steps = [r for r in rows if r["baseline"] is not None]
    assert [r["what"].split(",")[1].strip() for r in steps] == ["numpy", "torch", "torch"]
    for r in steps:
        assert r["baseline"] == real["real step with V's encoding"]
        assert r["ratio"] == pytest.approx(r["baseline"] / r["measured"]) and r["ok"] == (r["ratio"] > 1)
