"""Tests for tapegrad.utils.data: datasets, samplers, collation and DataLoader.

Comparisons with PyTorch take the ``torch`` fixture (conftest.py), so they skip cleanly when torch
is not installed; everything else runs without it. Random orders are compared with torch only
in what must agree (lengths, multisets, reproducibility), never element by element: tapegrad's
generators are not torch's.
"""
import collections
import multiprocessing
import warnings

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.utils.data import (BatchSampler, ChainDataset, ConcatDataset, DataLoader, Dataset,
                                 IterableDataset, RandomSampler, Sampler, SequentialSampler,
                                 StackDataset, Subset, SubsetRandomSampler, TensorDataset,
                                 WeightedRandomSampler, default_collate, default_convert,
                                 get_worker_info, random_split)
from tapegrad.utils.data._utils.collate import collate, default_collate_fn_map

Point = collections.namedtuple("Point", "x y")


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------

def _norm(x):
    """A structure with every tensor (tapegrad or torch) replaced by (dtype name, shape,
    values), and containers by their kind, so results of both libraries compare with ==."""
    mod = type(x).__module__
    if hasattr(x, "dtype") and hasattr(x, "shape") and mod.split(".")[0] in ("tapegrad", "torch") \
            and not isinstance(x, np.ndarray):
        return ("tensor", str(x.dtype).split(".")[-1], tuple(x.shape), x.tolist(),
                bool(x.requires_grad))
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return ("namedtuple", type(x).__name__, tuple(_norm(v) for v in x))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [_norm(v) for v in x])
    if isinstance(x, dict):
        return (type(x).__name__, [(k, _norm(v)) for k, v in x.items()])
    if isinstance(x, np.ndarray):
        return ("ndarray", str(x.dtype), x.tolist())
    return (type(x).__name__, x)


def _outcome(fn):
    """(normalized result) or (exception type name, message)."""
    try:
        return ("ok", _norm(fn()))
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return ("raise", type(e).__name__, str(e))


def _same_outcome(ours, theirs, message=True):
    if theirs[0] == "raise" or ours[0] == "raise":
        assert ours[0] == theirs[0] == "raise", (ours, theirs)
        assert ours[1] == theirs[1], (ours, theirs)
        if message:
            assert ours[2] == theirs[2], (ours, theirs)
    else:
        assert ours == theirs


def _tud(mod):
    """``mod.utils.data`` for mod in (tapegrad, torch)."""
    import importlib
    return importlib.import_module(mod.__name__ + ".utils.data")


# ---------------------------------------------------------------------------------------------
# default_collate / default_convert against torch
# ---------------------------------------------------------------------------------------------

def _collate_cases(mod):
    return [
        [1, 2, 3], [True, False], [1.0, 2], [1, 2.5], [0.5, 1.5],
        [np.float32(1), np.float32(2)], [np.int32(1), np.int32(2)], [np.bool_(1), np.bool_(0)],
        [np.float64(1.5), np.float64(2)], [np.int16(3), np.int16(4)],
        [np.array([1, 2]), np.array([3, 4])], [np.zeros((2, 3), np.float32)] * 4,
        [np.array([1.0], dtype=np.float16)], [np.array(['a']), np.array(['b'])],
        [np.array([object()], dtype=object)],
        ["a", "b"], [b"a", b"b"], [np.str_("a")],
        [(1, 2.0), (3, 4.0)], [[1, 2.0], [3, 4.0]], [[1, 2.0], [3]],
        [{"a": 1, "b": [1.0]}, {"a": 2, "b": [2.0]}],
        [collections.OrderedDict(a=1, b=2.0), collections.OrderedDict(a=3, b=4.0)],
        [{"a": 1}, {"b": 2}], [Point(1, 2.0), Point(3, 4.0)],
        [None, None], [object()], [],
        [mod.zeros(2), mod.ones(2)], [mod.zeros(2), mod.zeros(3)],
        [mod.zeros(2), mod.zeros(2, dtype=mod.int64)], [mod.arange(6).reshape(2, 3)] * 3,
        [mod.tensor(1.5), mod.tensor(2.5)],
        [(mod.ones(2), 1, {"k": np.float32(2)}), (mod.zeros(2), 2, {"k": np.float32(3)})],
        [{"x": mod.ones(3), "y": (1, 2)}, {"x": mod.ones(3), "y": (3, 4)}],
        [[1, 2], [3, 4]], [range(2), range(2)], [1, None],
        np.array([1, 2]), (1, 2), 3,
    ]


