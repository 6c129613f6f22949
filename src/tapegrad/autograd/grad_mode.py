"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode (all thread-local).

Each is a context manager and a decorator, as in torch. The state lives in one ``threading.local``
whose class attributes are the defaults, so a new thread starts with grad mode on and inference
mode off, whatever the thread that started it is in. Every write goes through :func:`set_state`,
which keeps the derived ``record`` flag right.

Decorators (torch's rules, all four managers):

* a plain function runs inside a fresh copy of the manager (made by ``clone()``) on every call;
* a generator function has the mode switched on only while the generator's own code runs: from
  each ``next()``/``send()``/``throw()``/``close()`` up to the next ``yield``. Between yields the
  caller sees its own mode. ``throw(exc)`` is passed into the generator (its ``except`` can catch
  it) and ``close()`` runs its ``finally``, both with the decorator's mode on; sent values go in
  and the return value comes out as ``StopIteration.value``;
* a class is deprecated: a ``FutureWarning`` is emitted and the result is a plain function that
  builds an instance inside the mode (the class itself is not returned);
* ``no_grad``, ``enable_grad`` and ``inference_mode`` also work bare, without parentheses
  (``@no_grad``); ``set_grad_enabled`` needs its bool argument.
"""
from __future__ import annotations

import functools
import inspect
import threading
import warnings

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]


class _State(threading.local):
    grad_enabled = True
    inference = False
    # whether ops are recorded: grad mode on outside inference mode (torch records nothing in
    # inference mode, even under enable_grad). One plain attribute, as every op reads it first;
    # None (falsy) in inference mode, so an op that records nothing learns from the same read
    # whether its result is an inference tensor.
    record = True


state = _State()


class _Modes:
    """Process-wide summary of the thread-local modes: ``changed`` is False while every thread is
    in the default modes (grad on, inference off), so an op outside any grad-mode block learns
    that it records from one plain read, skipping the ``threading.local`` lookup (about 50 ns, a
    few percent of a small op)."""

    __slots__ = ("changed", "threads", "lock")

    def __init__(self):
        self.changed = False
        self.threads = set()    # idents of the threads not in the default modes
        self.lock = threading.Lock()


modes = _Modes()


def set_state(grad_enabled: bool, inference: bool):
    """Set this thread's grad mode and inference mode (and so whether ops are recorded)."""
    state.grad_enabled = grad_enabled
    state.inference = inference
    state.record = None if inference else grad_enabled
    default = grad_enabled and not inference
    me = threading.get_ident()
    if default != (me not in modes.threads):
        with modes.lock:
            if default:
                modes.threads.discard(me)
            else:
                modes.threads.add(me)
            # (a thread that ends inside a mode block stays counted: ops then take the
            # thread-local read, which is right, only slower)
            modes.changed = bool(modes.threads)


def is_grad_enabled() -> bool:
    """True when grad mode is on in this thread (the default); False inside ``no_grad()``,
    ``set_grad_enabled(False)`` and ``inference_mode()``. Ops record the tape only when this is
    True and inference mode is off."""
    return state.grad_enabled


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()`` (and not inside a nested ``inference_mode(False)``)."""
    return state.inference


def _type_name(obj) -> str:
    # the name torch's argument parser prints (CPython's tp_name): a class made in Python by its
    # bare name ("Tensor"), a builtin by its name ("int"), another C type with its module
    # ("numpy.bool")
    t = type(obj)
    if t.__flags__ & (1 << 9) or t.__module__ == "builtins":  # Py_TPFLAGS_HEAPTYPE
        return t.__name__
    return f"{t.__module__}.{t.__name__}"


def _set_grad_enabled(mode):
    if type(mode) is not bool:
        raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, "
                        f"not {_type_name(mode)}")
    set_state(mode, state.inference)


def _in_mode_generator(make_mode, func):
    """Generator function ``func`` whose body runs in a fresh ``make_mode()`` each time it is
    resumed (by next, send, throw or close), while its caller keeps its own mode between
    yields."""

    @functools.wraps(func)
    def run(*args, **kwargs):
        inner = func(*args, **kwargs)
        resume, arg = inner.send, None      # how to resume the body next, and with what
        while True:
            try:
                with make_mode():
                    value = resume(arg)
            except StopIteration as done:
                return done.value
            try:
                arg = yield value
                resume = inner.send
            except GeneratorExit:           # close(): the body's finally blocks run in the mode
                with make_mode():
                    inner.close()
                raise
            except BaseException as exc:    # noqa: BLE001 (throw(): the body may catch it)
                resume, arg = inner.throw, exc

    return run


# torch's text, word for word
_CLASS_WARNING = ("Decorating classes is deprecated and will be disabled in future versions. You "
                  "should only decorate functions or methods. To preserve the current behavior of "
                  "class decoration, you can directly decorate the `__init__` method and nothing "
                  "else.")


class _Mode:
    """A grad-mode context manager that is also a decorator: each call of the decorated function
    (each resumption of a decorated generator) runs in a fresh ``clone()``."""

    def __call__(self, func):
        if inspect.isclass(func):
            warnings.warn(_CLASS_WARNING, FutureWarning, stacklevel=2)
            cls = func

            def func(*args, **kwargs):
                return cls(*args, **kwargs)
            func.__name__ = func.__qualname__ = "<lambda>"
        if inspect.isgeneratorfunction(func):
            return _in_mode_generator(self.clone, func)

        @functools.wraps(func)
        def run(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return run

    def clone(self):
        """A new, unentered manager of the same kind and arguments (what a decorator enters on
        each call)."""
        return type(self)()


class _BareMode(_Mode):
    """A manager without arguments, which may also decorate bare: ``no_grad(f)`` is
    ``no_grad()(f)``."""

    def __new__(cls, func=None):
        return super().__new__(cls) if func is None else cls()(func)


class _GradSwitch(_BareMode):
    """no_grad / enable_grad: grad mode set to ``_to`` inside, back to what it was on exit
    (inference mode is left alone)."""

    _to = None
    prev = None

    def __enter__(self) -> None:
        self.prev = state.grad_enabled
        set_state(self._to, state.inference)

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        set_state(self.prev, state.inference)


class no_grad(_GradSwitch):
    """Context manager / decorator turning grad mode off in this thread: ops inside record
    nothing and their results do not require grad (factories given ``requires_grad=True`` still
    make leaves that require grad). On exit grad mode goes back to what it was on entry; inference
    mode is left alone.

    Usable as ``with no_grad():``, ``@no_grad()`` or bare ``@no_grad``; on a generator function
    the mode is on only while the generator runs, not in the caller between yields (see the
    module docstring). ``no_grad(None)`` raises TypeError (no arguments are taken); decorating a
    class emits a FutureWarning and returns a function that builds the instance in no_grad mode.
    """

    _to = False

    def __init__(self) -> None:
        # (no argument: no_grad(None) is a TypeError, as torch; enable_grad(None) is not)
        super().__init__()


class enable_grad(_GradSwitch):
    """Context manager / decorator turning grad mode on in this thread, e.g. inside
    ``no_grad``. Inside ``inference_mode`` grad mode reads True but ops still record nothing. On
    exit grad mode goes back to what it was on entry; inference mode is left alone.

    Usable as ``with enable_grad():``, ``@enable_grad()`` or bare ``@enable_grad``; on a
    generator function the mode is on only while the generator runs (see the module docstring).
    Decorating a class emits a FutureWarning and returns a function building the instance.
    """

    _to = True


class set_grad_enabled(_Mode):
    """``set_grad_enabled(mode)``: set this thread's grad mode to ``mode`` at once, so it works as
    a plain call; as a ``with`` block it sets ``mode`` again on entry and on exit puts back the
    grad mode from when the object was made (inference mode is left alone).

    As a decorator (``@set_grad_enabled(False)``) making it changes nothing lasting: the mode
    from before is put back and each call of the function runs in a fresh
    ``set_grad_enabled(mode)``; on a generator function the mode is on only while the generator
    runs (see the module docstring). ``clone()`` makes a new one, so it too sets the mode at once.

    Raises TypeError, before changing anything, when ``mode`` is not a ``bool`` (0, None,
    ``numpy.bool_`` or a tensor included), naming ``set_grad_enabled`` and the type given; used
    bare as ``@set_grad_enabled`` it thus raises TypeError naming ``function``.
    """

    def __init__(self, mode: bool) -> None:
        self.prev = state.grad_enabled
        self.mode = mode
        _set_grad_enabled(mode)

    def __call__(self, func):
        set_state(self.prev, state.inference)
        return super().__call__(func)

    def __enter__(self) -> None:
        set_state(self.mode, state.inference)

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        set_state(self.prev, state.inference)

    def __str__(self) -> str:
        return f"{type(self).__module__}.{type(self).__qualname__}(mode={self.mode})"

    def __repr__(self) -> str:
        return str(self)

    def clone(self) -> set_grad_enabled:
        """A new ``set_grad_enabled(self.mode)``; like any such call it sets the mode at once."""
        return self.__class__(self.mode)


class inference_mode(_Mode):
    """``inference_mode(mode=True)``: context manager / decorator for inference mode.

    ``inference_mode()`` turns grad mode off and inference mode on: ops record nothing (not even
    under a nested ``enable_grad``) and tensors made inside are inference tensors, which can never
    be saved for a later backward. ``inference_mode(False)`` does the opposite: grad mode on and
    inference mode off. On exit both flags go back to what they were on entry.

    Usable as ``with inference_mode():``, ``@inference_mode()``, ``@inference_mode(False)`` or
    bare ``@inference_mode``; on a generator function the mode is on only while the generator
    runs (see the module docstring). As in torch, any ``mode`` that is not a ``bool`` (a
    function, but also 0, 1, None or ``numpy.bool_``) is taken as the thing to decorate, so
    ``inference_mode(1)`` returns a function, not a context manager. Decorating a class emits a
    FutureWarning and returns a function building the instance.
    """

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode

    def __enter__(self) -> None:
        self.prev = (state.grad_enabled, state.inference)
        set_state(not self.mode, self.mode)

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        set_state(*self.prev)

    def clone(self) -> inference_mode:
        """A new, unentered ``inference_mode(self.mode)``."""
        return self.__class__(self.mode)
