"""``tapegrad.save`` / ``tapegrad.load``: checkpoints as NumPy ``.npz`` archives, never pickle.

A checkpoint is one ``.npz`` file (a zip of ``.npy`` arrays, written by ``np.savez``): the arrays
hold the tensors' data, and a member named ``__tapegrad__`` holds a JSON description of the
saved object's structure (UTF-8 bytes in a uint8 array). Loading uses
``np.load(..., allow_pickle=False)`` and ``json``: a checkpoint can describe data, never code,
so loading an untrusted file cannot run anything (``weights_only`` is always in effect).

What can be saved (nested to any depth): Tensors and ``nn.Parameter`` s (dtype, shape and
``requires_grad`` kept; ``.grad``, hooks and the graph are not saved, and a tensor with history
loads as a leaf, as in torch), NumPy arrays (numeric dtypes) and NumPy scalars, ``None``,
bools, ints, floats (nan and inf too), complex numbers, strings, bytes, lists, tuples, sets,
frozensets, dicts and OrderedDicts (keys of any of these types), ``tapegrad.Size``,
``tapegrad.dtype`` and ``tapegrad.device``. That covers ``module.state_dict()``,
``optimizer.state_dict()``, learning-rate scheduler states and the usual training-checkpoint
dict. Anything else raises TypeError naming the type and where it sits in the object.

Sharing: as torch does, tensors that share memory when saved share it again when loaded.

* The same Tensor object saved twice loads as one object (``[p, p]`` -> ``l[0] is l[1]``).
* Different tensors over the same array (a state_dict of tied weights: ``detach()`` shares
  memory) are stored once and load as distinct tensors over one array.
* Views of one array with different layouts (``x`` and ``x[2:4]``, ``x.t()``) are stored as one
  byte buffer spanning them, and load as views of one fresh buffer, so a write through one
  shows in the others, as after ``torch.load``. A tensor that shares memory with nothing saved
  is stored compactly (a small slice of a large tensor saves the slice only; torch saves the
  whole storage). Loaded tensors are leaves and do not share autograd version counters.
* Exception: a view of memory that is itself not contiguous (rare: an array built over a
  foreign strided buffer) is stored on its own, and its sharing is lost.
"""
from __future__ import annotations

import json
import math
import os
import sys
import tempfile
from collections import OrderedDict

import numpy as np

__all__ = ["save", "load"]

_META = "__tapegrad__"
_FORMAT = "tapegrad.save"
_VERSION = 1
_NUMERIC_KINDS = "biufc"


# ---------------------------------------------------------------------------------------------
# saving
# ---------------------------------------------------------------------------------------------

def _tensor_cls():
    from .._tensor import Tensor
    return Tensor


def _parameter_cls():
    """nn.Parameter if tapegrad.nn was imported (else no Parameter can exist)."""
    mod = sys.modules.get("tapegrad.nn.parameter")
    return None if mod is None else mod.Parameter


def _bounds(arr):
    """(data pointer, lowest byte address, one past the highest) of a non-empty array."""
    ptr = arr.__array_interface__["data"][0]
    lo = hi = ptr
    for n, s in zip(arr.shape, arr.strides):
        if s < 0:
            lo += (n - 1) * s
        else:
            hi += (n - 1) * s
    return ptr, lo, hi + arr.itemsize


def _root(arr):
    r = arr
    while isinstance(r.base, np.ndarray):
        r = r.base
    return r


