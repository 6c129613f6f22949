"""Grad-mode managers (no_grad, enable_grad, set_grad_enabled, inference_mode) against torch:
generator decorators, inference_mode(False), bare decorators, set_grad_enabled's type check,
class decoration, clone(), and the thread-local state. Each ``_case(lib)`` runs on tapegrad and
on torch and the two results are compared; the tapegrad result is also checked against the
expected values written out, so these tests mean something without torch."""
import gc
import threading
import warnings

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd import grad_mode


def _torch():
    return pytest.importorskip("torch")


def _mode(lib):
    if lib is tg:  # the derived record flag must always agree with the two modes
        s = grad_mode.state
        # (None, falsy, in inference mode: the one read also tells an op it is in that mode)
        assert s.record == (None if s.inference else s.grad_enabled)
    return lib.is_grad_enabled(), lib.is_inference_mode_enabled()


@pytest.fixture(autouse=True)
def _reset_modes():
    yield
    # leave the default modes behind even when a test fails half way
    grad_mode.set_state(True, False)
    try:
        import torch
    except ImportError:
        return
    torch.set_grad_enabled(True)


def _decorator(lib, name):
    return {"no_grad": lambda: lib.no_grad(), "enable_grad": lambda: lib.enable_grad(),
            "inference_mode": lambda: lib.inference_mode(),
            "inference_mode_false": lambda: lib.inference_mode(False),
            "set_grad_false": lambda: lib.set_grad_enabled(False),
            "set_grad_true": lambda: lib.set_grad_enabled(True),
            "bare_no_grad": lambda: lib.no_grad, "bare_enable_grad": lambda: lib.enable_grad,
            "bare_inference_mode": lambda: lib.inference_mode}[name]()


DECORATORS = ["no_grad", "enable_grad", "inference_mode", "inference_mode_false", "set_grad_false",
              "set_grad_true", "bare_no_grad", "bare_enable_grad", "bare_inference_mode"]
# the mode each decorator puts on, from a caller in the default mode
INSIDE = {"no_grad": (False, False), "enable_grad": (True, False), "inference_mode": (False, True),
          "inference_mode_false": (True, False), "set_grad_false": (False, False),
          "set_grad_true": (True, False), "bare_no_grad": (False, False),
          "bare_enable_grad": (True, False), "bare_inference_mode": (False, True)}


# ---- 1. generators: the mode only while the generator's own code runs -------------------------
def _generator_case(lib, name):
    log = []
    deco = _decorator(lib, name)

    @deco
    def gen(x):
        log.append(("start", _mode(lib)))
        try:
            while True:
                try:
                    x = yield x
                    log.append(("got", x, _mode(lib)))
                except ValueError as e:
                    log.append(("caught", str(e), _mode(lib)))
                    x = "recovered"
                if x == "stop":
                    return "retval"
        finally:
            log.append(("finally", _mode(lib)))

    assert _mode(lib) == (True, False)  # decorating changes nothing lasting
    it = gen(1)
    log.append(("created", _mode(lib)))
    log.append(("next", next(it), _mode(lib)))
    log.append(("send", it.send(5), _mode(lib)))
    with lib.no_grad():  # the caller changes its own mode between resumptions
        log.append(("send_in_no_grad", it.send(6), _mode(lib)))
    log.append(("throw", it.throw(ValueError("boom")), _mode(lib)))
    with pytest.raises(StopIteration) as stop:
        it.send("stop")
    log.append(("return", stop.value.value, _mode(lib)))

    it = gen(2)
    next(it)
    it.close()
    log.append(("closed", _mode(lib)))

    it = gen(3)
    next(it)
    with pytest.raises(KeyError):  # not caught inside: its finally runs in the mode, then out
        it.throw(KeyError("k"))
    log.append(("propagated", _mode(lib)))

    it = gen(4)
    next(it)
    del it  # garbage collected: close() runs the finally in the mode
    gc.collect()
    log.append(("collected", _mode(lib)))

    it = gen(5)
    it.close()  # never started: the body never runs
    log.append(("closed_unstarted", _mode(lib)))
    return log


