"""DataLoader: iterate over a dataset in (shuffled) batches, shaped like torch's.

Design choice: tapegrad always loads in the main process. ``num_workers > 0`` is accepted (and
its companion options are checked as torch checks them) but no worker process is started: the
batches are the ones torch gives with ``in_order=True``, in the same order, fetched one at a
time. ``worker_init_fn`` is therefore never called, :func:`get_worker_info` is always None, and
``timeout``, ``prefetch_factor``, ``persistent_workers``, ``multiprocessing_context`` and
``in_order`` have no effect. This keeps PyTorch scripts that ask for workers running unchanged,
at single-process speed (the work is NumPy, which releases no Python-level parallelism here).
"""
from __future__ import annotations

import warnings
from typing import Generic, TypeVar

from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler
from ._utils.collate import default_collate, default_convert

__all__ = ["DataLoader", "get_worker_info"]

T_co = TypeVar("T_co", covariant=True)


def get_worker_info():
    """Information about the current DataLoader worker process: always None in tapegrad, which
    loads in the main process (as torch returns in its main process)."""
    return None


class _InfiniteConstantSampler(Sampler):
    """The sampler of an IterableDataset: ``None`` forever (the dataset decides when to stop)."""

    def __iter__(self):
        while True:
            yield None


def _is_true(x):
    return x not in (False, None)


class DataLoader(Generic[T_co]):
    """Batches of samples from ``dataset``, one pass per ``iter(loader)``.

    Args:
        dataset: a map-style :class:`Dataset` (``dataset[i]`` and ``len``; any object with
            ``__getitem__``/``__len__`` works) or an :class:`IterableDataset`.
        batch_size: samples per batch (default 1); ``None`` turns automatic batching off: each
            sample is yielded alone, passed through ``collate_fn`` (default
            :func:`default_convert`).
        shuffle: visit a map-style dataset in a new random order each pass (a
            :class:`RandomSampler` drawing from ``generator``). Seeded runs repeat, but the order
            differs from torch's for the same seed (tapegrad's generator streams differ).
        sampler: a Sampler or iterable of indices, instead of the default order.
        batch_sampler: a Sampler or iterable yielding lists of indices; excludes ``batch_size``
            (other than 1), ``shuffle``, ``sampler`` and ``drop_last``.
        num_workers: >= 0. Values above 0 are accepted and load in the main process (see the
            module docstring): same batches, same order, no worker processes.
        collate_fn: turns a list of samples into a batch (default :func:`default_collate`:
            tensors of shape S stack to (B, *S), Python ints to int64, floats to float64, NumPy
            arrays to tensors of their dtype, tuples/lists to lists, dicts key by key).
        pin_memory: no pinned memory exists without an accelerator: True warns (UserWarning)
            at each ``iter()``, as torch does on a machine without one.
        drop_last: drop the last batch when it is shorter than ``batch_size``.
        timeout: >= 0; must be 0 with ``num_workers=0`` (AssertionError at ``iter()``, as
            torch); ignored otherwise.
        worker_init_fn, multiprocessing_context, prefetch_factor, persistent_workers,
            pin_memory_device, in_order: accepted for compatibility and checked as torch checks
            them; no effect.
        generator: a :class:`tapegrad.Generator` for the default RandomSampler (``shuffle``).

    ``len(loader)`` is the number of batches: ``len(batch_sampler)``, or ``len(sampler)`` with
    ``batch_size=None``; for an IterableDataset, ``len(dataset)`` divided by ``batch_size``
    (rounded up, or down with ``drop_last``; TypeError if the dataset has no ``len``).

    Raises ValueError (torch's messages) for: negative ``num_workers`` or ``timeout``;
    ``prefetch_factor`` with ``num_workers=0`` or negative; ``persistent_workers`` with
    ``num_workers=0``; ``shuffle``/``sampler``/``batch_sampler`` with an IterableDataset;
    ``sampler`` with ``shuffle``; ``batch_sampler`` with ``batch_size != 1``, ``shuffle``,
    ``sampler`` or ``drop_last``; ``batch_size=None`` with ``drop_last``; a ``batch_size``
    that is not a positive int or a ``drop_last`` that is not a bool (from BatchSampler);
    ``multiprocessing_context`` with ``num_workers=0`` or naming an unknown start method
    (TypeError when it is neither a string nor a context); setting ``dataset``,
    ``batch_size``, ``batch_sampler``, ``sampler``, ``drop_last`` or ``persistent_workers``
    after construction. TypeError for a ``generator`` that is not a tapegrad.Generator.
    """

    _FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
               "persistent_workers")
    __initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing: "
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        from .sampler import _check_generator
        _check_generator(generator, "DataLoader")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.in_order = in_order
        self.multiprocessing_context = multiprocessing_context

        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if _is_true(shuffle):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler "
                                 f"option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")

        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")

        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)

        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        self.persistent_workers = persistent_workers

        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.__initialized = True

    # ---- attributes ---------------------------------------------------------------------------
    def __setattr__(self, attr, value):
        if self.__initialized and attr in self._FROZEN:
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(attr, value)

    @property
    def multiprocessing_context(self):
        return self.__mp_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, ctx):
        if ctx is not None:
            import multiprocessing
            import multiprocessing.context
            if self.num_workers <= 0:
                raise ValueError(f"multiprocessing_context can only be used with multi-process "
                                 f"loading (num_workers > 0), but got "
                                 f"num_workers={self.num_workers}")
            if isinstance(ctx, str):
                methods = multiprocessing.get_all_start_methods()
                if ctx not in methods:
                    raise ValueError(f"multiprocessing_context option should specify a valid "
                                     f"start method in {methods!r}, but got "
                                     f"multiprocessing_context={ctx!r}")
                ctx = multiprocessing.get_context(ctx)
            elif not isinstance(ctx, multiprocessing.context.BaseContext):
                raise TypeError(f"multiprocessing_context option should be a valid context "
                                f"object or a string specifying the start method, but got "
                                f"multiprocessing_context={ctx}")
        self.__mp_context = ctx

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    # ---- iteration ----------------------------------------------------------------------------
    def __iter__(self) -> "_DataLoaderIter":
        """A new pass over the dataset (a new shuffle, if shuffling)."""
        return _DataLoaderIter(self)

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self._index_sampler)


