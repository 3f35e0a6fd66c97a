"""ONNX models → operator DAG (optional extra ``onnx``: ``pip install -e '.[onnx]'``).

One task per graph node; an edge from the node producing a tensor to each node consuming it, with
the tensor's size in MB (from ONNX shape inference; unknown dimensions count as ``batch``).
Work is GFLOPs estimated from shapes: Conv ``2 * out * Cin/groups * kh * kw``, Gemm/MatMul
``2 * M * N * K``, pooling ``out * window``, element-wise ops one per output element, Softmax and
normalisations a few per element; zero for shape-only ops.  Kind = the op type mapped to the DL
kinds of :data:`simsched.workloads.dlmodels.AFFINITY` (Conv → conv, Gemm → dense, MatMul → matmul,
Relu → relu, ...; others lower-cased).  O(nodes + tensors).
"""

from __future__ import annotations

from math import prod
from pathlib import Path
from typing import Any

from simsched.errors import SimschedError
from simsched.fileio import not_a_file
from simsched.workloads.importers._common import located, require_extra
from simsched.workloads.taskgraph import TaskGraph

OP_KIND = {
    "Conv": "conv", "ConvTranspose": "conv", "Gemm": "dense", "MatMul": "matmul", "Relu": "relu",
    "LeakyRelu": "relu", "Clip": "relu", "Sigmoid": "relu", "Tanh": "relu", "Gelu": "gelu", "Erf": "gelu",
    "Add": "add", "Sub": "add", "Mul": "add", "Div": "add", "Sum": "add", "Concat": "concat",
    "MaxPool": "pool", "AveragePool": "pool", "GlobalAveragePool": "pool", "GlobalMaxPool": "pool",
    "Softmax": "softmax", "LayerNormalization": "layernorm", "BatchNormalization": "layernorm",
    "Gather": "embedding", "Flatten": "flatten", "Reshape": "flatten", "Transpose": "flatten",
    "Squeeze": "flatten", "Unsqueeze": "flatten", "Identity": "flatten", "Shape": "flatten",
}
_ITEM_BYTES = {1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 1, 10: 2, 11: 8, 12: 4, 13: 8, 16: 2}


def _attr(node: Any, name: str, default: Any) -> Any:
    for a in node.attribute:
        if a.name == name:
            return list(a.ints) if a.ints else (a.i if a.type == 2 else a.f)
    return default


def _flops(node: Any, ins: list[tuple[int, ...] | None], out: tuple[int, ...] | None) -> float:
    op = node.op_type
    n_out = prod(out) if out else 0
    if op in ("Conv", "ConvTranspose") and ins and ins[0] and len(ins) > 1 and ins[1]:
        w = ins[1]
        return 2.0 * (prod(ins[0]) if op == "ConvTranspose" else n_out) * prod(w[1:])
    if op == "Gemm" and len(ins) > 1 and ins[0] and ins[1]:
        a, b = ins[0], ins[1]
        m = a[1] if _attr(node, "transA", 0) else a[0]
        k = a[0] if _attr(node, "transA", 0) else a[1]
        n = b[0] if _attr(node, "transB", 0) else b[1]
        return 2.0 * m * n * k
    if op == "MatMul" and len(ins) > 1 and ins[0] and ins[1]:
        return 2.0 * n_out * ins[0][-1]
    if op in ("MaxPool", "AveragePool"):
        return float(n_out * prod(_attr(node, "kernel_shape", [1])))
    if op.startswith("Global") and ins and ins[0]:
        return float(prod(ins[0]))
    if op in ("Softmax", "LayerNormalization", "BatchNormalization"):
        return 5.0 * n_out
    if OP_KIND.get(op) == "flatten" or op in ("Concat", "Gather"):
        return 0.0
    return float(n_out)


def read_onnx(path: str | Path, *, batch: int = 1) -> TaskGraph:
    """Load an ONNX model file as an operator DAG (see the module docstring)."""
    onnx = require_extra("onnx", "onnx", "reading ONNX models")
    p = Path(path)
    if (why := not_a_file(p)) is not None:  # never opened: a FIFO or a device cannot block
        raise SimschedError(why, file=p)
    try:
        model = onnx.load(str(p))
    except Exception as e:  # protobuf DecodeError and friends
        raise SimschedError(f"not a valid ONNX model: {type(e).__name__}: {e}", file=p) from None
    try:
        model = onnx.shape_inference.infer_shapes(model)
    except Exception as e:
        raise SimschedError(f"ONNX shape inference failed: {e}", file=p) from None
    g = model.graph
    if not g.node:
        raise SimschedError("the ONNX graph has no nodes", file=p)
    shapes: dict[str, tuple[int, ...]] = {}
    itemsize: dict[str, int] = {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        tt = vi.type.tensor_type
        if tt.HasField("shape"):
            shapes[vi.name] = tuple(d.dim_value if d.dim_value > 0 else batch for d in tt.shape.dim)
            itemsize[vi.name] = _ITEM_BYTES.get(tt.elem_type, 4)
    for init in g.initializer:
        shapes[init.name] = tuple(init.dims)
        itemsize[init.name] = _ITEM_BYTES.get(init.data_type, 4)
    names, kinds, work = [], [], []
    producer: dict[str, int] = {}
    used: set[str] = set()
    for i, node in enumerate(g.node):
        name = node.name or f"{node.op_type}_{i}"
        while name in used:
            name += "_"
        used.add(name)
        names.append(name)
        kinds.append(OP_KIND.get(node.op_type, node.op_type.lower()))
        ins = [shapes.get(t) for t in node.input]
        out = shapes.get(node.output[0]) if node.output else None
        work.append(_flops(node, ins, out) / 1e9)
        for t in node.output:
            producer[t] = i
    edges: dict[tuple[int, int], float] = {}
    for i, node in enumerate(g.node):
        for t in node.input:
            j = producer.get(t)
            if j is None or j == i:
                continue
            size = prod(shapes[t]) * itemsize.get(t, 4) / 1e6 if t in shapes else 0.0
            edges[(j, i)] = edges.get((j, i), 0.0) + size
    with located(p):
        return TaskGraph(names, list(edges), list(edges.values()), work=work, kind=kinds)
