"""The benchmark harness, without timing anything that matters: run.py's thread settings (every
job at --threads, except W3-dt, which runs with each library's defaults: a second BLAS thread pool
once made tapegrad's W3 three times slower there, unseen at one thread), its ratios (each the
median of the repetitions' own ratios), W3-mm's split of the step (worker.py --time-matmul),
W8-cold's spin after each product (--wait-after-matmul), benchmarks/cold.py, and
benchmarks/instructions.py's callgrind counts."""
import json
import os
import subprocess
import sys
import types

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
run = pytest.importorskip("benchmarks.run")


def _launched(monkeypatch, jid, threads, fixed_layout=False):
    seen = {}

    def fake(cmd, **kw):
        seen["cmd"], seen["env"] = cmd, kw["env"]
        return types.SimpleNamespace(returncode=0, stdout=json.dumps({"median": {}}), stderr="")

    monkeypatch.setattr(subprocess, "run", fake)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "7")
    job = next(j for j in run.JOBS if j[0] == jid)
    args = types.SimpleNamespace(quick=True, threads=threads, no_gc=False, timeout=5,
                                 fixed_layout=fixed_layout)
    run.run_worker(job, "torch", args)
    return seen["cmd"], seen["env"]


def test_jobs_run_at_the_given_threads(monkeypatch):
    cmd, env = _launched(monkeypatch, "W3", 1)
    assert cmd[cmd.index("--threads") + 1] == "1"
    assert all(env[k] == "1" for k in run.THREAD_VARS)


def test_w3_dt_runs_with_each_librarys_default_threads(monkeypatch):
    cmd, env = _launched(monkeypatch, "W3-dt", 1)
    assert "--threads" not in cmd and cmd[2] == "W3"
    assert not any(k in env for k in run.THREAD_VARS)    # (also one the caller had set)


def test_each_worker_gets_a_layout_seed_of_its_own(monkeypatch):
    seeds = {int(cmd[cmd.index("--layout-seed") + 1])
             for cmd, _ in (_launched(monkeypatch, "W3", 1) for _ in range(8))}
    assert len(seeds) >= 7
    cmd, _ = _launched(monkeypatch, "W3", 1, fixed_layout=True)
    assert "--layout-seed" not in cmd


def test_shuffle_layout_draws_the_same_memory_for_a_seed_and_other_memory_for_others():
    worker = pytest.importorskip("benchmarks.worker")

    def sizes(seed):
        kept = worker.shuffle_layout(seed)
        return [len(x) for x in kept]

    assert sizes(3) == sizes(3)
    assert len({tuple(sizes(s)) for s in range(6)}) == 6
    assert sum(sizes(11)) > 0


def test_instruction_counts_read_callgrinds_total_at_one_thread(monkeypatch):
    instructions = pytest.importorskip("benchmarks.instructions")
    seen = {}

    def fake(cmd, **kw):
        seen["cmd"], seen["env"] = cmd, kw["env"]
        return types.SimpleNamespace(returncode=0, stderr="==1== Collected : 1234567\n")

    monkeypatch.setattr(subprocess, "run", fake)
    assert instructions.count("tapegrad", "W1", "f", 2) == 1234567
    assert "--tool=callgrind" in seen["cmd"]
    assert seen["env"]["OPENBLAS_NUM_THREADS"] == "1" and seen["env"]["PYTHONHASHSEED"] == "0"


def test_the_instruction_counts_child_runs():
    instructions = pytest.importorskip("benchmarks.instructions")
    code = instructions._CHILD.format(
        here=os.path.dirname(instructions.__file__),
        src=os.path.join(os.path.dirname(os.path.dirname(instructions.__file__)), "src"),
        fw="tapegrad", name="W2", phase="fb", runs=1)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr


def _worker(*argv):
    worker = os.path.join(os.path.dirname(run.__file__), "worker.py")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, worker, *argv], capture_output=True, text=True,
                         check=False, env=env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


@pytest.mark.parametrize("fw", ["tapegrad", "numpy"])
def test_time_matmul_splits_each_step_into_matrix_products_and_the_rest(fw):
    res = _worker("W8", fw, "--iters", "3", "--warmup", "1", "--time-matmul")
    ph = res["phases"]
    assert len(ph["matmul"]) == 3
    for total, mm, rest in zip(ph["total"], ph["matmul"], ph["rest"]):
        # (8 products a step, each timed: more than nothing, less than the whole step)
        assert 0 < mm < total and rest == pytest.approx(total - mm)


