"""Datasets, samplers and DataLoader, shaped like ``torch.utils.data``.

``from tapegrad.utils.data import DataLoader, TensorDataset`` runs the PyTorch idioms: map-style
and iterable datasets, the standard samplers, :func:`random_split`, and a DataLoader with
torch's batching, collation (:func:`default_collate`) and argument checks. Differences from
torch:

* Loading always happens in the main process: ``num_workers > 0`` is accepted and gives the same
  batches in the same order, without worker processes (see :mod:`.dataloader`).
* Shuffles and random splits come from tapegrad's generators (:func:`tapegrad.manual_seed`,
  :class:`tapegrad.Generator`): reproducible from a seed, but not the permutations torch draws.
* NumPy uint16/uint32/uint64 data collate to int64 (tapegrad has no such dtypes).
"""
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset,
                      Subset, TensorDataset, random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                      SubsetRandomSampler, WeightedRandomSampler)
from .dataloader import DataLoader, get_worker_info
from ._utils.collate import default_collate, default_convert

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split", "Sampler", "SequentialSampler",
           "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler",
           "DataLoader", "get_worker_info", "default_collate", "default_convert"]
