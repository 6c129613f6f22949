"""Inference tensors and views that may not be written in place, against torch: in-place updates
and requires_grad on inference tensors outside inference mode, views / detach() / .data of
inference tensors, detach() of normal tensors inside inference mode, views made in no_grad /
inference mode and written with grad mode on, and the outputs of split / chunk / unbind.

Each ``_case(lib)`` runs the same code with tapegrad and with torch and returns outcomes, compared
by :func:`_same`: a tapegrad error message must begin with torch's (tapegrad then adds the op, the
shape and what to do)."""
import itertools

import numpy as np
import pytest

import tapegrad as tg


def _libs():
    torch = pytest.importorskip("torch")
    return (tg, torch)


def _try(f):
    """("ok", value) or ("raise", exception type name, message)."""
    try:
        return ("ok", f())
    except Exception as e:  # noqa: BLE001 (the type is compared)
        return ("raise", type(e).__name__, str(e))


def _nothing(_):
    """Drop an op's result (a tensor has no truth value)."""


def _same(ours, ref):
    """Outcomes equal, except that our error message may go on after torch's."""
    if isinstance(ref, tuple) and ref and ref[0] == "raise":
        assert isinstance(ours, tuple) and ours[:2] == ref[:2], (ours, ref)
        assert ours[2].startswith(ref[2]), f"\nours:  {ours[2]}\ntorch: {ref[2]}"
        return
    if isinstance(ref, (list, tuple)):
        assert isinstance(ours, (list, tuple)) and len(ours) == len(ref), (ours, ref)
        for a, b in zip(ours, ref):
            _same(a, b)
        return
    assert ours == ref


def _compare(case, *args):
    ours, ref = (case(lib, *args) for lib in _libs())
    _same(ours, ref)
    return ours


def _inference_ones(lib, *shape, **kw):
    with lib.inference_mode():
        return lib.ones(*shape, **kw)


INFERENCE_TEXT = "Inplace update to inference tensor outside InferenceMode is not allowed."


# ---- 1. in-place updates, requires_grad and _version of an inference tensor ---------------------
WRITES = {
    "add_": lambda L, a: a.add_(1),
    "iadd": lambda L, a: a.__iadd__(1),
    "mul_": lambda L, a: a.mul_(2),
    "zero_": lambda L, a: a.zero_(),
    "fill_": lambda L, a: a.fill_(3),
    "clamp_": lambda L, a: a.clamp_(0, 0.5),
    "copy_": lambda L, a: a.copy_(L.zeros(3)),
    "masked_fill_": lambda L, a: a.masked_fill_(L.tensor([True, False, True]), 7.0),
    "setitem_int": lambda L, a: a.__setitem__(0, 5.0),
    "setitem_slice": lambda L, a: a.__setitem__(slice(1, None), 5.0),
    "setitem_all": lambda L, a: a.__setitem__(Ellipsis, 5.0),
    "setitem_list": lambda L, a: a.__setitem__([0, 2], 5.0),
    "setitem_mask": lambda L, a: a.__setitem__(L.tensor([True, False, False]), 5.0),
    "add_rg": lambda L, a: a.add_(L.ones(3, requires_grad=True)),
    "mul_rg": lambda L, a: a.mul_(L.ones(3, requires_grad=True)),
    "copy_rg": lambda L, a: a.copy_(L.ones(3, requires_grad=True)),
    "setitem_rg": lambda L, a: a.__setitem__(0, L.ones((), requires_grad=True)),
    "setitem_list_rg": lambda L, a: a.__setitem__([0], L.ones(1, requires_grad=True)),
}


def _write_inference(lib, name, mode):
    a = _inference_ones(lib, 3)
    ctx = {"grad": lib.enable_grad, "no_grad": lib.no_grad,
           "off": lambda: lib.set_grad_enabled(False), "inference": lib.inference_mode}[mode]()
    with ctx:
        out = _try(lambda: _nothing(WRITES[name](lib, a)))
    if out[0] == "raise":
        return out
    with lib.inference_mode():
        return out, a.tolist()