class _Encoder:
    """Walks the object once: JSON-ready nodes, plus a table of the tensors/arrays met."""

    def __init__(self):
        self.Tensor = _tensor_cls()
        self.Parameter = _parameter_cls()
        self.entries = []   # [kind, array, requires_grad]
        self.memo = {}      # id(tensor or array) -> entry index
        self.keep = []      # the objects behind memo ids (ids stay unique while encoding)
        self.active = set()  # ids of containers being encoded (cycle check)

    def fail(self, obj, path, why=None):
        t = type(obj)
        if why is None and callable(getattr(obj, "state_dict", None)):
            why = (f"a {t.__name__} object; save its .state_dict() and restore it with "
                   f"load_state_dict(): torch.save(model) pickles the whole object")
        name = t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
        raise TypeError(
            f"tapegrad.save: cannot save an object of type {name} at {path}"
            + (f" ({why})" if why else "")
            + ". Supported: Tensor, nn.Parameter, numeric NumPy arrays and scalars, None, bool, "
              "int, float, complex, str, bytes, and list/tuple/set/frozenset/dict/OrderedDict of "
              "these, tapegrad.Size, tapegrad.dtype, tapegrad.device. tapegrad never pickles: "
              "save plain data (e.g. module.state_dict()) instead of objects.")

    def array_entry(self, obj, kind, arr, requires_grad):
        i = self.memo.get(id(obj))
        if i is None:
            i = len(self.entries)
            self.entries.append((kind, arr, requires_grad))
            self.memo[id(obj)] = i
            self.keep.append(obj)
        return {"$": "t", "i": i}

    def encode(self, x, path):
        t = type(x)
        if x is None or t is bool or t is int or t is str:
            return x
        if t is float:
            return x if math.isfinite(x) else {"$": "float", "v": repr(x)}
        if isinstance(x, self.Tensor):
            kind = "parameter" if self.Parameter is not None and \
                isinstance(x, self.Parameter) else "tensor"
            return self.array_entry(x, kind, x._data, bool(x.requires_grad))
        if isinstance(x, np.ndarray):
            if x.dtype.kind not in _NUMERIC_KINDS or x.dtype.fields is not None:
                self.fail(x, path, f"NumPy dtype {x.dtype} is not numeric")
            return self.array_entry(x, "ndarray", x, False)
        if isinstance(x, np.generic):
            if x.dtype.kind not in _NUMERIC_KINDS:
                self.fail(x, path, f"NumPy dtype {x.dtype} is not numeric")
            return {"$": "npscalar", "dtype": x.dtype.str, "v": self.encode(x.item(), path)}
        if t is complex:
            return {"$": "complex", "re": self.encode(x.real, path),
                    "im": self.encode(x.imag, path)}
        if t is bytes:
            return {"$": "bytes", "hex": x.hex()}
        from .._dtype import dtype as tg_dtype
        from .._device import device as tg_device
        from .._size import Size
        if t is tg_dtype:
            return {"$": "dtype", "name": x.name}
        if t is tg_device:
            return {"$": "device", "v": str(x)}
        if t in (list, tuple, set, frozenset, Size, dict, OrderedDict):
            if id(x) in self.active:
                raise ValueError(f"tapegrad.save: the object contains itself at {path} "
                                 f"(a circular reference cannot be saved)")
            self.active.add(id(x))
            try:
                if t is dict or t is OrderedDict:
                    items = [[self.encode(k, f"{path} (a key)"),
                              self.encode(v, f"{path}[{k!r}]")] for k, v in x.items()]
                    return {"$": "dict" if t is dict else "odict", "items": items}
                seq = sorted(x, key=repr) if t in (set, frozenset) else x
                items = [self.encode(v, f"{path}[{i}]") for i, v in enumerate(seq)]
                return {"$": {list: "list", tuple: "tuple", set: "set", frozenset: "frozenset",
                              Size: "size"}[t], "items": items}
            finally:
                self.active.discard(id(x))
        self.fail(x, path)

    def storages(self):
        """(arrays to write, one record per entry): entries sharing memory share a storage."""
        arrays, records = {}, [None] * len(self.entries)

        def new_storage(arr):
            key = f"s{len(arrays)}"
            arrays[key] = arr
            return key

        groups = {}
        for i, (_, arr, _) in enumerate(self.entries):
            if arr.size == 0:
                records[i] = {"storage": new_storage(arr)}
                continue
            root = _root(arr)
            groups.setdefault(id(root), (root, []))[1].append(i)
        for root, members in groups.values():
            layouts = {}
            for i in members:
                arr = self.entries[i][1]
                layouts.setdefault((_bounds(arr)[0], arr.shape, arr.strides, arr.dtype.str),
                                   []).append(i)
            if len(layouts) == 1:
                key = new_storage(self.entries[members[0]][1])
                for i in members:
                    records[i] = {"storage": key}
                continue
            if not (root.flags.c_contiguous or root.flags.f_contiguous):
                for same in layouts.values():   # sharing between layouts is lost here
                    key = new_storage(self.entries[same[0]][1])
                    for i in same:
                        records[i] = {"storage": key}
                continue
            flat = root.reshape(-1, order="A").view(np.uint8)   # root's bytes, no copy
            base = root.__array_interface__["data"][0]
            lo = min(_bounds(self.entries[i][1])[1] for i in members)
            hi = max(_bounds(self.entries[i][1])[2] for i in members)
            lo = base + (lo - base) // 64 * 64      # keep the views' alignment
            key = new_storage(flat[lo - base:hi - base])
            for (ptr, shape, strides, dstr), same in layouts.items():
                for i in same:
                    records[i] = {"storage": key, "offset": ptr - lo, "shape": list(shape),
                                  "strides": list(strides), "dtype": dstr}
        for rec, (kind, _, rg) in zip(records, self.entries):
            rec["kind"] = kind
            rec["requires_grad"] = rg
        return arrays, records


