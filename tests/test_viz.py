"""Tests for tapegrad.utils.viz.make_dot (graph drawing with the optional graphviz package).

The tests that build graphs skip when the ``graphviz`` Python package is missing; they check the
DOT source text, so Graphviz's ``dot`` program is never needed. The message for a missing
package is tested without it.
"""
import os
import re
import sys

import pytest

import tapegrad as tg
from tapegrad import nn
from tapegrad.utils.viz import make_dot


@pytest.fixture
def graphviz():
    return pytest.importorskip("graphviz")


_NODE = re.compile(r'^\t(n\d+) \[label=("(?:[^"\\]|\\.)*"|\S+)(.*)\]$')
_EDGE = re.compile(r"^\t(n\d+) -> (n\d+)(?: \[(.*)\])?$")


def _parse(dot):
    """({node id: (label, attrs)}, [(src, dst, attrs)]) from a Digraph's body."""
    nodes, edges = {}, []
    for line in dot.body:
        line = line.rstrip("\n")
        m = _EDGE.match(line)
        if m:
            edges.append((m.group(1), m.group(2), m.group(3) or ""))
            continue
        m = _NODE.match(line)
        assert m, line
        label = m.group(2)
        if label.startswith('"'):
            label = label[1:-1]
        nodes[m.group(1)] = (label.replace("\\n", "\n"), m.group(3))
    return nodes, edges


def _labels(nodes, color):
    return sorted(label for label, attrs in nodes.values() if f"fillcolor={color}" in attrs)


def _plain_edges(edges):
    return [(a, b) for a, b, attrs in edges if "dashed" not in attrs]


def test_missing_graphviz_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)   # makes `import graphviz` fail
    with pytest.raises(ImportError, match=r"tapegrad\[viz\]"):
        make_dot(tg.ones(2, requires_grad=True).sum())


def test_pyproject_declares_the_viz_extra():
    tomllib = pytest.importorskip("tomllib")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "pyproject.toml"), "rb") as fh:
        extras = tomllib.load(fh)["project"]["optional-dependencies"]
    assert any(dep.startswith("graphviz") for dep in extras["viz"])


def test_mlp_graph(graphviz):
    tg.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    loss = model(tg.randn(5, 3)).sum()
    dot = make_dot(loss, params=dict(model.named_parameters()))
    assert isinstance(dot, graphviz.Digraph)
    nodes, edges = _parse(dot)
    assert _labels(nodes, "darkolivegreen1") == ["()"]
    assert _labels(nodes, "lightblue") == ["0.bias\n(4,)", "0.weight\n(4, 3)", "2.bias\n(2,)",
                                           "2.weight\n(2, 4)"]
    assert _labels(nodes, "lightgrey") == ["AddmmBackward0", "AddmmBackward0", "ReluBackward0",
                                           "SumBackward0", "TBackward0", "TBackward0"]
    by_label = {label: nid for nid, (label, _) in nodes.items()}
    # edges run forward: the weight feeds its transpose, which feeds an addmm
    w = by_label["0.weight\n(4, 3)"]
    (t,) = [b for a, b in _plain_edges(edges) if a == w]
    assert nodes[t][0] == "TBackward0"
    (out,) = [nid for nid, (label, _) in nodes.items() if label == "()"]
    assert [nodes[a][0] for a, b in _plain_edges(edges) if b == out] == ["SumBackward0"]
    assert "ranksep" in dot.source and "digraph" in dot.source


def test_node_names_match_torch_graph(graphviz, torch):
    def torch_names(t):
        seen, todo, names = set(), [t.grad_fn], []
        while todo:
            fn = todo.pop()
            if fn is None or fn in seen:
                continue
            seen.add(fn)
            if type(fn).__name__ != "AccumulateGrad":
                names.append(type(fn).__name__)
            todo.extend(n for n, _ in fn.next_functions)
        return sorted(names)

    def build(mod):
        w = mod.ones(3, 2, requires_grad=True)
        b = mod.zeros(2, requires_grad=True)
        x = mod.arange(12.0).reshape(4, 3)
        h = (x @ w + b).relu()
        return (h.exp().mean(dim=0) * h.sum()).log_softmax(dim=0).sum()

    nodes, _ = _parse(make_dot(build(tg)))
    assert _labels(nodes, "lightgrey") == torch_names(build(torch))


