"""Datasets: map-style (``dataset[i]`` and ``len``) and iterable-style (``iter(dataset)``).

Shaped like ``torch.utils.data``: :class:`Dataset`, :class:`IterableDataset`,
:class:`TensorDataset`, :class:`StackDataset`, :class:`ConcatDataset`, :class:`ChainDataset`,
:class:`Subset` and :func:`random_split`. The classes are generic (``Dataset[int]`` is valid in
type hints) and raise the exception types torch raises.
"""
from __future__ import annotations

import bisect
import itertools
import math
import numbers
import warnings
from typing import Generic, Iterable, TypeVar

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split"]

T_co = TypeVar("T_co", covariant=True)


class Dataset(Generic[T_co]):
    """A map-style dataset: subclasses define ``__getitem__(index)`` and usually ``__len__``.

    ``DataLoader`` fetches samples with ``dataset[i]`` for each index its sampler gives (or with
    ``dataset.__getitems__(indices)`` for a whole batch, where defined). There is no default
    ``__len__`` (``len()`` raises TypeError), because a dataset may not know it; the default
    samplers need one. ``a + b`` is ``ConcatDataset([a, b])``.

    Raises NotImplementedError from ``__getitem__`` when a subclass does not define it.
    """

    def __getitem__(self, index) -> T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: "Dataset[T_co]") -> "ConcatDataset[T_co]":
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co], Iterable[T_co]):
    """A dataset that is a stream: subclasses define ``__iter__`` (abstract: instantiating a
    subclass without it raises TypeError).

    A ``DataLoader`` over one takes samples in the order the iterator gives them and accepts no
    ``shuffle``, ``sampler`` or ``batch_sampler``. tapegrad loads in the main process, so
    :func:`~tapegrad.utils.data.get_worker_info` is None inside ``__iter__`` and the stream is
    read once per epoch (torch with ``num_workers=N`` reads it once per worker unless the dataset
    shards itself by worker id). ``a + b`` is ``ChainDataset([a, b])``.
    """

    def __add__(self, other: "Dataset[T_co]"):
        return ChainDataset([self, other])


class TensorDataset(Dataset[tuple]):
    """Samples are rows of tensors: ``dataset[i] == tuple(t[i] for t in tensors)``.

    Args:
        *tensors: tensors with the same size in their first dimension (N, ...).

    ``len(dataset)`` is N. Each sample is a tuple of views (sharing memory with the tensors).
    Raises AssertionError ("Size mismatch between tensors") when the first dimensions differ.
    """

    def __init__(self, *tensors) -> None:
        assert all(tensors[0].size(0) == t.size(0) for t in tensors), \
            "Size mismatch between tensors"
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class StackDataset(Dataset[T_co]):
    """Zip datasets of the same length: ``StackDataset(a, b)[i] == (a[i], b[i])`` and
    ``StackDataset(x=a, y=b)[i] == {'x': a[i], 'y': b[i]}``.

    Raises ValueError when given both positional and keyword datasets, none at all, or
    datasets of different lengths.
    """

    def __init__(self, *args, **kwargs) -> None:
        if args:
            if kwargs:
                raise ValueError("Supported either ``tuple``- (via ``args``) or ``dict``- (via "
                                 "``kwargs``) like input/output, but both types are given.")
            self._length = len(args[0])
            if any(self._length != len(d) for d in args):
                raise ValueError("Size mismatch between datasets")
            self.datasets = args
        elif kwargs:
            values = list(kwargs.values())
            self._length = len(values[0])
            if any(self._length != len(d) for d in values):
                raise ValueError("Size mismatch between datasets")
            self.datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list):
        """The samples at ``indices`` (a list), each as ``self[i]`` would give it."""
        return [self[i] for i in indices]

    def __len__(self):
        return self._length


class ConcatDataset(Dataset[T_co]):
    """Map-style datasets one after the other: index ``i`` runs through the first, then the next.

    Args:
        datasets: an iterable of map-style datasets (each with ``len``).

    Attributes: ``datasets`` (a list) and ``cumulative_sizes`` (running totals of the lengths).
    Raises AssertionError for no datasets or an IterableDataset among them. A negative index
    counts from the end; ValueError when its absolute value exceeds ``len(self)``; an index past
    the end raises the last dataset's IndexError.
    """

    @staticmethod
    def cumsum(sequence):
        out, total = [], 0
        for d in sequence:
            total += len(d)
            out.append(total)
        return out

    def __init__(self, datasets) -> None:
        self.datasets = list(datasets)
        assert len(self.datasets) > 0, "datasets should not be an empty iterable"
        for d in self.datasets:
            assert not isinstance(d, IterableDataset), \
                "ConcatDataset does not support IterableDataset"
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        local = idx if which == 0 else idx - self.cumulative_sizes[which - 1]
        return self.datasets[which][local]