@pytest.mark.parametrize("fw", ["tapegrad", "numpy"])
def test_wait_after_matmul_spins_after_each_product_and_leaves_the_spins_out_of_the_rest(fw):
    res = _worker("W8", fw, "--iters", "3", "--warmup", "1", "--wait-after-matmul", "5")
    ph = res["phases"]
    assert len(ph["matmul"]) == 3
    for total, mm, rest in zip(ph["total"], ph["matmul"], ph["rest"]):
        # (8 products a step, each followed by a 5 ms spin inside its timed span)
        assert mm >= 8 * 0.005 and rest == pytest.approx(total - mm) and rest > 0
    # one spin in the rest would be 5 ms of every step's, where W8's own rest takes well under a
    # millisecond (the quickest step: a loaded machine may stall one)
    assert min(ph["rest"]) < 0.005


def test_the_spin_follows_each_product_inside_its_timed_span(monkeypatch):
    worker = pytest.importorskip("benchmarks.worker")
    import numpy as np
    monkeypatch.setattr(np, "matmul", np.matmul)    # (restored after the test)
    # a clock that moves only when the spin runs (3 s each): the span counts each spin once,
    # whatever the machine's speed
    clock = [0.0]
    monkeypatch.setattr(worker.time, "perf_counter", lambda: clock[0])

    def spin():
        clock[0] += 3.0
    take = worker.time_matmul(spin)
    a = np.ones((2, 2))
    for calls in (1, 2):
        for _ in range(calls):
            np.matmul(a, a)
        assert take() == calls * 3.0


def test_torch_is_refused_the_matmul_timer():
    worker = os.path.join(os.path.dirname(run.__file__), "worker.py")
    for flag in (["--time-matmul"], ["--wait-after-matmul", "1"]):
        out = subprocess.run([sys.executable, worker, "W8", "torch", *flag], capture_output=True,
                             text=True, check=False)
        assert out.returncode == 2 and "torch's products do not go through" in out.stderr


def test_cold_py_prints_its_three_measurements():
    cold = os.path.join(os.path.dirname(run.__file__), "cold.py")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([sys.executable, cold, "--trials", "3"], capture_output=True, text=True,
                         check=False, env=env)
    assert out.returncode == 0, out.stderr
    rows = [r for r in out.stdout.splitlines() if r.startswith("| ") and r[2:3] != "-"]
    names = [r.split(" | ")[0][2:] for r in rows]
    assert "Python spin, 8 ms" in names and "passes over own 64 MB, 4 ms" in names
    assert "W8 step less products, a 1.25 ms spin after each" in names
    assert "W3 step less its products" in names and "W3 step's 8 products" in names
    for r in rows:
        cells = r.strip("| ").split(" | ")
        if cells[0] not in ("before it", "measured"):
            assert all(float(c) == float(c) for c in cells[1:])     # (numbers, not NaN)


def test_w8_cold_runs_w8_with_the_spin_for_tapegrad_and_numpy_only(monkeypatch, tmp_path):
    launched = []

    def fake(job, fw, args, check_path=None, profile_path=None):
        launched.append((job[0], fw, job[2]))
        med = {"total": 0.0003, "fwd": 0.0001, "bwd": 0.0001, "update": 0.0001}
        if job[0] == "W8-cold":
            med.update(total=0.0103, matmul=0.01, rest=0.0003 if fw == "tapegrad" else 0.0001)
        return {"median": med}, 0.0

    monkeypatch.setattr(run, "run_worker", fake)
    monkeypatch.setattr(run, "plot", lambda rows, path: False)
    run.main(["--only", "W8", "--repeats", "2", "--out", str(tmp_path)])
    cold = [(fw, argv) for jid, fw, argv in launched if jid == "W8-cold"]
    assert sorted(fw for fw, _ in cold) == ["numpy", "numpy", "tapegrad", "tapegrad"]
    assert all(argv == ["--wait-after-matmul", "1.25"] for _, argv in cold)
    warm = [(fw, argv) for jid, fw, argv in launched if jid == "W8"]
    assert sorted(fw for fw, _ in warm) == ["numpy", "numpy", "tapegrad", "tapegrad", "torch",
                                            "torch"]
    assert all(argv == [] for _, argv in warm)
    table = (tmp_path / "results.md").read_text()
    assert "| W8-cold | rest of the step | µs | 300 | — | 100 | — | 3.00x |" in table


