"""Memory formats (tapegrad.contiguous_format, preserve_format, channels_last,
channels_last_3d): clone, contiguous, is_contiguous, the *_like factories and to() lay their
results out as torch's do (strides compared with torch), values unchanged."""
import pickle

import numpy as np
import pytest

import tapegrad as tg


def _x(L):
    return L.arange(12.0).reshape(3, 4).t()           # transposed: dense, not C order


def _cl(L):
    return L.arange(120.0).reshape(2, 3, 4, 5).contiguous(memory_format=L.channels_last)


def _z(L):
    return L.arange(120.0).reshape(2, 3, 4, 5)


_CASES = {
    "channels_last strides": lambda L: _cl(L).stride(),
    "is_contiguous": lambda L: (_cl(L).is_contiguous(), _cl(L).is_contiguous(
        memory_format=L.channels_last), _z(L).is_contiguous(memory_format=L.channels_last),
        _x(L).is_contiguous(memory_format=L.channels_last),
        _x(L).is_contiguous(memory_format=L.preserve_format),
        _z(L).is_contiguous(memory_format=L.preserve_format)),
    "contiguous back to C": lambda L: _cl(L).contiguous().stride(),
    "contiguous preserve": lambda L: _x(L).contiguous(memory_format=L.preserve_format),
    "contiguous channels_last of 2-D": lambda L: _x(L).contiguous(memory_format=L.channels_last),
    "clone transposed": lambda L: _x(L).clone().stride(),
    "clone strided": lambda L: _x(L)[:, ::2].clone().stride(),
    "clone expanded": lambda L: [L.ones(*s).expand(*e).clone().stride() for s, e in
                                 (((3, 1), (3, 4)), ((2, 1, 3), (2, 4, 3)), ((2, 3, 1), (2, 3, 4)))],
    "clone transposed slice": lambda L: _x(L)[::2].clone().stride(),
    "clone channels_last": lambda L: (_cl(L).clone().stride(), _z(L).clone(
        memory_format=L.channels_last).stride(), _cl(L).clone(
        memory_format=L.contiguous_format).stride()),
    "clone channels_last_3d": lambda L: L.ones(2, 3, 4, 5, 6).clone(
        memory_format=L.channels_last_3d).stride(),
    "clone channels_last of 2-D": lambda L: _x(L).clone(memory_format=L.channels_last),
    "clone of a string format": lambda L: _x(L).clone(memory_format="channels_last"),
    "like of channels_last": lambda L: [f(_cl(L)).stride() for f in (
        L.zeros_like, L.ones_like, L.empty_like, L.rand_like, L.randn_like)],
    "like of transposed": lambda L: [f(_x(L)).stride() for f in (
        L.zeros_like, L.ones_like, L.empty_like, L.rand_like, L.randn_like)],
    "like of strided": lambda L: L.full_like(_x(L)[:, ::2], 3).stride(),
    "like with formats": lambda L: (L.zeros_like(_z(L), memory_format=L.channels_last).stride(),
                                    L.zeros_like(_cl(L), memory_format=L.contiguous_format).stride(),
                                    L.randint_like(_cl(L), 5).stride(),
                                    L.zeros_like(_x(L), dtype=L.float64).stride()),
    "like values": lambda L: L.full_like(_x(L), 7).tolist(),
    "to": lambda L: (_cl(L).to(L.float64).stride(),
                     _cl(L).to(memory_format=L.contiguous_format).stride(),
                     _z(L).to(memory_format=L.channels_last).stride(),
                     _z(L).to(L.float64, memory_format=L.channels_last).stride(),
                     _z(L).to(memory_format=L.contiguous_format) is _z(L),
                     _x(L).float().stride()),
    "to of expanded": lambda L: [L.ones(s).expand(*e).to(L.float64).stride() for s, e in (
        ((1, 3), (4, 3)), ((3, 1), (3, 4)), ((2, 1, 3), (2, 4, 3)), ((2, 3, 1), (2, 3, 4)),
        ((), (2, 3)))] + [L.ones(3, 1).t().expand(4, 3).to(L.float64).stride()],
    "to of expanded, other casts": lambda L: (
        L.ones(1, 3).expand(4, 3).double().stride(), L.ones(3, 1).expand(3, 4).half().stride(),
        L.ones(1, 3).expand(4, 3).to(L.int64).stride(),
        L.ones(1, 3, requires_grad=True).expand(4, 3).to(L.int64).stride(),
        L.ones(1, 3, requires_grad=True).expand(4, 3).to(L.float64).stride(),
        L.ones(3, 1).expand(3, 4).type_as(L.ones(1, dtype=L.float64)).stride()),
    "to of strided": lambda L: (_x(L)[:, ::2].to(L.float64).stride(),
                                L.arange(12.0).reshape(3, 4)[:, ::2].to(L.float64).stride(),
                                L.ones(2, 3, 4).permute(1, 2, 0)[:, ::2].double().stride(),
                                _cl(L)[:, :, ::2].double().stride(),
                                L.ones(4, 3).t()[:, :1].double().stride(),
                                L.empty(0, 3).t().double().stride()),
    "to of strided values": lambda L: L.arange(12.0).reshape(3, 4)[:, ::2].t().to(
        L.float64).tolist(),
    "to returns self when laid out so": lambda L: _to_is_self(_cl(L), L.channels_last,
                                                             L.contiguous_format),
    "clone and to values": lambda L: (_z(L).clone(memory_format=L.channels_last).tolist(),
                                      _z(L).to(memory_format=L.channels_last).tolist()),
    "repr": lambda L: [repr(f).split(".")[-1] for f in (
        L.contiguous_format, L.preserve_format, L.channels_last, L.channels_last_3d)],
}


