"""torch's other names for existing ops, and the small ops and Tensor queries ported code meets.

Aliases are the same function registered under torch's second name (``greater`` is ``gt``,
``multiply_`` is ``mul_``), each put in the ``tapegrad`` namespace only where torch has it there.
``positive``, ``ravel`` and ``select`` are written with existing Functions, so they record the
nodes torch records. The queries (``is_complex``, ``is_nonzero``, ...) are Tensor methods (see
``_tensor.py``); here they also become functions where torch has them as functions, as does
``detach_``.
"""
from __future__ import annotations

import operator

import numpy as np

from . import inplace as I
from . import pointwise as P
from ._registry import op
from ._util import Tensor
from .indexing import Select
from .shape import contiguous

# ---- comparisons: greater is gt, ... -------------------------------------------------------------
greater = op("greater")(P.gt)
greater_equal = op("greater_equal")(P.ge)
less = op("less")(P.lt)
less_equal = op("less_equal")(P.le)
not_equal = op("not_equal")(P.ne)

# ---- in-place aliases (torch has negative_ as a function too; the rest are methods only) -------
negative_ = op("negative_")(I.neg_)
absolute_ = op("absolute_", namespace=False)(I.abs_)
multiply_ = op("multiply_", namespace=False)(I.mul_)
subtract_ = op("subtract_", namespace=False)(I.sub_)
divide_ = op("divide_", namespace=False)(I.div_)
fix_ = op("fix_")(I.trunc_)


@op("true_divide_", namespace=False)
def true_divide_(self, other):
    """In-place true division, ``div_`` without ``rounding_mode`` (torch's true_divide_ takes none:
    passing one is a TypeError); returns self. Errors as :func:`div_`'s."""
    return I.div_(self, other)


def _tensor_arg(x, name, arg="input"):
    """TypeError, as torch's argument parser, for an argument that is not a Tensor."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")


def _int_arg(v, arg, pos):
    """``v`` as an int (an int Tensor of one element counts); TypeError, as torch's argument
    parser, for anything else, bools included (which Python's operator.index takes)."""
    try:
        n = None if isinstance(v, (bool, np.bool_)) else operator.index(v)
    except TypeError:
        n = None
    if n is None:
        raise TypeError(f"select(): argument '{arg}' (position {pos}) must be int, not "
                        f"{type(v).__name__}")
    return n


# ---- positive, ravel, select ---------------------------------------------------------------------
@op("positive")
def positive(input):
    """``+input`` (``__pos__`` too): the input itself (no copy, no node), as torch. RuntimeError for a bool tensor (as
    torch; use the tensor as is, or ``.logical_not()`` to invert a mask); TypeError when input is
    not a Tensor."""
    _tensor_arg(input, "positive")
    if input._data.dtype.kind == "b":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported. (positive() of a "
                           "bool tensor: use the tensor itself)")
    return input


Tensor.__pos__ = positive


@op("ravel")
def ravel(input):
    """The elements as one dim (a 0-d input gives shape (1,)), input's dtype, as torch's
    ``contiguous().view(-1)``: a view of a contiguous input (ViewBackward0), a view of a
    contiguous copy otherwise (ViewBackward0 after CloneBackward0). TypeError when input is not a
    Tensor."""
    _tensor_arg(input, "ravel")
    return contiguous(input).view(-1)


@op("select")
def select(input, dim, index):
    """``input`` indexed by ``index`` along ``dim`` (both ints, negative counting from the end),
    that dim removed: a view, SelectBackward0 (derivatives.yaml select_backward: grad written into
    zeros at the index), the same as ``input[:, ..., index]``.

    Raises:
        IndexError: a 0-d input; ``dim`` out of range; ``index`` out of range for that dim (as
            torch: 'select(): index 3 out of range for tensor of size [3, 4] at dimension 0').
        TypeError: ``dim`` or ``index`` not an int (an int Tensor of one element counts)."""
    _tensor_arg(input, "select")
    dim, index = _int_arg(dim, "dim", 1), _int_arg(index, "index", 2)
    shape = input._data.shape
    n = len(shape)
    if n == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor. (Index a tensor of at "
                         "least one dim; a 0-d tensor's value is .item())")
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but "
                         f"got {dim}) (select(): dim counts the input's {n} dims)")
    dim %= n
    if not -shape[dim] <= index < shape[dim]:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(shape)} at "
                         f"dimension {dim}")
    return Select.apply(input, (slice(None),) * dim + (index, Ellipsis))


# ---- Tensor methods that torch also has as functions ---------------------------------------------
def _as_fn(name, doc):
    method = getattr(Tensor, name)

    def f(input, *args):
        _tensor_arg(input, name)
        return method(input, *args)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return op(name, method=False)(f)


is_complex = _as_fn("is_complex", "False: tapegrad has no complex dtypes. TypeError when input is "
                    "not a Tensor.")
is_signed = _as_fn("is_signed", "Whether input's dtype holds negative values (False for uint8 and "
                   "bool). TypeError when input is not a Tensor.")
is_nonzero = _as_fn("is_nonzero", "The truth of input's one element (see Tensor.is_nonzero). "
                    "RuntimeError for none or several elements; TypeError when input is not a "
                    "Tensor.")
is_same_size = _as_fn("is_same_size", "Whether input and other have the same shape (dtypes may "
                      "differ). TypeError when either is not a Tensor.")
get_device = _as_fn("get_device", "-1, the CPU's device index, as torch. TypeError when input is "
                    "not a Tensor.")
detach_ = _as_fn("detach_", "input cut from the graph in place (see Tensor.detach_): input itself, "
                 "now a leaf that does not require grad. RuntimeError for a view of a tensor "
                 "that requires grad; TypeError when input is not a Tensor.")