def test_without_time_matmul_numpy_matmul_is_left_alone():
    res = _worker("W8", "numpy", "--iters", "2", "--warmup", "0")
    assert "matmul" not in res["phases"]


def test_w3_mm_runs_tapegrad_and_numpy_only_and_reports_both_parts(monkeypatch, tmp_path):
    launched = []
    # the machine's speed changes over the run: the median of the repetitions' matmul ratios
    # is 1.125, the ratio of the medians 45 / 48
    speed = {"tapegrad": [1.0, 2.0, 8.0, 8.0], "numpy": [1.0, 4.0, 8.0, 8.0]}

    def fake(job, fw, args, check_path=None, profile_path=None):
        rep = sum(1 for j, f in launched if j == job[0] and f == fw)
        launched.append((job[0], fw))
        med = {"total": 0.010, "fwd": 0.004, "bwd": 0.005, "update": 0.001}
        if "--time-matmul" in job[2]:
            k = speed[fw][rep]
            med.update(matmul=k * (0.009 if fw == "tapegrad" else 0.008),
                       rest=k * (0.002 if fw == "tapegrad" else 0.001))
        return {"median": med}, 0.0

    monkeypatch.setattr(run, "run_worker", fake)
    monkeypatch.setattr(run, "plot", lambda rows, path: False)
    run.main(["--only", "W3", "--repeats", "4", "--out", str(tmp_path)])
    mm = [fw for jid, fw in launched if jid == "W3-mm"]
    assert sorted(mm) == ["numpy"] * 4 + ["tapegrad"] * 4
    # (two frameworks: who goes first alternates)
    assert mm[0::2] in (["tapegrad", "numpy"] * 2, ["numpy", "tapegrad"] * 2)
    runs = 4 * run.REPEAT_FACTOR["W3"]     # (W3 runs several times a repetition)
    assert sorted(fw for jid, fw in launched if jid == "W3") == \
        ["numpy"] * runs + ["tapegrad"] * runs + ["torch"] * runs
    table = (tmp_path / "results.md").read_text()
    assert "| W3-mm | matrix products | ms | 45.0 | — | 48.0 | — | 1.12x |" in table
    assert "| W3-mm | rest of the step | ms | 10.0 | — | 6.00 | — | 2.00x |" in table
    summary = json.loads((tmp_path / "results.json").read_text())["summary"]
    row = next(r for r in summary if r["workload"] == "W3-mm" and r["metric"] == "matrix products")
    assert row["tapegrad_over_numpy"] == pytest.approx(1.125)
    assert row["ratio_of_medians"]["numpy"] == pytest.approx(45 / 48)
    assert row["repetitions"]["tapegrad"] == pytest.approx([9.0, 18.0, 72.0, 72.0])


def test_each_target_shows_its_repetitions_spread_and_how_many_are_within_it(monkeypatch,
                                                                            tmp_path):
    # W3's four repetitions: tapegrad / NumPy 1.0, 1.1, 1.02, 1.2 (median 1.06, not met)
    tl = {"tapegrad": [10.0, 11.0, 10.2, 12.0], "numpy": [10.0] * 4, "torch": [10.0] * 4}
    seen = []

    def fake(job, fw, args, check_path=None, profile_path=None):
        rep = sum(1 for j, f in seen if j == job[0] and f == fw)
        seen.append((job[0], fw))
        t = tl[fw][rep] / 1e3
        return {"median": {"total": t, "fwd": t / 2, "bwd": t / 2, "update": 0.0,
                           "matmul": t * 0.9, "rest": t * 0.1}}, 0.0

    monkeypatch.setattr(run, "run_worker", fake)
    monkeypatch.setattr(run, "plot", lambda rows, path: False)
    monkeypatch.setattr(run, "REPEAT_FACTOR", {})   # (four repetitions, one W3 run each)
    run.main(["--only", "W3", "--repeats", "4", "--out", str(tmp_path)])
    table = (tmp_path / "results.md").read_text()
    assert "| W3 | step | ms | 10.6 | 10.0 | 10.0 | 1.06x | **1.06x** | ≤ 1.05x NumPy | " \
        "**not met** |" in table
    # (quartiles as statistics.quantiles gives them: 1.0 + 0.25 * 0.02, 1.1 + 0.75 * 0.1)
    assert "- W3 step: 1.000x to 1.200x, quartiles 1.005x to 1.175x; 2 of 4 within the target" \
        in table
    summary = json.loads((tmp_path / "results.json").read_text())["summary"]
    row = next(r for r in summary if r["workload"] == "W3" and r["metric"] == "step")
    assert row["repetitions_within_target"] == 2
    assert row["target_values_per_repetition"] == pytest.approx([1.0, 1.02, 1.1, 1.2])
    fwd = next(r for r in summary if r["workload"] == "W3" and r["metric"] == "forward")
    assert fwd["repetitions_within_target"] is None     # (no target, no spread)


