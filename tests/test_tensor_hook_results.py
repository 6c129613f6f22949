"""A tensor hook (``register_hook``) may return a replacement gradient only of the gradient's
dtype and shape, as torch's check_single_result: TypeError for a non-Tensor, RuntimeError
("has changed the type / size of value") otherwise, on leaves and non-leaves alike."""
import pytest

import tapegrad as tg

CASES = {
    "non-tensor": (lambda L: 5, TypeError, "expected Variable, but hook returned 'int'"),
    "shape": (lambda L: L.ones(3), RuntimeError, "has changed the size of value"),
    "dtype": (lambda L: L.ones(2, dtype=L.float64), RuntimeError,
              "has changed the type of value"),
}


def _run(lib, leaf, make):
    a = lib.tensor([1.0, 2.0], requires_grad=True)
    if leaf:
        a.register_hook(lambda g: make(lib))
        (a * 2).sum().backward()
    else:
        m = a * 2
        m.register_hook(lambda g: make(lib))
        m.sum().backward()
    return a.grad


@pytest.mark.parametrize("leaf", [True, False])
@pytest.mark.parametrize("case", list(CASES))
def test_a_hook_result_of_another_type_or_shape_raises_as_torch(case, leaf):
    make, exc, msg = CASES[case]
    with pytest.raises(exc, match=msg) as e:
        _run(tg, leaf, make)
    assert "register_hook" in str(e.value) and "shape [2]" in str(e.value)
    torch = pytest.importorskip("torch")
    with pytest.raises(exc, match=msg):
        _run(torch, leaf, make)


def test_a_hook_result_of_the_same_type_and_shape_replaces_the_gradient():
    for lib in (tg, pytest.importorskip("torch")):
        assert _run(lib, True, lambda L: L.full((2,), 5.0)).tolist() == [5.0, 5.0]