class _DataLoaderIter:
    """One pass of a DataLoader, in the main process. ``len()`` is the loader's."""

    def __init__(self, loader: DataLoader):
        if loader.timeout > 0 and loader.num_workers == 0:
            raise AssertionError(f"a DataLoader with num_workers=0 requires timeout == 0, got "
                                 f"timeout={loader.timeout}")
        if loader.pin_memory:
            warnings.warn("pin_memory=True has no effect: tapegrad runs on the CPU only, so there "
                          "is no pinned memory to use.", UserWarning, stacklevel=3)
        self._loader = loader
        self._dataset = loader.dataset
        self._auto = loader._auto_collation
        self._drop_last = loader.drop_last
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(loader._index_sampler)
        self._num_yielded = 0
        self._iterable = loader._iterable
        if self._iterable:
            self._dataset_iter = iter(self._dataset)
            self._ended = False

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._loader)

    def __next__(self):
        index = next(self._sampler_iter)  # StopIteration ends the pass
        data = self._fetch_iterable(index) if self._iterable else self._fetch_map(index)
        self._num_yielded += 1
        return data

    def _fetch_map(self, index):
        ds = self._dataset
        if not self._auto:
            return self._collate_fn(ds[index])
        getitems = getattr(ds, "__getitems__", None)
        samples = getitems(index) if callable(getitems) else [ds[i] for i in index]
        return self._collate_fn(samples)

    def _fetch_iterable(self, index):
        if not self._auto:
            return self._collate_fn(next(self._dataset_iter))
        if self._ended:
            raise StopIteration
        samples = []
        for _ in index:
            try:
                samples.append(next(self._dataset_iter))
            except StopIteration:
                self._ended = True
                break
        if not samples or (self._drop_last and len(samples) < len(index)):
            raise StopIteration
        return self._collate_fn(samples)

