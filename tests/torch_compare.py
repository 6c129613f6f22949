"""Running one program on tapegrad and on torch and comparing what came out: values, dtype and
shape of each tensor, or the type of the exception raised (shared by the surface tests)."""
import warnings

import numpy as np
import pytest

import tapegrad as tg


def outcome(fn, lib):
    """fn(lib)'s result as plain data (tensors as (values, dtype name, shape)), or the type of
    the exception it raised."""
    try:
        r = fn(lib)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e)
    return plain(r)


def raised(lib, fn):
    """The exception ``fn(lib)`` raises; the test fails when it raises none."""
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001 - the exception itself is what is compared
        return e
    pytest.fail(f"no error from {lib.__name__}")


def error_of(lib, fn):
    """(type name, message) of the exception ``fn(lib)`` raises, warnings silenced; (None, "")
    when it raises none."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(lib)
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return type(e).__name__, str(e)
    return None, ""


def caught(lib, fn):
    """The exception ``fn(lib)`` raises (warnings silenced), or None."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(lib)
        except Exception as e:  # noqa: BLE001 - the exception itself is what is compared
            return e
    return None


def same_error(fn, torch, prefix=False):
    """fn(tapegrad) raises what fn(torch) raises: a tapegrad.linalg.LinAlgError where torch's is a
    torch.linalg.LinAlgError, else an exception of the same type name, with torch's message (its
    start with ``prefix``: ours may add what happened). torch must raise (else the case is
    stale)."""
    ours, theirs = caught(tg, fn), caught(torch, fn)
    assert theirs is not None, "torch raised nothing: the case is stale"
    assert ours is not None, f"tapegrad raised nothing; torch: {type(theirs).__name__}: {theirs}"
    if isinstance(theirs, torch.linalg.LinAlgError):
        import tapegrad.linalg
        assert isinstance(ours, tapegrad.linalg.LinAlgError), repr(ours)
    else:
        assert type(ours).__name__ == type(theirs).__name__, (repr(ours), repr(theirs))
    if prefix:
        assert str(ours).startswith(str(theirs)), (str(ours), str(theirs))
    else:
        assert str(ours) == str(theirs)


def node_chain(t):
    """The node names from ``t.grad_fn`` down each node's first edge to the leaf."""
    names, fn = [], t.grad_fn
    while fn is not None:
        names.append(type(fn).__name__)
        nxt = fn.next_functions
        fn = nxt[0][0] if nxt else None
    return names


def raises_as_torch(torch, fn):
    """fn(tapegrad) raises what fn(torch) raises (the same exception type's name); torch must
    raise (else the case is wrong). Returns tapegrad's message."""
    got, msg = error_of(tg, fn)
    ref, _ = error_of(torch, fn)
    assert ref is not None, "torch accepts this: the case is wrong"
    assert got == ref, (got, msg, ref)
    return msg


def plain(r):
    if isinstance(r, (tuple, list)):
        return [plain(v) for v in r]
    if hasattr(r, "detach") and hasattr(r, "dtype"):
        return (r.detach().numpy().tolist(), str(r.dtype).split(".")[-1], tuple(r.shape))
    return r


def close(a, b):
    """Equal plain data, tensor values within rtol 1e-6 (NaN equal to NaN)."""
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return all(close(x, y) for x, y in zip(a, b))
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) == 3:
        return a[1:] == b[1:] and np.allclose(np.asarray(a[0], float), np.asarray(b[0], float),
                                              rtol=1e-6, equal_nan=True)
    return a == b


def same_as_torch(fn, exact=True):
    """fn(tapegrad) gives what fn(torch) gives: the same plain data (values exactly, or within
    :func:`close` when ``exact`` is False), or an exception of the same type (a subclass of it).
    Skips without torch."""
    torch = pytest.importorskip("torch")
    ours, ref = outcome(fn, tg), outcome(fn, torch)
    if isinstance(ref, type):
        assert isinstance(ours, type) and issubclass(ours, ref), (ours, ref)
    else:
        assert ours == ref if exact else close(ours, ref), (ours, ref)
