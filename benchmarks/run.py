"""tapegrad benchmarks: ratios against PyTorch (CPU) and hand-written NumPy.

    python benchmarks/run.py                      # every workload, 5 repetitions (~4 min, 2 cores)
    python benchmarks/run.py --quick              # fewer iterations/repetitions (~2 min)
    python benchmarks/run.py --only W1,W3 --repeats 7 --out benchmarks/results

Each repetition of each workload runs once per framework, each in its own fresh subprocess
(``benchmarks/worker.py``), the frameworks taking turns in a rotating order so that drifting
machine load hits all three alike. Thread settings are the same for all (OMP/OPENBLAS/MKL env
vars and torch.set_num_threads) and recorded. A worker reports the median of its timed
iterations; the tables report the median over repetitions, and each ratio as the median over
repetitions of that repetition's ratio (:func:`ratio`); W3 runs nine times per repetition and
W1 three (``REPEAT_FACTOR``: their targets are closer than their repetitions spread). The first
repetition also saves the first iteration's loss and gradients of each framework, compared here
(max abs difference).

Writes ``results.json``, ``results.md`` and ``ratios.png`` to ``--out``. See benchmarks/README.md.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
FRAMEWORKS = ("tapegrad", "torch", "numpy")
FW_LABEL = {"tapegrad": "tapegrad", "torch": "torch", "numpy": "NumPy"}

# (job id, workload, worker args, (default iters, warmup), (quick iters, warmup))
JOBS = [
    ("W1", "W1", [], (100, 5), (20, 3)),
    ("W2", "W2", [], (10, 2), (3, 1)),
    ("W3", "W3", [], (12, 2), (4, 1)),
    ("W3-dt", "W3", [], (12, 2), (4, 1)),
    ("W3-mm", "W3", ["--time-matmul"], (12, 2), (4, 1)),
    ("W4", "W4", [], (6, 1), (2, 1)),
    ("W5", "W5", [], (10, 2), (3, 1)),
    ("W6", "W6", [], (1, 0), (1, 0)),
    ("W7-100k", "W7", ["--n", "100000", "--chains", "5"], (1, 0), (1, 0)),
    ("W7-1M", "W7", ["--n", "1000000"], (1, 0), (1, 0)),
    ("W8", "W8", [], (300, 30), (60, 10)),
    ("W8-cold", "W8", ["--wait-after-matmul", "1.25"], (100, 10), (20, 5)),
]

DESCRIPTIONS = {
    "W1": "small-op overhead: x (4,) f64, 1,000 ops cycling x*1.0001, x+0.001, tanh; sum; backward",
    "W2": "scalar chain: 10,000 such ops on a 0-d f64 tensor; backward",
    "W3": "MLP step: 784-512-512-10 ReLU, batch 256, f32, cross-entropy, backward, SGD",
    "W3-dt": "W3 with each library's default threads (no thread env vars, torch's own count): "
             "what a user gets without setting any (no target)",
    "W3-mm": "W3 with its matrix products timed (numpy.matmul, which tapegrad's products and "
             "the hand-written step call): their time, and the rest of the step (no target; "
             "torch's products do not go through NumPy)",
    "W4": "wide elementwise: two f32 tensors of 1e6, 20 mixed elementwise ops, sum, backward",
    "W5": "small CNN step: (64,1,28,28), conv3x3x16 relu pool2, conv3x3x32 relu pool2, linear 10, "
          "CE, backward, SGD",
    "W6": "peak memory of one W3 step in a fresh process (RSS above the baseline)",
    "W7": "deep chain: x*1.0001 repeated on a 0-d f64, 100k and 1M nodes, backward",
    "W8": "tiny MLP step: W3 at 8-8-8-4, batch 4 (the per-op cost of linear, relu, "
          "cross-entropy, SGD; no target)",
    "W8-cold": "W8 with a 1.25 ms spin after each of its 8 matrix products (W3's products take "
               "about 10 ms a step), products and spins left out of the row's time: the step's "
               "other code, run as it runs in W3, where each piece last ran a step ago (no "
               "target; tapegrad and NumPy)",
}


# jobs run with each library's own thread defaults instead of --threads: a second BLAS thread
# pool (SciPy's beside NumPy's) once made W3 three times slower there, unseen at one thread
DEFAULT_THREAD_JOBS = {"W3-dt"}
# jobs that measure only some frameworks
JOB_FRAMEWORKS = {"W3-mm": ("tapegrad", "numpy"), "W8-cold": ("tapegrad", "numpy")}
# jobs run this many times per repetition: W3's target (1.05x NumPy) is closer than its
# repetitions spread. Its eight products (9 of its 10 ms, the same NumPy calls in tapegrad and
# the hand-written step) run at a speed that drifts with the machine's load over seconds: four
# sets of W3's arrays timed in turns in one process agree within 1%, while processes a second
# apart differ by up to 10%. So one repetition's ratio moves by 5 to 10% (0.76x to 1.43x in the
# runs of 2026-12-02), and the median of 33 runs moved from 1.03x to 1.06x between two runs of
# the same code; nine times the repetitions cut the median's spread by 1/3 (it goes as
# 1/sqrt(n)), for about 5 minutes more a full run. W1's total (0.8x torch) sits as close to its
# target: its repetitions spread from 0.46x to 1.06x at 06:19, whose median of 11 missed it
# (0.81x) where the run before met it (0.79x), with the same code; three times the repetitions
# cost about 1.5 minutes
REPEAT_FACTOR = {"W1": 3, "W3": 9}
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


# ---- running -----------------------------------------------------------------------------------
# each timed worker's memory layout seed (worker.shuffle_layout), drawn afresh for every process
_LAYOUTS = random.Random()


def worker_env(threads, job_workload):
    """The worker's environment: ``threads`` in every BLAS/OpenMP variable, or none of them
    when ``threads`` is None (each library's default)."""
    env = dict(os.environ)
    for k in THREAD_VARS:
        if threads is None:
            env.pop(k, None)
        else:
            env[k] = str(threads)
    if job_workload == "W6":
        # fixed mmap threshold: every buffer >= 64 KiB is mapped on allocation and unmapped on
        # free, so RSS follows the live arrays (glibc's adaptive threshold would otherwise make
        # the peak depend on allocation history); the same for all three frameworks
        env["MALLOC_MMAP_THRESHOLD_"] = "65536"
    src = os.path.join(os.path.dirname(HERE), "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run_worker(job, fw, args, check_path=None, profile_path=None):
    jid, wl, extra, full, quick = job
    iters, warmup = quick if args.quick else full
    threads = None if jid in DEFAULT_THREAD_JOBS else args.threads
    cmd = [sys.executable, os.path.join(HERE, "worker.py"), wl, fw, "--iters", str(iters),
           "--warmup", str(warmup)] + (["--threads", str(threads)] if threads else []) + extra
    if not args.fixed_layout:
        cmd += ["--layout-seed", str(_LAYOUTS.randrange(1 << 31))]
    if check_path:
        cmd += ["--check", check_path]
    if profile_path:
        cmd += ["--profile", profile_path, "--profile-lines", "30"]
    if args.no_gc:
        cmd.append("--no-gc")
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=worker_env(threads, wl),
                           timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {args.timeout}s"}, time.perf_counter() - t0
    wall = time.perf_counter() - t0
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        tail = (p.stderr or p.stdout).strip().splitlines()[-8:]
        return {"error": f"exit {p.returncode}: " + " | ".join(tail)}, wall
    out = json.loads(lines[-1])
    out["wall_s"] = wall
    return out, wall


# ---- summarising -------------------------------------------------------------------------------
def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def collect(raw, jid, fw, key, phase=None):
    """The per-repetition values of one quantity, None for a repetition that failed (so that the
    k-th values of two frameworks come from the same repetition)."""
    vals = []
    for r in raw.get(jid, {}).get(fw, []):
        if "error" in r:
            vals.append(None)
            continue
        v = r.get(key)
        if phase is not None:
            v = (v or {}).get(phase)
        vals.append(v)
    return vals


def _scaled(xs, scale):
    return [None if x is None else x * scale for x in xs]


def build_rows(raw):
    """Table rows: (workload, metric, unit, {fw: value}, target, {fw: per-repetition values},
    growth) with target = (against, limit) where against is 'torch', 'numpy' or 'value' (the
    tapegrad number itself), or None. A value is the median over repetitions; the ratios are
    taken per repetition (:func:`ratio`). ``growth`` is None except in W7's 1M/100k rows, where
    the values are the medians of each repetition's 1M time over its 100k time and ``growth``
    is, for comparison, each framework's median 1M time over its median 100k time."""
    rows = []

    def timed(jid, phase, scale, metric, unit, target=None):
        if jid not in raw:
            return
        reps = {fw: _scaled(collect(raw, jid, fw, "median", phase), scale) for fw in FRAMEWORKS}
        rows.append((jid, metric, unit, {fw: med(v) for fw, v in reps.items()}, target, reps,
                     None))

    us_op1 = 1e6 / 1000
    timed("W1", "fwd", us_op1, "forward", "µs/op", ("torch", 1.0))
    timed("W1", "bwd", us_op1, "backward", "µs/op", ("torch", 1.0))
    timed("W1", "total", us_op1, "total", "µs/op", ("torch", 0.8))
    us_op2 = 1e6 / 10000
    timed("W2", "fwd", us_op2, "forward", "µs/op")
    timed("W2", "bwd", us_op2, "backward", "µs/op")
    timed("W2", "total", us_op2, "total", "µs/op", ("torch", 0.8))
    for jid, metric, target in (("W3", "step", ("numpy", 1.05)),
                                ("W4", "forward+backward", ("numpy", 1.10)),
                                ("W5", "step", ("torch", 2.0))):
        timed(jid, "total", 1e3, metric, "ms", target)
        timed(jid, "fwd", 1e3, "forward", "ms")
        timed(jid, "bwd", 1e3, "backward", "ms")
    timed("W3-dt", "total", 1e3, "step, default threads", "ms")
    timed("W3-mm", "matmul", 1e3, "matrix products", "ms")
    timed("W3-mm", "rest", 1e3, "rest of the step", "ms")
    timed("W8", "total", 1e6, "step", "µs")
    timed("W8", "fwd", 1e6, "forward", "µs")
    timed("W8", "bwd", 1e6, "backward", "µs")
    timed("W8", "update", 1e6, "SGD update", "µs")
    timed("W8-cold", "rest", 1e6, "rest of the step", "µs")
    for key, metric, target in (("peak_mb", "peak RSS of one step", ("numpy", 1.10)),
                                ("traced_peak_mb", "peak traced (tracemalloc)", None)):
        if "W6" in raw:
            reps = {fw: collect(raw, "W6", fw, key) for fw in FRAMEWORKS}
            rows.append(("W6", metric, "MB", {fw: med(v) for fw, v in reps.items()}, target,
                         reps, None))
    w7 = {}
    for jid, n in (("W7-100k", 100_000), ("W7-1M", 1_000_000)):
        if jid not in raw:
            continue
        for key, scale, metric, unit in (("fwd", 1, "forward", "s"), ("bwd", 1, "backward", "s"),
                                         ("graph_mb", 1e6 / n, "graph memory", "B/node"),
                                         ("peak_mb", 1, "peak RSS", "MB")):
            reps = {fw: _scaled(collect(raw, jid, fw, key), scale) for fw in FRAMEWORKS}
            w7[(jid, key)] = reps
            rows.append((jid, metric, unit, {fw: med(v) for fw, v in reps.items()}, None, reps,
                         None))
    for key, metric, target in (("bwd", "backward time 1M / 100k", ("value", 11.0)),
                                ("fwd", "forward time 1M / 100k", None)):
        if ("W7-100k", key) in w7 and ("W7-1M", key) in w7:
            # (each repetition's 1M over its own 100k, run just before it)
            small, large = w7[("W7-100k", key)], w7[("W7-1M", key)]
            reps = {fw: [b / a if a and b else None for a, b in zip(small[fw], large[fw])]
                    for fw in FRAMEWORKS}
            growth = {fw: med(large[fw]) / med(small[fw]) if med(small[fw]) and med(large[fw])
                      else None for fw in FRAMEWORKS}
            rows.append(("W7", metric, "x", {fw: med(v) for fw, v in reps.items()}, target,
                         reps, growth))
    return rows


def rep_ratios(row, other):
    """Each repetition's own tapegrad / ``other`` for a row (the repetitions that have both)."""
    reps = row[5]
    return [a / b for a, b in zip(reps["tapegrad"], reps[other]) if a is not None and b]


def ratio(row, other):
    """tapegrad / ``other`` for a row: the median over repetitions of each repetition's ratio.
    The frameworks of a repetition run one right after the other, so a change in the machine's
    load between repetitions (other jobs on a shared box) divides out, where the ratio of the
    two medians mixes medians taken at different times. None where no repetition has both."""
    pairs = rep_ratios(row, other)
    return statistics.median(pairs) if pairs else None


def target_spread(row):
    """For a row with a target: the repetitions' own values of what the target limits (each
    one's ratio, or tapegrad's own value for W7's growth), sorted, and how many are within the
    target; None for a row without one (or without repetitions)."""
    if row[4] is None:
        return None
    against, limit = row[4]
    vals = sorted(v for v in row[5]["tapegrad"] if v is not None) if against == "value" else \
        sorted(rep_ratios(row, against))
    if not vals:
        return None
    return vals, sum(v <= limit for v in vals)


def spread_lines(rows):
    """One line per targeted row on its repetitions: their range and quartiles, and how many
    are within the target (a verdict from the median alone hides how close the call is)."""
    return [_spread_line(row, s) for row in rows if (s := target_spread(row)) is not None]


def _spread_line(row, spread):
    vals, within = spread
    # (ratios to three decimals: two would round 1.054 to a target of 1.05)
    f = fmt if row[4][0] == "value" else (lambda v: f"{v:.3f}x")
    mid = ""
    if len(vals) >= 4:
        q1, _, q3 = statistics.quantiles(vals, n=4)
        mid = f", quartiles {f(q1)} to {f(q3)}"
    return (f"{row[0]} {row[1]}: {f(vals[0])} to {f(vals[-1])}{mid}; {within} of {len(vals)} "
            f"within the target")


def ratio_of_medians(row, other):
    a, b = row[3].get("tapegrad"), row[3].get(other)
    return a / b if a is not None and b else None


def verdict(row):
    target = row[4]
    if target is None:
        return None, None
    against, limit = target
    r = row[3].get("tapegrad") if against == "value" else ratio(row, against)
    if r is None:
        return None, None
    return r, r <= limit


def compare_checks(check_files):
    """Max abs differences of loss and gradients between frameworks, per job."""
    out = {}
    for jid, files in check_files.items():
        data = {}
        for fw, path in files.items():
            if path and os.path.exists(path):
                with np.load(path) as z:
                    data[fw] = {k: np.asarray(z[k], np.float64) for k in z.files}
        res = {}
        for a, b in (("tapegrad", "torch"), ("tapegrad", "numpy"), ("torch", "numpy")):
            if a not in data or b not in data:
                continue
            diffs = {}
            for k, ref in data[b].items():
                if k not in data[a] or data[a][k].shape != ref.shape:
                    diffs[k + " (missing or shape differs)"] = (float("inf"), 0.0)
                    continue
                d = float(np.max(np.abs(data[a][k] - ref))) if ref.size else 0.0
                diffs[k] = (d if np.isfinite(d) else float("inf"),
                            float(np.max(np.abs(ref))) if ref.size else 0.0)
            worst_key = max(diffs, key=lambda k: diffs[k][0])
            worst, scale = diffs[worst_key]
            if worst == 0:
                worst_key = "identical"
            res[f"{a}-{b}"] = {"max_abs_diff": worst, "worst": worst_key, "ref_max_abs": scale}
        out[jid] = res
    return out


def fmt(v, unit=""):
    if v is None:
        return "—"
    if unit == "B/node":
        return f"{v:,.0f}"
    a = abs(v)
    if a >= 100:
        return f"{v:,.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def ratio_str(r):
    return "—" if r is None else f"{r:.2f}x"


def is_own_value(row):
    """A row whose target is tapegrad's own number (W7's growth): no ratio to another applies."""
    return row[4] is not None and row[4][0] == "value"


def numpy_ratio_applies(row):
    """The hand-written W7 chain keeps nothing (the derivative is a constant): a memory ratio
    against it says nothing, so the table and chart leave it out."""
    return not (row[0].startswith("W7") and row[2] in ("B/node", "MB"))


def _more_reps(meta):
    """The jobs run more often than ``repeats`` (REPEAT_FACTOR), for the header:
    " (W1: 33, W3: 99)"."""
    more = meta.get("repeats_by_job") or {}
    return f" ({', '.join(f'{j}: {n}' for j, n in more.items())})" if more else ""


def markdown(meta, rows, checks, failures):
    L = ["# tapegrad benchmark results", ""]
    L.append(f"{meta['date']} · {meta['cpu']} ({meta['cores']} cores) · Python {meta['python']}, "
             f"NumPy {meta['numpy']}, torch {meta.get('torch', '?')} · threads: "
             f"{meta['threads']} (OMP/OPENBLAS/MKL_NUM_THREADS and torch.set_num_threads)"
             + (f", except W3-dt: each library's default (torch "
                f"{meta.get('default_torch_threads') or '?'})" if meta.get("default_torch_threads")
                else "") + " · "
             f"{meta['repeats']} repetitions{_more_reps(meta)}{' (--quick)' if meta['quick'] else ''}"
             f", medians · "
             f"GC {'off while timing' if meta['no_gc'] else 'on'} · memory layout: "
             f"{'fixed' if meta.get('fixed_layout') else 'drawn per process'} · optimizer: "
             f"{meta.get('optimizer', '?')} · wall {meta['wall_s'] / 60:.1f} min")
    L.append("")
    L.append("Ratios are tapegrad / other (lower is better), each the median of the repetitions' "
             "own ratios. *Target* is the goal for the ratio in bold (for W7, tapegrad's own "
             "1M/100k ratio).")
    L.append("")
    L.append("| workload | metric | unit | tapegrad | torch | NumPy | tg/torch | tg/NumPy | "
             "target | met |")
    L.append("|---|---|---|---:|---:|---:|---:|---:|---|---|")
    for row in rows:
        jid, metric, unit, vals, target = row[:5]
        r_t = ratio_str(ratio(row, "torch"))
        r_n = ratio_str(ratio(row, "numpy")) if numpy_ratio_applies(row) else "—"
        tgt, met = "", ""
        if target is not None:
            against, limit = target
            ok = verdict(row)[1]
            if against == "torch":
                r_t = f"**{r_t}**"
            elif against == "numpy":
                r_n = f"**{r_n}**"
            if against == "value":
                r_t = r_n = "—"
                tgt = f"tapegrad ≤ {limit:g}"
            else:
                tgt = f"≤ {limit:g}x {FW_LABEL[against]}"
            met = "—" if ok is None else ("met" if ok else "**not met**")
        L.append(f"| {jid} | {metric} | {unit} | {fmt(vals.get('tapegrad'), unit)} | "
                 f"{fmt(vals.get('torch'), unit)} | {fmt(vals.get('numpy'), unit)} | {r_t} | "
                 f"{r_n} | {tgt} | {met} |")
    for row in rows:
        if row[6] is not None:
            g = row[6]
            L.append("")
            L.append(f"W7's {row[1]} is the median of each repetition's own ratio; as the median "
                     f"1M time over the median 100k time it is " + ", ".join(
                         f"{fmt(g.get(fw))} ({FW_LABEL[fw]})" for fw in FRAMEWORKS) + ".")
    spreads = spread_lines(rows)
    if spreads:
        L.append("")
        L.append("Each repetition's own value of what a target limits (the table gives their "
                 "median):")
        L.append("")
        L.extend(f"- {line}" for line in spreads)
    L.append("")
    L.append("## Correctness (first iteration: loss and every gradient)")
    L.append("")
    L.append("Max abs difference over the loss and all gradients, with the tensor where it is "
             "largest and that tensor's largest |value| in the reference, for scale.")
    L.append("")
    L.append("| workload | tapegrad vs torch | tapegrad vs NumPy | torch vs NumPy |")
    L.append("|---|---|---|---|")
    for jid, res in checks.items():
        cells = []
        for key in ("tapegrad-torch", "tapegrad-numpy", "torch-numpy"):
            c = res.get(key)
            cells.append("—" if c is None else
                         f"{c['max_abs_diff']:.2e} ({c['worst']}; max {c['ref_max_abs']:.3g})")
        L.append(f"| {jid} | " + " | ".join(cells) + " |")
    L.append("")
    L.append("## Workloads")
    L.append("")
    for k, v in DESCRIPTIONS.items():
        L.append(f"- **{k}** {v}")
    if failures:
        L.append("")
        L.append("## Failures")
        L.append("")
        for f in failures:
            L.append(f"- {f}")
    L.append("")
    return "\n".join(L)


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    targeted = [r for r in rows if r[4] is not None and verdict(r)[0] is not None]
    allr = [r for r in rows if r[2] not in ("x",) and r[3].get("tapegrad") is not None]
    fig, axes = plt.subplots(1, 2, figsize=(15, max(4, 0.34 * len(allr) + 1.5)),
                             gridspec_kw={"width_ratios": [1, 1.3]})
    ax = axes[0]
    labels, vals, colors, limits = [], [], [], []
    for r in targeted:
        value, ok = verdict(r)
        against, limit = r[4]
        who = "tapegrad" if against == "value" else f"/ {FW_LABEL[against]}"
        labels.append(f"{r[0]} {r[1]} ({who})")
        vals.append(value)
        limits.append(limit)
        colors.append("tab:green" if ok else "tab:red")
    y = np.arange(len(labels))
    ax.barh(y, vals, color=colors)
    for yi, lim in zip(y, limits):
        ax.plot([lim, lim], [yi - 0.4, yi + 0.4], color="black", lw=2)
    ax.set_yticks(y, labels, fontsize=8)
    ax.invert_yaxis()
    if targeted:    # (a run of untargeted workloads only, e.g. --only W8, has none to draw)
        ax.set_xscale("log")
    ax.set_title("targets (black tick = target; green met, red not met)", fontsize=9)
    ax.set_xlabel("ratio")
    ax = axes[1]
    labels = [f"{r[0]} {r[1]} [{r[2]}]" for r in allr]
    y = np.arange(len(labels))
    rt = [ratio(r, "torch") for r in allr]
    rn = [ratio(r, "numpy") if numpy_ratio_applies(r) else None for r in allr]
    rt, rn = ([np.nan if v is None else v for v in vs] for vs in (rt, rn))
    ax.barh(y - 0.2, rt, height=0.4, label="tapegrad / torch", color="tab:orange")
    ax.barh(y + 0.2, rn, height=0.4, label="tapegrad / NumPy", color="tab:blue")
    ax.axvline(1.0, color="black", lw=1)
    ax.set_yticks(y, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.legend(fontsize=8)
    ax.set_title("all ratios (lower is better)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def write_results(out, meta, raw, checks, failures, profiles):
    """Write results.json, results.md and ratios.png for a run's raw worker results; returns the
    table rows and whether the chart was drawn."""
    rows = build_rows(raw)
    summary = []
    for row in rows:
        value, ok = verdict(row)
        nr = numpy_ratio_applies(row)
        nt = not is_own_value(row)
        spread = target_spread(row)
        summary.append({"workload": row[0], "metric": row[1], "unit": row[2], "values": row[3],
                        "repetitions": row[5],
                        "tapegrad_over_torch": ratio(row, "torch") if nt else None,
                        "tapegrad_over_numpy": ratio(row, "numpy") if nr and nt else None,
                        "ratio_of_medians": {"torch": ratio_of_medians(row, "torch"),
                                             "numpy": ratio_of_medians(row, "numpy") if nr
                                             else None} if nt else None,
                        "growth_of_medians": row[6],
                        "target": None if row[4] is None else {"against": row[4][0],
                                                              "limit": row[4][1]},
                        "target_value": value, "met": ok,
                        "repetitions_within_target": None if spread is None else spread[1],
                        "target_values_per_repetition": None if spread is None else spread[0]})
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"meta": meta, "summary": summary, "correctness": checks,
                   "failures": failures, "profiles": profiles, "raw": raw}, f, indent=1)
    md = markdown(meta, rows, checks, failures)
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(md)
    plotted = plot(rows, os.path.join(out, "ratios.png"))
    return rows, plotted


# ---- main --------------------------------------------------------------------------------------
def main(argv=None):
    p = argparse.ArgumentParser(description="tapegrad vs torch vs hand-written NumPy")
    p.add_argument("--quick", action="store_true", help="fewer iterations and repetitions")
    p.add_argument("--repeats", type=int, default=None,
                   help="fresh-process repetitions per framework (default 5; --quick: 2, "
                        "and W7 once)")
    p.add_argument("--only", default=None, help="comma-separated workloads, e.g. W1,W3,W7")
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    p.add_argument("--threads", type=int, default=1,
                   help="threads for every framework (BLAS/OpenMP env vars and "
                        "torch.set_num_threads); default 1")
    p.add_argument("--no-gc", action="store_true",
                   help="disable Python's cyclic GC while timing (default: on, as users run)")
    p.add_argument("--profile", default=None,
                   help="comma-separated workloads (e.g. W1,W3) to also cProfile for tapegrad; "
                        "written to OUT/profile_<W>.txt")
    p.add_argument("--timeout", type=int, default=600, help="seconds per worker process")
    p.add_argument("--fixed-layout", action="store_true",
                   help="no memory layout drawn per process (worker.py --layout-seed): every "
                        "repetition of a build then shares one layout")
    args = p.parse_args(argv)
    repeats = args.repeats or (2 if args.quick else 5)
    only = None if not args.only else {w.strip().upper() for w in args.only.split(",")}
    jobs = [j for j in JOBS if only is None or j[1] in only or j[0].upper() in only]
    if not jobs:
        p.error(f"--only {args.only}: no such workload (W1..W8)")
    os.makedirs(args.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="tapegrad-bench-")

    t_start = time.perf_counter()
    raw = {j[0]: {fw: [] for fw in FRAMEWORKS} for j in jobs}
    check_files = {j[0]: {} for j in jobs}
    failures = []
    more = "".join(f", {j[0]} x{REPEAT_FACTOR[j[0]]}" for j in jobs if j[0] in REPEAT_FACTOR)
    print(f"tapegrad benchmarks: {len(jobs)} jobs x {repeats} repetitions{more} x up to 3 "
          f"frameworks, threads={args.threads}{', quick' if args.quick else ''}", flush=True)
    for rep in range(repeats):
        for job in jobs:
            jid = job[0]
            if args.quick and job[1] == "W7" and rep > 0:
                continue                                # --quick: the deep chains run once
            fws = JOB_FRAMEWORKS.get(jid, FRAMEWORKS)
            factor = REPEAT_FACTOR.get(jid, 1)
            for sub in range(factor):
                n = rep * factor + sub                  # (this job's own repetition number)
                k = (n + jobs.index(job)) % len(fws)
                order = fws[k:] + fws[:k]               # frameworks take turns going first
                line = []
                for fw in order:
                    chk = os.path.join(tmp, f"{jid}_{fw}.npz") if n == 0 else None
                    res, wall = run_worker(job, fw, args, check_path=chk)
                    raw[jid][fw].append(res)
                    if chk:
                        check_files[jid][fw] = chk
                    if "error" in res:
                        failures.append(f"{jid} {fw} rep {n}: {res['error']}")
                        line.append(f"{fw} FAILED")
                    else:
                        line.append(f"{fw} {wall:.1f}s")
                part = f" ({sub + 1}/{factor})" if factor > 1 else ""
                print(f"  [{time.perf_counter() - t_start:6.0f}s] rep {rep + 1}/{repeats}{part} "
                      f"{jid:8s} " + ", ".join(line), flush=True)

    profiles = {}
    if args.profile:
        for w in args.profile.upper().split(","):
            job = next((j for j in JOBS if j[0].upper() == w.strip()), None)
            if job is None or job[1] in ("W6", "W7"):
                continue
            path = os.path.join(args.out, f"profile_{job[0]}.txt")
            res, _ = run_worker(job, "tapegrad", args, profile_path=path)
            if "error" not in res:
                profiles[job[0]] = path

    checks = compare_checks(check_files)
    shutil.rmtree(tmp, ignore_errors=True)
    wall = time.perf_counter() - t_start
    # (the run's thread settings are those of the jobs run at --threads, when there are any)
    at_threads = [j for jid, j in raw.items() if jid not in DEFAULT_THREAD_JOBS] or \
        list(raw.values())
    envs = {fw: next((r["env"] for j in at_threads for r in j[fw] if "env" in r), {})
            for fw in FRAMEWORKS}
    default_torch = next((r["env"].get("torch_threads") for jid in DEFAULT_THREAD_JOBS
                          for r in raw.get(jid, {}).get("torch", []) if "env" in r), None)
    optimizer = {fw: next((r.get("optimizer") for j in raw.values() for r in j[fw]
                           if r.get("optimizer")), None) for fw in ("tapegrad", "torch")}
    meta = {"date": time.strftime("%Y-%m-%d %H:%M"), "cpu": cpu_name(), "cores": os.cpu_count(),
            "python": platform.python_version(), "numpy": np.__version__,
            "torch": envs["torch"].get("torch"), "torch_threads": envs["torch"].get(
                "torch_threads"), "thread_env": envs["numpy"].get("thread_env"),
            "threads": args.threads, "default_torch_threads": default_torch,
            "repeats": repeats, "quick": args.quick,
            "repeats_by_job": {j[0]: repeats * REPEAT_FACTOR[j[0]] for j in jobs
                               if j[0] in REPEAT_FACTOR},
            "no_gc": args.no_gc, "fixed_layout": args.fixed_layout, "wall_s": wall,
            "optimizer": ", ".join(f"{v}" for v in optimizer.values() if v)}
    rows, plotted = write_results(args.out, meta, raw, checks, failures, profiles)

    # console summary
    print()
    print(f"{'workload':9s} {'metric':26s} {'tapegrad':>10s} {'torch':>10s} {'NumPy':>10s} "
          f"{'tg/torch':>9s} {'tg/NumPy':>9s}  target")
    for row in rows:
        jid, metric, unit, vals, target = row[:5]
        ok = verdict(row)[1]
        own = is_own_value(row)
        r_t = "—" if own else ratio_str(ratio(row, "torch"))
        r_n = "—" if own or not numpy_ratio_applies(row) else ratio_str(ratio(row, "numpy"))
        tgt = ""
        if target is not None:
            against, limit = target
            name = "tapegrad" if against == "value" else FW_LABEL[against]
            tgt = (f"{'≤' if against == 'value' else '<='} {limit:g}"
                   f"{'' if against == 'value' else 'x ' + name}: "
                   + ("—" if ok is None else ("met" if ok else "NOT MET")))
        print(f"{jid:9s} {metric + ' [' + unit + ']':26s} {fmt(vals['tapegrad'], unit):>10s} "
              f"{fmt(vals['torch'], unit):>10s} {fmt(vals['numpy'], unit):>10s} "
              f"{r_t:>9s} {r_n:>9s}  {tgt}")
    print()
    spreads = spread_lines(rows)
    if spreads:
        print("per repetition, behind each target:")
        for line in spreads:
            print("  " + line)
        print()
    print("correctness (max abs diff of loss and gradients, first iteration):")
    for jid, res in checks.items():
        print(f"  {jid:8s} " + "  ".join(f"{k}: {v['max_abs_diff']:.2e} ({v['worst']})"
                                         for k, v in res.items()))
    for f in failures:
        print("FAILED:", f)
    print(f"\nwrote {args.out}/results.json, results.md"
          + (", ratios.png" if plotted else " (no matplotlib: no chart)")
          + "".join(f", {os.path.basename(v)}" for v in profiles.values())
          + f"  [{wall / 60:.1f} min]")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