class ChainDataset(IterableDataset):
    """Iterable datasets one after the other (``itertools.chain`` of them, re-chained each epoch).

    ``len()`` is the sum of their lengths (TypeError if one has none). Iterating raises
    AssertionError when one of them is not an IterableDataset.
    """

    def __init__(self, datasets) -> None:
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            assert isinstance(d, IterableDataset), "ChainDataset only supports IterableDataset"
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            assert isinstance(d, IterableDataset), "ChainDataset only supports IterableDataset"
            total += len(d)
        return total


class Subset(Dataset[T_co]):
    """The samples of ``dataset`` at ``indices``, in that order: ``Subset(d, idx)[i] ==
    d[idx[i]]``.

    Args:
        dataset: a map-style dataset.
        indices: a sequence of indices into ``dataset``.

    ``subset[list_of_positions]`` indexes ``dataset`` with the list of mapped indices (what
    ``TensorDataset`` supports); ``__getitems__`` fetches a batch through the dataset's own
    ``__getitems__`` when it has one.
    """

    def __init__(self, dataset, indices) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list):
        """The samples at positions ``indices`` (a list), as a list."""
        mapped = [self.indices[i] for i in indices]
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            return getitems(mapped)
        return [self.dataset[i] for i in mapped]

    def __len__(self):
        return len(self.indices)


def _split_lengths(lengths, n):
    """Integer lengths from ``lengths`` (ints, or fractions that sum to 1)."""
    lengths = list(lengths)
    for v in lengths:
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise TypeError(f"random_split(): lengths must be ints or fractions (floats summing "
                            f"to 1), got {v!r} of type {type(v).__name__}")
    total = sum(lengths)
    if lengths and math.isclose(total, 1) and total <= 1:
        counts = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            counts.append(int(math.floor(n * frac)))
        # the rows floor() left over go one each to the splits in turn
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        for i, c in enumerate(counts):
            if c == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty "
                              f"dataset.", stacklevel=3)
        return counts
    if total != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    for v in lengths:
        if not isinstance(v, numbers.Integral):
            raise TypeError(f"random_split(): lengths must be all ints, or fractions summing to "
                            f"1; got {lengths!r}")
    if any(v < 0 for v in lengths):
        raise ValueError(f"random_split(): lengths must be non-negative, got {lengths!r}")
    return [int(v) for v in lengths]


def random_split(dataset, lengths, generator=None):
    """Split ``dataset`` into non-overlapping :class:`Subset` s of random rows.

    Args:
        dataset: a map-style dataset with ``len``.
        lengths: the size of each split, as ints summing to ``len(dataset)``, or as fractions in
            [0, 1] summing to 1. Fractions give ``floor(len * frac)`` rows each, and the rows left
            over are handed out one at a time to the splits in order (so ``[0.5, 0.5]`` of 11
            rows gives 6 and 5); a split of 0 rows warns (UserWarning).
        generator: a :class:`tapegrad.Generator` for the permutation (default: the global one,
            seeded by :func:`tapegrad.manual_seed`).

    Returns a list of ``Subset`` s, one per length. The permutation is
    ``tapegrad.randperm(len(dataset), generator=generator)``: reproducible from a seed, but not
    the same permutation torch draws from the same seed (the generators differ).

    Raises ValueError when the lengths (that are not fractions summing to 1) do not sum to
    ``len(dataset)``, when one is negative (torch accepts negative lengths and returns odd
    splits), or when a fraction is outside [0, 1]; TypeError for lengths that sum to
    ``len(dataset)`` but are not all ints, or are not numbers.
    """
    from ... import randperm

    counts = _split_lengths(lengths, len(dataset))
    order = randperm(sum(counts), generator=generator).tolist()
    out, start = [], 0
    for end in itertools.accumulate(counts):
        out.append(Subset(dataset, order[start:end]))
        start = end
    return out
