"""One measurement in a fresh process: ``python benchmarks/worker.py W3 tapegrad [options]``.

Run by ``benchmarks/run.py`` (once per framework per repetition); it imports only the framework
it measures, runs the workload, and prints one JSON object on the last line of stdout. Usable
alone for a quick look or a profile::

    python benchmarks/worker.py W1 tapegrad --iters 50 --profile /tmp/w1.txt
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads as W  # noqa: E402


# ---- memory ------------------------------------------------------------------------------------
def _status_kb(field):
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _trim():
    """Give freed heap memory back to the OS so the baseline RSS is the live data."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


class PeakRSS:
    """Peak resident memory above a baseline, from /proc/self/status (VmHWM after resetting it
    through /proc/self/clear_refs), falling back to getrusage's ru_maxrss."""

    def __init__(self):
        gc.collect()
        _trim()
        self.method = "VmHWM (reset via /proc/self/clear_refs)"
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
        except OSError:
            self.method = "ru_maxrss delta (peak could not be reset)"
        self.base_kb = _status_kb("VmRSS")
        if self.base_kb is None:
            import resource
            self.method = "ru_maxrss delta"
            self.base_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    def rss_mb(self):
        kb = _status_kb("VmRSS")
        return None if kb is None else (kb - self.base_kb) / 1024

    def peak_mb(self):
        kb = _status_kb("VmHWM") if self.method.startswith("VmHWM") else None
        if kb is None:
            import resource
            kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return max(0, kb - self.base_kb) / 1024


# ---- environment ---------------------------------------------------------------------------------
def environment(framework, threads):
    env = {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                          "MKL_NUM_THREADS", "MALLOC_MMAP_THRESHOLD_")}
    info = {"python": platform.python_version(), "numpy": np.__version__, "thread_env": env,
            "gc_enabled": gc.isenabled(), "pid": os.getpid()}
    if framework == "torch":
        import torch
        info["torch"] = torch.__version__
        info["torch_threads"] = torch.get_num_threads()
    elif framework == "tapegrad":
        import tapegrad
        info["tapegrad"] = getattr(tapegrad, "__version__", "?")
    return info


def _median(xs):
    return statistics.median(xs) if xs else None


# ---- modes -------------------------------------------------------------------------------------
def spin(seconds):
    """Busy-wait ``seconds``: the process keeps its CPU, as it does inside a product (a sleep
    would give it up)."""
    perf = time.perf_counter
    t = perf()
    while perf() - t < seconds:
        pass


def time_matmul(after=None):
    """Route ``numpy.matmul`` through a timer (tapegrad's matrix products and the hand-written
    MLP call it by that name at each call); returns ``take()``, which gives the seconds spent in
    it since it was last called and starts the count again, and ``take.restore()``, which puts
    ``numpy.matmul`` back. torch's products do not go through NumPy, so they are not counted.

    ``after``: called once each product is done, inside the timed span, so the step's other code
    runs as it runs after a large product, when it last ran that long ago (W8-cold: a
    :func:`spin`; benchmarks/cold.py: also a product of W3's size)."""
    inner = np.matmul
    spent = [0.0]
    perf = time.perf_counter

    def matmul(*a, **k):
        t = perf()
        try:
            return inner(*a, **k)
        finally:
            if after is not None:
                after()
            spent[0] += perf() - t

    np.matmul = matmul

    def take():
        s, spent[0] = spent[0], 0.0
        return s

    def restore():
        np.matmul = inner
    take.restore = restore
    return take


