"""Saved-tensor hooks (autograd.graph.saved_tensors_hooks, save_on_cpu,
disable_saved_tensors_hooks) and grad_fn._saved_* / _raw_saved_*, each program run on tapegrad and
on torch and its trace compared."""
import threading

import numpy as np
import pytest
from torch_compare import caught, node_chain, same_error

import tapegrad as tg


def plain(v):
    """A value as comparable plain data (a tensor: its values, dtype name and shape)."""
    if hasattr(v, "detach") and hasattr(v, "dtype"):
        return (np.asarray(v.detach().numpy()).round(5).tolist(), str(v.dtype).split(".")[-1],
                tuple(v.shape))
    if isinstance(v, (tuple, list)):
        return type(v)(plain(x) for x in v)
    return v


def inputs(lib, shapes, rg=None, seed=0):
    rng = np.random.default_rng(seed)
    return [lib.tensor(rng.standard_normal(s).astype(np.float32) + (2.0 if pos else 0.0),
                       requires_grad=True if rg is None else rg[i])
            for i, (s, pos) in enumerate(shapes)]


def tag(t, ts, y):
    """Which tensor of the program a hook got: an input's position, the output, or else its
    shape and dtype."""
    for i, x in enumerate(ts):
        if t is x:
            return f"in{i}"
    if t is y:
        return "out"
    return ("other", tuple(t.shape), str(t.dtype).split(".")[-1])


def _mul(lib, a, b): return a * b
def _mul_num(lib, a): return a * 2.0
def _add(lib, a, b): return a + b
def _exp(lib, a): return a.exp()
def _tanh(lib, a): return a.tanh()
def _sigmoid(lib, a): return a.sigmoid()
def _relu(lib, a): return lib.nn.functional.relu(a)
def _relu_m(lib, a): return a.relu()
def _matmul(lib, a, b): return a @ b
def _mm(lib, a, b): return a.mm(b)
def _mv(lib, a, b): return a @ b
def _bmm(lib, a, b): return a.bmm(b)
def _linear(lib, a, w, b): return lib.nn.functional.linear(a, w, b)
def _linear_nb(lib, a, w): return lib.nn.functional.linear(a, w)
def _sum(lib, a): return a.sum()
def _sum_dim(lib, a): return a.sum(1)
def _mean(lib, a): return a.mean()
def _mean_dim(lib, a): return a.mean(1, keepdim=True)
def _pow2(lib, a): return a ** 2
def _pow_f(lib, a): return a.pow(2.5)
def _pow_t(lib, a, b): return a.pow(b)
def _div(lib, a, b): return a / b
def _div_num(lib, a): return a / 2.0
def _sin(lib, a): return a.sin()
def _cos(lib, a): return a.cos()
def _log(lib, a): return a.log()
def _sqrt(lib, a): return a.sqrt()
def _log_softmax(lib, a): return lib.nn.functional.log_softmax(a, 1)
def _softmax(lib, a): return lib.nn.functional.softmax(a, 1)


V3, M23 = ((3,), False), ((2, 3), False)
P3 = ((3,), True)     # positive values (log, sqrt, pow by a tensor)
OPS = [
    (_mul, [V3, V3], None), (_mul, [V3, V3], [True, False]), (_mul, [V3, V3], [False, True]),
    (_mul_num, [V3], None), (_add, [V3, V3], None), (_exp, [V3], None), (_tanh, [V3], None),
    (_sigmoid, [V3], None), (_relu, [V3], None), (_relu_m, [V3], None),
    (_matmul, [M23, ((3, 4), False)], None), (_mm, [M23, ((3, 4), False)], None),
    (_matmul, [M23, ((3, 4), False)], [True, False]), (_mv, [M23, V3], None),
    (_bmm, [((2, 2, 3), False), ((2, 3, 4), False)], None),
    (_linear, [M23, ((4, 3), False), ((4,), False)], None),
    (_linear, [M23, ((4, 3), False), ((4,), False)], [False, True, True]),
    (_linear_nb, [M23, ((4, 3), False)], None),
    (_sum, [M23], None), (_sum_dim, [M23], None), (_mean, [M23], None), (_mean_dim, [M23], None),
    (_pow2, [V3], None), (_pow_f, [P3], None), (_pow_t, [P3, V3], None), (_div, [V3, P3], None),
    (_div_num, [V3], None), (_sin, [V3], None), (_cos, [V3], None), (_log, [P3], None),
    (_sqrt, [P3], None), (_log_softmax, [M23], None), (_softmax, [M23], None),
]
OP_IDS = [f"{f.__name__[1:]}-{k}" for k, (f, _, _) in enumerate(OPS)]