def test_unnamed_leaves_params_as_pairs_and_multiple_outputs(graphviz):
    a = tg.ones(2, 3, requires_grad=True)
    b = tg.ones(3, requires_grad=True)
    s = a * b
    outs = [s.sum(), s.mean()]
    nodes, edges = _parse(make_dot(outs, params=[("b", b)]))
    assert _labels(nodes, "lightblue") == ["(2, 3)", "b\n(3,)"]
    assert _labels(nodes, "darkolivegreen1") == ["()", "()"]
    assert _labels(nodes, "lightgrey") == ["MeanBackward0", "MulBackward0", "SumBackward0"]
    (mul,) = [n for n, (label, _) in nodes.items() if label == "MulBackward0"]
    assert len([1 for x, y in _plain_edges(edges) if x == mul]) == 2   # shared by both outputs


def test_input_used_twice_gets_two_edges(graphviz):
    x = tg.ones(2, requires_grad=True)
    nodes, edges = _parse(make_dot((x * x).sum(), params={"x": x}))
    (xid,) = [n for n, (label, _) in nodes.items() if label.startswith("x\n")]
    assert len([1 for a, b in _plain_edges(edges) if a == xid]) == 2


def test_show_saved_and_attrs(graphviz):
    w = tg.ones(3, 2, requires_grad=True)
    x = tg.ones(4, 3)
    y = (x @ w).tanh()
    z = (y * 3.0).sum()
    plain_nodes, plain_edges = _parse(make_dot(z, params={"w": w}))
    assert _labels(plain_nodes, "orange") == []
    nodes, edges = _parse(make_dot(z, params={"w": w}, show_saved=True, show_attrs=True))
    assert _labels(nodes, "orange") == ["(4, 2) float32", "(4, 3) float32"]
    dashed = [(a, b, attrs) for a, b, attrs in edges if "dashed" in attrs]
    targets = sorted(nodes[b][0] for _, b, _ in dashed)
    assert targets == ["MmBackward0", "TanhBackward0"]
    assert all('label="saved[0]"' in attrs for _, _, attrs in dashed)
    assert "MulBackward0\nsaved[1]: 3.0" in _labels(nodes, "lightgrey")
    # same structure as without saved tensors, plus the saved boxes
    assert len(_plain_edges(edges)) == len(_plain_edges(plain_edges))


def test_saved_leaf_links_to_its_own_box(graphviz):
    w = tg.ones(2, requires_grad=True)
    nodes, edges = _parse(make_dot((w * w).sum(), params={"w": w}, show_saved=True))
    assert _labels(nodes, "orange") == []
    (wid,) = [n for n, (label, _) in nodes.items() if label == "w\n(2,)"]
    assert sorted(attrs.split()[0] for a, b, attrs in edges if a == wid and "dashed" in attrs) \
        == ['label="saved[0]"', 'label="saved[1]"']


def test_freed_saved_tensors_are_noted(graphviz):
    w = tg.ones(2, requires_grad=True)
    z = w.exp().sum()
    z.backward()
    nodes, _ = _parse(make_dot(z, show_saved=True))
    assert "ExpBackward0\n(saved tensors freed)" in _labels(nodes, "lightgrey")


def test_leaves_and_constants(graphviz):
    leaf = tg.ones(2, 2, requires_grad=True)
    nodes, edges = _parse(make_dot(leaf, params={"p": leaf}))
    assert _labels(nodes, "lightblue") == ["p\n(2, 2)"] and len(edges) == 1
    nodes, edges = _parse(make_dot(tg.ones(3)))
    assert list(nodes.values())[0][0] == "(3,)" and edges == []


def test_custom_function_node(graphviz):
    class Square(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = tg.ones(3, requires_grad=True)
    nodes, _ = _parse(make_dot(Square.apply(x).sum(), show_saved=True))
    assert "SquareBackward" in _labels(nodes, "lightgrey")


def test_deterministic_and_deep(graphviz):
    def build():
        x = tg.ones(2, requires_grad=True)
        y = x
        for _ in range(3000):
            y = y * 1.0 + 0.0
        return x, y.sum()
    x1, y1 = build()
    x2, y2 = build()
    s1 = make_dot(y1, params={"x": x1}).source
    assert s1 == make_dot(y2, params={"x": x2}).source
    nodes, _ = _parse(make_dot(y1))
    assert len(nodes) == 2 * 3000 + 3


def test_errors(graphviz):
    x = tg.ones(2, requires_grad=True)
    with pytest.raises(TypeError, match="Tensor"):
        make_dot([x.sum(), 3])
    with pytest.raises(TypeError, match="Tensor"):
        make_dot([1.0])
    with pytest.raises(TypeError, match=r"params\['w'\]"):
        make_dot(x.sum(), params={"w": 1.0})
    with pytest.raises(TypeError, match="pairs"):
        make_dot(x.sum(), params=[x])


def test_utils_namespace(graphviz):
    assert tg.utils.viz.make_dot is make_dot