def shuffle_layout(seed):
    """Allocate a random amount of memory, ``seed`` choosing how much, and return it to be kept
    alive, so that the objects the framework and the workload make next land at other addresses
    (other cache sets, other offsets in the allocator's pools) than in a process that did not.
    A process's layout is fixed by its code: without this, every repetition of one build shares
    one layout, and a change that only moves objects (an unrelated allocation at import) moved
    W1's time by 5% in either direction. With a layout drawn per process, the median over the
    repetitions is a median over layouts (as Stabilizer does, Curtsinger and Berger, ASPLOS
    2013)."""
    import random
    rng = random.Random(seed)
    keep = [bytes(rng.randrange(1, 600)) for _ in range(rng.randrange(20_000))]
    keep += [[None] * rng.randrange(1, 50) for _ in range(rng.randrange(5_000))]
    keep.append(bytearray(rng.randrange(1 << 22)))
    return keep


def run_timed(args, result):
    # (before the framework is imported: its modules and objects move too)
    _kept = shuffle_layout(args.layout_seed) if args.layout_seed is not None else None
    result["layout_seed"] = args.layout_seed
    bench = W.build(args.workload, args.framework, args.threads)
    wait = args.wait_after_matmul / 1e3
    matmul_time = time_matmul((lambda: spin(wait)) if wait else None) \
        if args.time_matmul or wait else None
    if args.check:
        np.savez(args.check, **bench.check())
    for _ in range(args.warmup):
        bench.step()
    phases = {}
    prof = None
    if args.profile:
        import cProfile
        prof = cProfile.Profile()
    if args.no_gc:
        gc.disable()
    for _ in range(args.iters):
        gc.collect(0)
        if prof is not None:
            prof.enable()
        if matmul_time is not None:
            matmul_time()
        times = bench.step()
        if prof is not None:
            prof.disable()
        if matmul_time is not None:
            times["matmul"] = matmul_time()
            times["rest"] = times["total"] - times["matmul"]
        for k, v in times.items():
            phases.setdefault(k, []).append(v)
    gc.enable()
    if prof is not None:
        import io
        import pstats
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(args.profile_lines)
        with open(args.profile, "w") as f:
            f.write(f"# cProfile of {args.iters} iterations of {args.workload} "
                    f"({args.framework}), sorted by tottime\n")
            f.write(buf.getvalue())
    result["phases"] = phases
    result["median"] = {k: _median(v) for k, v in phases.items()}
    result["optimizer"] = getattr(getattr(bench, "fw", None), "optimizer_kind", None)


def run_memory(args, result):
    """W6: peak memory of one W3 step. A tiny MLP step first loads every code path (lazy imports,
    BLAS buffers), so the measured step counts data, not code."""
    if args.framework == "numpy":
        W.NPMLP(sizes=(8, 8, 8, 10), batch=4).step()
        bench = W.NPMLP()
    else:
        fw = W.TorchLike(args.framework, args.threads)
        W.TLMLP(fw, sizes=(8, 8, 8, 10), batch=4).step()
        bench = W.TLMLP(fw)
    if args.check:
        np.savez(args.check, **bench.check())
    mem = PeakRSS()
    t0 = time.perf_counter()
    bench.step()
    t1 = time.perf_counter()
    result["peak_mb"] = mem.peak_mb()
    result["method"] = mem.method
    result["step_s"] = t1 - t0
    result["optimizer"] = getattr(getattr(bench, "fw", None), "optimizer_kind", None)
    if args.framework != "torch":   # NumPy reports its buffers to tracemalloc; torch does not
        import tracemalloc
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        bench.step()
        result["traced_peak_mb"] = (tracemalloc.get_traced_memory()[1] - base) / 2 ** 20
        tracemalloc.stop()


