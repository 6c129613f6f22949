"""The tour's printed lines are the library's real behaviour; pin them exactly."""
import io
from contextlib import redirect_stdout

from tapegrad.examples import tour

EXPECTED = """\
1. A leaf tensor that requires grad
   x = tensor([2.], requires_grad=True)
   x.is_leaf = True, x.grad_fn = None
2. Each op records a node on the tape
   y = x*x + 3*x = tensor([10.], grad_fn=<AddBackward0>)
   y.grad_fn = <AddBackward0>
   y.grad_fn.next_functions = ((<MulBackward0>, 0), (<MulBackward0>, 0))
   the first MulBackward0 leads to ((<AccumulateGrad>, 0), (<AccumulateGrad>, 0)): x reached twice, through its AccumulateGrad
3. backward() walks the tape in reverse
   dy/dx at x=2 is 2x + 3 = tensor([7.])
4. Control flow is plain Python: only the branch that ran is on the tape
   branchy(2.0)  = tensor([4.], grad_fn=<MulBackward0>): <MulBackward0> -> ((<AccumulateGrad>, 0), (<AccumulateGrad>, 0))
   branchy(-2.0) = tensor([-6.], grad_fn=<MulBackward0>): <MulBackward0> -> ((<AccumulateGrad>, 0), (None, 0))
5. Saved tensors are freed after backward
   second backward: RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed)
   with retain_graph=True both passes run: x.grad = tensor([8.]) (2x, twice)
6. Gradients accumulate until you zero them
   after backward #1: x.grad = tensor([7.])
   after backward #2: x.grad = tensor([14.])
   after backward #3: x.grad = tensor([21.])
   after x.grad = None: x.grad = None
   and one more backward: x.grad = tensor([7.])
7. Nothing is recorded under no_grad()
   with no_grad: x * 2 = tensor([4.]), requires_grad=False, grad_fn=None
"""


def test_tour_output_is_exact():
    buf = io.StringIO()
    with redirect_stdout(buf):
        tour.main()
    assert buf.getvalue() == EXPECTED


def test_tour_values_match_torch():
    import pytest
    torch = pytest.importorskip("torch")
    x = torch.tensor([2.0], requires_grad=True)
    y = x * x + 3 * x
    assert repr(y) == "tensor([10.], grad_fn=<AddBackward0>)"
    y.backward()
    assert repr(x.grad) == "tensor([7.])"
    assert "y = x*x + 3*x = tensor([10.], grad_fn=<AddBackward0>)" in EXPECTED
    assert "2x + 3 = tensor([7.])" in EXPECTED