@pytest.mark.parametrize("mode", ["grad", "no_grad", "off", "inference"])
@pytest.mark.parametrize("name", sorted(WRITES))
def test_inplace_on_inference_tensor_outside_inference_mode_raises_like_torch(name, mode):
    ours = _compare(_write_inference, name, mode)
    assert (ours[0] == "raise") == (mode != "inference")
    if mode != "inference":
        assert ours[2].startswith(INFERENCE_TEXT) and "inference_mode()" in ours[2]


def test_failed_inplace_on_inference_tensor_changes_nothing():
    """torch writes, then raises; tapegrad raises before writing anything."""
    for name, write in WRITES.items():
        a = _inference_ones(tg, 3)
        before = a._vc.v if a._vc is not None else 0
        with pytest.raises(RuntimeError, match="inference tensor outside InferenceMode"):
            write(tg, a)
        assert a.tolist() == [1.0, 1.0, 1.0], name
        assert (a._vc.v if a._vc is not None else 0) == before and a.grad_fn is None, name


def _shape_error_first(lib):
    # other errors of the op come first, as torch's
    a = _inference_ones(lib, 3)
    ai = _inference_ones(lib, 3, dtype=lib.int64)
    return [_try(lambda: a.add_(lib.ones(2))), _try(lambda: ai.add_(1.5)),
            _try(lambda: a.__setitem__(slice(0, 2), lib.ones(3))),
            _try(lambda: a.unsqueeze(0).expand(2, 3).add_(1))]


def test_inference_error_comes_after_the_ops_own_errors_like_torch():
    ours = _compare(_shape_error_first)
    assert all(o[0] == "raise" and "inference" not in o[2] for o in ours)


def _requires_grad_inference(lib):
    a = _inference_ones(lib, 3)
    ai = _inference_ones(lib, 3, dtype=lib.int64)
    ar = _inference_ones(lib, 3, requires_grad=True)
    out = [_try(lambda: _nothing(a.requires_grad_())),
           _try(lambda: setattr(a, "requires_grad", True)),
           _try(lambda: a.requires_grad_(False).requires_grad),
           _try(lambda: ai.requires_grad_(False).requires_grad),
           (ar.requires_grad, ar.is_leaf, ar.is_inference()),
           _try(lambda: _nothing(ar.requires_grad_(True))),
           _try(lambda: _nothing(a.detach().requires_grad_())),
           _try(lambda: _nothing(a.data.requires_grad_())),
           _try(lambda: _nothing(a[1:].requires_grad_()))]
    with lib.no_grad():
        out.append(_try(lambda: _nothing(a.requires_grad_())))
    with lib.inference_mode():
        b = _inference_ones(lib, 3)
        out.append(_try(lambda: b.requires_grad_().requires_grad))
    return out


