"""Tests for tapegrad.save / tapegrad.load (src/tapegrad/utils/serialization.py).

Checkpoints are .npz archives (np.savez) with a JSON description; nothing is pickled. Torch
comparisons take the ``torch`` fixture (conftest.py) and skip when torch is not installed.
"""
import collections
import io
import os
import pickle
import zipfile

import numpy as np
import pytest

import tapegrad as tg
from tapegrad import nn, optim


def _roundtrip(obj, tmp_path, name="ck.pt"):
    path = tmp_path / name
    tg.save(obj, path)
    return tg.load(path)


def _same_tensor(a, b):
    assert type(a) is type(b)
    assert a.dtype == b.dtype and a.shape == b.shape and a.requires_grad == b.requires_grad
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


# ---------------------------------------------------------------------------------------------
# tensors
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [tg.float16, tg.float32, tg.float64, tg.uint8, tg.int8,
                                   tg.int16, tg.int32, tg.int64, tg.bool])
def test_tensor_dtypes_roundtrip(tmp_path, dtype):
    x = (tg.arange(12) % 5).to(dtype).reshape(3, 4)
    y = _roundtrip(x, tmp_path)
    _same_tensor(x, y)
    assert y.is_leaf and y.grad_fn is None


@pytest.mark.parametrize("make", [
    lambda: tg.tensor(3.5), lambda: tg.zeros(0, 3), lambda: tg.randn(2, 3, 4),
    lambda: tg.randn(4, 5).t(), lambda: tg.arange(10.0)[::3], lambda: tg.randn(3, 1).expand(3, 4),
    lambda: tg.randn(2, 3, requires_grad=True),
    lambda: tg.tensor([float("nan"), float("inf"), -0.0]),
])
def test_tensor_shapes_and_layouts(tmp_path, make):
    x = make()
    y = _roundtrip(x, tmp_path)
    _same_tensor(x, y)


def test_grad_and_graph_are_not_saved(tmp_path, torch):
    w = tg.ones(2, requires_grad=True)
    y = w * 2
    y.sum().backward()
    a, b = _roundtrip([w, y], tmp_path)
    assert a.grad is None and a.requires_grad and a.is_leaf
    assert b.is_leaf and b.requires_grad and b.grad_fn is None
    # torch: a non-leaf loads as a leaf that requires grad, .grad is dropped
    tw = torch.ones(2, requires_grad=True)
    ty = tw * 2
    ty.sum().backward()
    buf = io.BytesIO()
    torch.save([tw, ty], buf)
    buf.seek(0)
    ta, tb = torch.load(buf)
    assert (ta.grad, ta.requires_grad, tb.is_leaf, tb.requires_grad) == \
        (a.grad, a.requires_grad, b.is_leaf, b.requires_grad)


def test_parameter_keeps_its_class(tmp_path):
    p = nn.Parameter(tg.randn(3))
    q = nn.Parameter(tg.randn(2), requires_grad=False)
    a, b, c = _roundtrip([p, p, q], tmp_path)
    assert type(a) is nn.Parameter and a is b
    assert a.requires_grad and not c.requires_grad and type(c) is nn.Parameter
    np.testing.assert_array_equal(a.detach().numpy(), p.detach().numpy())


def test_numpy_values(tmp_path):
    obj = {"arr": np.arange(6, dtype=np.int16).reshape(2, 3), "f32": np.float32(1.5),
           "b": np.bool_(True), "c": np.complex64(1 + 2j), "u64": np.uint64(2 ** 63 + 5),
           "carr": np.array([1 + 1j, 2]), "fortran": np.asfortranarray(np.ones((2, 3)))}
    out = _roundtrip(obj, tmp_path)
    for k, v in obj.items():
        assert type(out[k]) is type(v), k
        assert out[k].dtype == v.dtype
        np.testing.assert_array_equal(out[k], v)


# ---------------------------------------------------------------------------------------------
# structures
# ---------------------------------------------------------------------------------------------

def test_python_values_roundtrip(tmp_path):
    obj = {
        "none": None, "t": True, "f": False, "i": -7, "big": 2 ** 80, "x": 1.25, "neg0": -0.0,
        "nan": float("nan"), "inf": float("inf"), "ninf": float("-inf"), "s": "héllo ✓",
        "bytes": b"\x00\xff", "c": complex(1, float("inf")), "list": [1, [2, (3, "4")]],
        "tuple": (1,), "empty": ((), [], {}), "set": {3, 1, 2}, "fs": frozenset({"a"}),
        "size": tg.Size([2, 3]), "dtype": tg.float16, "dev": tg.device("cpu"),
        1: "int key", (1, 2): "tuple key", None: "none key", 2.5: "float key", False: "bool",
        "od": collections.OrderedDict([("b", 1), ("a", 2)]),
    }
    out = _roundtrip(obj, tmp_path)
    assert list(out) == list(obj)
    for k, v in obj.items():
        got = out[k]
        assert type(got) is type(v), k
        if isinstance(v, float) and v != v:
            assert got != got
        elif isinstance(v, complex):
            assert repr(got) == repr(v)
        else:
            assert got == v, k
    assert repr(out["neg0"]) == "-0.0" and out["dtype"] is tg.float16
    assert list(out["od"]) == ["b", "a"]