def hooked_run(lib, fn, shapes, rg):
    """fn's pack calls (which tensor, when), unpack calls during backward, the gradients."""
    log = []
    ts = inputs(lib, shapes, rg)
    box = {}

    def pack(t):
        log.append(("pack", t))
        return ("packed", t)

    def unpack(p):
        log.append(("unpack",))
        return p[1]

    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        box["y"] = y = fn(lib, *ts)
        log.append(("forward done",))
    y.sum().backward()
    trace = [(e[0], tag(e[1], ts, y)) if e[0] == "pack" else e for e in log]
    return trace, [plain(t.grad) for t in ts], y.grad_fn.name()


@pytest.mark.parametrize("case", OPS, ids=OP_IDS)
def test_pack_unpack_calls_match_torch(case, torch):
    fn, shapes, rg = case
    ours = hooked_run(tg, fn, shapes, rg)
    theirs = hooked_run(torch, fn, shapes, rg)
    assert ours == theirs


@pytest.mark.parametrize("case", OPS, ids=OP_IDS)
def test_saved_attribute_names_and_values(case, torch):
    fn, shapes, rg = case

    def attrs(lib):
        ts = inputs(lib, shapes, rg)
        y = fn(lib, *ts)
        g = y.grad_fn
        # (strides are left out: tapegrad keeps no strides of a matrix it does not save)
        names = [n for n in dir(g) if n.startswith(("_saved", "_raw_saved"))
                 and not n.endswith("_sym_strides")]
        vals = {}
        for n in names:
            if n.startswith("_raw"):
                continue
            v = getattr(g, n)
            vals[n] = tag(v, ts, y) if any(v is x for x in ts) else plain(v)
        return names, vals

    assert attrs(tg) == attrs(torch)


def test_saved_identity_as_torch(torch):
    def prog(lib):
        a = inputs(lib, [V3])[0]
        y, z = a.exp(), a.sin()
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y2, z2 = a.exp(), a.sin()
        s2 = z2.grad_fn._saved_self
        return (y.grad_fn._saved_result is y, z.grad_fn._saved_self is a,
                y2.grad_fn._saved_result is y2, s2 is a, s2.grad_fn is None, s2.requires_grad,
                y2.grad_fn._saved_result.grad_fn is y2.grad_fn)
    assert prog(tg) == prog(torch)


def test_unpack_hook_must_return_a_tensor(torch):
    def make(lib, ret):
        a = inputs(lib, [V3])[0]
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: ret):
            return a.exp()
    same_error(lambda lib: make(lib, 3).sum().backward(), torch)
    same_error(lambda lib: make(lib, None).grad_fn._saved_result, torch)


def test_pack_hook_modifying_its_input_raises(torch):
    def prog(lib):
        def bad(t):
            t.add_(1)
            return t
        b = inputs(lib, [V3])[0].clone()
        with lib.autograd.graph.saved_tensors_hooks(bad, lambda t: t):
            b.sin()
    same_error(prog, torch)


def test_pack_hook_exception_propagates(torch):
    def prog(lib):
        def pack(t):
            raise ValueError("boom")
        with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            inputs(lib, [V3])[0].exp()
    same_error(prog, torch)


def test_disable_saved_tensors_hooks(torch):
    def enter_hooks(lib):
        with lib.autograd.graph.disable_saved_tensors_hooks("no hooks here"), \
                lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            pass

    def disable_inside_hooks(lib):
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t), \
                lib.autograd.graph.disable_saved_tensors_hooks("inner"):
            pass
    same_error(enter_hooks, torch)
    same_error(disable_inside_hooks, torch)

    def after(lib):
        # the state comes back after each block, also after one that raised
        caught(lib, enter_hooks)
        caught(lib, disable_inside_hooks)
        n = []
        with lib.autograd.graph.saved_tensors_hooks(lambda t: n.append(1) or t, lambda t: t):
            inputs(lib, [V3])[0].exp()
        with lib.autograd.graph.disable_saved_tensors_hooks("outer"):
            with lib.autograd.graph.disable_saved_tensors_hooks("inner"):
                pass
            e = caught(lib, lambda lib: lib.autograd.graph.saved_tensors_hooks(
                lambda t: t, lambda t: t).__enter__())
        return len(n), str(e)
    assert after(tg) == after(torch)


