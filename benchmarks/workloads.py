"""The benchmark workloads, each written for three frameworks.

* ``tapegrad`` and ``torch`` run the *same* source (:class:`TorchLike` hands each workload the
  framework module as ``T`` and its functional namespace as ``F``): tapegrad has PyTorch's API.
* ``numpy`` is a hand-written forward + backward of the same function: what a careful person
  writes without an autodiff library (intermediates reused, in-place updates where natural). It
  is the floor tapegrad is measured against.

A workload object is built by :func:`build` and offers:

``step()``   one timed iteration; returns ``{phase: seconds}`` (``total`` always present).
``check()``  loss and gradients of the first iteration from the initial state, as a dict of
             NumPy arrays (``loss`` first), for the cross-framework correctness check. It leaves
             parameters unchanged.

All inputs come from ``numpy.random.RandomState(seed)`` in the same order for every framework, so
the three see identical numbers. Nothing here imports a framework at module level: a worker
process imports only the framework it measures.
"""
from __future__ import annotations

import time

import numpy as np

_perf = time.perf_counter

# workload sizes: (default, --quick). W1/W2: ops in the chain; W7: nodes.
W1_OPS = 1000
W2_OPS = 10_000
W3_SIZES = (784, 512, 512, 10)
W3_BATCH = 256
W4_N = 1_000_000
W5_BATCH = 64
W7_SIZES = (100_000, 1_000_000)
W8_SIZES, W8_BATCH = (8, 8, 8, 4), 4
LR = 0.01


# ---------------------------------------------------------------------------------------------
# shared data
# ---------------------------------------------------------------------------------------------
def _uniform_init(rng, shape, fan_in, dtype):
    bound = 1.0 / np.sqrt(fan_in)
    return rng.uniform(-bound, bound, shape).astype(dtype)


def mlp_data(seed=0, sizes=W3_SIZES, batch=W3_BATCH):
    """x (batch, 784) float32, y (batch,) int64 in [0, 10), and [W1, b1, W2, b2, W3, b3] in
    torch's Linear layout (out_features, in_features)."""
    rng = np.random.RandomState(seed)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = rng.randint(0, sizes[-1], batch).astype(np.int64)
    params = []
    for fi, fo in zip(sizes[:-1], sizes[1:]):
        params.append(_uniform_init(rng, (fo, fi), fi, np.float32))
        params.append(_uniform_init(rng, (fo,), fi, np.float32))
    return x, y, params


def cnn_data(seed=0, batch=W5_BATCH):
    """x (batch, 1, 28, 28) float32, y (batch,) int64, [cw1, cb1, cw2, cb2, fw, fb]."""
    rng = np.random.RandomState(seed)
    x = rng.standard_normal((batch, 1, 28, 28)).astype(np.float32)
    y = rng.randint(0, 10, batch).astype(np.int64)
    params = [_uniform_init(rng, (16, 1, 3, 3), 9, np.float32),
              _uniform_init(rng, (16,), 9, np.float32),
              _uniform_init(rng, (32, 16, 3, 3), 144, np.float32),
              _uniform_init(rng, (32,), 144, np.float32),
              _uniform_init(rng, (10, 32 * 7 * 7), 32 * 7 * 7, np.float32),
              _uniform_init(rng, (10,), 32 * 7 * 7, np.float32)]
    return x, y, params


def wide_data(seed=0, n=W4_N):
    rng = np.random.RandomState(seed)
    return (rng.uniform(-1, 1, n).astype(np.float32), rng.uniform(-1, 1, n).astype(np.float32))