def _default_mode():
    """The permissions a new file gets (0o666 less the umask)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save ``obj`` (a tensor, a state_dict, a checkpoint dict, ...) to ``f`` as an ``.npz``.

    Args:
        obj: what to save; see the module docstring for the supported types (tensors, NumPy
            arrays, numbers, strings, None and containers of them).
        f: a path (str or ``os.PathLike``; written exactly there, no suffix is added) or a
            binary file object open for writing (written at its current position).
        pickle_module, pickle_protocol, _use_new_zipfile_serialization,
            _disable_byteorder_record: accepted for compatibility with torch and ignored
            (nothing is pickled).

    To a path, the file is written to a temporary file in the same directory and moved into
    place with ``os.replace``, so a failed save leaves neither a half-written file nor a
    changed old one. To a file object, ``obj`` is checked completely before anything is
    written; an I/O error while writing may leave part of the archive written.

    Raises TypeError naming the type and its place in ``obj`` for an unsupported object (before
    anything is written), ValueError for a container that contains itself, RuntimeError when a
    path's parent directory does not exist or the path is a directory (as torch), and OSError
    for other I/O failures.
    """
    enc = _Encoder()
    root = enc.encode(obj, "obj")
    arrays, records = enc.storages()
    meta = json.dumps({"format": _FORMAT, "version": _VERSION, "root": root,
                       "tensors": records}, allow_nan=False, separators=(",", ":"))
    arrays[_META] = np.frombuffer(meta.encode("utf-8"), dtype=np.uint8)

    if hasattr(f, "write") and not isinstance(f, (str, bytes, os.PathLike)):
        np.savez(f, **arrays)
        return
    path = os.fsdecode(os.fspath(f))
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise RuntimeError(f"Parent directory {parent} does not exist.")
    if os.path.isdir(path):
        raise RuntimeError(f"tapegrad.save: cannot write to {path!r}: it is a directory")
    mode = os.stat(path).st_mode & 0o7777 if os.path.exists(path) else _default_mode()
    fd, tmp = tempfile.mkstemp(dir=parent, prefix="." + os.path.basename(path) + ".",
                               suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **arrays)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# ---------------------------------------------------------------------------------------------
# loading
# ---------------------------------------------------------------------------------------------

class _Corrupt(RuntimeError):
    pass


def _check_map_location(map_location):
    """The function applied to each loaded tensor (identity unless a callable was given)."""
    from .._device import device as tg_device

    def check(target):
        kind = target.type if isinstance(target, tg_device) else target
        if isinstance(kind, str) and kind.partition(":")[0] == "cpu":
            return
        if isinstance(kind, str) and kind.partition(":")[0] == "cuda":
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device, but tapegrad has no CUDA "
                "support (it computes on the CPU with NumPy). Use map_location='cpu' or leave "
                "it out.")
        raise RuntimeError(f"tapegrad.load: cannot map tensors to {target!r}: tapegrad only has "
                           f"a CPU device (use map_location=None or 'cpu')")

    if map_location is None:
        return None
    if isinstance(map_location, (str, tg_device)):
        check(map_location)
        return None
    if isinstance(map_location, dict):
        # tensors were saved from 'cpu' (the only device): only that entry applies
        target = map_location.get("cpu", "cpu")
        check(target)
        return None
    if callable(map_location):
        return map_location
    raise TypeError(f"tapegrad.load: map_location must be None, a string, a tapegrad.device, a "
                    f"dict or a callable, not {type(map_location).__name__}")


