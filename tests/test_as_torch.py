"""python -m tapegrad.as_torch runs an unchanged PyTorch script on tapegrad: every torch /
torch.X import is the tapegrad module itself (one Tensor class)."""
import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import sys
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    from torch.utils.data import TensorDataset, DataLoader
    from torch.optim.lr_scheduler import StepLR
    import tapegrad
    assert torch is tapegrad and nn is tapegrad.nn and F is tapegrad.nn.functional
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    sched = StepLR(opt, 1)
    data = TensorDataset(torch.randn(8, 3), torch.randint(0, 2, (8,)))
    for xb, yb in DataLoader(data, batch_size=4):
        loss = F.cross_entropy(m(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    assert isinstance(loss, tapegrad.Tensor)
    import torch.linalg
    assert torch.linalg is tapegrad.linalg
    try:
        import torch.fft  # noqa: F401
    except ModuleNotFoundError as e:
        print("missing:", e.name)
    print("args:", sys.argv[1:], type(loss.grad_fn).__name__)
""")


def _run(tmp_path, *args):
    path = tmp_path / "train.py"
    path.write_text(SCRIPT)
    env = dict(os.environ)
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "tapegrad.as_torch", str(path), *args],
                          capture_output=True, text=True, env=env, timeout=120)


def test_runs_an_unchanged_torch_script(tmp_path):
    r = _run(tmp_path, "--lr", "1")
    assert r.returncode == 0, r.stderr
    assert "missing: torch.fft" in r.stdout
    assert "args: ['--lr', '1'] NllLossBackward0" in r.stdout


def test_usage_without_a_script():
    r = subprocess.run([sys.executable, "-m", "tapegrad.as_torch"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and "usage" in r.stderr


def test_install_refuses_when_the_real_torch_is_loaded():
    code = ("import sys, types; sys.modules['torch'] = types.ModuleType('torch'); "
            "import tapegrad.as_torch as a\n"
            "try:\n    a.install()\nexcept RuntimeError as e:\n    print('refused', e)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "refused" in r.stdout, r.stderr


def test_install_and_uninstall_in_process():
    code = ("import tapegrad.as_torch as a, tapegrad; a.install(); a.install()\n"
            "import torch.nn as nn; assert nn is tapegrad.nn and a.installed()\n"
            "a.uninstall(); assert not a.installed(); print('ok')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "ok", r.stderr


def test_install_ignores_a_failed_torch_import_entry():
    # a failed `import torch.x` leaves None in sys.modules: not a loaded torch
    code = ("import sys; sys.modules['torch.fake'] = None\n"
            "import tapegrad.as_torch as a; a.install(); import torch, tapegrad\n"
            "assert torch is tapegrad; print('ok')")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "ok", r.stderr
