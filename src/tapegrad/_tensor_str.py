"""Text of ``repr(tensor)``, matching torch's ``torch/_tensor_str.py`` character for character.

The layout follows torch's algorithm: one :class:`_Formatter` per tensor picks a common width and a
mode (integer-valued floats print as ``1.``, wide-ranging values switch to scientific notation),
then rows are laid out to ``linewidth`` and big tensors are summarised with ``...``. The only
difference from torch's text is the dtype suffix, which reads ``dtype=tapegrad.float64`` (line
breaks still fall where torch puts them, see :func:`_torch_len`).

Everything here works on ``t._data`` (an ``np.ndarray``) with NumPy, so printing never records ops.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from ._dtype import bool as bool_dtype
from ._dtype import get_default_dtype, int64

__all__ = ["set_printoptions", "get_printoptions", "tensor_repr"]


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrinterOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None):
    """Set options for printing tensors (same arguments and behaviour as torch's).

    Args:
        precision: digits after the decimal point for floats (default 4).
        threshold: element count above which tensors are summarised with ``...`` (default 1000).
        edgeitems: items kept at the start and end of each summarised dimension (default 3).
        linewidth: characters per line before rows wrap (default 80).
        profile: ``"default"``, ``"short"`` or ``"full"`` presets; the other arguments override it.
        sci_mode: True/False forces scientific notation on/off; None lets the formatter choose.
            Like torch, every call sets it, so leaving it out resets it to None.
    """
    if profile is not None:
        if profile == "default":
            PRINT_OPTS.precision, PRINT_OPTS.threshold = 4, 1000
            PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 3, 80
        elif profile == "short":
            PRINT_OPTS.precision, PRINT_OPTS.threshold = 2, 1000
            PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 2, 80
        elif profile == "full":
            PRINT_OPTS.precision, PRINT_OPTS.threshold = 4, math.inf
            PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 3, 80
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current print options, as keyword arguments that :func:`set_printoptions` accepts."""
    return dataclasses.asdict(PRINT_OPTS)


class _Formatter:
    """Chooses one width and notation for every element of a tensor (torch's ``_Formatter``).

    ``arr`` is the data the layout will show (already summarised), and ``floating`` says whether the
    tensor's dtype is floating (integer-valued floats still print with a trailing ``.``).
    """

    def __init__(self, arr: np.ndarray, floating: bool):
        self.floating_dtype = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = arr.reshape(-1)

        if not floating:
            if flat.size:
                # str() of an int only grows with |value| (per sign), and bools have two strings,
                # so the extremes give the widest text without formatting every element.
                ends = np.unique(flat) if flat.dtype.kind == "b" else (flat.min(), flat.max())
                for value in ends:
                    self.max_width = max(self.max_width, len(f"{value.item()}"))
            return

        # torch formats float16 through Python floats too; float32 holds every half value exactly.
        vals = flat.astype(np.float32) if flat.dtype == np.float16 else flat
        vals = vals[np.isfinite(vals) & (vals != 0)]
        if vals.size == 0:
            return

        abs_vals = np.abs(vals).astype(np.float64)
        vmin, vmax = abs_vals.min(), abs_vals.max()
        self.int_mode = not np.any(vals != np.ceil(vals))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = bool(vmax / vmin > 1000.0 or vmax > 1.0e8 or vmin < 1.0e-4)
        else:
            self.sci_mode = PRINT_OPTS.sci_mode

        # Within one sign, the text length of each notation below is monotone in |value| (in
        # scientific notation through the exponent's digit count, which peaks at the smallest or
        # largest |value|), so the widest text comes from the extremes of each sign.
        candidates = []
        for part in (vals[vals > 0], vals[vals < 0]):
            if part.size:
                candidates += [part.min().item(), part.max().item()]
        prec = PRINT_OPTS.precision
        if self.sci_mode:
            widths = [len(f"{{:.{prec}e}}".format(v)) for v in candidates]
        elif self.int_mode:
            # + 1 for the "." that marks integer-valued floats
            widths = [len(f"{v:.0f}") + 1 for v in candidates]
        else:
            widths = [len(f"{{:.{prec}f}}".format(v)) for v in candidates]
        self.max_width = max(self.max_width, *widths)

    def width(self) -> int:
        return self.max_width

    def format(self, value) -> str:
        """Text of one Python scalar (from ``tolist()``), right-aligned to the common width."""
        if self.floating_dtype:
            if self.sci_mode:
                ret = f"{{:{self.max_width}.{PRINT_OPTS.precision}e}}".format(value)
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{{:.{PRINT_OPTS.precision}f}}".format(value)
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _vector_str(arr, indent, summarize, formatter):
    # each element also takes ", "
    element_length = formatter.width() + 2
    elements_per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    edge = PRINT_OPTS.edgeitems

    if summarize and not edge:
        data = ["..."]
    elif summarize and arr.shape[0] > 2 * edge:
        data = ([formatter.format(v) for v in arr[:edge].tolist()] + [" ..."]
                + [formatter.format(v) for v in arr[-edge:].tolist()])
    else:
        data = [formatter.format(v) for v in arr.tolist()]

    lines = [", ".join(data[i:i + elements_per_line])
             for i in range(0, len(data), elements_per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with_formatter(arr, indent, summarize, formatter):
    dim = arr.ndim
    if dim == 0:
        return formatter.format(arr.item())
    if dim == 1:
        return _vector_str(arr, indent, summarize, formatter)

    edge = PRINT_OPTS.edgeitems
    n = arr.shape[0]
    if summarize and n > 2 * edge:
        slices = ([_tensor_str_with_formatter(arr[i], indent + 1, summarize, formatter)
                   for i in range(edge)]
                  + ["..."]
                  + [_tensor_str_with_formatter(arr[i], indent + 1, summarize, formatter)
                     for i in range(n - edge, n)])
    else:
        slices = [_tensor_str_with_formatter(arr[i], indent + 1, summarize, formatter)
                  for i in range(n)]

    # blocks of an N-d tensor are separated by N-2 blank lines, as in torch
    return "[" + ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices) + "]"


def _summarized_data(arr):
    """The elements a summarised print shows, so the formatter sizes only what is visible."""
    dim = arr.ndim
    edge = PRINT_OPTS.edgeitems
    if dim == 0:
        return arr
    if dim == 1:
        # arr[-0:] is the whole vector, as in torch, so edgeitems=0 keeps every value here
        return np.concatenate((arr[:edge], arr[-edge:])) if arr.shape[0] > 2 * edge else arr
    if not edge:
        return np.empty((0,) * dim, dtype=arr.dtype)
    n = arr.shape[0]
    rows = list(range(edge)) + list(range(n - edge, n)) if n > 2 * edge else range(n)
    return np.stack([_summarized_data(arr[i]) for i in rows])


def _tensor_str(arr, indent, floating):
    if arr.size == 0:
        return "[]"
    summarize = arr.size > PRINT_OPTS.threshold
    formatter = _Formatter(_summarized_data(arr) if summarize else arr, floating)
    return _tensor_str_with_formatter(arr, indent, summarize, formatter)


def _torch_len(suffix):
    # Suffixes are measured as torch spells them ("dtype=torch.float64"), so lines break exactly
    # where torch breaks them; a wrapped line can thus run 3 characters past ``linewidth``.
    return len(suffix.replace("tapegrad.", "torch."))


def _add_suffixes(tensor_str, suffixes, indent, force_newline=False):
    """Append ``, suffix`` items, wrapping onto an indented new line past ``linewidth``."""
    parts = [tensor_str]
    # torch's arithmetic (one more than the last line's length, +2 with no newline); kept for
    # identical wrapping
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        suffix_len = _torch_len(suffix)
        if force_newline or last_line_len + suffix_len + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + suffix_len
            force_newline = False
        else:
            parts.append(", " + suffix)
            last_line_len += suffix_len + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t) -> str:
    """``repr(t)`` in torch's format, e.g. ``tensor([1.0000, 2.5000], requires_grad=True)``."""
    from ._tensor import Tensor

    # torch names subclasses in the prefix but prints Parameter's data as a plain tensor
    cls = type(t)
    prefix = "tensor(" if cls is Tensor or cls.__name__ == "Parameter" else f"{cls.__name__}("
    indent = len(prefix)
    arr = t._data
    dtype = t.dtype
    default = get_default_dtype()
    suffixes = []

    if arr.size == 0:
        # numpy-like: the shape is spelled out unless it is (0,); with no elements to show, the
        # dtype is named unless it is the default float dtype
        if arr.ndim != 1:
            suffixes.append("size=" + str(tuple(arr.shape)))
        if dtype != default:
            suffixes.append("dtype=" + repr(dtype))
        tensor_str = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append("size=" + str(tuple(arr.shape)))
        if dtype not in (default, int64, bool_dtype):
            suffixes.append("dtype=" + repr(dtype))
        tensor_str = _tensor_str(arr, indent, dtype.is_floating_point)

    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")

    return _add_suffixes(prefix + tensor_str, suffixes, indent)