def test_default_collate_matches_torch(torch):
    ours_cases = _collate_cases(tg)
    their_cases = _collate_cases(torch)
    for ours_in, their_in in zip(ours_cases, their_cases):
        ours = _outcome(lambda: default_collate(ours_in))
        theirs = _outcome(lambda: torch.utils.data.default_collate(their_in))
        # messages of errors raised deep inside stack/tensor differ in wording, types agree
        _same_outcome(ours, theirs, message=ours[0] == "raise" and "default_collate" in ours[2])


def test_default_collate_requires_grad_stacks_through_graph(torch):
    x = tg.zeros(2, requires_grad=True)
    out = default_collate([x, x])
    assert out.grad_fn is not None and type(out.grad_fn).__name__ == "StackBackward0"
    tx = torch.zeros(2, requires_grad=True)
    assert type(torch.utils.data.default_collate([tx, tx]).grad_fn).__name__ == "StackBackward0"


def test_default_convert_matches_torch(torch):
    def cases(mod):
        return [
            [np.array([1, 2]), (np.float32(1), 2)], (np.array([1, 2]), 3),
            {"a": np.array([1, 2])}, Point(np.array([1]), 2), "abc", np.float64(2),
            np.array(["a"]), 1.5, mod.ones(2), [mod.ones(1), np.int64(3)],
            collections.OrderedDict(b=np.array([2.0], np.float32)),
        ]
    for a, b in zip(cases(tg), cases(torch)):
        assert _norm(default_convert(a)) == _norm(torch.utils.data.default_convert(b)), a


def test_collate_type_errors_name_the_type():
    with pytest.raises(TypeError, match="found <class 'NoneType'>"):
        default_collate([None])
    with pytest.raises(TypeError, match="found <U1"):
        default_collate([np.array(["x"])])
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [3]])


def test_collate_with_custom_map_reuses_the_defaults():
    class Box:
        def __init__(self, v):
            self.v = v

    fmap = dict(default_collate_fn_map)
    fmap[Box] = lambda batch, *, collate_fn_map=None: [b.v for b in batch]
    out = collate([(Box(1), 2.0), (Box(3), 4.0)], collate_fn_map=fmap)
    assert out[0] == [1, 3]
    assert out[1].dtype == tg.float64 and out[1].tolist() == [2.0, 4.0]


def test_collate_keeps_mapping_and_sequence_types():
    dd = collections.defaultdict(list, a=1)
    out = default_collate([dd, collections.defaultdict(list, a=2)])
    assert isinstance(out, collections.defaultdict) and out["a"].tolist() == [1, 2]
    assert out.default_factory is list

    class MyList(list):
        pass
    out = default_collate([MyList([1, 2]), MyList([3, 4])])
    assert type(out) is MyList and [t.tolist() for t in out] == [[1, 3], [2, 4]]


def test_collate_uint16_becomes_int64():
    out = default_collate([np.array([1], np.uint16), np.array([2], np.uint16)])
    assert out.dtype == tg.int64 and out.tolist() == [[1], [2]]


# ---------------------------------------------------------------------------------------------
# datasets
# ---------------------------------------------------------------------------------------------

def test_tensor_dataset():
    x, y = tg.arange(12.0).reshape(6, 2), tg.arange(6)
    ds = TensorDataset(x, y)
    assert len(ds) == 6
    a, b = ds[2]
    assert a.tolist() == [4.0, 5.0] and b.item() == 2
    a, b = ds[[0, 5]]
    assert a.shape == (2, 2) and b.tolist() == [0, 5]
    assert ds.tensors == (x, y)
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(tg.zeros(3), tg.zeros(4))