# ---------------------------------------------------------------------------------------------
# tapegrad and torch: one source
# ---------------------------------------------------------------------------------------------
class TorchLike:
    """The framework handle the shared workloads use: ``T`` (the module), ``F`` (functional),
    and the few things that are spelled differently or may be missing in tapegrad."""

    def __init__(self, name, threads=None):
        self.name = name
        if name == "torch":
            import torch
            import torch.nn.functional as F
            if threads:
                torch.set_num_threads(threads)
            self.T, self.F = torch, F
        else:
            import tapegrad
            self.T = tapegrad
            import tapegrad.nn.functional as F
            self.F = F
        self.optimizer_kind = None

    def tensor(self, arr, requires_grad=False):
        return self.T.tensor(arr, requires_grad=requires_grad)

    @staticmethod
    def numpy(t):
        return np.array(t.detach().numpy(), copy=True)

    def sgd(self, params, lr):
        """torch.optim.SGD / tapegrad.optim.SGD (p -= lr * grad), grads set to None after."""
        opt = self.T.optim.SGD(params, lr=lr)
        self.optimizer_kind = f"{self.name}.optim.SGD"

        def update():
            opt.step()
            opt.zero_grad(set_to_none=True)
        return update


def _chain(y, n_ops):
    for i in range(n_ops):
        k = i % 3
        if k == 0:
            y = y * 1.0001
        elif k == 1:
            y = y + 0.001
        else:
            y = y.tanh()
    return y


class TLChain:
    """W1 / W2: x*1.0001, x+0.001, tanh cycled n_ops times, sum, backward."""

    def __init__(self, fw, shape, n_ops):
        self.fw, self.n = fw, n_ops
        self.x = fw.tensor(np.full(shape, 0.5), requires_grad=True)   # float64

    def step(self):
        x = self.x
        t0 = _perf()
        s = _chain(x, self.n).sum()
        t1 = _perf()
        s.backward()
        t2 = _perf()
        x.grad = None
        return {"fwd": t1 - t0, "bwd": t2 - t1, "total": t2 - t0}

    def check(self):
        s = _chain(self.x, self.n).sum()
        s.backward()
        out = {"loss": self.fw.numpy(s), "x.grad": self.fw.numpy(self.x.grad)}
        self.x.grad = None
        return out


class TLMLP:
    """W3: 784-512-512-10 ReLU MLP, cross-entropy, backward, SGD."""

    def __init__(self, fw, seed=0, sizes=W3_SIZES, batch=W3_BATCH):
        x, y, params = mlp_data(seed, sizes, batch)
        self.fw = fw
        self.x, self.y = fw.tensor(x), fw.tensor(y)
        self.params = [fw.tensor(p, requires_grad=True) for p in params]
        self.update = fw.sgd(self.params, LR)

    def loss(self):
        F = self.fw.F
        w1, b1, w2, b2, w3, b3 = self.params
        h = F.relu(F.linear(self.x, w1, b1))
        h = F.relu(F.linear(h, w2, b2))
        return F.cross_entropy(F.linear(h, w3, b3), self.y)

    def step(self):
        t0 = _perf()
        loss = self.loss()
        t1 = _perf()
        loss.backward()
        t2 = _perf()
        self.update()
        t3 = _perf()
        return {"fwd": t1 - t0, "bwd": t2 - t1, "update": t3 - t2, "total": t3 - t0}

    def check(self):
        loss = self.loss()
        loss.backward()
        out = {"loss": self.fw.numpy(loss)}
        for name, p in zip(("W1", "b1", "W2", "b2", "W3", "b3"), self.params):
            out[name + ".grad"] = self.fw.numpy(p.grad)
            p.grad = None
        return out


def tl_wide(a, b):
    """The 20 elementwise ops of W4 (also spelled out by hand in :class:`NPWide`)."""
    c = a * b                # 1
    c = c + a                # 2
    c = c.tanh()             # 3
    c = c - b                # 4
    c = c * 0.5              # 5
    c = c.exp()              # 6
    c = c * a                # 7
    c = c.sigmoid()          # 8
    c = c + b                # 9
    c = c.tanh()             # 10
    c = c * b                # 11
    c = c - a                # 12
    c = c.sigmoid()          # 13
    c = c * c                # 14
    c = c + 1.0              # 15
    c = c.tanh()             # 16
    c = c * a                # 17
    c = c.exp()              # 18
    c = c - b                # 19
    c = c.sigmoid()          # 20
    return c.sum()