@pytest.mark.parametrize("name", DECORATORS)
def test_generator_decorators_switch_mode_only_inside_the_generator(name):
    ours = _generator_case(tg, name)
    inside, outside, ng = INSIDE[name], (True, False), (False, False)
    assert ours == [
        ("created", outside), ("start", inside), ("next", 1, outside),
        ("got", 5, inside), ("send", 5, outside),
        ("got", 6, inside), ("send_in_no_grad", 6, ng),
        ("caught", "boom", inside), ("throw", "recovered", outside),
        ("got", "stop", inside), ("finally", inside), ("return", "retval", outside),
        ("start", inside), ("finally", inside), ("closed", outside),
        ("start", inside), ("finally", inside), ("propagated", outside),
        ("start", inside), ("finally", inside), ("collected", outside),
        ("closed_unstarted", outside)]
    assert ours == _generator_case(_torch(), name)


def _generator_in_threads_case(lib):
    # a decorated generator made in one thread and driven from another: each resumption runs in
    # the decorator's mode in the driving thread, and each thread's own mode stays its own
    @lib.no_grad()
    def gen():
        for _ in range(3):
            yield _mode(lib)

    out = {}
    with lib.inference_mode():
        it = gen()
        first = next(it)
        after_first = _mode(lib)

        def worker():
            out["thread_before"] = _mode(lib)
            out["thread_next"] = next(it)
            out["thread_after"] = _mode(lib)
            with lib.enable_grad():
                out["thread_next_enable"] = next(it)
                out["thread_after_enable"] = _mode(lib)

        th = threading.Thread(target=worker)
        th.start()
        th.join()
        main_after = _mode(lib)
    return first, after_first, out, main_after, _mode(lib)


def test_generator_decorator_is_per_thread():
    ours = _generator_in_threads_case(tg)
    assert ours == ((False, True), (False, True),
                    {"thread_before": (True, False), "thread_next": (False, False),
                     "thread_after": (True, False), "thread_next_enable": (False, False),
                     "thread_after_enable": (True, False)},
                    (False, True), (True, False))
    assert ours == _generator_in_threads_case(_torch())


def test_generator_wrapper_keeps_name_and_is_a_generator_function():
    import inspect

    for lib in (tg,):
        @lib.no_grad()
        def gen():
            """doc"""
            yield 1

        assert inspect.isgeneratorfunction(gen)
        assert gen.__name__ == "gen" and gen.__doc__ == "doc" and gen.__wrapped__ is not None


def test_generator_ops_record_only_as_the_caller_says():
    # the observable consequence: between yields, ops in the caller record again
    x = tg.tensor([1.0, 2.0], requires_grad=True)

    @tg.no_grad()
    def gen():
        yield x * 2
        yield x * 3

    it = gen()
    inside = next(it)
    outside = x * 4
    assert not inside.requires_grad and outside.requires_grad and outside.grad_fn is not None


# ---- 2. inference_mode(False) ------------------------------------------------------------------
def _inference_false_case(lib):
    out = []
    with lib.no_grad():
        with lib.inference_mode(False):
            out.append(_mode(lib))
        out.append(_mode(lib))
    with lib.inference_mode():
        with lib.inference_mode(False):
            out.append(_mode(lib))
            with lib.inference_mode():
                out.append(_mode(lib))
            out.append(_mode(lib))
        out.append(_mode(lib))
    with lib.set_grad_enabled(False):
        with lib.inference_mode():
            with lib.no_grad():
                with lib.inference_mode(False):
                    out.append(_mode(lib))
                out.append(_mode(lib))
            out.append(_mode(lib))
        out.append(_mode(lib))

    @lib.inference_mode(False)
    def f():
        return _mode(lib)

    with lib.no_grad():
        out.append(f())
        out.append(_mode(lib))
    with lib.inference_mode():
        out.append(f())
        out.append(_mode(lib))
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    with lib.inference_mode():
        with lib.inference_mode(False):
            y = x * 2
    out.append((y.requires_grad, y.grad_fn is not None, y.is_inference()))
    out.append(_mode(lib))
    return out


