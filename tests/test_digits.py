"""python -m tapegrad.examples.digits: a short run, reproducibility and argument errors."""
import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("sklearn")
pytest.importorskip("tqdm")
pytest.importorskip("matplotlib")

from tapegrad.examples import digits  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _run(tmp_path, *extra, name="run"):
    out = tmp_path / name
    return digits.main(["--out", str(out), *extra]), out


def test_short_run_writes_curve_and_metrics(tmp_path, capsys):
    metrics, out = _run(tmp_path, "--epochs", "3", "--seed", "1")
    png = (out / "curve.png").read_bytes()
    assert png.startswith(PNG_MAGIC) and len(png) > 5000
    saved = json.loads((out / "metrics.json").read_text())
    assert saved == json.loads(json.dumps(metrics))
    assert len(metrics["history"]["train_loss"]) == 3
    assert metrics["config"]["n_train"] == 1437 and metrics["config"]["n_test"] == 360
    assert 0.8 < metrics["test_accuracy"] <= 1.0
    assert metrics["history"]["train_loss"][-1] < metrics["history"]["train_loss"][0]
    captured = capsys.readouterr()
    assert "test accuracy:" in captured.out and "wall time:" in captured.out
    assert "digits" in captured.err and "loss=" in captured.err and "acc=" in captured.err


def test_same_seed_same_numbers(tmp_path):
    a, _ = _run(tmp_path, "--epochs", "2", "--seed", "3", name="a")
    b, _ = _run(tmp_path, "--epochs", "2", "--seed", "3", name="b")
    c, _ = _run(tmp_path, "--epochs", "2", "--seed", "4", name="c")
    assert a["history"] == b["history"]
    assert a["test_accuracy"] == b["test_accuracy"]
    assert a["history"] != c["history"]


def test_default_run_is_accurate(tmp_path):
    metrics, _ = _run(tmp_path)
    assert metrics["config"]["epochs"] == 30
    assert metrics["test_accuracy"] >= 0.96
    assert metrics["wall_time_s"] < 60


@pytest.mark.parametrize("args,message", [
    (["--epochs", "-1"], "argument --epochs: must be a positive integer, got -1"),
    (["--epochs", "0"], "argument --epochs: must be a positive integer, got 0"),
    (["--batch-size", "0"], "argument --batch-size: must be a positive integer, got 0"),
    (["--lr", "0"], "argument --lr: must be a positive finite number, got 0.0"),
    (["--lr", "-0.1"], "argument --lr: must be a positive finite number, got -0.1"),
    (["--lr", "nan"], "argument --lr: must be a positive finite number, got nan"),
    (["--hidden", "0"], "argument --hidden: must be a positive integer, got 0"),
    (["--epochs", "ten"], "argument --epochs: invalid int value: 'ten'"),
])
def test_bad_options_exit_2_with_one_line(tmp_path, capsys, args, message):
    with pytest.raises(SystemExit) as exc:
        digits.main(["--out", str(tmp_path / "x"), *args])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].endswith("error: " + message)
    assert not any("Traceback" in line for line in err)


def test_unwritable_out(tmp_path, capsys):
    blocker = tmp_path / "file.txt"
    blocker.write_text("not a directory")
    with pytest.raises(SystemExit) as exc:
        digits.main(["--epochs", "1", "--out", str(blocker / "sub")])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "error: argument --out: cannot write to" in err and "file.txt" in err


def test_module_entry_point(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "tapegrad.examples.digits", "--batch-size",
                           "0", "--out", str(tmp_path)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].endswith(
        "error: argument --batch-size: must be a positive integer, got 0")
    assert "Traceback" not in proc.stderr
