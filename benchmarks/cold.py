"""How much slower code runs when it has not run for a while, and what that costs W3's step:
``python benchmarks/cold.py [--trials N]`` (about 20 s; one thread, one process).

W3's matrix products take about 10 ms a step, so each piece of the step's other code (the
tape's Python, NumPy's small calls) last ran a step before. On a machine whose caches or
predictors lose what a process does not use for a few milliseconds, that code runs several
times slower than the same code run again at once. Three measurements, each a median:

1. ``log_softmax`` of a (256, 10) tensor, timed right after something that takes ``d`` ms, and
   again right after that: a Python spin for d = 0, 1, 2, 4, 8, then a 4 ms sleep and 4 ms of
   passes over an array of this process's own (4 MB, 64 MB). If the first call's cost grows
   with d whatever ran in between, it is the time since the code last ran that counts.
2. W8's step (W3's at 8-8-8-4, batch 4: its arrays too small for their work to count), tapegrad
   and the hand-written NumPy step alternating, timed less its products and what follows each
   product: nothing, a 1.25 ms spin (as benchmarks/run.py's W8-cold), or a product of W3's size
   (256x784 by 784x384, about 1.2 ms here).
3. W3's step itself, the two alternating, split into its 8 products and the rest.

If the tapegrad - NumPy difference in (2) with a spin or a product after each product is close
to the rest-of-step difference in (3), W3's gap is the tape's per-step Python, run cold."""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

# one BLAS thread, as benchmarks/run.py's jobs (set before NumPy loads its BLAS; a variable the
# caller set is kept)
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads as W
from worker import spin, time_matmul

perf = time.perf_counter


def first_call_after(trials):
    """Rows (what ran before, first call µs, second call µs) for ``log_softmax``."""
    import tapegrad
    import tapegrad.nn.functional as F
    rng = np.random.default_rng(0)
    z = tapegrad.tensor(rng.standard_normal((256, 10)).astype(np.float32), requires_grad=True)

    def passes(mb):
        a = np.ones(mb << 18, np.float32)

        def run():
            t = perf()
            while perf() - t < 0.004:
                a.__iadd__(1.0)
        return run

    befores = [(f"Python spin, {d:g} ms", (lambda d=d: spin(d / 1e3))) for d in (0, 1, 2, 4, 8)]
    befores += [("sleep, 4 ms", lambda: time.sleep(0.004)),
                ("passes over own 4 MB, 4 ms", passes(4)),
                ("passes over own 64 MB, 4 ms", passes(64))]
    rows = []
    for name, before in befores:
        first, second = [], []
        for _ in range(trials):
            before()
            t0 = perf()
            F.log_softmax(z, 1)
            t1 = perf()
            F.log_softmax(z, 1)
            t2 = perf()
            first.append(t1 - t0)
            second.append(t2 - t1)
        rows.append((name, statistics.median(first) * 1e6, statistics.median(second) * 1e6))
    return rows


def _alternate(steps, take, n):
    """Run the two steps in turns (who goes first alternating), their products timed by
    ``take`` (:func:`worker.time_matmul`); each one's median time less its products, and median
    products time (µs)."""
    rest = {k: [] for k in steps}
    prod = {k: [] for k in steps}
    keys = list(steps)
    for i in range(n):
        for k in (keys if i % 2 else keys[::-1]):
            take()
            t0 = perf()
            steps[k].step()
            total = perf() - t0
            p = take()
            rest[k].append(total - p)
            prod[k].append(p)
    skip = min(10, n // 5)      # (the first steps load code and BLAS buffers)
    return ({k: statistics.median(v[skip:]) * 1e6 for k, v in rest.items()},
            {k: statistics.median(v[skip:]) * 1e6 for k, v in prod.items()})


def in_process(trials):
    """Rows for measurements 2 and 3."""
    tg = W.TorchLike("tapegrad")
    small = {"tapegrad": W.TLMLP(tg, sizes=W.W8_SIZES, batch=W.W8_BATCH),
             "numpy": W.NPMLP(sizes=W.W8_SIZES, batch=W.W8_BATCH)}
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 784)).astype(np.float32)
    b = rng.standard_normal((784, 384)).astype(np.float32)
    matmul = np.matmul     # (the product after each product: not itself timed as one)
    rows = []
    for name, after in (("nothing", None), ("a 1.25 ms spin", lambda: spin(0.00125)),
                        ("a 256x784 @ 784x384 product", lambda: matmul(a, b))):
        take = time_matmul(after)
        try:
            rest, _ = _alternate(small, take, trials)
        finally:
            take.restore()
        rows.append((f"W8 step less products, {name} after each", rest["tapegrad"],
                     rest["numpy"]))
    big = {"tapegrad": W.TLMLP(tg), "numpy": W.NPMLP()}
    take = time_matmul()
    try:
        rest, prod = _alternate(big, take, max(trials // 2, 2))
    finally:
        take.restore()
    rows.append(("W3 step less its products", rest["tapegrad"], rest["numpy"]))
    rows.append(("W3 step's 8 products", prod["tapegrad"], prod["numpy"]))
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trials", type=int, default=200,
                   help="timings per row (W3 gets half as many steps)")
    args = p.parse_args(argv)
    print("1. log_softmax of (256, 10) right after something (median µs)\n")
    print("| before it | first call | second call |\n|---|---:|---:|")
    for name, first, second in first_call_after(args.trials):
        print(f"| {name} | {first:.1f} | {second:.1f} |")
    print("\n2, 3. steps in one process, tapegrad and NumPy alternating (median µs)\n")
    print("| measured | tapegrad | NumPy | difference |\n|---|---:|---:|---:|")
    for name, t, n in in_process(args.trials):
        print(f"| {name} | {t:.0f} | {n:.0f} | {t - n:.0f} |")


if __name__ == "__main__":
    main()