def test_inference_mode_false_turns_grad_on_and_restores_both():
    ours = _inference_false_case(tg)
    assert ours == [(True, False), (False, False),
                    (True, False), (False, True), (True, False), (False, True),
                    (True, False), (False, True), (False, True), (False, False),
                    (True, False), (False, False), (True, False), (False, True),
                    (True, True, False), (True, False)]
    assert ours == _inference_false_case(_torch())


# ---- 3. bare decorators ------------------------------------------------------------------------
def _bare_case(lib):
    out = []
    for name in ["no_grad", "enable_grad", "inference_mode"]:
        mgr = getattr(lib, name)

        @mgr
        def f(a, b=2):
            """f doc"""
            return a + b, _mode(lib)

        class M:
            @mgr
            def meth(self, a):
                return self, a, _mode(lib)

            @staticmethod
            @mgr
            def static(a):
                return a, _mode(lib)

            @classmethod
            @mgr
            def klass(cls, a):
                return cls, a, _mode(lib)

        m = M()
        with lib.set_grad_enabled(name != "enable_grad"):
            caller = _mode(lib)
            r = m.meth(3)
            out.append((name, type(f).__name__, f.__name__, f.__doc__, f(1), f(1, b=5),
                        r[0] is m, r[1:], M.static(4), M.klass(5)[1:], M.klass(5)[0] is M,
                        _mode(lib) == caller))
    return out


def test_bare_decorators_like_torch():
    ours = _bare_case(tg)
    assert ours == [
        ("no_grad", "function", "f", "f doc", (3, (False, False)), (6, (False, False)), True,
         (3, (False, False)), (4, (False, False)), (5, (False, False)), True, True),
        ("enable_grad", "function", "f", "f doc", (3, (True, False)), (6, (True, False)), True,
         (3, (True, False)), (4, (True, False)), (5, (True, False)), True, True),
        ("inference_mode", "function", "f", "f doc", (3, (False, True)), (6, (False, True)), True,
         (3, (False, True)), (4, (False, True)), (5, (False, True)), True, True)]
    assert ours == _bare_case(_torch())


def _odd_arguments_case(lib):
    out = []
    for make in [lambda: lib.no_grad(None), lambda: lib.enable_grad(None),
                 lambda: lib.inference_mode(1), lambda: lib.inference_mode(0),
                 lambda: lib.inference_mode(None), lambda: lib.inference_mode(np.bool_(True)),
                 lambda: lib.inference_mode(mode=False), lambda: lib.no_grad(0)]:
        try:
            r = make()
        except TypeError as e:
            out.append(("TypeError", str(e).split("(")[0].split(".")[-1]))
        else:
            out.append(type(r).__name__)
        out.append(_mode(lib))
    return out


def test_odd_arguments_like_torch():
    # torch takes any non-bool inference_mode argument (and any argument to no_grad but None)
    # as the thing to decorate; no_grad(None) reaches __init__, which takes no argument
    ours = _odd_arguments_case(tg)
    assert ours[::2] == [("TypeError", "__init__"), "enable_grad", "function", "function",
                         "function", "function", "inference_mode", "function"]
    assert all(m == (True, False) for m in ours[1::2])
    assert ours == _odd_arguments_case(_torch())


def test_bare_set_grad_enabled_raises_type_error():
    for lib in (tg,):
        with pytest.raises(TypeError, match=r"set_grad_enabled\(\).*must be bool, not function"):
            @lib.set_grad_enabled
            def f():
                pass
        assert _mode(lib) == (True, False)


