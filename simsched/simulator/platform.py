"""The platform: processors grouped into hosts, and the network between them.

A :class:`Processor` is one schedulable execution slot (a CPU core group or a GPU) with a type, a
speed, a number of cores, memory and the host it sits in.  A :class:`Platform` holds the processors
and two (m, m) matrices, ``latency`` and ``bandwidth``: moving ``d`` units of data from processor p
to q takes ``latency[p, q] + d / bandwidth[p, q]``, and nothing when ``p == q``.  Processors on the
same host use the host's internal link (by default free: zero latency, infinite bandwidth).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from simsched.errors import SimschedError


@dataclass(frozen=True)
class Processor:
    """One execution slot: ``type`` (e.g. ``cpu``, ``gpu``) selects kind affinities; time for work w
    is ``w / (speed * affinity)``; ``host`` groups processors that share memory and cores."""

    name: str
    type: str = "cpu"
    speed: float = 1.0
    cores: int = 1
    memory: float = float("inf")
    host: str = ""

    def __post_init__(self) -> None:
        if not self.host:
            object.__setattr__(self, "host", self.name)
        if not (self.speed > 0 and np.isfinite(self.speed)):
            raise SimschedError(f"processor {self.name!r}: speed must be a positive number, got {self.speed}")
        if self.cores < 1:
            raise SimschedError(f"processor {self.name!r}: cores must be >= 1, got {self.cores}")
        if not self.memory > 0:
            raise SimschedError(f"processor {self.name!r}: memory must be > 0, got {self.memory}")


@dataclass(frozen=True)
class Link:
    """A point-to-point link overriding the default network between two processors or hosts."""

    a: str
    b: str
    bandwidth: float
    latency: float = 0.0


class Platform:
    """Processors and the network between them.

    Build with :meth:`uniform` (one bandwidth and latency for every pair of hosts, optional
    per-pair :class:`Link` overrides).  ``latency`` and ``bandwidth`` are read-only (m, m) arrays
    with zero latency and infinite bandwidth on the diagonal.
    """

    __slots__ = ("processors", "latency", "bandwidth", "_index", "_speed", "_cores", "_memory")

    def __init__(self, processors: Sequence[Processor], latency: np.ndarray, bandwidth: np.ndarray) -> None:
        if not processors:
            raise SimschedError("the platform has no processors")
        self.processors = tuple(processors)
        m = len(self.processors)
        index: dict[str, int] = {}
        for i, p in enumerate(self.processors):
            if p.name in index:
                raise SimschedError(f"duplicate processor name {p.name!r}")
            index[p.name] = i
        self._index = index
        # per-processor columns, gathered once (processors are frozen): hot paths read them per call
        self._speed = np.array([p.speed for p in self.processors], dtype=np.float64)
        self._cores = np.array([p.cores for p in self.processors], dtype=np.int64)
        self._memory = np.array([p.memory for p in self.processors], dtype=np.float64)
        lat = np.array(latency, dtype=np.float64)
        bw = np.array(bandwidth, dtype=np.float64)
        if lat.shape != (m, m) or bw.shape != (m, m):
            raise SimschedError(f"latency and bandwidth must be {m}x{m} matrices")
        if (lat < 0).any() or np.isnan(lat).any():
            raise SimschedError("latency must be >= 0")
        if not (bw > 0).all():
            raise SimschedError("bandwidth must be > 0")
        np.fill_diagonal(lat, 0.0)
        np.fill_diagonal(bw, np.inf)
        lat.setflags(write=False)
        bw.setflags(write=False)
        self.latency, self.bandwidth = lat, bw

    @classmethod
    def uniform(
        cls,
        processors: Sequence[Processor],
        bandwidth: float = 1.0,
        latency: float = 0.0,
        *,
        host_bandwidth: float = float("inf"),
        host_latency: float = 0.0,
        links: Sequence[Link] = (),
    ) -> Platform:
        """Every pair of processors on different hosts is joined by ``bandwidth``/``latency``; pairs
        on the same host by ``host_bandwidth``/``host_latency``; ``links`` override single pairs
        (named by processor or by host, both directions).  O(m^2)."""
        m = len(processors)
        hosts = np.array([p.host or p.name for p in processors], dtype=object)
        same_host = hosts[:, None] == hosts[None, :]
        lat = np.where(same_host, host_latency, latency).astype(np.float64)
        bw = np.where(same_host, host_bandwidth, bandwidth).astype(np.float64)
        names = [p.name for p in processors]
        for link in links:
            ends = []
            for end in (link.a, link.b):
                sel = np.array([n == end for n in names]) | (hosts == end)
                if not sel.any():
                    raise SimschedError(f"link {link.a!r} - {link.b!r}: no processor or host named {end!r}")
                ends.append(sel)
            mask = np.outer(ends[0], ends[1])
            mask |= mask.T
            lat[mask] = link.latency
            bw[mask] = link.bandwidth
        return cls(processors, lat.reshape(m, m), bw.reshape(m, m))

    # ----------------------------------------------------------------- queries
    @property
    def n_processors(self) -> int:
        return len(self.processors)

    def __len__(self) -> int:
        return len(self.processors)

    def __repr__(self) -> str:
        types = {}
        for p in self.processors:
            types[p.type] = types.get(p.type, 0) + 1
        return "Platform(" + ", ".join(f"{k} {t}" for t, k in types.items()) + ")"

    def index(self, name: str) -> int:
        return self._index[name]

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.processors]

    @property
    def speed(self) -> np.ndarray:
        """(m,) speeds, a fresh array per call (a copy: O(m) in C, no Python loop)."""
        return self._speed.copy()

    @property
    def cores(self) -> np.ndarray:
        """(m,) core counts, a fresh array per call."""
        return self._cores.copy()

    @property
    def memory(self) -> np.ndarray:
        """(m,) memory sizes, a fresh array per call (``Problem.cost_at`` reads it per task)."""
        return self._memory.copy()

    @property
    def type_names(self) -> tuple[str, ...]:
        """Distinct processor types in order of first appearance."""
        return tuple(dict.fromkeys(p.type for p in self.processors))

    @property
    def type_index(self) -> np.ndarray:
        """(m,) index of each processor's type into :attr:`type_names`."""
        lookup = {t: i for i, t in enumerate(self.type_names)}
        return np.array([lookup[p.type] for p in self.processors], dtype=np.int64)

    @property
    def host_index(self) -> np.ndarray:
        """(m,) index of each processor's host (hosts numbered in order of first appearance)."""
        lookup: dict[str, int] = {}
        return np.array([lookup.setdefault(p.host, len(lookup)) for p in self.processors], dtype=np.int64)