class TLWide:
    """W4: two float32 tensors of 1e6 elements, 20 elementwise ops, sum, backward."""

    def __init__(self, fw, seed=0, n=W4_N):
        a, b = wide_data(seed, n)
        self.fw = fw
        self.a = fw.tensor(a, requires_grad=True)
        self.b = fw.tensor(b, requires_grad=True)

    def step(self):
        t0 = _perf()
        s = tl_wide(self.a, self.b)
        t1 = _perf()
        s.backward()
        t2 = _perf()
        self.a.grad = self.b.grad = None
        return {"fwd": t1 - t0, "bwd": t2 - t1, "total": t2 - t0}

    def check(self):
        s = tl_wide(self.a, self.b)
        s.backward()
        out = {"loss": self.fw.numpy(s), "a.grad": self.fw.numpy(self.a.grad),
               "b.grad": self.fw.numpy(self.b.grad)}
        self.a.grad = self.b.grad = None
        return out


class TLCNN:
    """W5: conv3x3(16, pad 1) relu maxpool2, conv3x3(32, pad 1) relu maxpool2, linear(10),
    cross-entropy, backward, SGD."""

    def __init__(self, fw, seed=0, batch=W5_BATCH):
        x, y, params = cnn_data(seed, batch)
        self.fw = fw
        self.x, self.y = fw.tensor(x), fw.tensor(y)
        self.params = [fw.tensor(p, requires_grad=True) for p in params]
        self.update = fw.sgd(self.params, LR)

    def loss(self):
        F = self.fw.F
        cw1, cb1, cw2, cb2, fw_, fb = self.params
        h = F.max_pool2d(F.relu(F.conv2d(self.x, cw1, cb1, padding=1)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, cw2, cb2, padding=1)), 2)
        h = h.reshape(h.shape[0], -1)
        return F.cross_entropy(F.linear(h, fw_, fb), self.y)

    step = TLMLP.step

    def check(self):
        loss = self.loss()
        loss.backward()
        out = {"loss": self.fw.numpy(loss)}
        for name, p in zip(("conv1.w", "conv1.b", "conv2.w", "conv2.b", "fc.w", "fc.b"),
                           self.params):
            out[name + ".grad"] = self.fw.numpy(p.grad)
            p.grad = None
        return out


class TLDeep:
    """W7: y = x * 1.0001 repeated n times on a 0-d float64 tensor, backward."""

    def __init__(self, fw, n):
        self.fw, self.n = fw, n
        self.x = fw.tensor(np.array(1.0), requires_grad=True)

    def forward(self):
        y = self.x
        for _ in range(self.n):
            y = y * 1.0001
        return y

    def check(self):
        y = self.forward()
        y.backward()
        out = {"loss": self.fw.numpy(y), "x.grad": self.fw.numpy(self.x.grad)}
        self.x.grad = None
        return out


# ---------------------------------------------------------------------------------------------
# hand-written NumPy
# ---------------------------------------------------------------------------------------------
class NPChain:
    """W1 / W2 by hand: the forward keeps only the tanh outputs (the other two derivatives are
    constants); the backward walks the ops in reverse."""

    def __init__(self, shape, n_ops):
        self.n = n_ops
        self.x = np.full(shape, 0.5)

    def _run(self):
        n = self.n
        tanh = np.tanh
        t0 = _perf()
        y = self.x
        saved = []
        push = saved.append
        for i in range(n):
            k = i % 3
            if k == 0:
                y = y * 1.0001
            elif k == 1:
                y = y + 0.001
            else:
                y = tanh(y)
                push(y)
        s = y.sum()
        t1 = _perf()
        g = np.ones_like(self.x)
        pop = saved.pop
        for i in range(n - 1, -1, -1):
            k = i % 3
            if k == 0:
                g = g * 1.0001
            elif k == 2:
                t = pop()
                g = g * (1.0 - t * t)
        t2 = _perf()
        return s, g, {"fwd": t1 - t0, "bwd": t2 - t1, "total": t2 - t0}

    def step(self):
        return self._run()[2]

    def check(self):
        s, g, _ = self._run()
        return {"loss": np.asarray(s), "x.grad": np.asarray(g)}