def test_dataset_base_class_errors(torch):
    ours = [_outcome(lambda: Dataset()[0]), _outcome(lambda: len(Dataset())),
            _outcome(lambda: iter(Sampler())), _outcome(lambda: len(Sampler()))]
    td = torch.utils.data
    theirs = [_outcome(lambda: td.Dataset()[0]), _outcome(lambda: len(td.Dataset())),
              _outcome(lambda: iter(td.Sampler())), _outcome(lambda: len(td.Sampler()))]
    for o, t in zip(ours, theirs):
        _same_outcome(o, t, message=False)
    with pytest.raises(TypeError):
        IterableDataset()  # abstract __iter__

    class Squares(Dataset[int]):  # generic subscription, as in typed torch code
        def __getitem__(self, i):
            return i * i
    assert Squares()[3] == 9 and isinstance(Squares(), Dataset)


class _Range(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        return self.n


class _NoLen(IterableDataset):
    def __iter__(self):
        return iter(range(7))


def test_concat_and_chain():
    a, b = list(range(10)), list(range(100, 105))
    c = ConcatDataset([a, b])
    assert len(c) == 15 and c.cumulative_sizes == [10, 15]
    assert [c[i] for i in (0, 9, 10, 14, -1, -15)] == [0, 9, 100, 104, 104, 0]
    with pytest.raises(ValueError, match="absolute value of index"):
        c[-16]
    with pytest.raises(IndexError):
        c[15]
    with pytest.raises(AssertionError, match="empty iterable"):
        ConcatDataset([])
    with pytest.raises(AssertionError, match="does not support IterableDataset"):
        ConcatDataset([a, _Range(3)])

    class L(Dataset):
        def __init__(self, items):
            self.items = items

        def __getitem__(self, i):
            return self.items[i]

        def __len__(self):
            return len(self.items)
    s = L([1, 2]) + L([3])
    assert isinstance(s, ConcatDataset) and list(s[i] for i in range(3)) == [1, 2, 3]
    chained = _Range(2) + _Range(3)
    assert isinstance(chained, ChainDataset)
    assert list(chained) == [0, 1, 0, 1, 2] and len(chained) == 5
    with pytest.raises(AssertionError, match="only supports IterableDataset"):
        list(ChainDataset([[1]]))


def test_stack_dataset():
    s = StackDataset([1, 2], [3, 4])
    assert s[1] == (2, 4) and len(s) == 2
    d = StackDataset(a=[1, 2], b=[3, 4])
    assert d[0] == {"a": 1, "b": 3}
    assert d.__getitems__([0, 1]) == [{"a": 1, "b": 3}, {"a": 2, "b": 4}]
    for bad in (lambda: StackDataset([1, 2], [3]), lambda: StackDataset([1], b=[2]),
                lambda: StackDataset()):
        with pytest.raises(ValueError):
            bad()


def test_subset():
    base = list(range(100, 110))
    s = Subset(base, [3, 1, 4])
    assert len(s) == 3 and s[0] == 103 and s[-1] == 104
    assert s.__getitems__([0, 2]) == [103, 104]
    ts = Subset(TensorDataset(tg.arange(5)), [1, 2])
    (col,) = ts[[0, 1]]
    assert col.tolist() == [1, 2]

    class WithGetitems(Dataset):
        def __getitem__(self, i):
            raise AssertionError("batched path expected")

        def __getitems__(self, idx):
            return [("batch", i) for i in idx]
    assert Subset(WithGetitems(), [5, 6, 7]).__getitems__([2, 0]) == [("batch", 7), ("batch", 5)]


# ---------------------------------------------------------------------------------------------
# random_split
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n,lengths", [
    (10, [3, 3]), (10, [0.3, 0.3, 0.4]), (11, [0.5, 0.5]), (10, [0.33, 0.33, 0.34]),
    (3, [0.1, 0.1, 0.8]), (10, [0.5, 0.6]), (10, [1.5, -0.5]), (10, [0.5, 0.4]),
    (10, (0.5, 0.5)), (10, [1.0]), (10, [10]), (10, []), (10, [2, 8]), (0, [0, 0]),
    (7, [0.2, 0.2, 0.2, 0.2, 0.2]),
])
def test_random_split_lengths_match_torch(torch, n, lengths):
    def run(mod):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = _outcome(lambda: [len(s) for s in _tud(mod).random_split(list(range(n)),
                                                                          lengths)])
        return out, [str(x.message) for x in w if x.category is UserWarning]
    ours, our_warn = run(tg)
    theirs, their_warn = run(torch)
    _same_outcome(ours, theirs)
    assert our_warn == their_warn


