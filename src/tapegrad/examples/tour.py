"""A guided tour of the tape: run ``python -m tapegrad.examples.tour``.

Every line printed is real output of the library; object addresses are left out so the text is
the same on every run (the tests compare it line by line).
"""
from __future__ import annotations

import tapegrad


def _node(fn) -> str:
    return "None" if fn is None else f"<{type(fn).__name__}>"


def _edges(fn) -> str:
    return "(" + ", ".join(f"({_node(n)}, {nr})" for n, nr in fn.next_functions) + ")"


def branchy(x):
    """Plain Python control flow: only the branch that runs is recorded."""
    if x.item() > 0:
        return x * x
    return x * 3


def main(argv=None) -> None:
    say = print
    say("1. A leaf tensor that requires grad")
    x = tapegrad.tensor([2.0], requires_grad=True)
    say(f"   x = {x}")
    say(f"   x.is_leaf = {x.is_leaf}, x.grad_fn = {x.grad_fn}")

    say("2. Each op records a node on the tape")
    y = x * x + 3 * x
    say(f"   y = x*x + 3*x = {y}")
    say(f"   y.grad_fn = {_node(y.grad_fn)}")
    say(f"   y.grad_fn.next_functions = {_edges(y.grad_fn)}")
    mul = y.grad_fn.next_functions[0][0]
    say(f"   the first MulBackward0 leads to {_edges(mul)}: x reached twice, through its "
        f"AccumulateGrad")

    say("3. backward() walks the tape in reverse")
    y.backward(retain_graph=True)
    say(f"   dy/dx at x=2 is 2x + 3 = {x.grad}")

    say("4. Control flow is plain Python: only the branch that ran is on the tape")
    pos = branchy(tapegrad.tensor([2.0], requires_grad=True))
    neg = branchy(tapegrad.tensor([-2.0], requires_grad=True))
    say(f"   branchy(2.0)  = {pos}: {_node(pos.grad_fn)} -> {_edges(pos.grad_fn)}")
    say(f"   branchy(-2.0) = {neg}: {_node(neg.grad_fn)} -> {_edges(neg.grad_fn)}")

    say("5. Saved tensors are freed after backward")
    x.grad = None
    z = x * x
    z.backward()
    try:
        z.backward()
    except RuntimeError as err:
        say(f"   second backward: RuntimeError: {str(err).split(':')[0]}")
    x.grad = None
    z = x * x
    z.backward(retain_graph=True)
    z.backward()
    say(f"   with retain_graph=True both passes run: x.grad = {x.grad} (2x, twice)")

    say("6. Gradients accumulate until you zero them")
    x.grad = None
    for step in range(1, 4):
        (x * x + 3 * x).backward()
        say(f"   after backward #{step}: x.grad = {x.grad}")
    x.grad = None
    say(f"   after x.grad = None: x.grad = {x.grad}")
    (x * x + 3 * x).backward()
    say(f"   and one more backward: x.grad = {x.grad}")

    say("7. Nothing is recorded under no_grad()")
    with tapegrad.no_grad():
        w = x * 2
    say(f"   with no_grad: x * 2 = {w}, requires_grad={w.requires_grad}, grad_fn={w.grad_fn}")


if __name__ == "__main__":
    main()