def _log_softmax_ce(logits, y):
    """Mean cross-entropy of logits (N, C) and its gradient dL/dlogits (computed in place)."""
    n = logits.shape[0]
    s = logits - logits.max(1, keepdims=True)
    e = np.exp(s)
    se = e.sum(1, keepdims=True)
    rows = np.arange(n)
    loss = (np.log(se[:, 0]) - s[rows, y]).mean()
    e /= se                     # softmax
    e[rows, y] -= 1.0
    e /= n
    return loss, e


class NPMLP:
    """W3 by hand: relu in place on the pre-activations, masks from the activations."""

    def __init__(self, seed=0, sizes=W3_SIZES, batch=W3_BATCH):
        self.x, self.y, self.params = mlp_data(seed, sizes, batch)

    def _forward_backward(self):
        x, y = self.x, self.y
        w1, b1, w2, b2, w3, b3 = self.params
        # (np.matmul looked up at each call, as tapegrad's products: the worker's --time-matmul
        # times both through it)
        mm = np.matmul
        t0 = _perf()
        h1 = mm(x, w1.T)
        h1 += b1
        np.maximum(h1, 0, out=h1)
        h2 = mm(h1, w2.T)
        h2 += b2
        np.maximum(h2, 0, out=h2)
        z = mm(h2, w3.T)
        z += b3
        loss, dz = _log_softmax_ce(z, y)
        t1 = _perf()
        gw3 = mm(dz.T, h2)
        gb3 = dz.sum(0)
        dh = mm(dz, w3)
        dh *= h2 > 0
        gw2 = mm(dh.T, h1)
        gb2 = dh.sum(0)
        dh = mm(dh, w2)
        dh *= h1 > 0
        gw1 = mm(dh.T, x)
        gb1 = dh.sum(0)
        t2 = _perf()
        return loss, [gw1, gb1, gw2, gb2, gw3, gb3], t0, t1, t2

    def step(self):
        loss, grads, t0, t1, t2 = self._forward_backward()
        for p, g in zip(self.params, grads):
            g *= LR
            p -= g
        t3 = _perf()
        return {"fwd": t1 - t0, "bwd": t2 - t1, "update": t3 - t2, "total": t3 - t0}

    GRAD_NAMES = ("W1", "b1", "W2", "b2", "W3", "b3")

    def check(self):
        loss, grads, *_ = self._forward_backward()
        out = {"loss": np.asarray(loss, np.float32)}
        for name, g in zip(self.GRAD_NAMES, grads):
            out[name + ".grad"] = g
        return out