def test_requires_grad_on_inference_tensor_outside_inference_mode_raises_like_torch():
    ours = _compare(_requires_grad_inference)
    assert ours[0][0] == "raise" and ours[0][2].startswith(
        "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
    assert ours[-1] == ("ok", True)


def _version_inference(lib):
    a = _inference_ones(lib, 3)
    out = [_try(lambda: a._version), _try(lambda: a[0]._version), _try(lambda: a.view(3)._version)]
    with lib.inference_mode():
        out += [_try(lambda: a._version), _try(lambda: a.detach()._version),
                _try(lambda: a.data._version)]
    return out


def test_version_of_inference_tensor_raises_like_torch():
    ours = _compare(_version_inference)
    assert all(o[0] == "raise" and o[2].startswith(
        "Inference tensors do not track version counter.") for o in ours)


# ---- 2. views, detach() and .data of an inference tensor ----------------------------------------
VIEWS = {
    "view": lambda a: a.view(3), "slice": lambda a: a[1:], "select": lambda a: a[0],
    "t": lambda a: a.t(), "unsqueeze": lambda a: a.unsqueeze(0), "reshape": lambda a: a.reshape(3),
    "alias": lambda a: a[...], "expand": lambda a: a.expand(2, 3), "split": lambda a: a.split(1)[0],
    "detach": lambda a: a.detach(), "data": lambda a: a.data,
    "detach_detach": lambda a: a.detach().detach(), "detach_view": lambda a: a.detach().view(3),
}


def _of_inference(lib, name, mode):
    a = _inference_ones(lib, 3)
    ctx = {"grad": lib.enable_grad, "no_grad": lib.no_grad, "inference": lib.inference_mode}[mode]
    with ctx():
        v = VIEWS[name](a)
    w = lib.ones(v.shape, requires_grad=True)
    out = [v.is_inference(), v.requires_grad, v.grad_fn is None, _try(lambda: v._version),
           _try(lambda: _nothing(v.requires_grad_())),
           # saving it for backward: torch's message differs (checked below)
           list(_try(lambda: _nothing((v * w).sum().backward()))[:2])]
    out.append(_try(lambda: _nothing(v.add_(1))))
    with lib.inference_mode():
        out.append(_try(lambda: _nothing(v.mul_(2))))
    return out


@pytest.mark.parametrize("mode", ["grad", "no_grad", "inference"])
@pytest.mark.parametrize("name", sorted(VIEWS))
def test_view_detach_and_data_of_inference_tensor_are_inference_tensors_like_torch(name, mode):
    ours = _compare(_of_inference, name, mode)
    assert ours[0] is True and ours[1] is False and ours[5][0] == "raise"


def test_saving_a_view_or_detach_of_an_inference_tensor_raises():
    a = _inference_ones(tg, 3)
    w = tg.ones(3, requires_grad=True)
    for v in (a.view(3), a[0:3], a.detach(), a.data, a.detach().t()):
        with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
            (v * w).sum().backward()
    assert w.grad is None


def _detach_version_counters(lib):
    a = _inference_ones(lib, 3)
    d1, d2 = a.detach(), a.detach()
    d1.add_(1)
    out = [d1._version, d2._version, d1.detach()._version, a.data._version, d1.data._version]
    with lib.inference_mode():
        d1.add_(1)      # an inference tensor's version is not bumped in inference mode
        out.append(d1._version)
    d1.mul_(2)
    out += [d1._version, a.detach().tolist()]
    return out


def test_detach_of_inference_tensor_has_its_own_version_counter_like_torch():
    assert _compare(_detach_version_counters) == [1, 0, 0, 0, 0, 1, 2, [6.0, 6.0, 6.0]]


def _set_data_inference(lib):
    x = lib.ones(3)
    x.data = _inference_ones(lib, 3)
    out = [x.is_inference(), _try(lambda: x._version), _try(lambda: x.add_(1).tolist()),
           _try(lambda: _nothing(x.requires_grad_()))]
    a = _inference_ones(lib, 3)
    a.data = lib.zeros(3)
    # (torch then reads a.is_inference() False, though a still has no version counter; tapegrad
    # keeps a an inference tensor)
    return out + [_try(lambda: a._version), _try(lambda: _nothing(a.add_(1)))]


def test_assigning_an_inference_tensor_to_data_like_torch():
    _compare(_set_data_inference)


# ---- 3. detach() / .data of a normal tensor inside inference mode ---------------------------------
def _detach_normal_in_inference_mode(lib):
    x = lib.tensor([1.0, 2.0, 3.0])
    xr = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = lib.tensor([0.5, 1.5, 2.5], requires_grad=True)
    with lib.inference_mode():
        d, dd, dr, v = x.detach(), x.data, xr.detach(), x[1:]
        out = [(t.is_inference(), t.requires_grad) for t in (d, dd, dr, v)]
        d.add_(1)               # detach() shares x's version counter; .data does not
        dd.add_(1)
        out.append(x._version)
    for t in (d, dd, dr):
        w.grad = None
        (t * w).sum().backward()
        out.append(w.grad.tolist())
    out += [x.tolist(), d._version, _try(lambda: dr.requires_grad_().requires_grad)]
    return out


def test_detach_and_data_of_a_normal_tensor_in_inference_mode_are_normal_like_torch():
    ours = _compare(_detach_normal_in_inference_mode)
    assert ours[:3] == [(False, False)] * 3


# ---- 4. views made in no_grad / inference mode, written with grad mode on -------------------------
def _base(lib, kind):
    if kind == "plain":
        return lib.zeros(4)
    if kind == "leaf_rg":
        return lib.zeros(4, requires_grad=True)
    if kind == "nonleaf":
        return lib.zeros(4, requires_grad=True) * 1
    if kind == "view_leaf_rg":       # a leaf that is itself a view of a tensor needing no grad
        return lib.arange(4.0).reshape(4).requires_grad_()
    return lib.arange(8.0)[:4].requires_grad_()


MATRIX = list(itertools.product(
    ["plain", "leaf_rg", "nonleaf", "view_leaf_rg", "view_leaf_slice"], ["no_grad", "inference"],
    [True, False], [True, False]))


def _untracked_view_write(lib, kind, mode, grad_on, operand_rg):
    b = _base(lib, kind)
    with lib.no_grad() if mode == "no_grad" else lib.inference_mode():
        v = b[1:3]
    out = [v.requires_grad, v.is_leaf, v.grad_fn is None, v.is_inference()]
    w = lib.ones(2, requires_grad=operand_rg)
    with lib.set_grad_enabled(grad_on):
        r = _try(lambda: _nothing(v.mul_(w)))
    out.append(r)
    if r[0] == "ok":
        out += [v.requires_grad, b.grad_fn is None, b._version]
    else:
        out += [b._version]
    return out


@pytest.mark.parametrize("kind,mode,grad_on,operand_rg", MATRIX)
def test_view_made_without_recording_written_in_place_like_torch(kind, mode, grad_on, operand_rg):
    ours = _compare(_untracked_view_write, kind, mode, grad_on, operand_rg)
    rg_view = kind in ("leaf_rg", "nonleaf")
    assert ours[0] is rg_view     # the ROOT base decides
    assert (ours[4][0] == "raise") == (grad_on and (rg_view or operand_rg))


def test_issue_example_no_grad_view_then_mul_with_grad_operand():
    for lib in _libs():
        x = lib.zeros(4)
        w = lib.ones(2, requires_grad=True)
        with lib.no_grad():
            v = x[1:3]
        with pytest.raises(RuntimeError, match="^A view was created in no_grad mode and is being "
                                               "modified inplace with grad mode enabled"):
            v.mul_(w)
        assert x._version == 0 and not x.requires_grad and x.grad_fn is None


def _views_of_untracked_views(lib):
    ones = lambda *s: lib.ones(*s, requires_grad=True)
    out = []
    for mode in ("no_grad", "inference"):
        for mk in (lambda t: t[0:1], lambda t: t[0], lambda t: t.view(2), lambda t: t.t(),
                   lambda t: t.unsqueeze(0), lambda t: t.unsqueeze(0).expand(1, 2),
                   lambda t: t.permute(0), lambda t: t[...], lambda t: t.narrow(0, 0, 1),
                   lambda t: t.transpose(0, 0), lambda t: t.detach()):
            for base_rg in (True, False):
                y = ones(4) * 1 if base_rg else lib.zeros(4)
                with lib.no_grad() if mode == "no_grad" else lib.inference_mode():
                    v = y[1:3]
                v2 = mk(v)
                out.append(_try(lambda v2=v2, r=base_rg: _nothing(v2.mul_(ones(()) if not r else 2))))
    # mixed: a no_grad view of an inference-mode view and the other way round
    x, w = lib.zeros(4), ones(1)
    with lib.inference_mode():
        v = x[1:3]
    with lib.no_grad():
        v2 = v[0:1]
    out.append(_try(lambda: _nothing(v2.mul_(w))))
    with lib.no_grad():
        v = x[1:3]
    with lib.inference_mode():
        v2 = v[0:1]
    out.append(_try(lambda: _nothing(v2.mul_(w))))
    # a view of a no_grad view of a leaf: that error comes before the leaf's
    x = ones(4)
    with lib.no_grad():
        v = x[1:3]
    v2 = v[0:1]
    out.append(_try(lambda: _nothing(v2.mul_(2))))
    return out


def test_views_of_views_made_without_recording_like_torch():
    ours = _compare(_views_of_untracked_views)
    assert sum(o[0] == "raise" for o in ours) == len(ours) - 4   # (detach() is no view)


def _setitem_untracked(lib):
    ones = lambda *s: lib.ones(*s, requires_grad=True)
    out = []
    y = ones(4) * 1
    with lib.no_grad():
        v = y[1:3]
    for idx in (0, slice(None), slice(0, 2), Ellipsis, [0], None):
        out.append(_try(lambda i=idx: v.__setitem__(i, 5.0)))
    x = lib.zeros(4)
    with lib.no_grad():
        v = x[1:3]
    w0 = ones(())
    for idx in (0, [0], slice(0, 1)):
        out.append(_try(lambda i=idx: v.__setitem__(i, w0)))
    out.append(_try(lambda: _nothing(v.copy_(ones(2)))))
    out.append(_try(lambda: v.__setitem__(0, 5.0)))      # nothing requires grad: fine
    xi = lib.zeros(4, dtype=lib.int64)
    with lib.no_grad():
        vi = xi[1:3]
    out.append(_try(lambda: vi.copy_(ones(2)).tolist()))   # an integer view has no such rule
    return out + [y.tolist(), x.tolist()]


def test_setitem_on_views_made_without_recording_like_torch():
    _compare(_setitem_untracked)


def _requires_grad_on_untracked_view(lib):
    x = lib.zeros(4)
    with lib.no_grad():
        v = x[1:3]
    v.requires_grad_()
    (v * 2).sum().backward()
    return [v.grad.tolist(), _try(lambda: _nothing(v.mul_(2)))]


def test_no_grad_view_made_to_require_grad_gets_its_gradient_like_torch():
    assert _compare(_requires_grad_on_untracked_view)[0] == [2.0, 2.0]


def _view_leaf_no_grad(lib):
    out = []
    for ctx in (lib.no_grad, lib.inference_mode):
        x = lib.arange(6.0).reshape(2, 3).requires_grad_()
        with ctx():
            v = x[0]
        y = (x * 2).sum()
        y.backward()
        out += [v.requires_grad, v.is_leaf, x.grad.tolist()]
    return out


def test_view_of_a_leaf_that_is_a_view_follows_the_root_base_like_torch():
    ours = _compare(_view_leaf_no_grad)
    assert ours[0] is False and ours[3] is False


def test_existing_no_grad_view_rules_still_hold():
    # a no_grad view of a tensor that requires grad: requires grad, receives none, may be written
    # inside no_grad
    for lib in _libs():
        z = lib.tensor([1.0, 2.0], requires_grad=True)
        with lib.no_grad():
            u = z[0:1]
        (u * 2).sum().backward()
        assert u.requires_grad and u.is_leaf and u.grad is None and z.grad is None
        with lib.no_grad():
            u.mul_(3)
        assert z.tolist() == [3.0, 2.0]


# ---- 5. outputs of split / chunk / unbind ---------------------------------------------------------
SPLITS = {
    "split": lambda L, b: b.split(2), "split_sizes": lambda L, b: b.split([1, 3]),
    "chunk": lambda L, b: b.chunk(2), "unbind": lambda L, b: b.view(2, 2).unbind(),
    "unbind1": lambda L, b: b.view(2, 2).unbind(1), "split_one": lambda L, b: b.split(4),
    "chunk_one": lambda L, b: b.chunk(1), "torch_split": lambda L, b: L.split(b, 2),
    "torch_chunk": lambda L, b: L.chunk(b, 2), "torch_unbind": lambda L, b: L.unbind(b.view(2, 2)),
}


def _split_write(lib, name, base_rg, grad_on, operand_rg):
    x = lib.zeros(4, requires_grad=base_rg)
    b = x * 1 if base_rg else x
    outs = SPLITS[name](lib, b)
    o = outs[-1]
    w = lib.ones((), requires_grad=operand_rg)
    with lib.set_grad_enabled(grad_on):
        r = _try(lambda: _nothing(o.mul_(w)))
    return [len(outs), type(o.grad_fn).__name__ if grad_on or not base_rg else None, r,
            b.tolist() if not base_rg or not grad_on else None]


@pytest.mark.parametrize("base_rg,grad_on,operand_rg",
                         list(itertools.product([True, False], repeat=3)))
@pytest.mark.parametrize("name", sorted(SPLITS))
def test_split_outputs_modified_in_place_like_torch(name, base_rg, grad_on, operand_rg):
    ours = _compare(_split_write, name, base_rg, grad_on, operand_rg)
    assert (ours[2][0] == "raise") == (grad_on and (base_rg or operand_rg))


def test_split_output_error_message_matches_torch_word_for_word():
    x = tg.zeros(4, requires_grad=True) * 1
    with pytest.raises(RuntimeError) as e:
        x.split(1)[0].add_(1)
    assert str(e.value).startswith(
        "Output 0 of Split is a view and is being modified inplace. This view is the output of a "
        "function that returns multiple views. Such functions do not allow the output views to be "
        "modified inplace. You should replace the inplace operation by an out-of-place one. (add_ ")
    assert x.tolist() == [0.0] * 4 and x._version == 0


def _split_cases(lib):
    ones = lambda *s: lib.ones(*s, requires_grad=True)
    out = []

    def y():
        return ones(4) * 1
    o = y().split(2)[1]
    for f in (lambda: o.__setitem__(0, 5.0), lambda: o.__setitem__(slice(None), 5.0),
              lambda: o.__setitem__(Ellipsis, 5.0), lambda: o.__setitem__(slice(0, 1), 5.0),
              lambda: o.__setitem__(slice(0, 2), 5.0), lambda: o.__setitem__(None, 5.0),
              lambda: o.__setitem__(lib.tensor([True, False]), 5.0),
              lambda: o.__setitem__([0], 5.0), lambda: o.__iadd__(1), lambda: o.zero_(),
              lambda: o.copy_(lib.zeros(2)), lambda: o.fill_(2.0)):
        out.append(_try(lambda f=f: _nothing(f())))
    # views of an output (recorded, or not), detach() of one
    out.append(_try(lambda: _nothing(y().split(2)[1][0:1].mul_(2))))
    out.append(_try(lambda: _nothing(y().split(2)[1].view(2).mul_(2))))
    out.append(_try(lambda: _nothing(lib.zeros(4).split(2)[1][0:1].mul_(ones(1)))))
    out.append(_try(lambda: y().split(2)[1].detach().mul_(2).tolist()))
    # made in no_grad / inference mode; a no_grad view of an output; outputs of a no_grad view
    for ctx in (lib.no_grad, lib.inference_mode):
        b = y()
        with ctx():
            o = b.split(2)[1]
        out.append(_try(lambda o=o: _nothing(o.mul_(2))))
    b = y()
    o = b.split(2)[1]
    with lib.no_grad():
        v = o[0:1]
    out.append(_try(lambda: _nothing(v.mul_(2))))
    for base_rg in (True, False):
        x = lib.zeros(4, requires_grad=base_rg)
        with lib.no_grad():
            v = x[0:4]
        o = v.split(2)[1]
        out.append(_try(lambda o=o, r=base_rg: _nothing(o.mul_(2 if r else ones(())))))
    x = lib.zeros(4)
    with lib.inference_mode():
        o = x.split(2)[1]
    out.append(_try(lambda: _nothing(o.mul_(ones(())))))
    # outputs of a leaf; written in no_grad mode: fine; integer outputs: fine
    out.append(_try(lambda: _nothing(ones(4).split(2)[1].mul_(2))))
    out.append(_try(lambda: _nothing(ones(2, 2).unbind()[1].mul_(2))))
    b = y()
    o = b.split(2)[1]
    with lib.no_grad():
        o.mul_(2)
    out.append(b.tolist())
    out.append(_try(lambda: lib.zeros(4, dtype=lib.int64).split(2)[1].copy_(ones(2)).tolist()))
    # split of an inference tensor: an inference tensor
    a = _inference_ones(lib, 4)
    o = a.split(2)[1]
    out += [o.is_inference(), o.requires_grad, _try(lambda: _nothing(o.add_(1)))]
    return out


def test_split_chunk_unbind_output_rules_like_torch():
    ours = _compare(_split_cases)
    assert ours[0][2].startswith("Output 0 of Select is a view and is being modified inplace.")
    assert ours[1][2].startswith("Output 1 of Split is a view")


def _mark(t, node_name="SplitBackward0", index=0):
    """Test-only: mark ``t`` as an output of a multi-output view node, as split does."""
    ex = t._extra_dict()
    ex["multi_output_view"] = node_name
    ex["multi_output_index"] = index
    return t


def test_hand_marked_multi_output_view():
    x = tg.zeros(4, requires_grad=True) * 1
    o = _mark(x[2:4], "SplitWithSizesBackward0", 3)
    with pytest.raises(RuntimeError, match="^Output 3 of SplitWithSizes is a view and is being "
                                           "modified inplace. This view is the output of a "
                                           "function that returns multiple views"):
        o.mul_(2)
    with tg.no_grad():
        o.mul_(2)       # fine with grad mode off
    p = _mark(tg.zeros(4)[0:2], "UnbindBackward0", 1)
    p.mul_(2)           # nothing requires grad: fine
    with pytest.raises(RuntimeError, match="^A view was created in no_grad mode and is being "
                                           "modified inplace with grad mode enabled. This view is "
                                           "the output of a function that returns multiple"):
        p.mul_(tg.ones(2, requires_grad=True))
    assert p._version == 1


def test_untracked_views_stay_cheap():
    # the marks live in _extra only for views made without recording; a normal tensor keeps none
    x = tg.ones(3)
    assert x._extra is None and (x * 2)._extra is None and x[0:2]._extra is None
    with tg.no_grad():
        assert (x * 2)._extra is None
        assert tg.zeros(3, dtype=tg.int64)[0:2]._extra is None
    np.testing.assert_array_equal(x.detach()._data, x._data)


def _inplace_under_inference_and_enable_grad(lib):
    w = lib.ones(3, requires_grad=True)
    with lib.inference_mode():
        with lib.enable_grad():
            w.add_(1)
            w[:2].mul_(2)
            w[lib.tensor([0])] = 7.0
            x = lib.ones(3, dtype=lib.long)
            x.copy_(w)
    (w * 2).sum().backward()
    return w.tolist(), w.requires_grad, w.is_leaf, w._version, x.tolist(), w.grad.tolist()


def test_inplace_on_a_leaf_in_inference_mode_even_with_grad_enabled():
    # inference mode records nothing and checks no autograd rule, even under enable_grad
    assert _inplace_under_inference_and_enable_grad(tg) == (
        [7.0, 4.0, 2.0], True, True, 3, [7, 4, 2], [2.0, 2.0, 2.0])


def test_inplace_on_a_leaf_in_inference_mode_as_torch():
    torch = pytest.importorskip("torch")
    assert _inplace_under_inference_and_enable_grad(tg) == \
        _inplace_under_inference_and_enable_grad(torch)
