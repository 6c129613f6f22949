"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode (all thread-local).

Each is a context manager and a decorator, as in torch. The state lives in one ``threading.local``
whose class attributes are the defaults, so a new thread starts with grad mode on.
"""
from __future__ import annotations

import functools
import inspect
import threading

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]


class _State(threading.local):
    grad_enabled = True
    inference = False
    # whether ops are recorded: grad mode on outside inference mode (torch records nothing in
    # inference mode, even under enable_grad). One attribute, as every op reads it first.
    record = True


state = _State()


def set_state(grad_enabled: bool, inference: bool):
    """Set this thread's grad mode and inference mode (and so whether ops are recorded)."""
    state.grad_enabled = grad_enabled
    state.inference = inference
    state.record = grad_enabled and not inference


def is_grad_enabled() -> bool:
    """True when ops record the tape (the default); False inside ``no_grad()``."""
    return state.grad_enabled


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()``."""
    return state.inference


class _Mode:
    """Base of the grad-mode context managers; subclasses set ``_enter_state``."""

    def __call__(self, func):
        if inspect.isclass(func):
            raise TypeError(f"{type(self).__name__} decorates functions, not classes")
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen_wrapper(*args, **kwargs):
                gen = func(*args, **kwargs)
                with self._clone():
                    value = next(gen)
                while True:
                    try:
                        with self._clone():
                            sent = yield value
                        with self._clone():
                            value = gen.send(sent)
                    except StopIteration as stop:
                        return stop.value
            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self._clone():
                return func(*args, **kwargs)
        return wrapper

    def _clone(self):
        return self.__class__()

    def __enter__(self):
        self._prev = (state.grad_enabled, state.inference)
        self._enter_state()
        return None

    def __exit__(self, *exc):
        set_state(*self._prev)
        return False


class no_grad(_Mode):
    """Context manager / decorator: ops inside record nothing and results do not require grad."""

    def _enter_state(self):
        set_state(False, state.inference)


class enable_grad(_Mode):
    """Context manager / decorator: turn recording back on inside ``no_grad``."""

    def _enter_state(self):
        set_state(True, state.inference)


class set_grad_enabled(_Mode):
    """``set_grad_enabled(mode)``: set grad mode now (a plain call) or for a ``with`` block."""

    def __init__(self, mode: bool):
        self.mode = bool(mode)
        self._prev = (state.grad_enabled, state.inference)
        set_state(self.mode, state.inference)

    def _clone(self):
        return set_grad_enabled(self.mode)

    def __enter__(self):
        return None

    def __call__(self, func):
        set_state(*self._prev)
        return super().__call__(func)


class inference_mode(_Mode):
    """``inference_mode(mode=True)``: like no_grad, and tensors made inside are inference tensors,
    which can never be saved for a later backward."""

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)

    def _clone(self):
        return inference_mode(self.mode)

    def _enter_state(self):
        if self.mode:
            set_state(False, True)
        else:
            set_state(state.grad_enabled, False)