def test_random_split_partition_and_reproducible():
    ds = list(range(50))
    parts = random_split(ds, [0.6, 0.4], generator=tg.Generator().manual_seed(3))
    idx = [i for p in parts for i in p.indices]
    assert sorted(idx) == ds and [len(p) for p in parts] == [30, 20]
    again = random_split(ds, [0.6, 0.4], generator=tg.Generator().manual_seed(3))
    assert [p.indices for p in again] == [p.indices for p in parts]
    assert all(p.dataset is ds for p in parts)
    tg.manual_seed(5)
    first = [p.indices for p in random_split(ds, [25, 25])]
    tg.manual_seed(5)
    assert [p.indices for p in random_split(ds, [25, 25])] == first
    assert first != [p.indices for p in random_split(ds, [25, 25])]  # the stream moved on


def test_random_split_errors():
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(range(10), [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 0"):
        random_split(range(10), [1.5, -0.5])
    with pytest.raises(ValueError, match="non-negative"):
        random_split(range(10), [11, -1])
    with pytest.raises(TypeError, match="lengths must be"):
        random_split(range(10), [5, 5.0])
    with pytest.raises(TypeError, match="lengths must be"):
        random_split(range(10), ["5", "5"])
    with pytest.raises(TypeError, match="generator"):
        random_split(range(10), [5, 5], generator=3)


# ---------------------------------------------------------------------------------------------
# samplers
# ---------------------------------------------------------------------------------------------

def _sampler_cases(td, mod):
    ds = list(range(10))
    return [
        lambda: list(td.SequentialSampler(ds)), lambda: len(td.SequentialSampler(ds)),
        lambda: td.RandomSampler(ds, replacement=1),
        lambda: td.RandomSampler(ds, num_samples=0), lambda: td.RandomSampler(ds, num_samples=2.0),
        lambda: td.RandomSampler(ds, num_samples=True), lambda: td.RandomSampler([]),
        lambda: len(td.RandomSampler(ds, num_samples=25)),
        lambda: sorted(list(td.RandomSampler(ds, num_samples=25))[:20]),
        lambda: sorted(td.RandomSampler(ds)), lambda: td.RandomSampler(ds).num_samples,
        lambda: len(list(td.RandomSampler(ds, replacement=True, num_samples=70))),
        lambda: td.WeightedRandomSampler([1, 2], 0),
        lambda: td.WeightedRandomSampler([1, 2], 3, replacement=1),
        lambda: td.WeightedRandomSampler([[1, 2]], 3),
        lambda: list(td.WeightedRandomSampler([1, 0], 3, replacement=False)),
        lambda: list(td.WeightedRandomSampler([1, 0], 1, replacement=False)),
        lambda: list(td.WeightedRandomSampler([1, 0, 0], 2, replacement=False)),
        lambda: sorted(td.WeightedRandomSampler([1, 0, 3], 2, replacement=False)),
        lambda: list(td.WeightedRandomSampler([1, -1], 1)),
        lambda: list(td.WeightedRandomSampler([0, 0], 1)),
        lambda: list(td.WeightedRandomSampler([float("nan"), 1], 1)),
        lambda: list(td.WeightedRandomSampler([float("inf"), 1], 1)),
        lambda: list(td.WeightedRandomSampler([0, 5, 0], 4)),
        lambda: td.WeightedRandomSampler([1, 2], 3).weights,
        lambda: len(td.WeightedRandomSampler([1, 2], 3)),
        lambda: td.BatchSampler(ds, 0, False), lambda: td.BatchSampler(ds, 2, None),
        lambda: td.BatchSampler(ds, True, False), lambda: td.BatchSampler(ds, 2.0, False),
        lambda: list(td.BatchSampler(ds, 3, False)), lambda: len(td.BatchSampler(ds, 3, False)),
        lambda: list(td.BatchSampler(ds, 3, True)), lambda: len(td.BatchSampler(ds, 3, True)),
        lambda: list(td.BatchSampler(range(6), 3, True)), lambda: len(td.BatchSampler([], 3, False)),
        lambda: sorted(td.SubsetRandomSampler([5, 6, 7])),
        lambda: len(td.SubsetRandomSampler([5, 6, 7])),
    ]


def _sampler_object(outcome):
    """A constructed sampler compares equal to any other (only its behaviour is compared)."""
    if outcome[0] == "ok" and str(outcome[1][0]).endswith("Sampler"):
        return ("ok", "a sampler")
    return outcome


def test_samplers_match_torch(torch):
    for ours_fn, their_fn in zip(_sampler_cases(_tud(tg), tg), _sampler_cases(_tud(torch), torch)):
        ours, theirs = _outcome(ours_fn), _outcome(their_fn)
        _same_outcome(_sampler_object(ours), _sampler_object(theirs))


def test_random_sampler_reproducible_from_seed():
    ds = list(range(20))
    tg.manual_seed(0)
    a = [list(RandomSampler(ds)) for _ in range(3)]
    tg.manual_seed(0)
    b = [list(RandomSampler(ds)) for _ in range(3)]
    assert a == b and a[0] != a[1] and sorted(a[0]) == ds
    g1, g2 = tg.Generator().manual_seed(7), tg.Generator().manual_seed(7)
    assert list(RandomSampler(ds, generator=g1)) == list(RandomSampler(ds, generator=g2))
    s = RandomSampler(ds, replacement=True, num_samples=100, generator=tg.Generator())
    draws = list(s)
    assert len(draws) == 100 and set(draws) <= set(ds) and len(set(draws)) < 20 + 1
    with pytest.raises(TypeError, match="tapegrad.Generator"):
        RandomSampler(ds, generator=np.random.default_rng(0))


def test_random_sampler_cycles_whole_permutations():
    s = RandomSampler(list(range(4)), num_samples=10, generator=tg.Generator().manual_seed(1))
    out = list(s)
    assert len(out) == 10 and sorted(out[:4]) == sorted(out[4:8]) == [0, 1, 2, 3]
    assert len(set(out[8:])) == 2


def test_subset_random_sampler():
    idx = [10, 20, 30, 40]
    tg.manual_seed(3)
    a = list(SubsetRandomSampler(idx))
    tg.manual_seed(3)
    assert list(SubsetRandomSampler(idx)) == a and sorted(a) == idx
    g = tg.Generator().manual_seed(1)
    assert sorted(SubsetRandomSampler(idx, generator=g)) == idx


def test_weighted_random_sampler_distribution():
    g = tg.Generator().manual_seed(0)
    s = WeightedRandomSampler([1.0, 3.0, 0.0], 4000, generator=g)
    counts = np.bincount(list(s), minlength=3)
    assert counts[2] == 0 and abs(counts[1] / 4000 - 0.75) < 0.04
    assert s.weights.dtype == tg.float64
    no_rep = list(WeightedRandomSampler([5, 1, 1, 0], 3, replacement=False, generator=g))
    assert sorted(no_rep) == [0, 1, 2]
    with pytest.raises(RuntimeError, match="without replacement"):
        list(WeightedRandomSampler([1, 1], 3, replacement=False))


def test_sampler_subclass_and_iterables_as_samplers():
    class Evens(Sampler[int]):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(0, self.n, 2))

        def __len__(self):
            return (self.n + 1) // 2
    assert list(BatchSampler(Evens(9), 2, False)) == [[0, 2], [4, 6], [8]]
    assert len(BatchSampler(Evens(9), 2, True)) == 2
    assert list(BatchSampler(iter([1, 2, 3]), 2, False)) == [[1, 2], [3]]
    assert list(SequentialSampler("abc")) == [0, 1, 2]


# ---------------------------------------------------------------------------------------------
# DataLoader
# ---------------------------------------------------------------------------------------------

def _loader_cases(mod):
    """(description, thunk) pairs built from ``mod``; thunks return what is compared."""
    td = _tud(mod)
    x = mod.arange(20.0).reshape(10, 2)
    y = mod.arange(10)
    ds = td.TensorDataset(x, y)
    dicts = [{"img": np.full((2, 2), i, np.float32), "label": i, "w": 0.5 * i} for i in range(5)]

    class It(td.IterableDataset):
        def __iter__(self):
            return iter(range(7))

    class ItLen(It):
        def __len__(self):
            return 7

    class Pairs(td.Dataset):
        def __getitem__(self, i):
            return (np.array([i, i + 1], np.int32), float(i))

        def __len__(self):
            return 5

    def L(*a, **k):
        return td.DataLoader(*a, **k)

    return [
        ("batches", lambda: list(L(ds, batch_size=4))),
        ("len", lambda: len(L(ds, batch_size=4))),
        ("len drop_last", lambda: len(L(ds, batch_size=4, drop_last=True))),
        ("drop_last", lambda: list(L(ds, batch_size=4, drop_last=True))),
        ("default batch 1", lambda: list(L(ds))[:2]),
        ("no auto batching", lambda: list(L(ds, batch_size=None))[:2]),
        ("len no auto", lambda: len(L(ds, batch_size=None))),
        ("dicts", lambda: list(L(dicts, batch_size=2))),
        ("numpy pairs", lambda: list(L(Pairs(), batch_size=3))),
        ("numpy pairs unbatched", lambda: list(L(Pairs(), batch_size=None))),
        ("plain list", lambda: list(L([1.5, 2.5, 3.5], batch_size=2))),
        ("tuples unbatched", lambda: list(L([(1, 2.0)], batch_size=None))),
        ("collate_fn", lambda: list(L([(1, 2.0)], batch_size=1, collate_fn=lambda b: b))),
        ("sampler", lambda: list(L(list(range(10)), sampler=[3, 1], batch_size=4))),
        ("batch_sampler", lambda: list(L(list(range(10)), batch_sampler=[[3, 1], [2]]))),
        ("batch_sampler len", lambda: len(L(list(range(10)), batch_sampler=[[3, 1], [2]]))),
        ("sampler without len", lambda: len(L(list(range(10)), sampler=iter([3, 1])))),
        ("iterable", lambda: list(L(It(), batch_size=3))),
        ("iterable drop_last", lambda: list(L(It(), batch_size=3, drop_last=True))),
        ("iterable unbatched", lambda: list(L(It(), batch_size=None))),
        ("iterable len", lambda: len(L(ItLen(), batch_size=3))),
        ("iterable len drop", lambda: len(L(ItLen(), batch_size=3, drop_last=True))),
        ("iterable len unbatched", lambda: len(L(ItLen(), batch_size=None))),
        ("iterable no len", lambda: len(L(It()))),
        ("iterable shuffle=False", lambda: list(L(It(), shuffle=False, batch_size=7))),
        ("workers", lambda: list(L(list(range(10)), batch_size=4, num_workers=2))),
        ("iter len", lambda: len(iter(L(list(range(10)), batch_size=3)))),
        ("shuffle len", lambda: len(L(ds, batch_size=3, shuffle=True))),
        ("shuffle multiset", lambda: sorted(v for b in L(list(range(10)), batch_size=3,
                                                          shuffle=True) for v in b.tolist())),
        ("shuffle=1", lambda: sorted(v for b in L(list(range(4)), batch_size=3, shuffle=1)
                                     for v in b.tolist())),
        # errors
        ("num_workers<0", lambda: L(ds, num_workers=-1)),
        ("timeout<0", lambda: L(ds, timeout=-1)),
        ("prefetch no workers", lambda: L(ds, prefetch_factor=2)),
        ("prefetch<0", lambda: L(ds, num_workers=2, prefetch_factor=-1)),
        ("prefetch default", lambda: L(ds, num_workers=1).prefetch_factor),
        ("prefetch default 0", lambda: L(ds).prefetch_factor),
        ("persistent", lambda: L(ds, persistent_workers=True)),
        ("sampler+shuffle", lambda: L(ds, shuffle=True, sampler=td.SequentialSampler(ds))),
        ("batch_sampler+batch_size", lambda: L(ds, batch_size=2, batch_sampler=[[0]])),
        ("batch_sampler+shuffle", lambda: L(ds, shuffle=True, batch_sampler=[[0]])),
        ("batch_sampler+drop_last", lambda: L(ds, drop_last=True, batch_sampler=[[0]])),
        ("batch_sampler+sampler", lambda: L(ds, sampler=[0], batch_sampler=[[0]])),
        ("None+drop_last", lambda: L(ds, batch_size=None, drop_last=True)),
        ("mp context no workers", lambda: L(ds, multiprocessing_context="spawn")),
        ("mp context bogus", lambda: L(ds, num_workers=1, multiprocessing_context="bogus")),
        ("mp context int", lambda: L(ds, num_workers=1, multiprocessing_context=3)),
        ("mp context ok", lambda: type(L(ds, num_workers=1, multiprocessing_context="spawn")
                                       .multiprocessing_context).__name__),
        ("mp context obj", lambda: L(ds, num_workers=1,
                                     multiprocessing_context=multiprocessing.get_context("spawn"))
         .num_workers),
        ("batch_size 0", lambda: L(ds, batch_size=0)),
        ("batch_size float", lambda: L(ds, batch_size=2.0)),
        ("batch_size bool", lambda: L(ds, batch_size=True)),
        ("drop_last int", lambda: L(ds, drop_last=1)),
        ("iterable shuffle", lambda: L(It(), shuffle=True)),
        ("iterable sampler", lambda: L(It(), sampler=[1])),
        ("iterable batch_sampler", lambda: L(It(), batch_sampler=[[1]])),
        ("timeout no workers", lambda: list(L(ds, timeout=5))),
        ("samplers", lambda: (type(L(ds).sampler).__name__, type(L(ds).batch_sampler).__name__,
                              type(L(ds, shuffle=True).sampler).__name__,
                              L(ds, batch_size=None).batch_sampler,
                              L(ds, batch_size=None).collate_fn.__name__,
                              L(ds).collate_fn.__name__, L(ds, batch_sampler=[[0]]).batch_size,
                              L(ds, batch_sampler=[[0]]).drop_last)),
    ]


def test_dataloader_matches_torch(torch):
    for (name, ours_fn), (_, their_fn) in zip(_loader_cases(tg), _loader_cases(torch)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours, theirs = _outcome(ours_fn), _outcome(their_fn)
        if ours[0] == "ok" and ours[1][0] == "DataLoader":
            ours = theirs = ("ok", "loader")
        if theirs[0] == "ok" and theirs[1][0] == "DataLoader":
            theirs = ("ok", "loader")
        assert ours[0] == theirs[0], (name, ours, theirs)
        # our messages are reworded only where torch's run words together
        _same_outcome(ours, theirs, message=name not in ("prefetch no workers",
                                                         "timeout no workers",
                                                         "mp context bogus"))


def test_dataloader_setattr_after_init(torch):
    for mod in (tg, torch):
        loader = _tud(mod).DataLoader(list(range(3)))
        for attr in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                     "persistent_workers"):
            with pytest.raises(ValueError, match=f"{attr} attribute should not be set after "
                                                 f"DataLoader is initialized"):
                setattr(loader, attr, None)
        loader.num_workers = 2
        loader.collate_fn = None


def test_dataloader_shuffle_reproducible_and_new_order_each_epoch():
    ds = TensorDataset(tg.arange(30.0), tg.arange(30))
    tg.manual_seed(0)
    loader = DataLoader(ds, batch_size=8, shuffle=True)
    e1 = [b[1].tolist() for b in loader]
    e2 = [b[1].tolist() for b in loader]
    tg.manual_seed(0)
    assert [b[1].tolist() for b in loader] == e1
    assert e1 != e2
    assert sorted(v for b in e1 for v in b) == list(range(30))
    assert [len(b) for b in e1] == [8, 8, 8, 6]
    g = tg.Generator().manual_seed(11)
    loader = DataLoader(ds, batch_size=8, shuffle=True, generator=g)
    first = [b[1].tolist() for b in loader]
    g.manual_seed(11)
    assert [b[1].tolist() for b in loader] == first
    xs, ys = next(iter(loader))
    assert (xs.tolist() == [float(v) for v in ys.tolist()])  # rows stay paired
    with pytest.raises(TypeError, match="tapegrad.Generator"):
        DataLoader(ds, shuffle=True, generator=3)


def test_dataloader_batch_shapes_and_dtypes():
    x = tg.randn(10, 3, 4)
    y = tg.arange(10)
    xb, yb = next(iter(DataLoader(TensorDataset(x, y), batch_size=4)))
    assert xb.shape == (4, 3, 4) and xb.dtype == tg.float32 and yb.dtype == tg.int64
    np.testing.assert_array_equal(xb.numpy(), x.numpy()[:4])
    samples = [(np.ones((2, 2), np.float64), 1, 2.0, "s")] * 3
    a, b, c, d = next(iter(DataLoader(samples, batch_size=3)))
    assert (a.shape, a.dtype, b.dtype, c.dtype, d) == ((3, 2, 2), tg.float64, tg.int64,
                                                       tg.float64, ["s"] * 3)


def test_dataloader_uses_getitems_for_batches():
    calls = []

    class DS(Dataset):
        def __getitem__(self, i):
            raise AssertionError("the batched path should be used")

        def __getitems__(self, idx):
            calls.append(list(idx))
            return [float(i) for i in idx]

        def __len__(self):
            return 5
    out = [b.tolist() for b in DataLoader(DS(), batch_size=2)]
    assert out == [[0.0, 1.0], [2.0, 3.0], [4.0]] and calls == [[0, 1], [2, 3], [4]]


def test_dataloader_workers_in_process():
    seen = []
    loader = DataLoader(list(range(6)), batch_size=2, num_workers=3,
                        worker_init_fn=lambda wid: seen.append(wid), persistent_workers=True,
                        prefetch_factor=4, timeout=1.0)
    assert [b.tolist() for b in loader] == [[0, 1], [2, 3], [4, 5]]
    assert seen == []  # no worker processes, so no worker_init_fn call
    assert get_worker_info() is None

    class Sharded(IterableDataset):
        def __iter__(self):
            assert get_worker_info() is None
            return iter(range(4))
    assert [b.tolist() for b in DataLoader(Sharded(), batch_size=3, num_workers=2)] == \
        [[0, 1, 2], [3]]


def test_dataloader_pin_memory_warns_on_iter():
    loader = DataLoader(list(range(3)), pin_memory=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert len(list(loader)) == 3
    assert any(issubclass(x.category, UserWarning) and "pin_memory" in str(x.message) for x in w)


def test_dataloader_iterator_protocol():
    loader = DataLoader(list(range(5)), batch_size=2)
    it = iter(loader)
    assert iter(it) is it and len(it) == 3
    assert next(it).tolist() == [0, 1]
    assert [b.tolist() for b in it] == [[2, 3], [4]]
    with pytest.raises(StopIteration):
        next(it)
    assert len(list(loader)) == 3  # a fresh pass each iter()


def test_dataloader_trains_a_model():
    """The digits-style loop: a DataLoader over a TensorDataset drives an optimizer."""
    from tapegrad import nn, optim
    tg.manual_seed(0)
    X = tg.randn(64, 4)
    w_true = tg.tensor([[1.0], [-2.0], [0.5], [3.0]])
    Y = X @ w_true
    model = nn.Linear(4, 1)
    opt = optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(TensorDataset(X, Y), batch_size=16, shuffle=True)
    for _ in range(40):
        for xb, yb in loader:
            opt.zero_grad()
            loss = ((model(xb) - yb) ** 2).mean()
            loss.backward()
            opt.step()
    assert loss.item() < 1e-3


def test_public_namespace():
    import tapegrad.utils.data as tud
    assert tg.utils.data is tud
    for name in tud.__all__:
        assert hasattr(tud, name)
