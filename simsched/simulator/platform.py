"""The platform: processors grouped into hosts, and the network between them.

A :class:`Processor` is one schedulable execution slot (a CPU core group or a GPU) with a type, a
speed, a number of cores, memory and the host it sits in.  The engines run one task at a time on a
processor.  A host with ``c`` cores that runs up to ``c`` one-core tasks at once is ``c`` processors,
its **slots** (:func:`host_slots`: ``node/c0 .. node/c{c-1}``, each ``cores=1`` and ``core`` its index,
all on host ``node``); a task needing ``k`` of them is a gang of ``k`` slots of one host
(:mod:`simsched.simulator.gang`).  :attr:`Platform.host_names`, :attr:`Platform.host_index`,
:attr:`Platform.host_cores` and :attr:`Platform.host_memory` describe the hosts.

**Memory.**  A processor's ``memory`` bounds what one task placed on it may need (a task needing more
may not run there).  A host may also have ``host_memory``: memory shared by every task running on any
of its processors at once (a task needing ``m`` starts on it only while the host has ``m`` free; the
online engine, :mod:`simsched.simulator.engine.hostmem`, enforces it).  Every processor of a host
carries the host's ``host_memory`` (``inf``, the default, for a host that declares none: nothing is
shared, today's model).  :attr:`Platform.memory` is each processor's own memory capped by its host's,
so a task that needs more than a host's whole memory is ineligible on every slot of it.

A :class:`Platform` holds the processors and the network: moving ``d`` units of data from processor p to q takes
``latency[p, q] + d / bandwidth[p, q]``, and nothing when ``p == q``.  Processors on the same host use
the host's internal link (by default free: zero latency, infinite bandwidth).

A platform built by :meth:`Platform.uniform` stores its network as a :class:`UniformNetwork` (hosts as
integer codes, four scalars and the link overrides' end selections): O(m + links * m) memory.  The
(m, m) ``latency`` and ``bandwidth`` matrices are expanded from it on first read, in numpy, and kept;
a consumer that never reads them (a batch replay of a cluster log on 8,192 identical cores) never
pays their O(m^2) bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from simsched.errors import SimschedError


@dataclass(frozen=True)
class Processor:
    """One execution slot: ``type`` (e.g. ``cpu``, ``gpu``) selects kind affinities; time for work w
    is ``w / (speed * affinity)``; ``host`` groups processors that share a host (free transfers within
    it by default).  The engines run one task at a time on it, whatever its ``cores``: ``cores`` says
    how many cores that one slot stands for (1 for a core slot of :func:`host_slots`; a learned
    scheduler may read it as a feature).  ``core``: this slot's index among its host's cores when it
    is one core of a multi-core host (:func:`host_slots`), else None.  ``memory``: the most one task
    placed here may need; ``host_memory``: the memory of its host, shared by every task running on the
    host at once (``inf``: none declared; every processor of one host must give the same value)."""

    name: str
    type: str = "cpu"
    speed: float = 1.0
    cores: int = 1
    memory: float = float("inf")
    host: str = ""
    core: int | None = None
    host_memory: float = float("inf")

    def __post_init__(self) -> None:
        if not self.host:
            object.__setattr__(self, "host", self.name)
        if not (self.speed > 0 and np.isfinite(self.speed)):
            raise SimschedError(f"processor {self.name!r}: speed must be a positive number, got {self.speed}")
        if self.cores < 1:
            raise SimschedError(f"processor {self.name!r}: cores must be >= 1, got {self.cores}")
        if not self.memory > 0:
            raise SimschedError(f"processor {self.name!r}: memory must be > 0, got {self.memory}")
        if not self.host_memory > 0:
            raise SimschedError(f"processor {self.name!r}: host_memory must be > 0, got {self.host_memory}")


def slot_name(host: str, core: int) -> str:
    """The name of core ``core`` of host ``host``: ``host/c{core}`` (``worker0/c3``).  O(1)."""
    return f"{host}/c{core}"


def host_slots(name: str, cores: int, *, type: str = "cpu", speed: float = 1.0, memory: float = float("inf"),
               host: str = "", host_memory: float = float("inf")) -> list[Processor]:
    """The processors of a host of ``cores`` cores that runs up to ``cores`` one-core tasks at once:
    ``[Processor(name)]`` (its own cores=1 processor) when ``cores == 1``, else ``cores`` one-core
    slots ``name/c0 .. name/c{cores-1}`` of ``type``, ``speed`` and ``memory`` (each slot may run a
    task needing up to ``memory``: that bound is not shared out among them), all on host ``host``
    (default: ``name``) with ``host_memory`` (the host's memory, shared by the tasks running on its
    slots at once; ``inf``: none).  O(cores)."""
    if cores < 1:
        raise SimschedError(f"processor {name!r}: cores must be >= 1, got {cores}")
    if cores == 1:
        return [Processor(name=name, type=type, speed=speed, cores=1, memory=memory, host=host,
                          host_memory=host_memory)]
    on = host or name
    return [Processor(name=slot_name(name, i), type=type, speed=speed, cores=1, memory=memory, host=on, core=i,
                      host_memory=host_memory) for i in range(cores)]


@dataclass(frozen=True)
class Link:
    """A point-to-point link overriding the default network between two processors or hosts."""

    a: str
    b: str
    bandwidth: float
    latency: float = 0.0


@dataclass(frozen=True, eq=False)
class UniformNetwork:
    """A network that is uniform but for named overrides, stored without any (m, m) array.

    ``host`` holds each processor's host code (hosts numbered in order of first appearance); pairs on
    different hosts are joined by ``latency``/``bandwidth``, pairs on one host by
    ``host_latency``/``host_bandwidth``; each of ``links`` is ``(a, b, latency, bandwidth)`` with ``a``
    and ``b`` boolean (m,) selections of its two ends, applied in order, both directions.
    O(m + len(links) * m) memory.
    """

    host: np.ndarray
    latency: float
    bandwidth: float
    host_latency: float
    host_bandwidth: float
    links: tuple[tuple[np.ndarray, np.ndarray, float, float], ...] = ()

    def values(self) -> tuple[list[float], list[float]]:
        """The latencies and bandwidths that occur in :meth:`dense` before its diagonal is set (the
        host values always: every processor shares its own host; the cross-host ones when there are
        two hosts or more; every link's).  O(m + links)."""
        lat, bw = [self.host_latency], [self.host_bandwidth]
        if self.host.size and int(self.host.max()) > 0:
            lat.append(self.latency)
            bw.append(self.bandwidth)
        for _, _, link_lat, link_bw in self.links:
            lat.append(link_lat)
            bw.append(link_bw)
        return lat, bw

    def dense(self) -> tuple[np.ndarray, np.ndarray]:
        """The (m, m) float64 ``latency`` and ``bandwidth`` matrices, the diagonal not yet cleared.
        O(m^2) time and memory, in numpy (integer host codes compared, one fancy-indexed assignment
        per link)."""
        same = self.host[:, None] == self.host[None, :]
        lat = np.where(same, np.float64(self.host_latency), np.float64(self.latency))
        bw = np.where(same, np.float64(self.host_bandwidth), np.float64(self.bandwidth))
        del same
        for a, b, link_lat, link_bw in self.links:
            ia, ib = np.flatnonzero(a), np.flatnonzero(b)
            for rows, cols in ((ia, ib), (ib, ia)):
                lat[np.ix_(rows, cols)] = link_lat
                bw[np.ix_(rows, cols)] = link_bw
        return lat, bw


def _check_network(latencies: Sequence[float] | np.ndarray, bandwidths: Sequence[float] | np.ndarray) -> None:
    lat, bw = np.asarray(latencies, dtype=np.float64), np.asarray(bandwidths, dtype=np.float64)
    if (lat < 0).any() or np.isnan(lat).any():
        raise SimschedError("latency must be >= 0")
    if not (bw > 0).all():
        raise SimschedError("bandwidth must be > 0")


class Platform:
    """Processors and the network between them.

    Build with :meth:`uniform` (one bandwidth and latency for every pair of hosts, optional
    per-pair :class:`Link` overrides), or from explicit (m, m) matrices.  ``latency`` and
    ``bandwidth`` are read-only (m, m) arrays with zero latency and infinite bandwidth on the
    diagonal; a uniform platform expands them on first read (O(m^2), once) and until then holds
    O(m) numbers, so per-processor queries never cost O(m^2).
    """

    __slots__ = ("processors", "_index", "_speed", "_cores", "_memory", "_host", "_host_names", "_host_memory",
                 "_network", "_latency", "_bandwidth")

    def __init__(self, processors: Sequence[Processor], latency: np.ndarray, bandwidth: np.ndarray) -> None:
        self._gather(processors)
        m = len(self.processors)
        lat = np.array(latency, dtype=np.float64)
        bw = np.array(bandwidth, dtype=np.float64)
        if lat.shape != (m, m) or bw.shape != (m, m):
            raise SimschedError(f"latency and bandwidth must be {m}x{m} matrices")
        _check_network(lat, bw)
        self._network: UniformNetwork | None = None
        self._latency, self._bandwidth = self._seal(lat, bw)

    def _gather(self, processors: Sequence[Processor]) -> None:
        """Per-processor columns and host codes, gathered once (processors are frozen).  O(m)."""
        if not processors:
            raise SimschedError("the platform has no processors")
        self.processors = tuple(processors)
        index: dict[str, int] = {}
        hosts: dict[str, int] = {}
        shared: list[float] = []
        codes = np.empty(len(self.processors), dtype=np.int64)
        for i, p in enumerate(self.processors):
            if p.name in index:
                raise SimschedError(f"duplicate processor name {p.name!r}")
            index[p.name] = i
            h = codes[i] = hosts.setdefault(p.host, len(hosts))
            if h == len(shared):
                shared.append(p.host_memory)
            elif shared[h] != p.host_memory:
                raise SimschedError(f"host {p.host!r}: its processors give different host_memory ({shared[h]:g} and "
                                    f"{p.host_memory:g} on {p.name!r}); give the host one value")
        self._index = index
        codes.setflags(write=False)
        self._host = codes
        self._host_names = tuple(hosts)
        self._host_memory = np.array(shared, dtype=np.float64)
        self._host_memory.setflags(write=False)
        self._speed = np.array([p.speed for p in self.processors], dtype=np.float64)
        self._cores = np.array([p.cores for p in self.processors], dtype=np.int64)
        # a task needing more than its host's whole memory may never run there: each processor's own
        # bound capped by its host's (the same array as today's when no host declares memory)
        self._memory = np.minimum(np.array([p.memory for p in self.processors], dtype=np.float64),
                                  self._host_memory[codes])

    @staticmethod
    def _seal(lat: np.ndarray, bw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        np.fill_diagonal(lat, 0.0)
        np.fill_diagonal(bw, np.inf)
        lat.setflags(write=False)
        bw.setflags(write=False)
        return lat, bw

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
        (named by processor or by host, both directions, later links winning).  Stored as a
        :class:`UniformNetwork`: O(m + len(links) * m) time and memory; the dense matrices are
        built on first read of :attr:`latency` or :attr:`bandwidth` and equal, bit for bit, those
        of the explicit constructor given the same pairs."""
        self = cls.__new__(cls)
        self._gather(processors)
        m = len(self.processors)
        host_of = {p.host: int(c) for p, c in zip(self.processors, self._host)}
        ends = []
        for link in links:
            sel = []
            for end in (link.a, link.b):
                s = np.zeros(m, dtype=bool)
                if end in self._index:
                    s[self._index[end]] = True
                if end in host_of:
                    s |= self._host == host_of[end]
                if not s.any():
                    raise SimschedError(f"link {link.a!r} - {link.b!r}: no processor or host named {end!r}")
                sel.append(s)
            ends.append((sel[0], sel[1], float(link.latency), float(link.bandwidth)))
        network = UniformNetwork(self._host, float(latency), float(bandwidth), float(host_latency),
                                 float(host_bandwidth), tuple(ends))
        _check_network(*network.values())
        self._network = network
        self._latency = self._bandwidth = None
        return self

    # ----------------------------------------------------------------- network
    @property
    def network(self) -> UniformNetwork | None:
        """The uniform link model this platform was built from (None for explicit matrices)."""
        return self._network

    @property
    def latency(self) -> np.ndarray:
        """(m, m) read-only latencies, 0 on the diagonal (expanded on first read: O(m^2) once)."""
        if self._latency is None:
            self._expand()
        return self._latency

    @property
    def bandwidth(self) -> np.ndarray:
        """(m, m) read-only bandwidths, inf on the diagonal (expanded on first read: O(m^2) once)."""
        if self._bandwidth is None:
            self._expand()
        return self._bandwidth

    @property
    def expanded(self) -> bool:
        """Whether the dense (m, m) matrices exist (always, for explicit matrices)."""
        return self._latency is not None

    def _expand(self) -> None:
        assert self._network is not None
        self._latency, self._bandwidth = self._seal(*self._network.dense())

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
        """(m,) the most memory one task placed on each processor may need: its own ``memory`` capped by
        its host's ``host_memory``; a fresh array per call (``Problem.cost_at`` reads it per task)."""
        return self._memory.copy()

    @property
    def host_memory(self) -> np.ndarray:
        """(hosts,) each host's memory shared by the tasks running on it at once (``inf`` where the host
        declares none), a fresh array per call.  O(hosts)."""
        return self._host_memory.copy()

    @property
    def shares_memory(self) -> bool:
        """True when some host declares ``host_memory`` (the online engine then counts it).  O(hosts)."""
        return bool(np.isfinite(self._host_memory).any())

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
        """(m,) index of each processor's host (hosts numbered in order of first appearance), a fresh
        array per call (O(m) copy of the codes gathered at construction)."""
        return self._host.copy()

    @property
    def host_names(self) -> tuple[str, ...]:
        """Host names in order of first appearance (``host_names[host_index[p]]`` is ``p``'s host).  O(1)."""
        return self._host_names

    @property
    def n_hosts(self) -> int:
        """Number of distinct hosts.  O(1)."""
        return len(self._host_names)

    @property
    def host_cores(self) -> np.ndarray:
        """(hosts,) the cores of each host: the sum of its processors' ``cores`` (its slot count when
        every processor is a one-core slot), a fresh array per call.  O(m)."""
        return np.bincount(self._host, weights=self._cores, minlength=self.n_hosts).astype(np.int64)

    @property
    def core_slots(self) -> bool:
        """True when some processor is one core of a multi-core host (:func:`host_slots`).  O(m)."""
        return any(p.core is not None for p in self.processors)

    def size_text(self) -> str:
        """``"8 processors"``, or ``"2 hosts, 96 slots"`` on a platform with core slots (what
        ``simsched validate`` and the run header say), followed by ``", 1 host with shared memory"``
        when hosts declare ``host_memory``.  O(m)."""
        if self.core_slots:
            text = f"{self.n_hosts} host{'s' if self.n_hosts != 1 else ''}, {self.n_processors} slots"
        else:
            text = f"{self.n_processors} processors"
        if self.shares_memory:
            k = int(np.isfinite(self._host_memory).sum())
            text += f", {k} host{'s' if k != 1 else ''} with shared memory"
        return text