# ---- 4. set_grad_enabled type check -------------------------------------------------------------
def _non_bool_values(lib):
    return [0, 1, None, 1.0, "x", np.bool_(True), np.bool_(False), lib.tensor(True),
            lib.tensor(False), [True]]


def _set_grad_type_case(lib):
    out = []
    for start in [True, False]:
        lib.set_grad_enabled(start)
        for v in _non_bool_values(lib):
            with pytest.raises(TypeError) as err:
                lib.set_grad_enabled(v)
            out.append((str(err.value), _mode(lib)))
            with pytest.raises(TypeError):
                with lib.set_grad_enabled(v):
                    pass
            out.append(_mode(lib))
    lib.set_grad_enabled(True)
    return out


def test_set_grad_enabled_rejects_non_bool_like_torch():
    ours = _set_grad_type_case(tg)
    names = ["int", "int", "NoneType", "float", "str", "numpy.bool", "numpy.bool", "Tensor",
             "Tensor", "list"]
    if np.bool_.__module__ != "numpy" or np.bool_.__name__ != "bool":  # numpy 1.x: numpy.bool_
        names = [f"{np.bool_.__module__}.{np.bool_.__name__}" if n == "numpy.bool" else n
                 for n in names]
    expected = []
    for start in [True, False]:
        for n in names:
            message = f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, not {n}"
            expected.append((message, (start, False)))
            expected.append((start, False))
    assert ours == expected
    assert ours == _set_grad_type_case(_torch())


def test_set_grad_enabled_accepts_bools_only_and_sets_at_once():
    for lib in (tg,):
        r = lib.set_grad_enabled(False)
        assert _mode(lib) == (False, False) and isinstance(r, lib.set_grad_enabled)
        assert r.mode is False and r.prev is True
        lib.set_grad_enabled(True)
        assert _mode(lib) == (True, False)


def _set_grad_enabled_case(lib):
    out = []
    s = lib.set_grad_enabled(False)
    out.append(_mode(lib))
    lib.set_grad_enabled(True)
    with s:  # entering sets the mode again; leaving puts back the mode from construction
        out.append(_mode(lib))
    out.append(_mode(lib))
    lib.set_grad_enabled(False)
    with lib.set_grad_enabled(True) as v:
        out.append((v, _mode(lib)))
    out.append(_mode(lib))
    lib.set_grad_enabled(True)
    s = lib.set_grad_enabled(False)
    lib.set_grad_enabled(True)
    with lib.inference_mode():  # leaves inference mode alone on exit
        with s:
            out.append(_mode(lib))
        out.append(_mode(lib))
    out.append(_mode(lib))
    # exits that are not last-in-first-out: each manager puts back only what it owns
    a = lib.no_grad()
    a.__enter__()
    b = lib.inference_mode()
    b.__enter__()
    a.__exit__(None, None, None)
    out.append(_mode(lib))
    b.__exit__(None, None, None)
    out.append(_mode(lib))
    lib.set_grad_enabled(True)
    e = lib.enable_grad()
    with lib.inference_mode():  # its exit puts back both flags, e's grad mode included
        e.__enter__()
    out.append(_mode(lib))
    e.__exit__(None, None, None)
    out.append(_mode(lib))
    # the same no_grad entered twice: torch keeps one saved mode per object
    n = lib.no_grad()
    with n:
        with n:
            pass
        out.append(_mode(lib))
    out.append(_mode(lib))
    lib.set_grad_enabled(True)
    # exceptions pass through every manager and the mode is put back
    for make in [lib.no_grad, lib.enable_grad, lib.inference_mode,
                 lambda: lib.set_grad_enabled(False)]:
        with pytest.raises(ZeroDivisionError):
            with make():
                _ = 1 / 0
        out.append(_mode(lib))
    out.append(repr(lib.set_grad_enabled(False)).rsplit(".", 1)[-1])
    lib.set_grad_enabled(True)
    return out