def test_w3_runs_several_times_a_repetition_and_its_ratio_is_the_median_of_all(monkeypatch,
                                                                            tmp_path):
    launched = []
    # nine W3 runs per framework (three repetitions): tapegrad / NumPy 1.00 to 1.08 by 0.01
    tl = [10.0 + 0.1 * i for i in range(9)]

    def fake(job, fw, args, check_path=None, profile_path=None):
        n = sum(1 for j, f, _ in launched if j == job[0] and f == fw)
        launched.append((job[0], fw, check_path))
        t = (tl[n] if fw == "tapegrad" else 10.0) / 1e3
        return {"median": {"total": t, "fwd": t / 2, "bwd": t / 2, "update": 0.0,
                           "matmul": t * 0.9, "rest": t * 0.1}}, 0.0

    monkeypatch.setattr(run, "run_worker", fake)
    monkeypatch.setattr(run, "plot", lambda rows, path: False)
    monkeypatch.setattr(run, "REPEAT_FACTOR", {"W3": 3})
    run.main(["--only", "W3", "--repeats", "3", "--out", str(tmp_path)])
    w3 = [(fw, chk) for jid, fw, chk in launched if jid == "W3"]
    assert [fw for fw, _ in w3].count("tapegrad") == 9
    assert [jid for jid, _, _ in launched].count("W3-mm") == 6     # (others: once a repetition)
    # who goes first rotates over W3's own runs; only its first run saves the check files
    assert len({w3[i][0] for i in range(0, 27, 3)}) == 3
    assert [chk is not None for _, chk in w3] == [True] * 3 + [False] * 24
    out = json.loads((tmp_path / "results.json").read_text())
    assert out["meta"]["repeats"] == 3 and out["meta"]["repeats_by_job"] == {"W3": 9}
    row = next(r for r in out["summary"] if r["workload"] == "W3" and r["metric"] == "step")
    assert row["tapegrad_over_numpy"] == pytest.approx(1.04)
    assert row["repetitions_within_target"] == 6
    table = (tmp_path / "results.md").read_text()
    assert "3 repetitions (W3: 9), medians" in table
    assert "6 of 9 within the target" in table


def test_every_product_of_both_mlp_steps_goes_through_numpy_matmul(monkeypatch):
    workloads = pytest.importorskip("benchmarks.workloads")
    import numpy as np
    calls = []
    inner = np.matmul

    def counted(*a, **k):
        calls.append(1)
        return inner(*a, **k)

    for step in (workloads.NPMLP(sizes=workloads.W8_SIZES, batch=workloads.W8_BATCH),
                 workloads.TLMLP(workloads.TorchLike("tapegrad"), sizes=workloads.W8_SIZES,
                                 batch=workloads.W8_BATCH)):
        step.step()
        monkeypatch.setattr(np, "matmul", counted)
        step.step()
        monkeypatch.setattr(np, "matmul", inner)
        # 3 forward, 5 backward (the first layer's input needs no gradient)
        assert len(calls) == 8, type(step).__name__
        calls.clear()


def _rep(total):
    return {"median": {"total": total, "fwd": total / 2, "bwd": total / 2}}


