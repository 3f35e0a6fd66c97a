"""Deep-learning computation graphs built in code (no download): one task per operator.

Models: ``resnet18``, ``resnet50`` (He et al. 2016), ``inception_v3`` (Szegedy et al. 2016),
``squeezenet1_1`` (Iandola et al. 2016, v1.1), ``bert_base`` (Devlin et al. 2019: 12 encoder layers,
hidden 768, 12 heads, sequence 128).  Shapes follow the torchvision / reference definitions at
224x224 (299x299 for Inception) inputs.

* :func:`layers` lists the operators as :class:`LayerSpec` (name, op kind, FLOPs, input/output
  shapes, parameter count and ``signature``, a hashable tuple of the op's configuration: identical
  convolutions share one, so ``{l.signature for l in layers("resnet18") if l.op in ("conv",
  "dense")}`` gives the distinct kernels to autotune — 12 for ResNet-18).
* :func:`model_graph` builds the :class:`TaskGraph`: ``work`` = GFLOPs (multiply-add = 2 FLOPs),
  edge data = the tensor's size in MB (float32), kind = op kind.  Batch-norm is folded into its
  convolution (inference graphs, as deployed).
* :data:`AFFINITY`: per-kind speed factors for ``cpu`` and ``gpu`` processors, usable as
  ``Problem(affinity=AFFINITY)`` or a scenario's ``affinity:`` section.

Affinities (speed factor relative to the processor's ``speed``; a GPU is fast on dense arithmetic,
barely faster on memory-bound element-wise ops, and pays launch overhead on tiny ops):

=========== ===== ===== ==============================================
kind         cpu   gpu  why
=========== ===== ===== ==============================================
conv         1.0   20   dense arithmetic, cuDNN
dense        1.0   15   GEMM (fully connected, attention projections)
matmul       1.0   12   batched GEMM (attention scores)
pool         1.0    4   memory-bound, parallel
relu/gelu    1.0    3   element-wise, memory-bound
add          1.0    3   element-wise
concat       1.0    2   copy
softmax      1.0    4   reduction + element-wise
layernorm    1.0    4   reduction
embedding    1.0    2   gather
flatten      1.0    1   reshape (free)
=========== ===== ===== ==============================================

These factors are representative of published CPU/GPU operator benchmarks (e.g. the ratios behind
Placeto / Baechi device-placement experiments); they are not measurements of a given machine.
Building a model is O(ops); ResNet-50 has ~120 ops, BERT-base ~170.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import prod

from simsched.errors import SimschedError
from simsched.workloads.taskgraph import TaskGraph

AFFINITY: dict[str, dict[str, float]] = {
    "conv": {"cpu": 1.0, "gpu": 20.0},
    "dense": {"cpu": 1.0, "gpu": 15.0},
    "matmul": {"cpu": 1.0, "gpu": 12.0},
    "pool": {"cpu": 1.0, "gpu": 4.0},
    "relu": {"cpu": 1.0, "gpu": 3.0},
    "gelu": {"cpu": 1.0, "gpu": 3.0},
    "add": {"cpu": 1.0, "gpu": 3.0},
    "concat": {"cpu": 1.0, "gpu": 2.0},
    "softmax": {"cpu": 1.0, "gpu": 4.0},
    "layernorm": {"cpu": 1.0, "gpu": 4.0},
    "embedding": {"cpu": 1.0, "gpu": 2.0},
    "flatten": {"cpu": 1.0, "gpu": 1.0},
}
"""``AFFINITY[kind][processor_type]``: speed factor (see the module docstring)."""

Shape = tuple[int, ...]


@dataclass(frozen=True)
class LayerSpec:
    """One operator: ``op`` is its kind (a key of :data:`AFFINITY`), ``flops`` its floating-point
    operations, ``inputs`` the producing layers' names, ``signature`` its hashable configuration."""

    name: str
    op: str
    flops: float
    input_shapes: tuple[Shape, ...]
    output_shape: Shape
    params: int
    signature: tuple
    inputs: tuple[str, ...]