def test_tuple_list_and_dict_types_are_kept(tmp_path):
    out = _roundtrip(({"a": [1, (2,)]}, [{}]), tmp_path)
    assert type(out) is tuple and type(out[0]["a"]) is list and type(out[0]["a"][1]) is tuple


def test_module_state_dict_roundtrip_and_load(tmp_path):
    tg.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    sd = model.state_dict()
    tg.save(sd, tmp_path / "model.pt")
    loaded = tg.load(tmp_path / "model.pt")
    assert type(loaded) is collections.OrderedDict and list(loaded) == list(sd)
    for k in sd:
        _same_tensor(sd[k], loaded[k])
    fresh = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    result = fresh.load_state_dict(loaded)
    assert list(result.missing_keys) == [] and list(result.unexpected_keys) == []
    x = tg.randn(5, 4)
    np.testing.assert_array_equal(fresh(x).detach().numpy(), model(x).detach().numpy())
    assert all(p.requires_grad for p in fresh.parameters())
    loaded["0.weight"].zero_()   # load_state_dict copied: the model keeps its values
    assert fresh[0].weight.abs().sum().item() > 0


def _train_step(model, opt, x, y):
    opt.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()


@pytest.mark.parametrize("make_opt", [
    lambda p: optim.Adam(p, lr=1e-2, betas=(0.8, 0.9)),
    lambda p: optim.AdamW(p, lr=1e-2, weight_decay=0.1, amsgrad=True),
    lambda p: optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
])
def test_optimizer_state_dict_roundtrip_resumes_identically(tmp_path, make_opt):
    tg.manual_seed(1)
    x, y = tg.randn(16, 3), tg.randn(16, 2)
    model = nn.Linear(3, 2)
    opt = make_opt(model.parameters())
    for _ in range(3):
        _train_step(model, opt, x, y)
    tg.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3},
            tmp_path / "ck.pt")
    ck = tg.load(tmp_path / "ck.pt")
    sd = opt.state_dict()
    assert ck["optimizer"]["param_groups"] == sd["param_groups"]
    assert set(ck["optimizer"]["state"]) == set(sd["state"]) == {0, 1}
    for pid, st in sd["state"].items():
        assert set(st) == set(ck["optimizer"]["state"][pid])
        for k, v in st.items():
            if isinstance(v, tg.Tensor):
                _same_tensor(v, ck["optimizer"]["state"][pid][k])
            else:
                assert v == ck["optimizer"]["state"][pid][k]
    model2 = nn.Linear(3, 2)
    model2.load_state_dict(ck["model"])
    opt2 = make_opt(model2.parameters())
    opt2.load_state_dict(ck["optimizer"])
    for _ in range(2):
        _train_step(model, opt, x, y)
        _train_step(model2, opt2, x, y)
    for p, q in zip(model.parameters(), model2.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())


def test_scheduler_state_dict_roundtrip(tmp_path):
    model = nn.Linear(2, 1)
    opt = optim.SGD(model.parameters(), lr=0.1)
    sched = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    for _ in range(3):
        opt.step()
        sched.step()
    out = _roundtrip(sched.state_dict(), tmp_path)
    assert out == sched.state_dict()


# ---------------------------------------------------------------------------------------------
# sharing
# ---------------------------------------------------------------------------------------------

def test_tied_weights_share_memory_after_load(tmp_path):
    emb = nn.Embedding(5, 3)
    head = nn.Linear(3, 5, bias=False)
    head.weight = emb.weight
    model = nn.ModuleDict({"emb": emb, "head": head})
    sd = _roundtrip(model.state_dict(), tmp_path)
    a, b = sd["emb.weight"], sd["head.weight"]
    assert a is not b and np.shares_memory(a.numpy(), b.numpy())
    assert len(np.load(tmp_path / "ck.pt").files) == 2   # one storage + the description