def test_set_grad_enabled_and_exit_rules_like_torch():
    ours = _set_grad_enabled_case(tg)
    assert ours == [(False, False), (False, False), (True, False), (None, (True, False)),
                    (False, False), (False, True), (True, True), (True, False),
                    (True, True), (False, False), (True, False), (False, False),
                    (False, False), (False, False),
                    (True, False), (True, False), (True, False), (True, False),
                    "set_grad_enabled(mode=False)"]
    assert ours == _set_grad_enabled_case(_torch())


# ---- 5. class decoration -----------------------------------------------------------------------
def _class_case(lib):
    out = []

    class C:
        def __init__(self, a):
            self.a = a
            self.mode = _mode(lib)

    for make in [lambda: lib.no_grad(), lambda: lib.enable_grad(), lambda: lib.inference_mode(),
                 lambda: lib.set_grad_enabled(False)]:
        mgr = make()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = mgr(C)
        out.append([(x.category.__name__, str(x.message)[:35], x.filename == __file__)
                    for x in w])
        with lib.set_grad_enabled(not isinstance(mgr, lib.no_grad)):
            caller = _mode(lib)
            inst = r(7)
            out.append((r is C, type(r).__name__, r.__name__, type(inst) is C, inst.a, inst.mode,
                        _mode(lib) == caller))
    for bare in [lib.no_grad, lib.enable_grad, lib.inference_mode]:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = bare(C)
        out.append(([x.category.__name__ for x in w], type(r).__name__, r(1).mode))
    return out


def test_class_decoration_warns_and_returns_a_function_like_torch():
    ours = _class_case(tg)
    warned = [("FutureWarning", "Decorating classes is deprecated an", True)]
    # set_grad_enabled's own __call__ adds a frame, so (as in torch) its warning points at the
    # library rather than at the caller
    warned_in_lib = [("FutureWarning", "Decorating classes is deprecated an", False)]
    assert ours == [warned, (False, "function", "<lambda>", True, 7, (False, False), True),
                    warned, (False, "function", "<lambda>", True, 7, (True, False), True),
                    warned, (False, "function", "<lambda>", True, 7, (False, True), True),
                    warned_in_lib, (False, "function", "<lambda>", True, 7, (False, False), True),
                    (["FutureWarning"], "function", (False, False)),
                    (["FutureWarning"], "function", (True, False)),
                    (["FutureWarning"], "function", (False, True))]
    assert ours == _class_case(_torch())


# ---- 6. clone() --------------------------------------------------------------------------------
def _clone_case(lib):
    out = []
    for make in [lib.no_grad, lib.enable_grad, lib.inference_mode,
                 lambda: lib.inference_mode(False), lambda: lib.set_grad_enabled(False),
                 lambda: lib.set_grad_enabled(True)]:
        lib.set_grad_enabled(True)
        mgr = make()
        lib.set_grad_enabled(True)
        c = mgr.clone()
        row = [type(c) is type(mgr), c is not mgr, getattr(c, "mode", "-"), _mode(lib)]
        lib.set_grad_enabled(True)
        with c:
            row.append(_mode(lib))
        row.append(_mode(lib))
        out.append(row)
    lib.set_grad_enabled(True)
    return out


def test_clone_like_torch():
    ours = _clone_case(tg)
    # set_grad_enabled(...).clone() is a new set_grad_enabled: it sets the mode at once
    assert ours == [[True, True, "-", (True, False), (False, False), (True, False)],
                    [True, True, "-", (True, False), (True, False), (True, False)],
                    [True, True, True, (True, False), (False, True), (True, False)],
                    [True, True, False, (True, False), (True, False), (True, False)],
                    [True, True, False, (False, False), (False, False), (True, False)],
                    [True, True, True, (True, False), (True, False), (True, False)]]
    assert ours == _clone_case(_torch())