def test_nothing_packed_without_grad(torch):
    def prog(lib):
        n = []
        a, b = inputs(lib, [V3, V3], [True, False])
        with lib.autograd.graph.saved_tensors_hooks(lambda t: n.append(1) or t, lambda t: t):
            with lib.no_grad():
                a.exp()
            b.exp()         # (no input requires grad: nothing recorded)
            b * b
        return len(n)
    assert prog(tg) == prog(torch) == 0


def test_nesting_innermost_applies(torch):
    def prog(lib):
        log = []
        a = inputs(lib, [V3])[0]
        hooks = lib.autograd.graph.saved_tensors_hooks

        def pair(name):
            return (lambda t: log.append("pack " + name) or (name, t),
                    lambda p: log.append("unpack " + p[0]) or p[1])
        with hooks(*pair("outer")):
            y1 = a.exp()
            with hooks(*pair("inner")):
                y2 = a.sin()
            y3 = a.cos()
        y4 = a.tanh()
        (y1 + y2 + y3 + y4).sum().backward()
        return log, plain(a.grad)
    assert prog(tg) == prog(torch)


def test_version_check_through_hooks(torch):
    # with hooks torch checks no version: an in-place change after an identity pack goes by
    def with_hooks(lib):
        a = inputs(lib, [V3])[0]
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            b = a.clone()
            c = b.sin()
        b.add_(1)
        c.sum().backward()
        return plain(a.grad)
    assert with_hooks(tg) == with_hooks(torch)

    def without(lib, attr):
        a = inputs(lib, [V3])[0]
        b = a.clone()
        c = b.sin()
        b.add_(1)
        if attr:
            _ = c.grad_fn._saved_self
        c.sum().backward()
    for attr in (False, True):
        e_ours, e_theirs = caught(tg, lambda lib, attr=attr: without(lib, attr)), \
            caught(torch, lambda lib, attr=attr: without(lib, attr))
        assert type(e_ours) is type(e_theirs) is RuntimeError
        assert str(e_ours).split(":")[0] == str(e_theirs).split(":")[0]


FREED_START = ("Trying to backward through the graph a second time (or directly access saved "
               "tensors after they have already been freed)")


@pytest.mark.parametrize("hooked", [False, True])
@pytest.mark.parametrize("attr", ["_saved_result", "backward"])
def test_freed_saved_tensors(hooked, attr, torch):
    def prog(lib):
        a = inputs(lib, [V3])[0]
        if hooked:
            with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                y = a.exp()
        else:
            y = a.exp()
        y.sum().backward()
        if attr == "backward":
            y.sum().backward()
        else:
            _ = y.grad_fn._saved_result

    ours, theirs = caught(tg, prog), caught(torch, prog)
    assert type(ours) is type(theirs) is RuntimeError
    assert str(ours).startswith(FREED_START) and str(theirs).startswith(FREED_START)

    def sizes_after(lib):
        # what is not a tensor stays readable
        m = inputs(lib, [M23])[0]
        y = m.sum(1)
        y.sum().backward()
        return y.grad_fn._saved_self_sym_sizes, y.grad_fn._saved_dim
    assert sizes_after(tg) == sizes_after(torch)


def test_retain_graph_unpacks_each_backward(torch):
    def prog(lib):
        n = []
        a, b = inputs(lib, [M23, ((3, 4), False)])
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: n.append(1) or t):
            y = (a @ b).tanh().mean()
        y.backward(retain_graph=True)
        first = len(n)
        y.backward()
        return first, len(n), plain(a.grad), plain(b.grad)
    assert prog(tg) == prog(torch)