def test_views_share_memory_like_torch(tmp_path, torch):
    def run(mod, save, load):
        base = mod.arange(12.0)
        objs = [base, base[2:6], base.view(3, 4).t(), base[::3], base.view(3, 4)[1]]
        out = load(save(objs))
        out[0][3] = 100.0
        out[2][0, 1] = -1.0     # == base[4]
        return [o.tolist() for o in out], [tuple(o.shape) for o in out]

    def tg_save(objs):
        tg.save(objs, tmp_path / "views.pt")
        return tmp_path / "views.pt"

    def torch_save(objs):
        buf = io.BytesIO()
        torch.save(objs, buf)
        buf.seek(0)
        return buf
    ours = run(tg, tg_save, tg.load)
    theirs = run(torch, torch_save, torch.load)
    assert ours == theirs


def test_unshared_tensors_are_independent(tmp_path):
    a, b = tg.zeros(3), tg.zeros(3)
    la, lb = _roundtrip([a, b], tmp_path)
    la[0] = 1.0
    assert lb.tolist() == [0.0, 0.0, 0.0]


def test_small_slice_is_stored_compactly(tmp_path):
    big = tg.zeros(100_000)
    tg.save(big[:10], tmp_path / "slice.pt")
    assert os.path.getsize(tmp_path / "slice.pt") < 2_000
    assert tg.load(tmp_path / "slice.pt").shape == (10,)


def test_same_tensor_object_loads_as_one_object(tmp_path):
    x = tg.randn(3)
    out = _roundtrip({"a": x, "b": [x, x.detach()]}, tmp_path)
    assert out["a"] is out["b"][0] and out["b"][1] is not out["a"]
    assert np.shares_memory(out["a"].numpy(), out["b"][1].numpy())


# ---------------------------------------------------------------------------------------------
# files
# ---------------------------------------------------------------------------------------------

def test_file_objects(tmp_path):
    buf = io.BytesIO(b"HEAD")
    buf.seek(4)
    tg.save({"w": tg.ones(2)}, buf)
    assert buf.getvalue()[:4] == b"HEAD"
    buf2 = io.BytesIO(buf.getvalue()[4:])
    assert tg.load(buf2)["w"].tolist() == [1.0, 1.0]
    with open(tmp_path / "f.pt", "wb") as fh:
        tg.save([1, 2], fh)
    with open(tmp_path / "f.pt", "rb") as fh:
        assert tg.load(fh) == [1, 2]
    assert tg.load(str(tmp_path / "f.pt")) == [1, 2]


def test_path_is_written_exactly_no_suffix(tmp_path):
    tg.save(1, tmp_path / "model.pth")
    assert os.listdir(tmp_path) == ["model.pth"]
    assert zipfile.is_zipfile(tmp_path / "model.pth")


def test_unsupported_type_raises_and_writes_nothing(tmp_path):
    class Thing:
        pass
    path = tmp_path / "bad.pt"
    with pytest.raises(TypeError, match=r"Thing at obj\['model'\]\[1\]"):
        tg.save({"model": [tg.ones(1), Thing()]}, path)
    assert os.listdir(tmp_path) == []
    with pytest.raises(TypeError, match="function"):
        tg.save({"f": lambda: 1}, path)
    with pytest.raises(TypeError, match="dtype <U1 is not numeric"):
        tg.save(np.array(["a"]), path)
    with pytest.raises(TypeError, match="object"):
        tg.save(np.array([None], dtype=object), path)
    with pytest.raises(TypeError, match=r"Linear.*state_dict\(\)"):
        tg.save(nn.Linear(2, 2), path)   # save module.state_dict(), not the module
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError, match="contains itself"):
        tg.save(loop, path)
    assert os.listdir(tmp_path) == []


def test_failed_save_keeps_old_file_and_leaves_no_temp(tmp_path, monkeypatch):
    path = tmp_path / "ck.pt"
    tg.save({"v": 1}, path)
    os.chmod(path, 0o640)

    def broken_savez(fh, **arrays):
        fh.write(b"partial")
        raise OSError("disk full")
    monkeypatch.setattr(np, "savez", broken_savez)
    with pytest.raises(OSError, match="disk full"):
        tg.save({"v": 2}, path)
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["ck.pt"]
    assert tg.load(path) == {"v": 1}
    tg.save({"v": 3}, path)      # overwriting keeps the file's permissions
    assert tg.load(path) == {"v": 3} and os.stat(path).st_mode & 0o777 == 0o640


def test_new_file_gets_umask_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        tg.save(1, tmp_path / "a.pt")
    finally:
        os.umask(old)
    assert os.stat(tmp_path / "a.pt").st_mode & 0o777 == 0o644


def test_path_errors(tmp_path):
    with pytest.raises(RuntimeError, match="Parent directory"):
        tg.save(1, tmp_path / "missing" / "x.pt")
    with pytest.raises(RuntimeError, match="directory"):
        tg.save(1, tmp_path)
    with pytest.raises(FileNotFoundError):
        tg.load(tmp_path / "nope.pt")