def _outcome(fn, lib):
    try:
        return fn(lib)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e).__name__


@pytest.mark.parametrize("name", sorted(_CASES))
def test_memory_format_as_torch(name):
    torch = pytest.importorskip("torch")
    assert _outcome(_CASES[name], tg) == _outcome(_CASES[name], torch)


def test_memory_formats_without_torch():
    assert _cl(tg).stride() == (60, 1, 15, 3)
    assert _cl(tg).is_contiguous(memory_format=tg.channels_last) and not _cl(tg).is_contiguous()
    assert _x(tg).clone().stride() == (1, 4)
    assert tg.zeros_like(_x(tg)).stride() == (1, 4)
    assert tg.ones(1, 3).expand(4, 3).to(tg.float64).stride() == (3, 1)
    np.testing.assert_array_equal(_cl(tg).numpy(), np.arange(120.0).reshape(2, 3, 4, 5))
    assert repr(tg.channels_last) == "tapegrad.channels_last"
    assert pickle.loads(pickle.dumps(tg.preserve_format)) is tg.preserve_format
    assert isinstance(tg.contiguous_format, tg.memory_format)


def test_memory_format_errors_name_the_op():
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        _x(tg).clone(memory_format=tg.channels_last)
    with pytest.raises(RuntimeError, match="preserve memory format is unsupported by the "
                                           "contiguous operator"):
        _x(tg).contiguous(memory_format=tg.preserve_format)
    with pytest.raises(TypeError, match=r"zeros_like\(\): argument 'memory_format' must be"):
        tg.zeros_like(_x(tg), memory_format="channels_last")


def test_layouts_keep_gradients():
    w = tg.arange(120.0).reshape(2, 3, 4, 5).requires_grad_()
    c = w.clone(memory_format=tg.channels_last)
    v = w.to(memory_format=tg.channels_last)
    assert c.grad_fn.name() == "CloneBackward0" and v.grad_fn.name() == "ToCopyBackward0"
    (c * 2 + v * 3).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.full((2, 3, 4, 5), 5.0))
    assert w.grad.stride() == (60, 20, 5, 1)


def test_repeat_interleave_of_a_transposed_tensor():
    # (its clone takes C order, for the view after it)
    x = tg.arange(6.0).reshape(2, 3).t()
    assert x.repeat_interleave(2, dim=0).tolist() == [[0.0, 3.0]] * 2 + [[1.0, 4.0]] * 2 + \
        [[2.0, 5.0]] * 2


def _to_is_self(t, *formats):
    return [t.to(memory_format=f) is t for f in formats]


def _grad_stride(leaf):
    leaf.sum().backward()
    return leaf.grad.stride()


def _p(L):
    return L.arange(6.0).reshape(2, 1, 3, 1).permute(3, 1, 0, 2)     # (size-1 dims' strides)


_MORE = {
    "to contiguous of a stepped slice": lambda L: (
        _to_is_self(L.arange(9.0).reshape(3, 3)[::2], L.contiguous_format),
        L.arange(9.0).reshape(3, 3)[::2].to(memory_format=L.contiguous_format).stride()),
    "to contiguous of a transposed tensor": lambda L: _to_is_self(
        L.arange(12.0).reshape(3, 4).t(), L.contiguous_format),
    "to channels_last of N C 1 1": lambda L: L.arange(6.0).reshape(2, 3, 1, 1).to(
        memory_format=L.channels_last).stride(),
    "to channels_last with a size-1 channel": lambda L: (
        L.arange(40.0).reshape(2, 1, 4, 5).to(L.float64, memory_format=L.channels_last).stride(),
        L.arange(40.0).reshape(2, 1, 4, 5).to(memory_format=L.channels_last).stride()),
    "preserve keeps size-1 strides": lambda L: (_p(L).stride(), _p(L).clone().stride(),
                                                L.zeros_like(_p(L)).stride(),
                                                L.arange(2.0)[::2].clone().stride()),
    "grad keeps size-1 strides": lambda L: _grad_stride(_p(L).requires_grad_()),
    "contiguous preserve of contiguous": lambda L: [L.ones(*s).contiguous(
        memory_format=L.preserve_format).stride() for s in ((), (3, 3))],
    "to channels_last_3d": lambda L: (
        L.arange(720.0).reshape(2, 3, 4, 5, 6).to(memory_format=L.channels_last_3d).stride(),
        _to_is_self(L.ones(2, 3, 4, 5, 6).contiguous(memory_format=L.channels_last_3d),
                    L.channels_last_3d, L.contiguous_format, L.channels_last)),
    "memory_format by position": lambda L: [_outcome(f, L) for f in (
        lambda L: L.ones(3).contiguous(L.contiguous_format),
        lambda L: L.ones(3).is_contiguous(L.contiguous_format),
        lambda L: L.ones(2, 3, 4, 5).to(L.float16, L.channels_last))],
}


@pytest.mark.parametrize("name", sorted(_MORE))
def test_more_memory_format_cases_as_torch(name):
    torch = pytest.importorskip("torch")
    assert _outcome(_MORE[name], tg) == _outcome(_MORE[name], torch)