@pytest.mark.parametrize("prog_name", ["cube", "exp", "mlp"])
def test_create_graph_with_hooks(prog_name, torch):
    def prog(lib):
        F = lib.nn.functional
        n = {"pack": 0, "unpack": 0}

        def pack(t):
            n["pack"] += 1
            return t * 1     # a copy: the saved tensor itself is not kept
        def unpack(t):
            n["unpack"] += 1
            return t
        x, w = inputs(lib, [V3, ((2, 3), False)])
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            if prog_name == "cube":
                y = (x * x * x).sum()
            elif prog_name == "exp":
                y = x.exp().sum()
            else:
                y = F.cross_entropy(F.linear(x[None], w).tanh(), lib.tensor([1]))
            forward_packs = n["pack"]
            g, = lib.autograd.grad(y, x, create_graph=True)
            g.pow(2).sum().backward()
        # (the double-backward formulas of cross_entropy's and linear's nodes record other ops
        # than torch's, so their counts differ: see the report)
        return plain(g), plain(x.grad), plain(w.grad), forward_packs, \
            n if prog_name != "mlp" else None
    assert prog(tg) == prog(torch)


def test_custom_function_save_for_backward(torch):
    def prog(lib):
        log = []

        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                log.append("forward")
                out = x * y
                ctx.save_for_backward(y, None, x, out)
                log.append("saved")
                return out

            @staticmethod
            def backward(ctx, g):
                y, none, x, out = ctx.saved_tensors
                log.append(("backward", none is None, plain(out)))
                return g * y, g * x

        a, b = inputs(lib, [V3, V3])
        box = {}
        with lib.autograd.graph.saved_tensors_hooks(
                lambda t: log.append(("pack", tag(t, (a, b), box.get("o")))) or [t],
                lambda p: log.append("unpack") or p[0]):
            o = box["o"] = F.apply(a, b)
        st = o.grad_fn.saved_tensors
        log.append(("saved_tensors", st[2] is a, st[1] is None, plain(st[0])))
        o.sum().backward()
        return log, plain(a.grad), plain(b.grad)
    assert prog(tg) == prog(torch)


def test_hooks_are_thread_local(torch):
    def prog(lib):
        n = []

        def worker():
            inputs(lib, [V3])[0].exp()
            with lib.autograd.graph.saved_tensors_hooks(lambda t: n.append("w") or t,
                                                        lambda t: t):
                inputs(lib, [V3])[0].exp()
        with lib.autograd.graph.saved_tensors_hooks(lambda t: n.append("main") or t,
                                                    lambda t: t):
            th = threading.Thread(target=worker)
            th.start()
            th.join()
            inputs(lib, [V3])[0].exp()
        inputs(lib, [V3])[0].exp()
        return n
    assert prog(tg) == prog(torch) == ["w", "main"]


def test_save_on_cpu(torch):
    def prog(lib):
        a, w = inputs(lib, [M23, ((4, 3), False)])
        out = []
        for pin in (False, True):
            with lib.autograd.graph.save_on_cpu(pin_memory=pin):
                y = lib.nn.functional.linear(a, w).exp()
            out.append(plain(y.grad_fn._saved_result))
            y.sum().backward()
        return out, plain(a.grad), plain(w.grad)
    assert prog(tg) == prog(torch)
    assert issubclass(tg.autograd.graph.save_on_cpu, tg.autograd.graph.saved_tensors_hooks)


def test_linear_graph_under_hooks(torch):
    def prog(lib):
        a, w, b = inputs(lib, [M23, ((4, 3), False), ((4,), False)])
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = lib.nn.functional.linear(a, w, b)
        g = y.grad_fn
        return node_chain(y), [f.name() if f else None for f, _ in g.next_functions], \
            plain(g._saved_mat2), g._saved_mat2.grad_fn.name()
    assert prog(tg) == prog(torch)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_saved(reduction, weighted, torch):
    def prog(lib):
        F = lib.nn.functional
        packed = []
        a = inputs(lib, [((4, 5), False)])[0]
        w = lib.tensor([0.5, 1.0, 2.0, 1.5, 0.25]) if weighted else None
        target = lib.tensor([1, 2, 0, -100])
        with lib.autograd.graph.saved_tensors_hooks(lambda t: packed.append(plain(t)) or t,
                                                    lambda t: t):
            loss = F.nll_loss(F.log_softmax(a, 1), target, weight=w, reduction=reduction)
        g = loss.grad_fn
        plain_loss = F.cross_entropy(a, lib.tensor([1, 2, 0, 4]))
        h = plain_loss.grad_fn
        return (packed, plain(g._saved_total_weight), g._saved_reduction, g._saved_ignore_index,
                plain(g._saved_target), plain(g._saved_weight), plain(h._saved_total_weight),
                g._saved_self is g.next_functions[0][0]._saved_result)
    assert prog(tg) == prog(torch)