def test_a_verdict_takes_the_ratio_per_repetition():
    # tapegrad is 1x, 4x, 1.33x torch in its three repetitions (median 1.33: W5's 2x is met);
    # the ratio of the medians, 4 / 1, would not be
    raw = {"W5": {"tapegrad": [_rep(1.0), _rep(4.0), _rep(4.0)],
                  "torch": [_rep(1.0), _rep(1.0), _rep(3.0)], "numpy": []}}
    row = next(r for r in run.build_rows(raw) if r[0] == "W5" and r[1] == "step")
    assert run.ratio_of_medians(row, "torch") == pytest.approx(4.0)
    assert run.verdict(row) == (pytest.approx(4 / 3), True)


def test_ratios_are_medians_of_each_repetitions_ratio():
    # the machine slows down from repetition to repetition: each repetition's ratio is 0.5, the
    # ratio of the medians is not
    raw = {"W5": {"tapegrad": [_rep(1.0), _rep(2.0), _rep(8.0)],
                  "torch": [_rep(2.0), _rep(4.0), _rep(16.0)],
                  "numpy": [_rep(1.0), _rep(16.0), _rep(16.0)]}}
    row = next(r for r in run.build_rows(raw) if r[0] == "W5" and r[1] == "step")
    assert row[3]["tapegrad"] == 2000.0 and row[3]["numpy"] == 16000.0   # (ms)
    assert run.ratio(row, "torch") == pytest.approx(0.5)
    assert run.ratio_of_medians(row, "numpy") == pytest.approx(0.125)
    assert run.ratio(row, "numpy") == pytest.approx(0.5)     # (1/1, 2/16, 8/16)
    assert run.verdict(row) == (pytest.approx(0.5), True)


def test_a_failed_repetition_pairs_nothing():
    raw = {"W5": {"tapegrad": [_rep(1.0), {"error": "exit 1"}, _rep(3.0)],
                  "torch": [{"error": "timed out"}, _rep(1.0), _rep(2.0)],
                  "numpy": []}}
    row = next(r for r in run.build_rows(raw) if r[0] == "W5" and r[1] == "step")
    assert run.ratio(row, "torch") == pytest.approx(1.5)     # (repetition 3 alone)
    assert run.ratio(row, "numpy") is None


def test_w7_growth_is_each_repetitions_1m_over_its_100k():
    def deep(bwd):
        return {"fwd": bwd, "bwd": bwd, "graph_mb": 1.0, "peak_mb": 1.0}
    raw = {"W7-100k": {fw: [deep(1.0), deep(2.0), deep(4.0)] for fw in run.FRAMEWORKS},
           "W7-1M": {fw: [deep(10.0), deep(24.0), deep(40.0)] for fw in run.FRAMEWORKS}}
    row = next(r for r in run.build_rows(raw) if r[1] == "backward time 1M / 100k")
    assert row[5]["tapegrad"] == [10.0, 12.0, 10.0]
    assert run.verdict(row) == (10.0, True)
    assert row[6]["tapegrad"] == pytest.approx(12.0)    # (24 / 2: shown beside it)
    md = run.markdown({"date": "-", "cpu": "-", "cores": 2, "python": "-", "numpy": "-",
                       "threads": 1, "repeats": 3, "quick": False, "no_gc": False,
                       "wall_s": 60.0}, run.build_rows(raw), {}, [])
    assert "as the median 1M time over the median 100k time it is 12.0 (tapegrad)" in md


@pytest.mark.parametrize("fw", ["tapegrad", "numpy"])
def test_w7_chains_report_the_median_of_each_chains_times(fw):
    res = _worker("W7", fw, "--n", "2000", "--chains", "3")
    assert res["chains"] == 3 and len(res["bwd_each"]) == len(res["fwd_each"]) == 3
    assert res["bwd"] == sorted(res["bwd_each"])[1] and res["fwd"] == sorted(res["fwd_each"])[1]
    assert res["graph_mb"] is not None and res["peak_mb"] >= 0


def test_w7_100k_runs_five_chains_and_1m_one():
    jobs = {job[0]: job[2] for job in run.JOBS}
    assert jobs["W7-100k"][jobs["W7-100k"].index("--chains") + 1] == "5"
    assert "--chains" not in jobs["W7-1M"]
