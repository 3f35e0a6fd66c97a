"""DL computation graphs built in code: FLOP/parameter counts against the published figures."""

from __future__ import annotations

import networkx as nx
import pytest

from simsched.errors import SimschedError
from simsched.workloads.dlmodels import AFFINITY, MODELS, layers, model_graph
from simsched.workloads.importers import IMPORTERS
from simsched.workloads.taskgraph import TaskGraph

# (GFLOPs = 2 x multiply-adds, million parameters) at batch 1, from the papers / torchvision
PUBLISHED = {"resnet18": (3.6, 11.7), "resnet50": (8.2, 25.6), "inception_v3": (11.5, 23.8),
             "squeezenet1_1": (0.70, 1.24), "bert_base": (22.4, 109.0)}


@pytest.mark.parametrize("model", sorted(MODELS))
def test_counts_match_published(model):
    specs = layers(model)
    gflops = sum(s.flops for s in specs) / 1e9
    mparams = sum(s.params for s in specs) / 1e6
    want_f, want_p = PUBLISHED[model]
    assert gflops == pytest.approx(want_f, rel=0.06)
    assert mparams == pytest.approx(want_p, rel=0.03)


@pytest.mark.parametrize("model", sorted(MODELS))
def test_graph_is_valid_and_affinities_cover_kinds(model):
    g = model_graph(model, batch=2)
    h = g.to_networkx()
    assert nx.is_directed_acyclic_graph(h) and (g.work >= 0).all() and (g.edge_data > 0).all()
    assert set(g.kind_names) <= set(AFFINITY)
    back = TaskGraph.from_networkx(h)
    assert back.names == g.names and back.n_edges == g.n_edges
    assert model_graph(model, 2).work.sum() == pytest.approx(2 * model_graph(model, 1).work.sum(), rel=1e-9)


def test_resnet18_distinct_kernels_for_autotuning():
    sigs = {s.signature for s in layers("resnet18") if s.op in ("conv", "dense")}
    assert 12 <= len(sigs) <= 30
    conv1 = next(s for s in layers("resnet18") if s.name == "conv1")
    assert conv1.output_shape == (1, 64, 112, 112) and conv1.input_shapes == ((1, 3, 224, 224),)
    hash(conv1.signature)


def test_model_importer_form_and_errors():
    g = IMPORTERS["model"]("resnet18", batch=1)
    assert g.n_tasks == len(layers("resnet18"))
    assert IMPORTERS["model"]("SqueezeNet").n_tasks == len(layers("squeezenet1_1"))
    with pytest.raises(SimschedError, match="unknown model"):
        layers("vgg99")
    with pytest.raises(SimschedError, match="batch"):
        layers("resnet18", batch=0)