class _Net:
    """Shape-tracking builder: each method appends a LayerSpec and returns its name."""

    def __init__(self, batch: int) -> None:
        self.batch = batch
        self.specs: list[LayerSpec] = []
        self.shape: dict[str, Shape] = {}

    def _add(self, name: str, op: str, flops: float, ins: list[str], out: Shape, params: int, sig: tuple) -> str:
        spec = LayerSpec(name, op, float(flops), tuple(self.shape[i] for i in ins), out, params, sig, tuple(ins))
        self.specs.append(spec)
        self.shape[name] = out
        return name

    def input(self, name: str, shape: Shape) -> str:
        self.shape[name] = shape
        return name

    def conv(self, name: str, x: str, cout: int, k: int | tuple[int, int], stride: int = 1,
             pad: int | tuple[int, int] | None = None, relu: bool = True) -> str:
        n, c, h, w = self.shape[x]
        kh, kw = (k, k) if isinstance(k, int) else k
        ph, pw = ((kh // 2, kw // 2) if pad is None else (pad, pad) if isinstance(pad, int) else pad)
        oh, ow = (h + 2 * ph - kh) // stride + 1, (w + 2 * pw - kw) // stride + 1
        out = (n, cout, oh, ow)
        flops = 2 * prod(out) * c * kh * kw
        sig = ("conv", n, c, h, w, cout, kh, kw, stride, ph, pw)
        y = self._add(name, "conv", flops, [x], out, cout * c * kh * kw + cout, sig)
        return self.relu(name + "_relu", y) if relu else y

    def relu(self, name: str, x: str, op: str = "relu") -> str:
        s = self.shape[x]
        return self._add(name, op, prod(s) * (8 if op == "gelu" else 1), [x], s, 0, (op, *s))

    def pool(self, name: str, x: str, k: int, stride: int, pad: int = 0, mode: str = "max",
             ceil: bool = False) -> str:
        n, c, h, w = self.shape[x]
        rnd = (lambda a: -(-a // stride)) if ceil else (lambda a: a // stride)
        oh, ow = rnd(h + 2 * pad - k) + 1, rnd(w + 2 * pad - k) + 1
        out = (n, c, oh, ow)
        return self._add(name, "pool", prod(out) * k * k, [x], out, 0, ("pool", mode, n, c, h, w, k, stride, pad))

    def global_pool(self, name: str, x: str) -> str:
        n, c, h, w = self.shape[x]
        return self._add(name, "pool", n * c * h * w, [x], (n, c), 0, ("pool", "global", n, c, h, w))

    def add(self, name: str, a: str, b: str) -> str:
        s = self.shape[a]
        if self.shape[b] != s:
            raise AssertionError(f"{name}: add of {s} and {self.shape[b]}")
        return self._add(name, "add", prod(s), [a, b], s, 0, ("add", *s))

    def concat(self, name: str, xs: list[str], axis: int = 1) -> str:
        shapes = [self.shape[x] for x in xs]
        out = list(shapes[0])
        out[axis] = sum(s[axis] for s in shapes)
        return self._add(name, "concat", 0, xs, tuple(out), 0, ("concat", *(tuple(s) for s in shapes)))

    def dense(self, name: str, x: str, units: int, bias: bool = True) -> str:
        s = self.shape[x]
        rows = prod(s[:-1])
        out = (*s[:-1], units)
        return self._add(name, "dense", 2 * rows * s[-1] * units, [x], out, s[-1] * units + units * bias,
                         ("dense", rows, s[-1], units))

    def flatten(self, name: str, x: str) -> str:
        s = self.shape[x]
        return self._add(name, "flatten", 0, [x], (s[0], prod(s[1:])), 0, ("flatten", *s))

    def other(self, name: str, op: str, xs: list[str], out: Shape, flops: float, params: int = 0) -> str:
        return self._add(name, op, flops, xs, out, params, (op, *(self.shape[x] for x in xs), out))


def _resnet(batch: int, blocks: tuple[int, ...], bottleneck: bool) -> list[LayerSpec]:
    net = _Net(batch)
    x = net.input("input", (batch, 3, 224, 224))
    x = net.conv("conv1", x, 64, 7, 2, 3)
    x = net.pool("maxpool", x, 3, 2, 1)
    cin = 64
    for stage, (count, width) in enumerate(zip(blocks, (64, 128, 256, 512)), start=1):
        for b in range(count):
            stride = 2 if (b == 0 and stage > 1) else 1
            p = f"layer{stage}.{b}"
            cout = width * 4 if bottleneck else width
            if bottleneck:
                y = net.conv(p + ".conv1", x, width, 1, 1, 0)
                y = net.conv(p + ".conv2", y, width, 3, stride, 1)
                y = net.conv(p + ".conv3", y, cout, 1, 1, 0, relu=False)
            else:
                y = net.conv(p + ".conv1", x, width, 3, stride, 1)
                y = net.conv(p + ".conv2", y, width, 3, 1, 1, relu=False)
            short = x
            if stride != 1 or cin != cout:
                short = net.conv(p + ".downsample", x, cout, 1, stride, 0, relu=False)
            x = net.relu(p + ".relu", net.add(p + ".add", y, short))
            cin = cout
    x = net.flatten("flatten", net.global_pool("avgpool", x))
    net.dense("fc", x, 1000)
    return net.specs


def _squeezenet(batch: int) -> list[LayerSpec]:
    net = _Net(batch)
    x = net.input("input", (batch, 3, 224, 224))
    x = net.conv("conv1", x, 64, 3, 2, 0)
    x = net.pool("pool1", x, 3, 2, ceil=True)

    def fire(i: int, x: str, s: int, e: int) -> str:
        sq = net.conv(f"fire{i}.squeeze", x, s, 1, 1, 0)
        a = net.conv(f"fire{i}.expand1x1", sq, e, 1, 1, 0)
        b = net.conv(f"fire{i}.expand3x3", sq, e, 3, 1, 1)
        return net.concat(f"fire{i}.concat", [a, b])

    x = fire(2, x, 16, 64)
    x = fire(3, x, 16, 64)
    x = net.pool("pool3", x, 3, 2, ceil=True)
    x = fire(4, x, 32, 128)
    x = fire(5, x, 32, 128)
    x = net.pool("pool5", x, 3, 2, ceil=True)
    for i, (s, e) in zip(range(6, 10), ((48, 192), (48, 192), (64, 256), (64, 256))):
        x = fire(i, x, s, e)
    x = net.conv("conv10", x, 1000, 1, 1, 0)
    net.flatten("flatten", net.global_pool("avgpool", x))
    return net.specs


def _inception_v3(batch: int) -> list[LayerSpec]:
    net = _Net(batch)
    c = net.conv
    x = net.input("input", (batch, 3, 299, 299))
    x = c("Conv2d_1a", x, 32, 3, 2, 0)
    x = c("Conv2d_2a", x, 32, 3, 1, 0)
    x = c("Conv2d_2b", x, 64, 3, 1, 1)
    x = net.pool("maxpool1", x, 3, 2)
    x = c("Conv2d_3b", x, 80, 1, 1, 0)
    x = c("Conv2d_4a", x, 192, 3, 1, 0)
    x = net.pool("maxpool2", x, 3, 2)

    def block_a(p: str, x: str, pool_features: int) -> str:
        b1 = c(p + ".b1x1", x, 64, 1)
        b5 = c(p + ".b5x5_2", c(p + ".b5x5_1", x, 48, 1), 64, 5)
        b3 = c(p + ".b3x3dbl_1", x, 64, 1)
        b3 = c(p + ".b3x3dbl_3", c(p + ".b3x3dbl_2", b3, 96, 3), 96, 3)
        bp = c(p + ".bpool", net.pool(p + ".avgpool", x, 3, 1, 1, "avg"), pool_features, 1)
        return net.concat(p + ".concat", [b1, b5, b3, bp])

    def block_b(p: str, x: str) -> str:
        b3 = c(p + ".b3x3", x, 384, 3, 2, 0)
        d = c(p + ".b3x3dbl_2", c(p + ".b3x3dbl_1", x, 64, 1), 96, 3)
        d = c(p + ".b3x3dbl_3", d, 96, 3, 2, 0)
        return net.concat(p + ".concat", [b3, d, net.pool(p + ".maxpool", x, 3, 2)])

    def block_c(p: str, x: str, c7: int) -> str:
        b1 = c(p + ".b1x1", x, 192, 1)
        b7 = c(p + ".b7x7_1", x, c7, 1)
        b7 = c(p + ".b7x7_3", c(p + ".b7x7_2", b7, c7, (1, 7)), 192, (7, 1))
        d = c(p + ".b7x7dbl_1", x, c7, 1)
        for k, (co, ks) in enumerate(((c7, (7, 1)), (c7, (1, 7)), (c7, (7, 1)), (192, (1, 7))), start=2):
            d = c(f"{p}.b7x7dbl_{k}", d, co, ks)
        bp = c(p + ".bpool", net.pool(p + ".avgpool", x, 3, 1, 1, "avg"), 192, 1)
        return net.concat(p + ".concat", [b1, b7, d, bp])

    def block_d(p: str, x: str) -> str:
        b3 = c(p + ".b3x3_2", c(p + ".b3x3_1", x, 192, 1), 320, 3, 2, 0)
        b7 = c(p + ".b7x7x3_1", x, 192, 1)
        b7 = c(p + ".b7x7x3_3", c(p + ".b7x7x3_2", b7, 192, (1, 7)), 192, (7, 1))
        b7 = c(p + ".b7x7x3_4", b7, 192, 3, 2, 0)
        return net.concat(p + ".concat", [b3, b7, net.pool(p + ".maxpool", x, 3, 2)])

    def block_e(p: str, x: str) -> str:
        b1 = c(p + ".b1x1", x, 320, 1)
        b3 = c(p + ".b3x3_1", x, 384, 1)
        b3 = net.concat(p + ".b3x3_cat", [c(p + ".b3x3_2a", b3, 384, (1, 3)), c(p + ".b3x3_2b", b3, 384, (3, 1))])
        d = c(p + ".b3x3dbl_2", c(p + ".b3x3dbl_1", x, 448, 1), 384, 3)
        d = net.concat(p + ".b3x3dbl_cat", [c(p + ".b3x3dbl_3a", d, 384, (1, 3)), c(p + ".b3x3dbl_3b", d, 384, (3, 1))])
        bp = c(p + ".bpool", net.pool(p + ".avgpool", x, 3, 1, 1, "avg"), 192, 1)
        return net.concat(p + ".concat", [b1, b3, d, bp])

    x = block_a("Mixed_5b", x, 32)
    x = block_a("Mixed_5c", x, 64)
    x = block_a("Mixed_5d", x, 64)
    x = block_b("Mixed_6a", x)
    for p, c7 in (("Mixed_6b", 128), ("Mixed_6c", 160), ("Mixed_6d", 160), ("Mixed_6e", 192)):
        x = block_c(p, x, c7)
    x = block_d("Mixed_7a", x)
    x = block_e("Mixed_7b", x)
    x = block_e("Mixed_7c", x)
    x = net.flatten("flatten", net.global_pool("avgpool", x))
    net.dense("fc", x, 1000)
    return net.specs


def _bert_base(batch: int, layers_: int = 12, hidden: int = 768, heads: int = 12, seq: int = 128,
               ff: int = 3072, vocab: int = 30522) -> list[LayerSpec]:
    net = _Net(batch)
    ids = net.input("input_ids", (batch, seq))
    x = net.other("embeddings", "embedding", [ids], (batch, seq, hidden), batch * seq * hidden * 3,
                  params=(vocab + 512 + 2) * hidden)
    x = net.other("embeddings.layernorm", "layernorm", [x], (batch, seq, hidden), 8 * batch * seq * hidden)
    dh = hidden // heads
    for i in range(layers_):
        p = f"encoder.{i}"
        q, k, v = (net.dense(f"{p}.attn.{t}", x, hidden) for t in ("query", "key", "value"))
        scores = net.other(f"{p}.attn.scores", "matmul", [q, k], (batch, heads, seq, seq),
                           2 * batch * heads * seq * seq * dh)
        probs = net.other(f"{p}.attn.softmax", "softmax", [scores], (batch, heads, seq, seq),
                          5 * batch * heads * seq * seq)
        ctx = net.other(f"{p}.attn.context", "matmul", [probs, v], (batch, seq, hidden),
                        2 * batch * heads * seq * seq * dh)
        o = net.dense(f"{p}.attn.output", ctx, hidden)
        x = net.other(f"{p}.attn.layernorm", "layernorm", [net.add(f"{p}.attn.add", o, x)], (batch, seq, hidden),
                      8 * batch * seq * hidden, params=2 * hidden)
        h = net.relu(f"{p}.ffn.gelu", net.dense(f"{p}.ffn.intermediate", x, ff), op="gelu")
        o = net.dense(f"{p}.ffn.output", h, hidden)
        x = net.other(f"{p}.ffn.layernorm", "layernorm", [net.add(f"{p}.ffn.add", o, x)], (batch, seq, hidden),
                      8 * batch * seq * hidden, params=2 * hidden)
    return net.specs


MODELS: dict[str, Callable[[int], list[LayerSpec]]] = {
    "resnet18": lambda b: _resnet(b, (2, 2, 2, 2), bottleneck=False),
    "resnet50": lambda b: _resnet(b, (3, 4, 6, 3), bottleneck=True),
    "inception_v3": _inception_v3,
    "squeezenet1_1": _squeezenet,
    "bert_base": _bert_base,
}
"""Model builders by name; aliases in :data:`ALIASES`."""

ALIASES = {"inceptionv3": "inception_v3", "squeezenet": "squeezenet1_1", "squeezenet11": "squeezenet1_1",
           "bert": "bert_base", "bert-base": "bert_base", "resnet-18": "resnet18", "resnet-50": "resnet50"}


def _resolve(model: str) -> str:
    key = str(model).lower().replace(" ", "")
    key = ALIASES.get(key, key)
    if key not in MODELS:
        raise SimschedError(f"unknown model {model!r}; known: {', '.join(MODELS)}", field="model")
    return key


def layers(model: str, batch: int = 1) -> list[LayerSpec]:
    """The operators of ``model`` in topological order (see the module docstring).  O(ops)."""
    if int(batch) < 1:
        raise SimschedError(f"batch must be >= 1, got {batch}", field="batch")
    return MODELS[_resolve(model)](int(batch))


def model_graph(model: str, batch: int = 1) -> TaskGraph:
    """The operator DAG of ``model``: work in GFLOPs, edge data in MB (float32), kind = op."""
    specs = layers(model, batch)
    index = {s.name: i for i, s in enumerate(specs)}
    pairs, data = [], []
    for i, s in enumerate(specs):
        for src, shape in zip(s.inputs, s.input_shapes):
            if src in index:
                pairs.append((index[src], i))
                data.append(prod(shape) * 4 / 1e6)
    return TaskGraph([s.name for s in specs], pairs, data, work=[s.flops / 1e9 for s in specs],
                     kind=[s.op for s in specs])


def read_model(name: str, *, batch: int = 1) -> TaskGraph:
    """Importer-style entry point: its source is a model name, not a file (``workload: {model:
    resnet18}``); the scenario loader passes names to importers whose first parameter is a ``str``."""
    return model_graph(str(name), batch)