def test_raw_saved_register_hooks(torch):
    def prog(lib):
        log = []
        a = inputs(lib, [V3])[0]
        y = a.sin()
        r = y.grad_fn._raw_saved_self
        r.register_hooks(lambda t: log.append("p") or t * 1, lambda t: log.append("u") or t)
        s = y.grad_fn._saved_self
        log.append(("is a", s is a, plain(s)))
        log.append(type(caught(lib, lambda lib: r.register_hooks(lambda t: t, lambda t: t)))
                   .__name__)
        y.sum().backward()
        return log, plain(a.grad)
    assert prog(tg) == prog(torch)

    def freed(lib):
        a = inputs(lib, [V3])[0]
        y = a.exp()
        y.sum().backward()
        y.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)

    def none(lib):
        a, b = inputs(lib, [V3, V3], [True, False])
        (a * b).grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)

    def twice(lib):
        a = inputs(lib, [V3])[0]
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = a.exp()
        y.grad_fn._raw_saved_result.register_hooks(lambda t: t, lambda t: t)
    for prog in (freed, none, twice):
        same_error(prog, torch)


def test_missing_attribute(torch):
    def prog(lib):
        g = inputs(lib, [V3])[0].exp().grad_fn
        return (hasattr(g, "_saved_self"), hasattr(g, "_saved_result"), hasattr(g, "foo"),
                hasattr(g, "_raw_saved_result"))
    assert prog(tg) == prog(torch)
    same_error(lambda lib: inputs(lib, [V3])[0].exp().grad_fn._saved_self, torch, prefix=True)


def _mul_(x, b): return x.mul_(b)
def _sin_(x, b): return x.sin_()
def _exp_(x, b): return x.exp_()
def _div_(x, b): return x.div_(b)
def _pow_(x, b): return x.pow_(2)
def _setitem(x, b):
    x[1:] = x[1:] * b[1:]
    return x
def _view_mul_(x, b):
    x[1:].mul_(b[1:])
    return x


@pytest.mark.parametrize("op", [_mul_, _sin_, _exp_, _div_, _pow_, _setitem, _view_mul_],
                         ids=lambda f: f.__name__[1:])
def test_inplace_ops_under_identity_hooks(op, torch):
    # the pack hook keeps the very tensor it gets: the in-place write must not reach it
    def prog(lib):
        log = []
        a = lib.tensor([0.5, 1.5, -2.0], requires_grad=True)
        b = lib.tensor([2.0, 3.0, 4.0], requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(lambda t: log.append(tuple(t.shape)) or t,
                                                    lambda t: t):
            y = op(a * 1, b)
        y.sum().backward()
        return log, plain(a.grad), None if b.grad is None else plain(b.grad), y.grad_fn.name()
    assert prog(tg) == prog(torch)


def test_register_hooks_on_each_of_linears_matrices(torch):
    # one matrix's hooks set: reading the other calls no unpack hook but its own
    def prog(lib):
        x = lib.ones(2, 3, requires_grad=True)
        w = lib.tensor([[1., 2, 3], [4, 5, 6]], requires_grad=True)
        b = lib.zeros(2, requires_grad=True)
        y = lib.nn.functional.linear(x, w, b)
        log = []
        g = y.grad_fn
        for name in ("_raw_saved_mat2", "_raw_saved_mat1"):
            getattr(g, name).register_hooks(lambda t: log.append(tuple(t.shape)) or t * 1,
                                            lambda t: log.append("u") or t)
        (y * y).sum().backward()
        return log, plain(x.grad), plain(w.grad), plain(b.grad), \
            [f.name() for f, _ in g.next_functions]
    assert prog(tg) == prog(torch)


def test_custom_function_saving_its_output_under_save_on_cpu(torch):
    def prog(lib):
        class Sq(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                r = a * a
                ctx.save_for_backward(a, r)
                return r

            @staticmethod
            def backward(ctx, g):
                a, _ = ctx.saved_tensors
                return 2 * a * g

        a = lib.tensor([1., 2., 3.], requires_grad=True)
        with lib.autograd.graph.save_on_cpu():
            o = Sq.apply(a)
        gr, = lib.autograd.grad(o.sum(), a, create_graph=True)
        gr.sum().backward()
        r = o.grad_fn.saved_tensors[1]
        return plain(gr), plain(a.grad), r.grad_fn is o.grad_fn, r is o
    assert prog(tg) == prog(torch)