def run_deep(args, result):
    """W7: forward and backward of an n-node chain; time and memory. With ``--chains K``, K
    chains one after another in this process: the times are their medians (one timing of a
    0.15 s backward is at the mercy of the machine's load for that moment), the memory and the
    correctness check are the first chain's."""
    n = args.n
    fwd, bwd = [], []
    if args.framework == "numpy":
        bench = W.NPDeep(n)
        for c in range(args.chains):
            if c == 0:
                mem = PeakRSS()
            t0 = time.perf_counter()
            y = bench.forward()
            t1 = time.perf_counter()
            if c == 0:
                graph = mem.rss_mb()
            g = bench.backward()
            t2 = time.perf_counter()
            fwd.append(t1 - t0)
            bwd.append(t2 - t1)
            if c == 0:
                peak = mem.peak_mb()
                check = {"loss": np.asarray(y), "x.grad": np.asarray(g)}
    else:
        warm = W.build("W7", args.framework, args.threads, n=1000)
        warm.forward().backward()         # load every code path before the baseline
        del warm
        bench = W.TLDeep(W.TorchLike(args.framework, args.threads), n)
        for c in range(args.chains):
            if c == 0:
                mem = PeakRSS()
            if args.no_gc:
                gc.disable()
            t0 = time.perf_counter()
            y = bench.forward()
            t1 = time.perf_counter()
            if c == 0:
                graph = mem.rss_mb()
            y.backward()
            t2 = time.perf_counter()
            gc.enable()
            fwd.append(t1 - t0)
            bwd.append(t2 - t1)
            if c == 0:
                peak = mem.peak_mb()
                check = {"loss": bench.fw.numpy(y), "x.grad": bench.fw.numpy(bench.x.grad)}
            bench.x.grad = None
            del y
    result.update(n=n, chains=args.chains, fwd=float(np.median(fwd)), bwd=float(np.median(bwd)),
                  total=float(np.median(fwd)) + float(np.median(bwd)), fwd_each=fwd,
                  bwd_each=bwd, graph_mb=graph, peak_mb=peak, method=mem.method)
    if args.check:
        np.savez(args.check, **check)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("workload", choices=["W1", "W2", "W3", "W4", "W5", "W6", "W7", "W8"])
    p.add_argument("framework", choices=["tapegrad", "torch", "numpy"])
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--threads", type=int, default=None,
                   help="torch.set_num_threads (the BLAS/OpenMP env vars are set by run.py)")
    p.add_argument("--n", type=int, default=100_000, help="W7 chain length")
    p.add_argument("--chains", type=int, default=1,
                   help="W7: chains built and backpropagated in turn (times: their medians)")
    p.add_argument("--check", help="save the first iteration's loss and gradients (.npz)")
    p.add_argument("--profile", help="write a cProfile (sorted by tottime) of the timed "
                                     "iterations to this file")
    p.add_argument("--profile-lines", type=int, default=25)
    p.add_argument("--no-gc", action="store_true", help="disable the cyclic GC while timing")
    p.add_argument("--layout-seed", type=int, default=None,
                   help="timed workloads (not W6, W7): allocate a random amount of memory "
                        "first, drawn from this seed, so the process gets a memory layout of "
                        "its own (see shuffle_layout); run.py gives each process a seed")
    p.add_argument("--time-matmul", action="store_true",
                   help="also time the step's numpy.matmul calls (phases 'matmul' and 'rest'; "
                        "tapegrad and NumPy only)")
    p.add_argument("--wait-after-matmul", type=float, default=0.0, metavar="MS",
                   help="spin MS milliseconds after each numpy.matmul call, timed with it "
                        "(implies --time-matmul: 'rest' is the step less products and spins; "
                        "tapegrad and NumPy only)")
    args = p.parse_args(argv)
    if args.framework == "torch" and (args.time_matmul or args.wait_after_matmul):
        p.error("--time-matmul and --wait-after-matmul take tapegrad or numpy: torch's "
                "products do not go through numpy.matmul")
    result = {"workload": args.workload, "framework": args.framework}
    if args.framework == "torch" and args.threads:
        import torch
        torch.set_num_threads(args.threads)
    if args.workload == "W6":
        run_memory(args, result)
    elif args.workload == "W7":
        run_deep(args, result)
    else:
        run_timed(args, result)
    result["env"] = environment(args.framework, args.threads)
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
    os._exit(0)   # skip tearing down large graphs (W7): it is not part of any measurement


if __name__ == "__main__":
    main()
