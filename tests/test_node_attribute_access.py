"""What keeps a node's field reads on CPython's fast path: no node class has ``__getattr__``
(torch's ``_saved_<name>`` attributes are read-only attributes of the classes that have them),
and on CPython 3.11+ every built-in op's ``apply`` has a code object of its own. Neither changes
a value; both were measured on W1 (benchmarks/): about 5% fewer instructions an op."""
import importlib
import sys

import numpy as np
import pytest
from torch_compare import caught

import tapegrad as tg
from tapegrad.autograd.function import ArrayFunction
from tapegrad.autograd.graph import Node
from tapegrad.ops.pointwise import Add, Mul, Tanh


def _node_classes():
    for mod in ("tapegrad.nn.functional", "tapegrad.linalg", "tapegrad.special"):
        importlib.import_module(mod)     # (modules that may define ops when first loaded)
    todo, seen = [Node], []
    while todo:
        cls = todo.pop()
        seen.append(cls)
        todo.extend(cls.__subclasses__())
    return seen


def test_no_node_class_has_getattr():
    classes = _node_classes()
    assert len(classes) > 300
    assert [c.__name__ for c in classes if hasattr(c, "__getattr__")] == []
    assert all(type(c).__getattribute__ is type.__getattribute__ for c in classes)
    assert all(c.__getattribute__ is object.__getattribute__ for c in classes)


def test_saved_attributes_are_properties_with_the_old_values():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    w = tg.tensor([3.0, 4.0], requires_grad=True)
    y = x * w
    node = y.grad_fn
    assert type(type(node).__dict__["_saved_self"]).__name__ == "SavedAttr"
    np.testing.assert_array_equal(node._saved_self.detach().numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(node._saved_other.detach().numpy(), [3.0, 4.0])
    assert type(node._raw_saved_self).__name__ == "SavedTensor"
    assert "_saved_self" in dir(node) and "_saved" not in dir(node)
    s = x.tanh()
    np.testing.assert_allclose(s.grad_fn._saved_result.detach().numpy(), np.tanh([1.0, 2.0]),
                               rtol=1e-6)
    z = (x + w).sum()
    assert z.grad_fn._saved_self_sym_sizes == (2,)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="freed"):
        node._saved_self  # noqa: B018


def test_missing_attributes_raise_attribute_error_as_before():
    y = tg.tensor([1.0], requires_grad=True) * 2.0
    for name in ("foo", "_saved_foo", "_raw_saved_bar", "_saved_result"):
        with pytest.raises(AttributeError) as e:
            getattr(y.grad_fn, name)
        assert str(e.value) == f"'MulBackward0' object has no attribute '{name}'"
        assert not hasattr(y.grad_fn, name)
    assert getattr(y.grad_fn, "_saved_foo", 7) == 7


def test_missing_attribute_message_is_torchs():
    torch = pytest.importorskip("torch")

    def fn(L):
        return (L.tensor([1.0], requires_grad=True) * 2.0).grad_fn._saved_foo

    ours, theirs = caught(tg, fn), caught(torch, fn)
    assert type(ours) is type(theirs) is AttributeError
    assert str(ours) == str(theirs)


def test_saved_attributes_are_read_only_as_torchs():
    y = tg.tensor([1.0], requires_grad=True) * tg.tensor([2.0])
    for what in (lambda g: setattr(g, "_saved_self", 3), lambda g: delattr(g, "_saved_other")):
        with pytest.raises(AttributeError) as e:
            what(y.grad_fn)
        assert "of 'MulBackward0' objects is not writable" in str(e.value)
    np.testing.assert_array_equal(y.grad_fn._saved_other.numpy(), [2.0])
    shown = repr(type(y.grad_fn)._saved_self)
    assert shown == "<attribute '_saved_self' of 'MulBackward0' objects>"
    torch = pytest.importorskip("torch")

    def fn(L):
        g = (L.tensor([1.0], requires_grad=True) * L.tensor([2.0])).grad_fn
        g._saved_self = 3

    ours, theirs = caught(tg, fn), caught(torch, fn)
    assert type(ours) is type(theirs) is AttributeError
    assert str(ours) == str(theirs)
    assert repr(type(y.grad_fn)._saved_self) == repr(
        type((torch.tensor([1.0], requires_grad=True) * torch.tensor([2.0])).grad_fn)._saved_self)


def test_dir_lists_torchs_saved_names():
    torch = pytest.importorskip("torch")

    def names(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        return [[n for n in dir(y.grad_fn) if n.startswith(("_saved", "_raw_saved"))]
                for y in (x * x, x.tanh(), x.sum(), x * 2.0)]

    assert names(tg) == names(torch)


def test_a_node_class_made_later_gets_its_attributes():
    cls = type("SumBackward0", (Node,), {"__slots__": ()})
    assert type(cls.__dict__["_saved_self_sym_sizes"]).__name__ == "SavedAttr"
    own = type("MulBackward0", (Node,), {"__slots__": (), "_saved_self": "mine"})
    assert own._saved_self == "mine"
    assert type(own.__dict__["_saved_other"]).__name__ == "SavedAttr"
    other = type("NotATorchNodeBackward", (Node,), {"__slots__": ()})
    assert not any(k.startswith("_saved_") for k in vars(other))


def test_a_function_defined_later_gets_its_attributes():
    class Twice(ArrayFunction, name="MulBackward0"):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b, g * a

    x = tg.tensor([2.0], requires_grad=True)
    y = Twice.apply(x, tg.tensor([5.0]))
    assert type(y.grad_fn).__name__ == "MulBackward0"
    np.testing.assert_array_equal(y.grad_fn._saved_other.detach().numpy(), [5.0])
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [5.0])


@pytest.mark.skipif(sys.implementation.name != "cpython" or sys.version_info < (3, 11),
                    reason="CPython 3.11+ specialises per code object")
def test_each_op_applies_through_its_own_code():
    codes = {id(Mul.apply.__code__), id(Add.apply.__code__), id(Tanh.apply.__code__)}
    assert len(codes) == 3
    assert Mul.apply.__qualname__ == Mul.apply.__code__.co_qualname == "Mul.apply"
    assert Tanh.apply.__code__.co_code == Mul.apply.__code__.co_code


def test_applies_share_code_where_nothing_specialises(monkeypatch):
    from tapegrad.autograd import function
    monkeypatch.setattr(function, "_SPECIALISING", False)

    class Plain(ArrayFunction):
        @staticmethod
        def forward(ctx, a):
            return a + 1

        @staticmethod
        def backward(ctx, g):
            return g

    assert Plain.apply.__code__ is function._make_apply(Mul, True).__code__
    assert Plain.apply.__qualname__.endswith("Plain.apply")
    x = tg.tensor([1.0], requires_grad=True)
    Plain.apply(x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0])