class _Decoder:
    def __init__(self, npz, records, remap):
        self.npz = npz
        self.records = records
        self.remap = remap
        self.storages = {}
        self.made = {}

    def storage(self, key):
        arr = self.storages.get(key)
        if arr is None:
            if not isinstance(key, str) or key == _META or key not in self.npz.files:
                raise _Corrupt(f"missing array {key!r}")
            arr = self.npz[key]
            if not isinstance(arr, np.ndarray):
                raise _Corrupt(f"member {key!r} is not a .npy array")
            self.storages[key] = arr
        return arr

    def entry(self, i):
        if type(i) is not int or not 0 <= i < len(self.records):
            raise _Corrupt(f"bad tensor index {i!r}")
        out = self.made.get(i)
        if out is not None:
            return out
        rec = self.records[i]
        arr = self.storage(rec.get("storage"))
        if "strides" in rec:
            try:
                arr = np.ndarray(tuple(rec["shape"]), dtype=np.dtype(rec["dtype"]), buffer=arr,
                                 offset=rec["offset"], strides=tuple(rec["strides"]))
            except (TypeError, ValueError) as e:
                raise _Corrupt(f"bad view of {rec.get('storage')!r}: {e}") from None
        if not arr.dtype.isnative:
            arr = arr.astype(arr.dtype.newbyteorder("="))
        kind = rec.get("kind")
        if kind == "ndarray":
            out = arr
        elif kind in ("tensor", "parameter"):
            out = self.tensor(arr, kind, bool(rec.get("requires_grad")))
        else:
            raise _Corrupt(f"unknown entry kind {kind!r}")
        self.made[i] = out
        return out

    def tensor(self, arr, kind, requires_grad):
        from .._factories import _SUPPORTED_NP
        from .._tensor import Tensor, _make
        if arr.dtype not in _SUPPORTED_NP:
            raise _Corrupt(f"a tensor of unsupported dtype {arr.dtype}")
        t = _make(arr)
        if self.remap is not None:
            r = self.remap(t, "cpu")
            if r is not None:
                if not isinstance(r, Tensor):
                    raise TypeError(f"tapegrad.load: map_location returned "
                                    f"{type(r).__name__}, expected a Tensor or None")
                t = _make(r._data)
        if kind == "parameter":
            from ..nn.parameter import Parameter
            return Parameter(t, requires_grad=requires_grad)
        if requires_grad:
            t.requires_grad_(True)
        return t

    def decode(self, node):
        if node is None or type(node) in (bool, int, float, str):
            return node
        if type(node) is not dict:
            raise _Corrupt(f"unexpected JSON value {node!r}")
        tag = node.get("$")
        if tag == "t":
            return self.entry(node.get("i"))
        if tag in ("list", "tuple", "set", "frozenset", "size"):
            items = [self.decode(v) for v in node["items"]]
            if tag == "size":
                from .._size import Size
                return Size(items)
            return {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)
        if tag in ("dict", "odict"):
            out = {} if tag == "dict" else OrderedDict()
            for k, v in node["items"]:
                out[self.decode(k)] = self.decode(v)
            return out
        if tag == "float":
            if node["v"] not in ("nan", "inf", "-inf"):
                raise _Corrupt(f"bad float {node['v']!r}")
            return float(node["v"])
        if tag == "npscalar":
            dt = np.dtype(node["dtype"])
            if dt.kind not in _NUMERIC_KINDS:
                raise _Corrupt(f"bad scalar dtype {dt}")
            return dt.type(self.decode(node["v"]))
        if tag == "complex":
            return complex(self.decode(node["re"]), self.decode(node["im"]))
        if tag == "bytes":
            return bytes.fromhex(node["hex"])
        if tag == "dtype":
            from .._dtype import _BY_NAME
            return _BY_NAME[node["name"]]
        if tag == "device":
            from .._device import device as tg_device
            return tg_device(node["v"])
        raise _Corrupt(f"unknown tag {tag!r}")