def test_clone_is_what_decorators_enter():
    # a decorator enters a fresh clone on each call, so one decorated function can be re-entered
    # (recursion) and the mode is right at every depth
    @tg.inference_mode(False)
    def rec(n):
        here = _mode(tg)
        if n == 0:
            return [here]
        with tg.inference_mode():
            return [here, _mode(tg)] + rec(n - 1)

    with tg.no_grad():
        assert rec(2) == [(True, False), (False, True), (True, False), (False, True),
                          (True, False)]
        assert _mode(tg) == (False, False)


# ---- threads -----------------------------------------------------------------------------------
def _threads_case(lib):
    out = {}
    barrier = threading.Barrier(2)

    @lib.no_grad()
    def in_no_grad():
        return _mode(lib)

    def worker(key, ctx):
        start = _mode(lib)
        with ctx():
            barrier.wait()  # both threads are inside their own mode at the same time
            inside = _mode(lib)
            decorated = in_no_grad()
            barrier.wait()
        out[key] = (start, inside, decorated, _mode(lib))

    with lib.inference_mode():
        ts = [threading.Thread(target=worker, args=("a", lambda: lib.inference_mode(False))),
              threading.Thread(target=worker, args=("b", lib.inference_mode))]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        out["main"] = _mode(lib)
    return out


def test_modes_are_per_thread_like_torch():
    ours = _threads_case(tg)
    assert ours == {"a": ((True, False), (True, False), (False, False), (True, False)),
                    "b": ((True, False), (False, True), (False, True), (True, False)),
                    "main": (False, True)}
    assert ours == _threads_case(_torch())


def test_record_flag_stays_a_plain_attribute():
    # every op reads state.record: it must stay a plain attribute kept by set_state
    assert isinstance(vars(grad_mode._State)["record"], bool)
    with tg.inference_mode():
        with tg.enable_grad():
            assert tg.is_grad_enabled() and not grad_mode.state.record
    with tg.inference_mode(False):
        assert grad_mode.state.record


def _other_thread_in_mode_case(lib, mode):
    """While another thread sits inside ``mode()``, this thread (default modes) still records, and
    the other thread records nothing; once it left, everything records again."""
    entered, leave, seen = threading.Event(), threading.Event(), {}

    def worker():
        with mode():
            x = lib.ones(2, requires_grad=True)
            seen["inside"] = (x * 2).requires_grad
            entered.set()
            leave.wait(5)

    t = threading.Thread(target=worker)
    t.start()
    entered.wait(5)
    x = lib.ones(2, requires_grad=True)
    here = (x * 2).requires_grad, type((x * 2).grad_fn).__name__
    leave.set()
    t.join()
    after = (x * 2).requires_grad
    return seen["inside"], here, after


@pytest.mark.parametrize("name", ["no_grad", "inference_mode"])
def test_a_mode_in_another_thread_does_not_reach_this_one(name):
    got = _other_thread_in_mode_case(tg, getattr(tg, name))
    assert got == (False, (True, "MulBackward0"), True)
    assert not grad_mode.modes.changed and not grad_mode.modes.threads
    torch = _torch()
    assert got == _other_thread_in_mode_case(torch, getattr(torch, name))


def test_process_wide_mode_summary_follows_each_thread():
    assert not grad_mode.modes.changed
    with tg.no_grad():
        assert grad_mode.modes.changed
        with tg.enable_grad():
            # (this thread is back in the default modes)
            assert not grad_mode.modes.changed
            assert (tg.ones(1, requires_grad=True) * 2).requires_grad
        assert not (tg.ones(1, requires_grad=True) * 2).requires_grad
    assert not grad_mode.modes.changed
    with tg.inference_mode():
        assert grad_mode.modes.changed
        assert tg.ones(1).is_inference()
    assert not grad_mode.modes.changed
