"""Collation: turning a list of samples into a batch (:func:`default_collate`), and one sample's
NumPy contents into tensors (:func:`default_convert`).

The rules follow ``torch.utils.data.default_collate``; :func:`collate` with a
``collate_fn_map`` (type -> function) lets a custom collate function reuse them for the types it
does not handle itself, as torch's ``collate`` does. Importable under torch's private path too
(``tapegrad.utils.data._utils.collate``).
"""
from __future__ import annotations

import collections.abc
import copy
import re

import numpy as np

__all__ = ["collate", "default_collate", "default_convert", "default_collate_fn_map",
           "collate_tensor_fn", "collate_numpy_array_fn", "collate_numpy_scalar_fn",
           "collate_float_fn", "collate_int_fn", "collate_str_fn"]

_NP_STR_OBJ = re.compile(r"[SaUO]")

_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
        "found {}")


def _tg():
    import tapegrad
    return tapegrad


def _is_numpy_value(x):
    """A NumPy array or scalar that is not a string (np.str_ and np.bytes_ count as strings)."""
    return type(x).__module__ == "numpy" and not isinstance(x, (np.str_, np.bytes_))


def default_convert(data):
    """Convert NumPy arrays and scalars inside ``data`` to tensors, keeping the structure.

    Used by ``DataLoader`` as the collate function when automatic batching is off
    (``batch_size=None``). Tensors pass through; arrays of strings or objects are left as they
    are; mappings keep their type (a plain dict if the type cannot be rebuilt); namedtuples keep
    their type; tuples become lists (as torch); other sequences keep their type when it can be
    rebuilt from a list, else become lists; strings and anything else are returned unchanged.
    """
    tg = _tg()
    if isinstance(data, tg.Tensor):
        return data
    if _is_numpy_value(data):
        if isinstance(data, np.ndarray) and _NP_STR_OBJ.search(data.dtype.str) is not None:
            return data
        return tg.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        converted = {k: default_convert(v) for k, v in data.items()}
        return _rebuild_mapping(data, converted)
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def _rebuild_mapping(template, items: dict):
    """``items`` in ``template``'s mapping type (a copy of it, for mutable mappings such as
    defaultdict), or a plain dict when that type cannot be built that way."""
    try:
        if isinstance(template, collections.abc.MutableMapping):
            clone = copy.copy(template)
            clone.update(items)
            return clone
        return type(template)(items)
    except TypeError:
        return items


def _rebuild_sequence(template, items: list):
    try:
        if isinstance(template, collections.abc.MutableSequence):
            clone = copy.copy(template)
            for i, v in enumerate(items):
                clone[i] = v
            return clone
        return type(template)(items)
    except TypeError:
        return items


# ---- the per-type rules of default_collate ----------------------------------------------------

def collate_tensor_fn(batch, *, collate_fn_map=None):
    """Tensors of one shape -> ``tapegrad.stack(batch)`` (a new leading batch dimension; dtypes
    promote as in ``stack``). RuntimeError when the shapes differ."""
    return _tg().stack(list(batch), 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    """NumPy arrays -> tensors, then stacked. TypeError for arrays of strings or objects."""
    elem = batch[0]
    if _NP_STR_OBJ.search(elem.dtype.str) is not None:
        raise TypeError(_ERR.format(elem.dtype))
    tg = _tg()
    return collate([tg.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    """NumPy scalars -> a 1-D tensor of their dtype (promoted if they differ)."""
    return _tg().as_tensor(list(batch))


def collate_float_fn(batch, *, collate_fn_map=None):
    """Python floats (first element a float) -> a float64 tensor, as torch."""
    tg = _tg()
    return tg.tensor(list(batch), dtype=tg.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    """Python ints (first element an int) -> ``tapegrad.tensor(batch)``: int64, bool for bools,
    the default float dtype if a float follows."""
    return _tg().tensor(list(batch))


def collate_str_fn(batch, *, collate_fn_map=None):
    """Strings and bytes are kept as a list."""
    return batch


def _default_map():
    from ...._tensor import Tensor
    return {
        Tensor: collate_tensor_fn,
        np.ndarray: collate_numpy_array_fn,
        (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
        float: collate_float_fn,
        int: collate_int_fn,
        str: collate_str_fn,
        bytes: collate_str_fn,
    }


default_collate_fn_map: dict = {}


def collate(batch, *, collate_fn_map=None):
    """Collate ``batch`` (a sequence of samples of one structure) by the type of its first
    element.

    ``collate_fn_map`` maps a type (or tuple of types) to ``fn(batch, *, collate_fn_map)``; the
    exact type of the first element is looked up first, then each key with ``isinstance`` in
    the map's order. Otherwise mappings collate key by key (KeyError when a sample lacks a key
    of the first), namedtuples field by field, and sequences position by position (RuntimeError
    "each element in list of batch should be of equal size" when lengths differ; tuples give a
    list, other sequences keep their type when they can). TypeError for any other type.
    """
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for key, fn in collate_fn_map.items():
            if isinstance(elem, key):
                return fn(batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        items = {k: collate([d[k] for d in batch], collate_fn_map=collate_fn_map) for k in elem}
        return _rebuild_mapping(elem, items)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(list(s), collate_fn_map=collate_fn_map)
                           for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        size = len(next(it))
        if not all(len(e) == size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [collate(list(s), collate_fn_map=collate_fn_map) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return columns
        return _rebuild_sequence(elem, columns)
    raise TypeError(_ERR.format(elem_type))


def default_collate(batch):
    """Stack a list of samples into a batch, recursively by type (what ``DataLoader`` does with
    ``batch_size`` set and no ``collate_fn``).

    For a batch of B samples whose first element is:

    * a Tensor of shape S: ``stack`` -> shape (B, *S), dtype as ``stack`` gives (RuntimeError if
      shapes differ);
    * a NumPy array of shape S: converted with ``as_tensor`` then stacked -> (B, *S), its dtype
      (TypeError for string/object arrays; uint16/32/64 become int64, tapegrad has no such
      dtypes);
    * a NumPy scalar: a (B,) tensor of its dtype;
    * a Python float: a (B,) float64 tensor; an int: a (B,) int64 tensor (bool for bools);
    * a str or bytes: the list, unchanged;
    * a mapping: the same mapping type with each key collated; a namedtuple: the same type,
      field by field;
    * a tuple or list: a **list** of collated positions (``[(x, y), ...]`` -> ``[X, Y]``;
      RuntimeError when the samples' lengths differ).

    Anything else (None, arbitrary objects) raises TypeError naming the type. ``batch`` must be
    non-empty (IndexError otherwise, as torch).
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)


default_collate_fn_map.update(_default_map())