class NPWide:
    """W4 by hand: the forward keeps what the derivatives need (the sigmoid/tanh/exp outputs),
    the backward reuses one gradient buffer in place."""

    def __init__(self, seed=0, n=W4_N):
        self.a, self.b = wide_data(seed, n)

    def _run(self):
        a, b = self.a, self.b
        sig = _sigmoid
        t0 = _perf()
        c = a * b
        c += a
        c3 = np.tanh(c)
        c = c3 - b
        c *= 0.5
        c6 = np.exp(c)
        c = c6 * a
        c8 = sig(c)
        c = c8 + b
        c10 = np.tanh(c)
        c = c10 * b
        c -= a
        c13 = sig(c)
        c = c13 * c13
        c += 1.0
        c16 = np.tanh(c)
        c = c16 * a
        c18 = np.exp(c)
        c = c18 - b
        c20 = sig(c)
        s = c20.sum()
        t1 = _perf()
        g = 1.0 - c20           # d sigmoid = y (1 - y)
        g *= c20
        gb = -g                 # 19: c18 - b
        g *= c18                # 18: exp
        ga = g * c16            # 17: c16 * a
        g *= a
        t = c16 * c16           # 16: tanh
        np.subtract(1.0, t, out=t)
        g *= t
        g *= c13                # 14: c13 * c13 (15: + 1 passes through)
        g *= 2.0
        np.subtract(1.0, c13, out=t)   # 13: sigmoid
        t *= c13
        g *= t
        ga -= g                 # 12: c11 - a
        gb += g * c10           # 11: c10 * b
        g *= b
        np.multiply(c10, c10, out=t)   # 10: tanh
        np.subtract(1.0, t, out=t)
        g *= t
        gb += g                 # 9: c8 + b
        np.subtract(1.0, c8, out=t)    # 8: sigmoid
        t *= c8
        g *= t
        ga += g * c6            # 7: c6 * a
        g *= a
        g *= c6                 # 6: exp
        g *= 0.5                # 5
        gb -= g                 # 4: c3 - b
        np.multiply(c3, c3, out=t)     # 3: tanh
        np.subtract(1.0, t, out=t)
        g *= t
        ga += g                 # 2: c1 + a
        ga += g * b             # 1: a * b
        g *= a
        gb += g
        t2 = _perf()
        return s, ga, gb, {"fwd": t1 - t0, "bwd": t2 - t1, "total": t2 - t0}

    def step(self):
        return self._run()[3]

    def check(self):
        s, ga, gb, _ = self._run()
        return {"loss": np.asarray(s), "a.grad": ga, "b.grad": gb}


def _sigmoid(x):
    out = np.negative(x)
    np.exp(out, out=out)
    out += 1.0
    np.reciprocal(out, out=out)
    return out


# -- hand-written conv / pool for W5 (im2col with one matmul each way, as a careful person would)
def _np_windows(x, k, p):
    n, c, h, w = x.shape
    if p:
        xp = np.zeros((n, c, h + 2 * p, w + 2 * p), x.dtype)
        xp[:, :, p:p + h, p:p + w] = x
    else:
        xp = x
    s0, s1, s2, s3 = xp.strides
    ho, wo = xp.shape[2] - k + 1, xp.shape[3] - k + 1
    return np.lib.stride_tricks.as_strided(xp, (n, c, k, k, ho, wo), (s0, s1, s2, s3, s2, s3),
                                           writeable=False)


def _np_conv(x, w, b, p):
    """Stride-1 conv; returns output and the im2col columns (kept for the weight gradient)."""
    n = x.shape[0]
    o, c, k, _ = w.shape
    win = _np_windows(x, k, p)
    ho, wo = win.shape[4:]
    cols = win.reshape(n, c * k * k, ho * wo)
    y = np.matmul(w.reshape(o, -1), cols)
    y += b[:, None]
    return y.reshape(n, o, ho, wo), cols


def _np_conv_backward(g, cols, w, p, need_input):
    n, o, ho, wo = g.shape
    _, c, k, _ = w.shape
    g3 = g.reshape(n, o, ho * wo)
    gw = np.matmul(g3, cols.transpose(0, 2, 1)).sum(0).reshape(w.shape)
    gb = g3.sum((0, 2))
    if not need_input:
        return None, gw, gb
    # col2im in channels-last layout: one product, then one add per kernel offset
    h, wd = ho + k - 1 - 2 * p, wo + k - 1 - 2 * p
    gt = np.ascontiguousarray(g.transpose(1, 2, 3, 0)).reshape(o, -1)
    wt = np.ascontiguousarray(w.transpose(2, 3, 1, 0)).reshape(-1, o)
    dcols = (wt @ gt).reshape(k, k, c, ho, wo, n)
    gx = np.zeros((c, h + 2 * p, wd + 2 * p, n), g.dtype)
    for i in range(k):
        for j in range(k):
            gx[:, i:i + ho, j:j + wo] += dcols[i, j]
    return np.ascontiguousarray(gx[:, p:p + h, p:p + wd].transpose(3, 0, 1, 2)), gw, gb


