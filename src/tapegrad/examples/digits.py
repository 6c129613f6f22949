"""Train an MLP on scikit-learn's handwritten digits with tapegrad, written as a PyTorch loop.

    python -m tapegrad.examples.digits [--epochs 30] [--batch-size 32] [--lr 0.01] [--hidden 64]
                                       [--seed 0] [--out runs/digits]

The data are the 1,797 8x8 images of ``sklearn.datasets.load_digits`` (pixels scaled to [0, 1]),
split 80/20 stratified by class. The model is Linear(64, hidden) -> ReLU -> Linear(hidden, 10),
trained with Adam on cross-entropy. A progress bar shows each epoch's loss and accuracy; at the
end the test accuracy and wall time are printed, and ``<out>/curve.png`` (loss and accuracy per
epoch) and ``<out>/metrics.json`` are written. The same ``--seed`` gives the same numbers.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time

import numpy as np

import tapegrad
from tapegrad import nn, optim

DEFAULTS = {"epochs": 30, "batch_size": 32, "lr": 1e-2, "hidden": 64, "seed": 0,
            "out": os.path.join("runs", "digits")}


def build_parser():
    p = argparse.ArgumentParser(
        prog="python -m tapegrad.examples.digits",
        description="Train an MLP classifier on scikit-learn's 8x8 digits with tapegrad.")
    p.add_argument("--epochs", type=int, default=DEFAULTS["epochs"],
                   help="passes over the training set (default: %(default)s)")
    p.add_argument("--batch-size", type=int, default=DEFAULTS["batch_size"],
                   help="examples per optimizer step (default: %(default)s)")
    p.add_argument("--lr", type=float, default=DEFAULTS["lr"],
                   help="Adam learning rate (default: %(default)s)")
    p.add_argument("--hidden", type=int, default=DEFAULTS["hidden"],
                   help="hidden units of the MLP (default: %(default)s)")
    p.add_argument("--seed", type=int, default=DEFAULTS["seed"],
                   help="seed for the split, the initialization and the shuffling "
                        "(default: %(default)s)")
    p.add_argument("--out", default=DEFAULTS["out"],
                   help="directory for curve.png and metrics.json (default: %(default)s)")
    return p


def _check_args(parser, args):
    """Reject bad values with a one-line message (parser.error exits with status 2)."""
    if args.epochs < 1:
        parser.error(f"argument --epochs: must be a positive integer, got {args.epochs}")
    if args.batch_size < 1:
        parser.error(f"argument --batch-size: must be a positive integer, got {args.batch_size}")
    if not (math.isfinite(args.lr) and args.lr > 0):
        parser.error(f"argument --lr: must be a positive finite number, got {args.lr}")
    if args.hidden < 1:
        parser.error(f"argument --hidden: must be a positive integer, got {args.hidden}")
    if not 0 <= args.seed < 2 ** 32:
        parser.error(f"argument --seed: must be in [0, 2**32), got {args.seed}")
    try:
        os.makedirs(args.out, exist_ok=True)
        with tempfile.TemporaryFile(dir=args.out):
            pass
    except OSError as e:
        reason = e.strerror or str(e)
        parser.error(f"argument --out: cannot write to {args.out!r}: {reason}")


def load_data(seed):
    """(X_train, X_test, y_train, y_test) as tapegrad tensors: float32 pixels in [0, 1], int64
    labels; a stratified 80/20 split."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    X = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, stratify=y,
                                                        random_state=seed)
    return (tapegrad.tensor(X_train), tapegrad.tensor(X_test), tapegrad.tensor(y_train),
            tapegrad.tensor(y_test))


def evaluate(model, loss_fn, X, y):
    """(mean loss, accuracy) of ``model`` on (X, y), without recording a graph."""
    model.eval()
    with tapegrad.no_grad():
        logits = model(X)
        loss = loss_fn(logits, y).item()
        acc = (logits.argmax(dim=1) == y).sum().item() / len(y)
    return loss, acc


