"""Samplers: the order in which a DataLoader visits a map-style dataset's indices.

Shaped like ``torch.utils.data``'s samplers. Randomness comes from tapegrad's generators
(:func:`tapegrad.manual_seed`, :class:`tapegrad.Generator`): a seeded sampler repeats its order
from run to run, but the orders are not the ones torch draws from the same seed, because the
underlying random streams differ (tapegrad's are NumPy's PCG64).
"""
from __future__ import annotations

import numbers
from typing import Generic, Iterator, TypeVar

import numpy as np

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]

T_co = TypeVar("T_co", covariant=True)


def _check_generator(generator, who):
    from ..._factories import Generator
    if generator is not None and not isinstance(generator, Generator):
        raise TypeError(f"{who}: generator must be a tapegrad.Generator or None, not "
                        f"{type(generator).__name__}")


def _positive_int(value, allow_bool=False):
    return isinstance(value, numbers.Integral) and value > 0 and \
        (allow_bool or not isinstance(value, bool))


def _fresh_generator():
    """A new Generator seeded from one draw of the global generator: what a sampler without its
    own generator uses for one pass, so ``tapegrad.manual_seed`` makes the pass repeatable."""
    from ..._factories import Generator, _np_generator
    seed = int(_np_generator(None).integers(0, 2 ** 63, dtype=np.int64))
    return Generator().manual_seed(seed)


class Sampler(Generic[T_co]):
    """Base class of samplers: subclasses define ``__iter__`` giving indices (or, for a batch
    sampler, lists of indices), and ``__len__`` when the count is known (DataLoader's ``len``
    needs it). The base ``__iter__`` raises NotImplementedError; there is no default
    ``__len__``. Any iterable of indices (a list, a range) may stand where a Sampler is expected.
    """

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """Indices ``0, 1, ..., len(data_source) - 1`` in order; ``len`` is ``len(data_source)``."""

    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """Indices of ``data_source`` in random order.

    Args:
        data_source: a dataset with ``len`` (read at each pass).
        replacement: False (default): each pass is a permutation of ``range(len(data_source))``
            (when ``num_samples`` exceeds the length, whole permutations follow one another and the
            last is cut short). True: ``num_samples`` independent uniform draws.
        num_samples: indices per pass (default ``len(data_source)``); ``len(sampler)``.
        generator: a :class:`tapegrad.Generator`. Without one, each pass seeds a fresh generator
            from one draw of the global generator, so ``tapegrad.manual_seed(s)`` makes the
            sequence of passes reproducible (not equal to torch's for the same seed).

    Raises TypeError when ``replacement`` is not a bool or ``generator`` is not a
    tapegrad.Generator (torch notices the latter only when iterating), ValueError when
    ``num_samples`` (given, or the dataset's length) is not a positive int (``True`` counts as
    1, as in torch).
    """

    def __init__(self, data_source, replacement: bool = False, num_samples=None,
                 generator=None) -> None:
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got "
                            f"replacement={self.replacement}")
        if not _positive_int(self.num_samples, allow_bool=True):  # (as torch)
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")
        _check_generator(generator, "RandomSampler")

    @property
    def num_samples(self) -> int:
        """Indices per pass: the ``num_samples`` given, else the dataset's current length."""
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self):
        from ... import randint, randperm

        n = len(self.data_source)
        gen = self.generator if self.generator is not None else _fresh_generator()
        if self.replacement:
            left = self.num_samples
            while left > 0:     # chunks of 32 draws, so a long pass is not drawn all at once
                k = min(32, left)
                yield from randint(high=n, size=(k,), generator=gen).tolist()
                left -= k
        else:
            for _ in range(self.num_samples // n):
                yield from randperm(n, generator=gen).tolist()
            yield from randperm(n, generator=gen).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given ``indices`` in random order (a new permutation each pass), without replacement.

    Args:
        indices: a sequence of indices.
        generator: a :class:`tapegrad.Generator`, or None for the global one (seeded by
            :func:`tapegrad.manual_seed`; orders differ from torch's for the same seed).

    ``len`` is ``len(indices)``. TypeError for a generator that is not a tapegrad.Generator.
    """

    def __init__(self, indices, generator=None) -> None:
        self.indices = indices
        self.generator = generator
        _check_generator(generator, "SubsetRandomSampler")

    def __iter__(self):
        from ... import randperm
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


def _multinomial(weights, num_samples, replacement, generator):
    """``num_samples`` indices drawn with probability proportional to ``weights`` (1-D float64
    array). Without replacement it is an exponential race (the smallest ``E_i / w_i`` win), so
    indices of zero weight come last, lowest index first, as torch gives them once the positive
    weights are used up. RuntimeError for negative/inf/nan weights, a zero sum, or more samples
    than weights without replacement."""
    from ..._factories import _np_generator
    rng = _np_generator(generator)
    if weights.size and (not np.all(np.isfinite(weights)) or np.any(weights < 0)):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if weights.size == 0 or weights.sum() <= 0:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    n = weights.size
    if replacement:
        return rng.choice(n, size=num_samples, replace=True, p=weights / weights.sum()).tolist()
    if num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    with np.errstate(divide="ignore"):
        keys = rng.exponential(size=n) / weights
    return np.argsort(keys, kind="stable")[:num_samples].tolist()


class WeightedRandomSampler(Sampler[int]):
    """Indices ``0 .. len(weights) - 1`` drawn with probability proportional to ``weights``.

    Args:
        weights: a 1-D sequence (or tensor) of non-negative numbers, need not sum to 1; kept as
            a float64 tensor in ``self.weights``.
        num_samples: how many indices per pass (``len`` of the sampler).
        replacement: True (default): independent draws. False: each index at most once (once
            the positive weights are used up, zero-weight indices follow, lowest first).
        generator: a :class:`tapegrad.Generator`, or None for the global one (draws differ from
            torch's for the same seed).

    Raises ValueError when ``num_samples`` is not a positive int, ``replacement`` is not a
    bool, or ``weights`` is not 1-D; TypeError for a generator that is not a tapegrad.Generator.
    Iterating raises RuntimeError for negative, inf or nan weights, weights summing to 0, or
    ``num_samples > len(weights)`` without replacement.
    """

    def __init__(self, weights, num_samples: int, replacement: bool = True,
                 generator=None) -> None:
        from ... import as_tensor, float64
        if not _positive_int(num_samples):
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        _check_generator(generator, "WeightedRandomSampler")
        weights_tensor = as_tensor(weights, dtype=float64)
        if weights_tensor.dim() != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights_tensor.shape)}")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        w = np.asarray(self.weights.detach().numpy(), dtype=np.float64)
        yield from _multinomial(w, self.num_samples, self.replacement, self.generator)

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler[list]):
    """Groups the indices of ``sampler`` into lists of ``batch_size``.

    Args:
        sampler: a Sampler or any iterable of indices.
        batch_size: a positive int.
        drop_last: drop the last batch when it is short (bool).

    ``len`` is ``len(sampler) // batch_size`` with ``drop_last``, else rounded up. Raises
    ValueError when ``batch_size`` is not a positive int (bools included) or ``drop_last`` is
    not a bool.
    """

    def __init__(self, sampler, batch_size: int, drop_last: bool) -> None:
        if not _positive_int(batch_size):
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got "
                             f"drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        batch = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