def _not_a_checkpoint(f, why):
    name = f if isinstance(f, (str, os.PathLike)) else getattr(f, "name", "the file object")
    return RuntimeError(
        f"tapegrad.load: {name!s} is not a tapegrad checkpoint ({why}). tapegrad.load reads "
        f"files written by tapegrad.save (a .npz with a '{_META}' member) and plain np.savez "
        f"archives. Files written by torch.save hold pickled data and cannot be read: in "
        f"PyTorch, convert with np.savez(path, **{{k: v.numpy() for k, v in "
        f"state_dict.items()}}).")


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None,
         **pickle_load_args):
    """Load an object saved by :func:`save`.

    Args:
        f: a path (str or ``os.PathLike``) or a binary file object open for reading (it must
            support ``seek``).
        map_location: ``None``, ``'cpu'``, ``tapegrad.device('cpu')``, a dict mapping saved
            locations to targets (only its ``'cpu'`` entry can apply), or a callable
            ``fn(tensor, 'cpu')`` called on each loaded tensor, whose non-None Tensor result
            replaces it (torch passes a storage; ``lambda storage, loc: storage`` works).
        weights_only: accepted for compatibility; loading is always "weights only", since a
            tapegrad checkpoint is data (JSON and arrays) and ``np.load`` runs with
            ``allow_pickle=False``. ``False`` changes nothing.
        pickle_module, mmap, **pickle_load_args: accepted for compatibility and ignored (the
            arrays are read into memory).

    Returns the saved object: tensors (leaves; ``nn.Parameter`` where a Parameter was saved)
    with their dtype, shape and ``requires_grad``, sharing memory where the saved ones did; the
    containers and values as saved (a dict stays a dict, an OrderedDict an OrderedDict, a tuple
    a tuple). A plain ``np.savez`` archive (no tapegrad description) loads as a dict from member
    name to tensor.

    Raises FileNotFoundError for a missing path; RuntimeError for a file that is not a tapegrad
    checkpoint (a ``torch.save`` file, a pickle, a damaged or foreign archive; the message says
    how to convert a torch checkpoint) and for a ``map_location`` naming another device than the
    CPU; TypeError for a ``map_location`` of another type.
    """
    remap = _check_map_location(map_location)
    if isinstance(f, (str, bytes, os.PathLike)):
        with open(os.fsdecode(os.fspath(f)), "rb") as fh:
            return _load(fh, f, remap)
    return _load(f, f, remap)


def _load(fh, name, remap):
    try:
        npz = np.load(fh, allow_pickle=False)
    except (ValueError, OSError, EOFError) as e:
        raise _not_a_checkpoint(name, f"np.load failed: {e}") from None
    if not isinstance(npz, np.lib.npyio.NpzFile):
        raise _not_a_checkpoint(name, "it is a single .npy array, not an .npz archive")
    with npz:
        files = npz.files
        if _META not in files:
            if "data.pkl" in files or any(n.endswith("/data.pkl") for n in files) or \
                    any(n.endswith(".pkl") for n in files):
                raise _not_a_checkpoint(name, "it looks like a torch.save file")
            try:
                return _plain_npz(npz, remap)
            except ValueError as e:
                raise _not_a_checkpoint(name, str(e)) from None
        try:
            raw = npz[_META]
            if not isinstance(raw, np.ndarray) or raw.dtype != np.uint8:
                raise ValueError("the description is not a uint8 array")
            meta = json.loads(raw.tobytes().decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            raise _not_a_checkpoint(name, f"unreadable description: {e}") from None
        if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
            raise _not_a_checkpoint(name, "unknown format")
        if meta.get("version") != _VERSION:
            raise RuntimeError(f"tapegrad.load: checkpoint format version {meta.get('version')!r} "
                               f"is not supported by this tapegrad (it reads version "
                               f"{_VERSION}); upgrade tapegrad")
        try:
            return _Decoder(npz, meta["tensors"], remap).decode(meta["root"])
        except (_Corrupt, KeyError, TypeError, ValueError) as e:
            if isinstance(e, TypeError) and str(e).startswith("tapegrad.load: map_location"):
                raise
            raise RuntimeError(f"tapegrad.load: damaged checkpoint {name!s}: "
                               f"{type(e).__name__}: {e}") from None


def _plain_npz(npz, remap):
    """A plain np.savez archive: {member name: tensor}."""
    dec = _Decoder(npz, [], remap)
    out = {}
    for key in npz.files:
        arr = npz[key]
        if not isinstance(arr, np.ndarray):
            raise ValueError(f"member {key!r} is not a .npy array")
        if not arr.dtype.isnative:
            arr = arr.astype(arr.dtype.newbyteorder("="))
        try:
            out[key] = dec.tensor(arr, "tensor", False)
        except _Corrupt as e:
            raise ValueError(f"member {key!r}: {e}") from None
    return out