def save_curve(path, history):
    """Loss (left) and accuracy (right) per epoch as a PNG, drawn with the Agg backend."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    epochs = np.arange(1, len(history["train_loss"]) + 1)
    fig = Figure(figsize=(9, 3.5))
    FigureCanvasAgg(fig)
    ax1, ax2 = fig.subplots(1, 2)
    ax1.plot(epochs, history["train_loss"], label="train")
    ax1.plot(epochs, history["test_loss"], label="test")
    ax1.set_xlabel("epoch")
    ax1.set_ylabel("cross-entropy loss")
    ax1.set_yscale("log")
    ax1.legend()
    ax2.plot(epochs, history["train_accuracy"], label="train")
    ax2.plot(epochs, history["test_accuracy"], label="test")
    ax2.set_xlabel("epoch")
    ax2.set_ylabel("accuracy")
    ax2.legend()
    fig.suptitle("tapegrad MLP on sklearn digits")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main(argv=None):
    """Run the example; returns the metrics dict that is also written to metrics.json."""
    parser = build_parser()
    args = parser.parse_args(argv)
    _check_args(parser, args)
    from tqdm import tqdm

    start = time.perf_counter()
    tapegrad.manual_seed(args.seed)
    X_train, X_test, y_train, y_test = load_data(args.seed)
    n = X_train.shape[0]

    model = nn.Sequential(
        nn.Linear(64, args.hidden),
        nn.ReLU(),
        nn.Linear(args.hidden, 10),
    )
    loss_fn = nn.CrossEntropyLoss()
    optimizer = optim.Adam(model.parameters(), lr=args.lr)

    history = {"train_loss": [], "train_accuracy": [], "test_loss": [], "test_accuracy": []}
    with tqdm(total=args.epochs, desc="digits", unit="epoch", dynamic_ncols=True) as bar:
        for epoch in range(1, args.epochs + 1):
            model.train()
            perm = tapegrad.randperm(n)
            total_loss, correct = 0.0, 0
            for i in range(0, n, args.batch_size):
                idx = perm[i:i + args.batch_size]
                xb, yb = X_train[idx], y_train[idx]

                logits = model(xb)
                loss = loss_fn(logits, yb)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()

                total_loss += loss.item() * len(idx)
                correct += (logits.argmax(dim=1) == yb).sum().item()

            train_loss, train_acc = total_loss / n, correct / n
            test_loss, test_acc = evaluate(model, loss_fn, X_test, y_test)
            history["train_loss"].append(train_loss)
            history["train_accuracy"].append(train_acc)
            history["test_loss"].append(test_loss)
            history["test_accuracy"].append(test_acc)
            bar.set_postfix(epoch=epoch, loss=f"{train_loss:.4f}", acc=f"{train_acc:.4f}",
                            test_acc=f"{test_acc:.4f}")
            bar.update(1)

    wall = time.perf_counter() - start
    curve_path = os.path.join(args.out, "curve.png")
    metrics_path = os.path.join(args.out, "metrics.json")
    metrics = {
        "test_accuracy": history["test_accuracy"][-1],
        "test_loss": history["test_loss"][-1],
        "train_accuracy": history["train_accuracy"][-1],
        "train_loss": history["train_loss"][-1],
        "wall_time_s": wall,
        "history": history,
        "config": {"epochs": args.epochs, "batch_size": args.batch_size, "lr": args.lr,
                   "hidden": args.hidden, "seed": args.seed, "optimizer": "Adam",
                   "n_train": int(n), "n_test": int(X_test.shape[0])},
        "curve": curve_path,
    }
    save_curve(curve_path, history)
    with open(metrics_path, "w") as f:
        json.dump(metrics, f, indent=2)
    print(f"test accuracy: {metrics['test_accuracy']:.4f} | wall time: {wall:.1f}s | "
          f"wrote {curve_path} and {metrics_path}")
    return metrics


if __name__ == "__main__":
    main()
    sys.exit(0)