def _np_pool2(x):
    """2x2 / stride-2 max pool: the elementwise maximum of the four strided views."""
    m = np.maximum(x[:, :, 0::2, 0::2], x[:, :, 0::2, 1::2])
    np.maximum(m, x[:, :, 1::2, 0::2], out=m)
    np.maximum(m, x[:, :, 1::2, 1::2], out=m)
    return m


def _np_pool2_backward(g, x, m):
    """Route g to the first maximum of each window (row-major, as torch)."""
    gx = np.empty_like(x)
    free = np.ones(m.shape, bool)
    for i in (0, 1):
        for j in (0, 1):
            hit = x[:, :, i::2, j::2] == m
            hit &= free
            np.multiply(g, hit, out=gx[:, :, i::2, j::2])
            free ^= hit
    return gx


class NPCNN:
    """W5 by hand."""

    def __init__(self, seed=0, batch=W5_BATCH):
        self.x, self.y, self.params = cnn_data(seed, batch)

    def _forward_backward(self):
        x, y = self.x, self.y
        cw1, cb1, cw2, cb2, fw, fb = self.params
        t0 = _perf()
        a1, cols1 = _np_conv(x, cw1, cb1, 1)
        np.maximum(a1, 0, out=a1)
        p1 = _np_pool2(a1)
        a2, cols2 = _np_conv(p1, cw2, cb2, 1)
        np.maximum(a2, 0, out=a2)
        p2 = _np_pool2(a2)
        flat = p2.reshape(p2.shape[0], -1)
        z = flat @ fw.T
        z += fb
        loss, dz = _log_softmax_ce(z, y)
        t1 = _perf()
        gfw = dz.T @ flat
        gfb = dz.sum(0)
        dp2 = (dz @ fw).reshape(p2.shape)
        da2 = _np_pool2_backward(dp2, a2, p2)
        da2 *= a2 > 0
        dp1, gcw2, gcb2 = _np_conv_backward(da2, cols2, cw2, 1, True)
        da1 = _np_pool2_backward(dp1, a1, p1)
        da1 *= a1 > 0
        _, gcw1, gcb1 = _np_conv_backward(da1, cols1, cw1, 1, False)
        t2 = _perf()
        return loss, [gcw1, gcb1, gcw2, gcb2, gfw, gfb], t0, t1, t2

    step = NPMLP.step
    check = NPMLP.check
    GRAD_NAMES = ("conv1.w", "conv1.b", "conv2.w", "conv2.b", "fc.w", "fc.b")


class NPDeep:
    """W7 by hand: the derivative of x * 1.0001 is a constant, so nothing is kept."""

    def __init__(self, n):
        self.n = n
        self.x = np.array(1.0)

    def forward(self):
        y = self.x
        for _ in range(self.n):
            y = y * 1.0001
        return y

    def backward(self):
        g = np.ones_like(self.x)
        for _ in range(self.n):
            g = g * 1.0001
        return g

    def check(self):
        return {"loss": np.asarray(self.forward()), "x.grad": np.asarray(self.backward())}


# ---------------------------------------------------------------------------------------------
def build(workload, framework, threads=None, n=None):
    """The workload object for ``framework`` in ('tapegrad', 'torch', 'numpy')."""
    if framework == "numpy":
        return {"W1": lambda: NPChain((4,), W1_OPS), "W2": lambda: NPChain((), W2_OPS),
                "W3": NPMLP, "W4": NPWide, "W5": NPCNN, "W6": NPMLP,
                "W7": lambda: NPDeep(n), "W8": lambda: NPMLP(sizes=W8_SIZES, batch=W8_BATCH)
                }[workload]()
    fw = TorchLike(framework, threads)
    return {"W1": lambda: TLChain(fw, (4,), W1_OPS), "W2": lambda: TLChain(fw, (), W2_OPS),
            "W3": lambda: TLMLP(fw), "W4": lambda: TLWide(fw), "W5": lambda: TLCNN(fw),
            "W6": lambda: TLMLP(fw), "W7": lambda: TLDeep(fw, n),
            "W8": lambda: TLMLP(fw, sizes=W8_SIZES, batch=W8_BATCH)}[workload]()