def test_load_rejects_non_checkpoints(tmp_path):
    (tmp_path / "garbage").write_bytes(b"not a checkpoint at all")
    (tmp_path / "empty").write_bytes(b"")
    np.save(tmp_path / "single.npy", np.zeros(2))
    for name in ("garbage", "empty", "single.npy"):
        with pytest.raises(RuntimeError, match="not a tapegrad checkpoint"):
            tg.load(tmp_path / name)
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as z:
        z.writestr("readme.txt", "hi")
    with pytest.raises(RuntimeError, match="not a tapegrad checkpoint"):
        tg.load(tmp_path / "other.zip")


def test_load_never_unpickles(tmp_path):
    class Boom:
        def __reduce__(self):
            return (os.system, ("touch " + str(tmp_path / "PWNED"),))
    # a pickle file, and an .npz whose member is a pickled object array
    (tmp_path / "p.pkl").write_bytes(pickle.dumps(Boom()))
    np.savez(tmp_path / "obj.npz", x=np.array([Boom()], dtype=object))
    for name in ("p.pkl", "obj.npz"):
        with pytest.raises(RuntimeError):
            tg.load(tmp_path / name)
    # a tapegrad checkpoint whose storage was swapped for a pickled object array
    tg.save(tg.ones(2), tmp_path / "ck.pt")
    with np.load(tmp_path / "ck.pt") as z:
        members = {k: z[k] for k in z.files}
    members["s0"] = np.array([Boom()], dtype=object)
    np.savez(tmp_path / "evil.npz", **members)
    with pytest.raises(RuntimeError, match="damaged|not a tapegrad"):
        tg.load(tmp_path / "evil.npz")
    assert not (tmp_path / "PWNED").exists()


def test_load_rejects_torch_files(tmp_path, torch):
    torch.save({"w": torch.ones(2)}, tmp_path / "t.pt")
    with pytest.raises(RuntimeError, match="torch.save"):
        tg.load(tmp_path / "t.pt")


def test_plain_npz_loads_as_dict_of_tensors(tmp_path, torch):
    sd = torch.nn.Linear(3, 2).state_dict()
    np.savez(tmp_path / "w.npz", **{k: v.numpy() for k, v in sd.items()})
    loaded = tg.load(tmp_path / "w.npz")
    assert list(loaded) == ["weight", "bias"]
    model = nn.Linear(3, 2)
    model.load_state_dict(loaded)
    np.testing.assert_array_equal(model.weight.detach().numpy(), sd["weight"].numpy())


def test_damaged_description(tmp_path):
    tg.save({"a": tg.ones(2)}, tmp_path / "ck.pt")
    with np.load(tmp_path / "ck.pt") as z:
        members = {k: z[k] for k in z.files}
    for bad in (b'{"format": "tapegrad.save", "version": 99, "root": null, "tensors": []}',
                b'{"format": "tapegrad.save", "version": 1, "root": {"$": "t", "i": 5}, '
                b'"tensors": []}',
                b'{"format": "tapegrad.save", "version": 1, "root": {"$": "evil"}, '
                b'"tensors": []}',
                b"{not json"):
        members["__tapegrad__"] = np.frombuffer(bad, np.uint8)
        np.savez(tmp_path / "bad.npz", **members)
        with pytest.raises(RuntimeError):
            tg.load(tmp_path / "bad.npz")


def test_map_location_and_weights_only(tmp_path):
    x = tg.arange(3.0)
    tg.save(x, tmp_path / "x.pt")
    p = tmp_path / "x.pt"
    for ml in (None, "cpu", tg.device("cpu"), {"cuda:0": "cpu"}, {"cpu": "cpu"},
               lambda storage, loc: storage, lambda storage, loc: None):
        assert tg.load(p, map_location=ml).tolist() == [0.0, 1.0, 2.0]
    assert tg.load(p, "cpu").tolist() == [0.0, 1.0, 2.0]   # positional, as torch
    assert tg.load(p, map_location=lambda s, loc: s * 2).tolist() == [0.0, 2.0, 4.0]
    assert tg.load(p, weights_only=False).tolist() == [0.0, 1.0, 2.0]
    assert tg.load(p, mmap=True).tolist() == [0.0, 1.0, 2.0]
    for ml in ("cuda", "cuda:0", tg.device("meta"), {"cpu": "cuda"}):
        with pytest.raises(RuntimeError):
            tg.load(p, map_location=ml)
    with pytest.raises(TypeError):
        tg.load(p, map_location=3)


def test_public_names():
    from tapegrad.utils.serialization import load, save
    assert tg.save is save and tg.load is load
