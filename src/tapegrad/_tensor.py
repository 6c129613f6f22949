"""Tensor: a NumPy array plus the autograd state torch keeps on a tensor.

Methods here are the thin ones that touch autograd state; every op (``exp``, ``sum``, ``__mul__``,
...) is attached by ``tapegrad.ops`` from the single place it is declared.
"""
from __future__ import annotations

import copy
import warnings
import weakref

import numpy as np

from . import _dtype
from ._device import CPU
from ._memory_format import strided as _STRIDED
from ._memory_format import strides_of
from ._size import Size
from . import autograd as _autograd
from .autograd.grad_mode import state as _grad_state
from .autograd.graph import (AccumulateGrad, known_counter, new_version_counter, user_stacklevel,
                             version_counter)

__all__ = ["Tensor"]

_ndarray = np.ndarray
_asarray = np.asarray


class Tensor:
    """An n-dimensional array that can record the ops applied to it.

    Attributes: ``data`` (the ``np.ndarray`` holding the values), ``requires_grad``, ``grad``
    (accumulated by backward on leaves), ``grad_fn`` (the Node that made it, None for leaves),
    ``is_leaf``, ``dtype``, ``shape``. Make tensors with :func:`tapegrad.tensor` and the factories.
    """

    # the attributes every op reads are slots (``_base``: the tensor a view was taken from;
    # ``_output_nr``: which output of grad_fn this is); the rest are class-level defaults that an
    # instance overrides in its own dict only when set (most tensors never set them). Reading a
    # class default through an instance is not specialised by CPython 3.11, a slot is.
    __slots__ = ("_data", "_requires_grad", "grad_fn", "_base", "_output_nr", "__dict__",
                 "__weakref__")
    _grad = None
    _vc = None      # VersionCounter, shared by views; created on first need
    _view_chain = ()  # ((view Function, extra args), ...) re-deriving this view from _base
    _view_version = 0  # the storage version this view's history was recorded at
    _acc = None     # weakref to this leaf's AccumulateGrad
    _extra = None   # rare state: retains_grad, inference, ...

    __array_priority__ = 1000  # numpy scalars/arrays on the left defer to our reflected dunders

    def __init__(self, *args, dtype=None, requires_grad=False, device=None):
        """torch's legacy constructor: ``Tensor(data)`` (a sequence or array, converted to the
        default float dtype, as torch), ``Tensor(*sizes)`` or ``Tensor(Size)`` (uninitialised
        values), ``Tensor()`` (empty). ``Tensor(other_tensor)`` shares other's data and dtype
        (torch returns other itself). ``dtype`` and ``requires_grad`` are tapegrad's additions;
        prefer ``tapegrad.tensor``. TypeError for a single number (torch: "data must be a
        sequence")."""
        from ._factories import _to_array, empty
        dt = dtype if dtype is not None else _dtype.get_default_dtype()
        if device is not None and str(device) != "cpu":
            raise RuntimeError(f"Tensor(): tapegrad only has a CPU device, got device={device!r}")
        if args and all(type(a) is int for a in args) or len(args) == 1 and type(args[0]) is Size:
            arr = empty(*args, dtype=dt)._data
        elif not args:
            arr = _to_array([], dt)
        elif len(args) > 1:
            raise TypeError(f"new() received an invalid combination of arguments: sizes must be "
                            f"ints, got {tuple(type(a).__name__ for a in args)}")
        elif isinstance(args[0], Tensor):
            arr = args[0]._data if dtype is None else args[0]._data.astype(dt.np)
        elif isinstance(args[0], (int, float, complex, bool)):
            raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")
        else:
            arr = _to_array(args[0], dt)
        _init(self, arr)
        if requires_grad:
            self.requires_grad_(True)

    # ---- torch's .data --------------------------------------------------------------------
    @property
    def data(self):
        """A tensor sharing this one's storage that is not recorded and does not require grad.
        Changes made through it are invisible to autograd (no version bump), as in torch; prefer
        ``detach()`` (which shares the version counter) unless you need exactly that.

        As in torch, it is an inference tensor exactly when this one is (made inside
        ``inference_mode()`` or not); see :meth:`detach`."""
        return _detached(self, None)

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"data must be a Tensor, got {type(value).__name__}")
        self._data = value._data
        vex = value._extra
        if vex is not None and vex.get("inference") and not self.is_inference():
            # torch: the tensor becomes an inference tensor, keeping its own version counter
            ex = self._extra_dict()
            ex["inference"] = True
            ex["inference_vc"] = True

    # ---- metadata -------------------------------------------------------------------------
    @property
    def dtype(self):
        return _dtype.from_numpy_dtype(self._data.dtype)

    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        """``size()`` -> Size; ``size(dim)`` -> int (negative dims count from the end)."""
        if dim is None:
            return self.shape
        return self._data.shape[_wrap_dim(dim, self._data.ndim, "size")]

    def dim(self):
        return self._data.ndim

    ndimension = dim

    @property
    def ndim(self):
        return self._data.ndim

    def numel(self):
        return self._data.size

    nelement = numel

    def element_size(self):
        return self._data.itemsize

    @property
    def itemsize(self):
        """Bytes per element (an int, as element_size())."""
        return self._data.itemsize

    @property
    def nbytes(self):
        """numel() * itemsize: the bytes of the elements this tensor shows (an expanded or strided
        view counts each element it shows, whatever memory it shares), as torch."""
        return self._data.nbytes

    def stride(self, dim=None):
        """The strides in elements, as torch's. An empty tensor's too: C order's, each dim
        counting as at least 1 (``empty(0, 3).stride() == (3, 1)``), its base's for a slice or
        transpose, zeros for an expanded one."""
        st = strides_of(self._data)
        return st if dim is None else st[_wrap_dim(dim, self._data.ndim, "stride")]

    def is_floating_point(self):
        return self._data.dtype.kind == "f"

    def is_complex(self):
        """False: tapegrad has no complex dtypes."""
        return False

    def is_signed(self):
        """Whether the dtype holds negative values: False for uint8 and bool, True otherwise."""
        return self._data.dtype.kind in "fi"

    def is_nonzero(self):
        """Whether the one element is nonzero (NaN counts as nonzero, -0.0 as zero): a Python bool.
        RuntimeError, as torch, for a tensor of no elements or of more than one."""
        n = self._data.size
        if n != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with {'no values' if n == 0 else 'more than one value'} "
                f"is ambiguous (is_nonzero() needs exactly one element; this tensor has {n}, "
                f"shape {list(self._data.shape)}: use .any() or .all())")
        return bool(self._data.reshape(()))

    def is_same_size(self, other):
        """Whether ``other`` has this tensor's shape (a Python bool; dtypes may differ). TypeError
        when ``other`` is not a Tensor, as torch."""
        if not isinstance(other, Tensor):
            raise TypeError(f"is_same_size(): argument 'other' (position 1) must be Tensor, not "
                            f"{type(other).__name__}")
        return self._data.shape == other._data.shape

    def data_ptr(self):
        """The address of this tensor's first element (an int; 0 when it has no elements), as
        torch: views of one storage differ by their offset in bytes, so ``a.data_ptr() ==
        b.data_ptr()`` tells whether two tensors start at the same memory."""
        arr = self._data
        return arr.ctypes.data if arr.size else 0

    def get_device(self):
        """-1, torch's device index of a CPU tensor (tapegrad's tensors are all on the CPU)."""
        return -1

    @property
    def device(self):
        """Always ``tapegrad.device(type='cpu')``."""
        return CPU

    @property
    def is_cuda(self):
        return False

    @property
    def layout(self):
        """Always ``tapegrad.strided``: tapegrad's tensors are dense arrays with strides."""
        return _STRIDED

    @property
    def is_sparse(self):
        """False: tapegrad has no sparse tensors (every layout is ``tapegrad.strided``)."""
        return False

    @property
    def is_sparse_csr(self):
        """False: tapegrad has no sparse tensors."""
        return False

    @property
    def is_quantized(self):
        """False: tapegrad has no quantized tensors."""
        return False

    @property
    def is_meta(self):
        """False: every tapegrad tensor holds its data (there is no meta device)."""
        return False

    @property
    def is_nested(self):
        """False: tapegrad has no nested tensors."""
        return False

    @property
    def is_mkldnn(self):
        """False: tapegrad has no MKL-DNN tensors."""
        return False

    @property
    def is_cpu(self):
        """True: tapegrad's tensors are all on the CPU."""
        return True

    @property
    def is_leaf(self):
        """True for tensors not made by a recorded op (everything that does not require grad, and
        tensors the user created with requires_grad=True)."""
        return self.grad_fn is None

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def _version(self):
        """How many times this tensor's storage was modified in place. RuntimeError for an
        inference tensor, which has no version counter (as torch), except one made by
        ``detach()`` or ``.data`` outside ``inference_mode()``."""
        if self._no_version():
            raise RuntimeError(
                "Inference tensors do not track version counter. (This tensor of shape "
                f"{list(self._data.shape)} was made under tapegrad.inference_mode(), or is a view "
                "of such a tensor; use .clone() outside inference_mode() for a tensor that "
                "tracks its version.)")
        vc = known_counter(self)
        return vc.v if vc is not None else 0

    def is_inference(self):
        """True for an inference tensor (a method, as in torch): one created under
        ``inference_mode()``, or a view, ``detach()`` or ``.data`` of one (made anywhere)."""
        return self._extra is not None and self._extra.get("inference", False)

    # ---- conversion ----------------------------------------------------------------------
    def item(self):
        """The value of a one-element tensor as a Python number (RuntimeError otherwise)."""
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to "
                               f"Scalar (item() needs exactly one element; shape is "
                               f"{list(self._data.shape)})")
        return self._data.reshape(()).item()

    def tolist(self):
        return self._data.tolist()

    def numpy(self, *, force=False):
        """The values as a NumPy array sharing memory (RuntimeError if it requires grad)."""
        if self.requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead (detach() gives a tensor that "
                               "shares the data but is not recorded on the tape).")
        return self._data

    def __array__(self, dtype=None, copy=None):
        if self._requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead (np.array/np.asarray of a tensor "
                               "that requires grad, as torch).")
        if dtype is not None:
            return self._data.astype(dtype, copy=False)
        return self._data

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))     # (as torch: one UnbindBackward0 node)

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with {self._data.size} elements is "
                               "ambiguous (use .any() or .all())")
        return bool(self._data.reshape(()))

    def _scalar_warning(self):
        if self._requires_grad:
            warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to "
                          "unexpected behavior.\nConsider using tensor.detach() first.",
                          UserWarning, stacklevel=user_stacklevel())

    def __float__(self):
        self._scalar_warning()
        return float(self.item())

    def __int__(self):
        self._scalar_warning()
        return int(self.item())

    def __index__(self):
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __hash__(self):
        return id(self)

    def __copy__(self):
        """``copy.copy``, as torch: a new leaf sharing this tensor's storage, for any tensor (the
        copy of a view is not a view, the copy of a tensor made by an op has no grad_fn), with
        this tensor's requires_grad and a shallow copy of its attributes; no ``.grad``, no hooks,
        and a version counter of its own, at 1 as torch's (which rebuilds the copy with set_)."""
        new = _make(self._data)
        new._requires_grad = self.requires_grad
        _fresh_version(new)
        new.__dict__.update(_user_attrs(self))
        return new

    def __deepcopy__(self, memo):
        """``copy.deepcopy``, as torch: leaves only (RuntimeError for a tensor made by an op). The
        copy's values are in a copy of this tensor's whole storage, made once per deepcopy call:
        tensors that shared storage share the copy, at the same offsets and strides (a view and
        its base, a ``.grad`` viewing another copied tensor), though a view's copy is not a view,
        as in torch. requires_grad is kept; ``.grad`` and the tensor's attributes are deep-copied
        through the same memo; the version counter is the copy's own, at 1 as torch's."""
        requires_grad = self.requires_grad  # (a view whose base was since written: refreshed)
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support "
                               "the deepcopy protocol at the moment. If you were attempting to "
                               "deepcopy a module, this may be because of a torch.nn.utils."
                               "weight_norm usage, see https://github.com/pytorch/pytorch/pull/"
                               "103001 (call .detach() on computed tensors first)")
        if id(self) in memo:
            return memo[id(self)]
        new = _make(_storage_copy(self._data, memo))
        new._requires_grad = requires_grad
        _fresh_version(new)
        # in the memo before the parts are copied: an attribute referring back to this tensor
        # gets the copy, not endless recursion
        memo[id(self)] = new
        if self._grad is not None:
            new._grad = copy.deepcopy(self._grad, memo)
        new.__dict__.update(copy.deepcopy(_user_attrs(self), memo))
        return new

    def __reduce_ex__(self, proto):
        raise TypeError("tapegrad tensors are not pickled; save them with tapegrad.save "
                        "(np.savez underneath) or tensor.detach().numpy()")

    def __repr__(self):
        from ._tensor_str import tensor_repr
        return tensor_repr(self)

    __str__ = __repr__

    def __format__(self, spec):
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    # ---- autograd state ------------------------------------------------------------------
    @property
    def requires_grad(self):
        """Whether ops on this tensor are recorded so gradients can flow to it. Assigning it
        follows requires_grad_()'s rules (RuntimeError for non-floating dtypes, and for False on
        a non-leaf). A view whose base was since modified in place by an op that requires grad
        requires grad too, as in torch."""
        if self._base is not None and self._view_version != self._vc.v:
            if self._from_multi_output():
                # an output of split/chunk/unbind: its history cannot be re-derived (using it
                # raises), but torch still answers
                return self._requires_grad or self._base._requires_grad
            from .autograd.function import refresh_view
            refresh_view(self)
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` in place on a leaf; returns self.

        Raises RuntimeError for an integer/bool tensor (only floating tensors can require grad),
        for ``requires_grad_(False)`` on a non-leaf (detach() it instead), and for
        ``requires_grad_(True)`` on an inference tensor outside ``inference_mode()`` (as torch)."""
        if requires_grad and self._data.dtype.kind != "f":
            raise RuntimeError(f"only Tensors of floating point and complex dtype can require "
                               f"gradients (this one is {self.dtype}); convert it first, e.g. "
                               f"x.float()")
        if requires_grad and self._extra is not None and self._extra.get("inference") and \
                not _grad_state.inference:
            raise RuntimeError(
                f"Setting requires_grad=True on inference tensor outside InferenceMode is not "
                f"allowed. (This tensor of shape {list(self._data.shape)} was made under "
                f"tapegrad.inference_mode(), or is a view, detach() or .data of such a tensor; use "
                f"x.clone().requires_grad_() outside inference_mode() for a leaf that requires "
                f"grad.)")
        if not requires_grad and self.grad_fn is not None:
            raise RuntimeError(
                f"you can only change requires_grad flags of leaf variables. If you want to use a "
                f"computed variable in a subgraph that doesn't require differentiation use "
                f"var_no_grad = var.detach(). (This tensor was made by {self.grad_fn.name()}.)")
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def grad(self):
        """The gradient accumulated into this tensor by ``backward()``: a Tensor of this tensor's
        shape and dtype, or None before any backward (and after ``del t.grad``).

        Reading it on a non-leaf (a tensor with a ``grad_fn``) that does not retain its grad and
        has none warns (UserWarning "The .grad attribute of a Tensor that is not a leaf Tensor is
        being accessed...", as torch) and returns None; call ``retain_grad()`` first to have it
        filled. Assigning stores the given Tensor itself (no copy) or None; a wrong value raises,
        as torch: TypeError when it is neither a Tensor nor None, RuntimeError when its shape or
        its dtype differs from this tensor's (torch's messages differ)."""
        g = self._grad
        if g is None and self.grad_fn is not None and not self.retains_grad:
            warnings.warn(
                f"The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                f".grad attribute won't be populated during autograd.backward(). This tensor is a "
                f"non-leaf because it was made by an op ({self.grad_fn.name()}) from a tensor that "
                f"requires grad. If you indeed want the .grad field to be populated for a non-leaf "
                f"Tensor, use .retain_grad() on the non-leaf Tensor. If you want a leaf, create it "
                f"directly (e.g. tapegrad.randn(..., requires_grad=True), scaling inside no_grad()) "
                f"or use .detach().requires_grad_().", UserWarning, stacklevel=user_stacklevel())
        return g

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {type(value).__name__}")
            if value._data.shape != self._data.shape:
                raise RuntimeError(f"assigned grad has data of a different size: grad shape "
                                   f"{list(value._data.shape)}, tensor shape {list(self._data.shape)}")
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(f"assigned grad has data of a different type: grad is "
                                   f"{value.dtype}, tensor is {self.dtype}")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def retains_grad(self):
        return self._extra is not None and self._extra.get("retains_grad", False)

    def retain_grad(self):
        """Make backward fill ``.grad`` of this non-leaf too (a no-op on leaves)."""
        if self.grad_fn is None:
            if not self.requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        if self.retains_grad:
            return
        self._extra_dict()["retains_grad"] = True
        self._retain_on(self.grad_fn)

    def _retain_on(self, fn):
        if fn._retain is None:
            fn._retain = {}
            fn._rare = True
        fn._retain[self._output_nr] = weakref.ref(self)

    def _set_history(self, fn, output_nr):
        """Point this tensor at a new grad_fn (an in-place op rebased it, or a view's history was
        re-derived). A retained gradient moves to the new node, as torch moves retain_grad's
        hook, so ``.grad`` is the gradient of the tensor's current value."""
        old, old_nr = self.grad_fn, self._output_nr
        self.grad_fn = fn
        if output_nr != old_nr:
            self._output_nr = output_nr
        if old is not fn and self._extra is not None and self._extra.get("retains_grad"):
            if old is not None and old._retain is not None:
                old._retain.pop(old_nr, None)
            if fn is not None:
                self._retain_on(fn)

    def register_hook(self, hook):
        """``hook(grad) -> Tensor or None`` runs when this tensor's gradient is computed; a
        returned tensor replaces the gradient, and must have its dtype and shape (the backward
        raises TypeError for a non-Tensor, RuntimeError "has changed the type / size of value"
        otherwise, as torch). Returns a handle with ``remove()``. RuntimeError for a tensor that
        does not require grad."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        from .autograd.graph import RemovableHandle, _HookDict, note_leaf_prehook
        if self.grad_fn is None:
            by_nr = self._extra_dict().setdefault("hooks", {})
            note_leaf_prehook(self)
        else:
            node = self.grad_fn
            if node._tensor_prehooks is None:
                node._tensor_prehooks = {}
                node._rare = True
            by_nr = node._tensor_prehooks
        per = by_nr.get(self._output_nr)
        if per is None:
            per = by_nr[self._output_nr] = _HookDict()
        handle = RemovableHandle(per)
        per[handle._key] = hook
        return handle

    def register_post_accumulate_grad_hook(self, hook):
        """``hook(tensor)`` runs on a leaf right after its ``.grad`` was accumulated, and must
        return None (or the leaf itself, as torch allows). The gradients are written once the
        whole walk succeeded, in torch's order, each leaf's hooks right after its own write: a
        hook sees the ``.grad`` of the leaves torch settled before its leaf, and not yet those
        after (as in torch). Like torch, it runs in the backward's grad mode: off, unless
        create_graph (so an in-place update of the leaf, an optimizer step, works). Raises
        RuntimeError for a non-leaf or a tensor that does not require grad. A hook that returns
        another tensor makes that backward raise RuntimeError, one that returns anything else
        TypeError (torch's errors), with every ``.grad`` it wrote put back as it was (torch
        keeps those)."""
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        from .autograd.graph import RemovableHandle, _HookDict
        hooks = self._extra_dict().setdefault("post_acc_hooks", _HookDict())
        handle = RemovableHandle(hooks)
        hooks[handle._key] = hook
        return handle

    def _accumulator(self):
        ref = self._acc
        acc = ref() if ref is not None else None
        if acc is None:
            acc = AccumulateGrad(self)
            self._acc = weakref.ref(acc)
        return acc

    def _no_version(self):
        """An inference tensor without a version counter of its own (torch's inference tensors
        have none; detach() or .data of one taken outside inference mode has one)."""
        ex = self._extra
        return ex is not None and ex.get("inference") and not ex.get("inference_vc")

    def _from_multi_output(self):
        """Whether this view derives from an output of split, chunk or unbind (a step of its view
        chain is one)."""
        return any(getattr(step[0], "multi_output_view", False) for step in self._view_chain)

    def _view_creation(self):
        """How this view was made, as torch's CreationMeta that forbids writing it in place with
        grad mode on: None (normal), "no_grad mode", "inference mode" (made while nothing was
        recorded, or a view of such a view), or "multi" (an output of split, chunk or unbind, or
        a view of one). Read from ``_extra``: ``no_grad_view`` (made in that mode from a base
        that requires grad), ``untracked_view`` (from one that does not), ``view_meta_inherited``
        (that mode came from the base, the view itself was made in grad mode) and
        ``multi_output_view`` (set by split, chunk and unbind). As torch, an output of those
        made in grad mode is "multi" even if its base was made in no_grad mode; made in no_grad
        or inference mode it keeps that mode, and inference mode is never overridden."""
        ex = self._extra
        if ex is None:
            return None
        mode = ex.get("no_grad_view") or ex.get("untracked_view")
        if ex.get("multi_output_view") and (
                not mode or (ex.get("view_meta_inherited") and mode != "inference mode")):
            return "multi"
        return mode

    def _extra_dict(self):
        if self._extra is None:
            self._extra = {}
        return self._extra

    def detach(self):
        """A tensor sharing this one's data and version counter, cut from the graph.

        As in torch, the result is an inference tensor exactly when this one is, whatever the
        mode it is called in: ``detach()`` of a normal tensor inside ``inference_mode()`` is a
        normal tensor (it can be saved for a later backward). The detached copy of an inference
        tensor made outside ``inference_mode()`` has a version counter of its own (it may be
        modified in place there); one made inside has none, as any inference tensor."""
        ex = self._extra
        if ex is not None and ex.get("inference"):
            return _detached(self, None)
        return _detached(self, version_counter(self))

    def detach_(self):
        """Cut this tensor from the graph in place (it becomes a leaf that does not require grad)."""
        if self._base is not None and self._base.requires_grad:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        if self.grad_fn is not None:
            version_counter(self)   # (a lazily saved result finds its counter through grad_fn)
        self.grad_fn = None
        self._requires_grad = False
        if self._output_nr:
            self._output_nr = 0   # a leaf is output 0 of its AccumulateGrad
        return self

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate d(self)/d(leaf) into ``leaf.grad`` for every leaf that requires grad.

        ``gradient`` (same shape as self) is required unless self has one element.
        ``retain_graph`` keeps the saved tensors for another backward (default: create_graph).
        ``create_graph`` records the backward itself, for higher-order derivatives.
        ``inputs`` limits accumulation to those tensors. Raises RuntimeError when self does not
        require grad, when ``gradient`` is missing for a non-scalar, or when the graph was freed."""
        # (looked up on each call, as torch's: a patched autograd.backward is the one called)
        _autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)


# tapegrad's own state kept in a tensor's instance dict (the class defaults in Tensor's body);
# the rest of the dict is the user's attributes, which copy.copy and deepcopy carry over as torch
_OWN_STATE = frozenset(k for k, v in vars(Tensor).items()
                       if k[:1] == "_" and k[:2] != "__" and not hasattr(v, "__get__"))


def _user_attrs(t):
    return {k: v for k, v in t.__dict__.items() if k not in _OWN_STATE}


def _fresh_version(t):
    """Give copy ``t`` a version counter of its own at 1, as torch's copy.copy and deepcopy give
    theirs (an inference tensor has none)."""
    if not t._no_version():
        vc = t._vc = new_version_counter()
        vc.v = 1


def _storage_copy(arr, memo):
    """``arr``'s values on a copy of its whole storage (the array its ``.base`` chain starts
    from), one copy per deepcopy call, kept in ``memo``: arrays that shared memory share the copy,
    at the same offsets and strides, as torch's deepcopy shares one copy of a storage. An empty
    array, or one whose storage has no single layout (not C or Fortran ordered), gets a copy of
    its own."""
    root = arr
    while isinstance(root.base, np.ndarray):
        root = root.base
    if not arr.size or not (root.flags.c_contiguous or root.flags.f_contiguous):
        return arr.copy(order="K")
    copies = memo.setdefault("tapegrad storages", {})   # (memo's own keys are ints)
    entry = copies.get(id(root))
    if entry is None:
        # root's bytes in memory order; root is kept in the entry so its id stays its own
        entry = copies[id(root)] = (root, np.array(root.reshape(-1, order="A").view(np.uint8)))
    offset = arr.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    new = np.ndarray(arr.shape, arr.dtype, buffer=entry[1], offset=offset, strides=arr.strides)
    if not arr.flags.writeable:     # (an expanded tensor stays read-only)
        new.flags.writeable = False
    return new


def _detached(src, vc):
    """A tensor on ``src``'s data, cut from the graph (detach() and .data): an inference tensor
    exactly when ``src`` is one, in or out of inference mode; made outside inference mode it has
    a version counter (torch gives detach() and .data of an inference tensor one there)."""
    t = _make(src._data, vc)
    ex = src._extra
    if ex is not None and ex.get("inference"):
        t._extra = {"inference": True} if _grad_state.inference else \
            {"inference": True, "inference_vc": True}
    elif t._extra is not None:
        t._extra = None     # a normal tensor, even made in inference mode
    return t


def _init(t, arr):
    t._data = arr
    t._requires_grad = False
    t.grad_fn = None
    t._base = None
    t._output_nr = 0
    if _grad_state.inference:
        t._extra = {"inference": True}


_new = object.__new__


def _zeros_of(t):
    """A new tensor of zeros with t's shape and dtype (no history)."""
    return _make(np.zeros(t._data.shape, t._data.dtype))


def _make(arr, vc=None):
    """Wrap an array as a fresh tensor (no copy); a NumPy scalar becomes a 0-d array."""
    if type(arr) is not _ndarray:
        arr = _asarray(arr)
    t = _new(Tensor)
    t._data = arr
    t._requires_grad = False
    t.grad_fn = None
    t._base = None
    t._output_nr = 0
    if vc is not None:
        t._vc = vc
    if _grad_state.inference:
        t._extra = {"inference": True}
    return t


def _wrap_dim(dim, ndim, op="op"):
    """Normalise a possibly negative dim, raising IndexError like torch when out of range."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"{op}: Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n
