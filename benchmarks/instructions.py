"""Instructions per op of W1's and W2's chains, counted by callgrind: a measure that, unlike time,
does not move with the machine's load.

    python benchmarks/instructions.py [--framework tapegrad|torch] [--only W1,W2] [--runs 20]

For each chain and phase (forward alone; forward and backward), a child process builds the
workload, runs one warm-up step, then the chain ``1`` or ``1 + runs`` more times under
``valgrind --tool=callgrind``; the difference of the two counts over ``runs`` chains is the cost
per op, without imports and start-up. W1's chain is run ten times per step so both chains give
10,000 ops a step. Identical runs give identical counts: one BLAS/OpenMP thread (an idle pool
thread's spinning would be counted), ``PYTHONHASHSEED=0``, address randomisation off
(``setarch -R``, where present). The garbage collector stays on, as users run. Needs valgrind on
PATH; the tapegrad measured is the one this checkout's ``src`` holds.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

_CHILD = """
import sys
sys.path[:0] = [{here!r}, {src!r}]
from workloads import TorchLike, TLChain, _chain
fw, name, phase, runs = TorchLike({fw!r}), {name!r}, {phase!r}, {runs}
shape, reps = ((4,), 10) if name == "W1" else ((), 1)
w = TLChain(fw, shape, 1000 if name == "W1" else 10_000)
w.step()
for _ in range(runs * reps):
    s = _chain(w.x, w.n).sum()
    if phase == "fb":
        s.backward()
        w.x.grad = None
"""


def count(fw, name, phase, runs):
    """Instructions callgrind counts for the child running ``runs`` steps."""
    code = _CHILD.format(here=HERE, src=os.path.join(os.path.dirname(HERE), "src"), fw=fw,
                         name=name, phase=phase, runs=runs)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONHASHSEED="0")
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
           sys.executable, "-c", code]
    if shutil.which("setarch"):
        cmd = ["setarch", "-R"] + cmd
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    m = re.search(r"Collected : (\d+)", out.stderr)
    if out.returncode or not m:
        raise SystemExit(f"callgrind run failed ({fw} {name} {phase}):\n{out.stderr[-2000:]}")
    return int(m.group(1))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--framework", default="tapegrad", choices=("tapegrad", "torch"))
    ap.add_argument("--only", default="W1,W2", help="comma-separated: W1, W2")
    ap.add_argument("--runs", type=int, default=20, help="steps counted (default 20)")
    args = ap.parse_args(argv)
    if not shutil.which("valgrind"):
        raise SystemExit("valgrind is not on PATH (apt install valgrind)")
    print(f"{args.framework}: instructions per op (callgrind; {args.runs} steps of 10,000 ops, "
          f"less start-up)")
    for name in args.only.split(","):
        for phase, label in (("f", "forward"), ("fb", "forward+backward")):
            lo = count(args.framework, name, phase, 0)
            hi = count(args.framework, name, phase, args.runs)
            print(f"  {name} {label:17s} {(hi - lo) / (args.runs * 10_000):9,.0f}", flush=True)


if __name__ == "__main__":
    main()
