"""torch's alias names, positive / ravel / select / fix, the in-place functions in the namespace,
and the Tensor queries (is_complex, is_nonzero, nbytes, ...): against torch where it is installed."""
import numpy as np
import pytest

import tapegrad as tg
from torch_compare import same_as_torch

# every name this surface adds -> whether torch also has it as a function (torch.NAME)
ADDED = {
    "ceil_": True, "floor_": True, "trunc_": True, "fix_": True, "round_": True, "rsqrt_": True,
    "sign_": False, "sgn_": False, "erf_": True, "expm1_": True, "log1p_": True, "square_": True,
    "clamp_min_": True, "clamp_max_": True,
    "negative_": True, "absolute_": False, "multiply_": False, "subtract_": False,
    "divide_": False, "true_divide_": False,
    "greater": True, "greater_equal": True, "less": True, "less_equal": True, "not_equal": True,
    "positive": True, "ravel": True, "select": True, "fix": True,
    "is_complex": True, "is_signed": True, "is_nonzero": True, "is_same_size": True,
    "get_device": True, "nbytes": False, "itemsize": False, "is_cpu": False, "data_ptr": False,
    "neg_": True, "abs_": True, "log_": True, "log2_": True, "log10_": True, "sin_": True,
    "cos_": True, "tan_": True, "asin_": True, "acos_": True, "atan_": True, "sinh_": True,
    "cosh_": True, "asinh_": True, "acosh_": True, "atanh_": True, "arcsin_": True,
    "arccos_": True, "arctan_": True, "arcsinh_": True, "arccosh_": True, "arctanh_": True,
    "deg2rad_": True, "rad2deg_": True, "reciprocal_": True, "clamp_": True, "clip_": True,
    "zero_": True, "fill_": True, "detach_": True,
    "eq_": False, "ne_": False, "lt_": False, "le_": False, "gt_": False, "ge_": False,
    "greater_": False, "greater_equal_": False, "less_": False, "less_equal_": False,
    "not_equal_": False, "logical_and_": False, "logical_or_": False, "logical_xor_": False,
    "logical_not_": False, "fmod_": False, "cumsum_": False, "addmm_": False,
}
PROPERTIES = ("nbytes", "itemsize", "is_cpu")


@pytest.mark.parametrize("name", sorted(ADDED))
def test_name_is_where_it_should_be(name):
    assert hasattr(tg.Tensor, name)
    assert hasattr(tg, name) == ADDED[name]
    assert isinstance(tg.Tensor.__dict__.get(name), property) == (name in PROPERTIES)


@pytest.mark.parametrize("name", sorted(ADDED))
def test_name_is_where_torch_has_it(name):
    torch = pytest.importorskip("torch")
    assert hasattr(torch.Tensor, name)
    assert hasattr(torch, name) == ADDED[name]


# ---- comparison aliases ------------------------------------------------------------------------
CMP = {"greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le",
       "not_equal": "ne"}


@pytest.mark.parametrize("alias", sorted(CMP))
def test_comparison_alias_is_the_op(alias):
    assert getattr(tg, alias) is getattr(tg, CMP[alias])
    assert getattr(tg.Tensor, alias) is getattr(tg.Tensor, CMP[alias])


@pytest.mark.parametrize("alias", sorted(CMP))
@pytest.mark.parametrize("case", ["number", "tensor", "bcast", "int_float", "method", "bad_shape"])
def test_comparison_alias_matches_torch(alias, case):
    def fn(L):
        x = L.tensor([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])
        f = getattr(L, alias)
        return {"number": lambda: f(x, 2.0),
                "tensor": lambda: f(x, x.flip(1)),
                "bcast": lambda: f(x, L.tensor([2.0, 2.0, 1.0])),
                "int_float": lambda: f(L.tensor([1, 2, 3]), L.tensor([1.5, 2.0, 2.5])),
                "method": lambda: getattr(x, alias)(L.tensor(2.0)),
                "bad_shape": lambda: f(x, L.ones(4))}[case]()
    same_as_torch(fn)


# ---- in-place functions and aliases --------------------------------------------------------------
def _inplace_run(lib, fn):
    a = lib.tensor([0.6, -0.8, 1.7, 2.5], requires_grad=True)
    x = a * 1
    r = fn(lib, x)
    assert r is x
    name = type(x.grad_fn).__name__
    (x * lib.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    return x.detach().numpy().tolist(), name, x._version, a.grad.numpy(force=True).tolist()


NAMESPACE_INPLACE = {
    "ceil_": lambda L, x: L.ceil_(x), "floor_": lambda L, x: L.floor_(x),
    "trunc_": lambda L, x: L.trunc_(x), "fix_": lambda L, x: L.fix_(x),
    "round_": lambda L, x: L.round_(x), "round_decimals": lambda L, x: L.round_(x, decimals=1),
    "rsqrt_": lambda L, x: L.rsqrt_(x.abs_()), "erf_": lambda L, x: L.erf_(x),
    "expm1_": lambda L, x: L.expm1_(x), "log1p_": lambda L, x: L.log1p_(x.abs_()),
    "square_": lambda L, x: L.square_(x), "clamp_min_": lambda L, x: L.clamp_min_(x, 0.5),
    "clamp_max_": lambda L, x: L.clamp_max_(x, L.tensor([0.0, 1.0, 2.0, 3.0])),
    "negative_": lambda L, x: L.negative_(x),
    "neg_": lambda L, x: L.neg_(x), "reciprocal_": lambda L, x: L.reciprocal_(x),
    "clip_": lambda L, x: L.clip_(x, -0.5, 2.0), "fill_": lambda L, x: L.fill_(x, 3),
    "sinh_": lambda L, x: L.sinh_(x), "arctan_": lambda L, x: L.arctan_(x),
}


@pytest.mark.parametrize("case", sorted(NAMESPACE_INPLACE))
def test_namespace_inplace_matches_torch(case):
    torch = pytest.importorskip("torch")
    ours = _inplace_run(tg, NAMESPACE_INPLACE[case])
    ref = _inplace_run(torch, NAMESPACE_INPLACE[case])
    np.testing.assert_allclose(ours[0], ref[0], rtol=1e-6)
    assert ours[1:3] == ref[1:3]
    np.testing.assert_allclose(ours[3], ref[3], rtol=1e-6)


INPLACE_ERRORS = {
    "leaf_ceil_": lambda L: L.ones(2, requires_grad=True).ceil_(),
    "leaf_square_": lambda L: L.square_(L.ones(2, requires_grad=True)),
    "leaf_clamp_min_": lambda L: L.ones(2, requires_grad=True).clamp_min_(0.0),
    "leaf_negative_": lambda L: L.ones(2, requires_grad=True).negative_(),
    "float_into_int": lambda L: L.tensor([1, 4]).rsqrt_(),
    "erf_int": lambda L: L.tensor([1, 4]).erf_(),
    "round_int_decimals": lambda L: L.tensor([1, 4]).round_(decimals=1),
    "clamp_min_none": lambda L: L.ones(2).clamp_min_(None),
    "clamp_max_none": lambda L: L.ones(2).clamp_max_(None),
    "clamp_min_float_into_int": lambda L: L.tensor([1, 2]).clamp_min_(0.5),
    "clamp_min_out_of_float32": lambda L: L.ones(2).clamp_min_(1e40),
    "clamp_max_int_too_big": lambda L: L.ones(2).clamp_max_(2 ** 70),
    "clamp_min_grows_self": lambda L: L.ones(2).clamp_min_(L.zeros(3, 2)),
    "expanded": lambda L: L.ones(1).expand(3).floor_(),
    "divide_bad_mode": lambda L: L.ones(2).divide_(2, rounding_mode="up"),
    "div_bad_mode": lambda L: L.ones(2).div_(2, rounding_mode="up"),
    "true_divide_mode": lambda L: L.ones(2).true_divide_(2, rounding_mode="floor"),
    "divide_int": lambda L: L.tensor([7, -7]).divide_(2),
    "multiply_bad": lambda L: L.ones(2).multiply_("x"),
    "ceil_bool": lambda L: L.tensor([True]).ceil_(),
    "round_bool": lambda L: L.tensor([True]).round_(),
    "abs_bool": lambda L: L.abs_(L.tensor([True])),
    "leaf_neg_function": lambda L: L.neg_(L.ones(2, requires_grad=True)),
    "neg_function_number": lambda L: L.neg_(2.0),
}


@pytest.mark.parametrize("case", sorted(INPLACE_ERRORS))
def test_inplace_error_matches_torch(case):
    same_as_torch(INPLACE_ERRORS[case])


INPLACE_VALUES = {
    "ceil_int": lambda L: L.tensor([1, -4]).ceil_(),
    "square_int": lambda L: L.tensor([3, -4]).square_(),
    "sign_int": lambda L: L.tensor([3, 0, -4]).sign_(),
    "sign_bool": lambda L: L.tensor([True, False]).sign_(),
    "sgn_nan": lambda L: L.tensor([float("nan"), -0.0, -2.0]).sgn_(),
    "clamp_min_int": lambda L: L.tensor([1, 5]).clamp_min_(2),
    "clamp_max_broadcast": lambda L: L.tensor([[1.0, 5.0], [3.0, 0.0]]).clamp_max_(
        L.tensor([2.0, 1.0])),
    "divide_floor_int": lambda L: L.tensor([7, -7]).divide_(2, rounding_mode="floor"),
    "div_trunc_int": lambda L: L.tensor([7, -7]).div_(2, rounding_mode="trunc"),
    "subtract_alpha": lambda L: L.tensor([1.0, 2.0]).subtract_(3, alpha=2),
    "multiply_int": lambda L: L.tensor([1, 2]).multiply_(3),
    "absolute_int": lambda L: L.tensor([-1, 2]).absolute_(),
    "round_half_even": lambda L: L.tensor([0.5, 1.5, 2.5, -0.5]).round_(),
    "round_float16": lambda L: L.tensor([1.234, 5.678], dtype=L.float16).round_(decimals=2),
    "log1p_float64": lambda L: L.tensor([1e-10, 3.0], dtype=L.float64).log1p_(),
    "version": lambda L: [x._version for x in [L.ones(2)] for _ in [x.ceil_(), x.square_()]],
}


@pytest.mark.parametrize("case", sorted(INPLACE_VALUES))
def test_inplace_values_match_torch(case):
    same_as_torch(INPLACE_VALUES[case])


def test_inplace_aliases_share_the_op():
    for alias, name in (("negative_", "neg_"), ("absolute_", "abs_"), ("multiply_", "mul_"),
                        ("subtract_", "sub_"), ("divide_", "div_"), ("fix_", "trunc_")):
        assert getattr(tg.Tensor, alias) is getattr(tg.Tensor, name)
    assert tg.negative_ is tg.Tensor.neg_ and tg.fix_ is tg.trunc_


def test_inplace_without_grad_mode_writes_a_leaf():
    leaf = tg.tensor([1.4, -2.6], requires_grad=True)
    with tg.no_grad():
        leaf.round_().clamp_min_(-2.0)
    assert leaf.tolist() == [1.0, -2.0] and leaf._version == 2


# ---- fix, positive, ravel, select ----------------------------------------------------------------
def test_fix_is_trunc():
    assert tg.fix is tg.trunc and tg.Tensor.fix is tg.Tensor.trunc
    same_as_torch(lambda L: (L.fix(L.tensor([-1.7, 1.7])), L.tensor([-2.5, 0.5]).fix()))


def _graph(lib, fn, a_values):
    """fn(lib, a) for a leaf ``a``: values, dtype, shape, the chain of node names from the
    result's grad_fn along first edges, and a's gradient (for grad = arange)."""
    a = lib.tensor(a_values, dtype=lib.float64, requires_grad=True)
    y = fn(lib, a)
    chain, node = [], y.grad_fn
    while node is not None:
        chain.append(type(node).__name__)
        nxt = [f for f, _ in node.next_functions if f is not None]
        node = nxt[0] if nxt else None
    y.backward(lib.arange(y.numel(), dtype=lib.float64).reshape(y.shape))
    return (y.detach().numpy().tolist(), str(y.dtype).split(".")[-1], tuple(y.shape), chain,
            a.grad.numpy().tolist(), y.is_contiguous())


def _write_column(y):
    y.select(1, 0).mul_(3)
    return y


M34 = np.arange(12.0).reshape(3, 4).tolist()
GRAPHS = {
    "ravel_contiguous": lambda L, a: a.ravel(),
    "ravel_transposed": lambda L, a: a.t().ravel(),
    "ravel_strided": lambda L, a: L.ravel(a[:, ::2]),
    "ravel_row": lambda L, a: a[1].ravel(),
    "ravel_0d": lambda L, a: a.sum().ravel(),
    "ravel_1d": lambda L, a: a.reshape(-1).ravel(),
    "select_dim1": lambda L, a: a.select(1, 2),
    "select_negative": lambda L, a: L.select(a, -2, -1),
    "select_transposed": lambda L, a: a.t().select(0, 3),
    "select_of_select": lambda L, a: a.select(0, 1).select(0, -1),
    "select_then_write": lambda L, a: _write_column(a * 1),
    "positive": lambda L, a: L.positive(a) * 2,
    "positive_method": lambda L, a: (a * 1).positive(),
}


@pytest.mark.parametrize("case", sorted(GRAPHS))
def test_graph_matches_torch(case):
    torch = pytest.importorskip("torch")
    assert _graph(tg, GRAPHS[case], M34) == _graph(torch, GRAPHS[case], M34)


def test_positive_returns_the_input_itself():
    for x in (tg.tensor([1.0, -2.0], requires_grad=True), tg.tensor([1, 2], dtype=tg.uint8)):
        assert tg.positive(x) is x and x.positive() is x and (+x) is x


def test_ravel_and_select_are_views():
    torch = pytest.importorskip("torch")
    for lib in (tg, torch):
        x = lib.arange(6.0).reshape(2, 3)
        r, s = x.ravel(), x.select(1, 1)
        x.add_(1)
        assert r._version == s._version == 1
        assert r.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0] and s.tolist() == [2.0, 5.0]
        s.mul_(10)
        assert x.tolist() == [[1.0, 20.0, 3.0], [4.0, 50.0, 6.0]]
        t = x.t().ravel()        # a copy: writing it leaves x alone
        t.zero_()
        assert x.sum().item() == 84.0


ERRORS = {
    "positive_bool": lambda L: L.positive(L.tensor([True, False])),
    "positive_bool_method": lambda L: L.tensor(True).positive(),
    "positive_number": lambda L: L.positive(3),
    "plus_operator_bool": lambda L: +L.tensor([True, False]),
    "ravel_list": lambda L: L.ravel([1, 2]),
    "select_index_high": lambda L: L.zeros(3, 4).select(0, 3),
    "select_index_low": lambda L: L.zeros(3, 4).select(1, -5),
    "select_dim_high": lambda L: L.zeros(3, 4).select(2, 0),
    "select_dim_low": lambda L: L.select(L.zeros(3, 4), -3, 0),
    "select_0d": lambda L: L.tensor(1.0).select(0, 0),
    "select_empty_dim": lambda L: L.zeros(0, 3).select(0, 0),
    "select_float_index": lambda L: L.zeros(3, 4).select(0, 1.0),
    "select_bool_index": lambda L: L.zeros(3, 4).select(0, True),
    "select_str_dim": lambda L: L.zeros(3, 4).select("a", 0),
    "select_tensor_index": lambda L: L.zeros(3, 4).select(0, L.tensor([1, 2])),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_torch(case):
    same_as_torch(ERRORS[case])


SELECT_VALUES = {
    "int_tensor_index": lambda L: L.arange(12).reshape(3, 4).select(1, L.tensor(2)),
    "numpy_int": lambda L: L.arange(12).reshape(3, 4).select(np.int64(0), np.int32(-1)),
    "keywords": lambda L: L.select(L.arange(6).reshape(2, 3), dim=1, index=0),
    "empty_other_dim": lambda L: L.zeros(0, 3).select(1, 2),
    "bool_tensor": lambda L: L.tensor([[True, False], [False, True]]).select(0, 1),
    "positive_int": lambda L: L.positive(L.tensor([1, -2], dtype=L.int8)),
    "ravel_int_noncontig": lambda L: L.arange(6).reshape(2, 3).t().ravel(),
}


@pytest.mark.parametrize("case", sorted(SELECT_VALUES))
def test_values_match_torch(case):
    same_as_torch(SELECT_VALUES[case])


def test_select_error_names_the_op_and_sizes():
    with pytest.raises(IndexError, match=r"select\(\): index 3 out of range for tensor of size "
                                         r"\[3, 4\] at dimension 0"):
        tg.zeros(3, 4).select(0, 3)


# ---- Tensor queries ----------------------------------------------------------------------------
DTYPES = ("float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool")


@pytest.mark.parametrize("dtype", DTYPES)
def test_dtype_queries_match_torch(dtype):
    def fn(L):
        x = L.zeros(2, 3, dtype=getattr(L, dtype))
        return [x.is_signed(), L.is_signed(x), x.is_complex(), L.is_complex(x), x.nbytes,
                x.itemsize, x.itemsize == x.element_size(), x[:, ::2].nbytes,
                x[0].expand(4, 3).nbytes]
    same_as_torch(fn)


def test_dtype_queries_without_torch():
    assert tg.zeros(2, dtype=tg.uint8).is_signed() is False
    assert tg.zeros(2, dtype=tg.int8).is_signed() is True
    assert tg.zeros(2, 3).nbytes == 24 and tg.zeros(2, 3).itemsize == 4
    assert tg.zeros(2, dtype=tg.float64).is_complex() is False


QUERIES = {
    "nonzero_values": lambda L: [L.tensor(v).is_nonzero() for v in
                                 (0.0, -0.0, 1, float("nan"), True, False, [[2]], [0.0])],
    "nonzero_function": lambda L: L.is_nonzero(L.tensor([-3])),
    "nonzero_empty": lambda L: L.tensor([]).is_nonzero(),
    "nonzero_two": lambda L: L.tensor([1, 0]).is_nonzero(),
    "nonzero_two_function": lambda L: L.is_nonzero(L.zeros(2, 2)),
    "nonzero_number": lambda L: L.is_nonzero(1),
    "same_size": lambda L: [L.zeros(2, 3).is_same_size(L.zeros(2, 3, dtype=L.int64)),
                            L.zeros(2, 3).is_same_size(L.zeros(3, 2)),
                            L.is_same_size(L.zeros(1, 2), L.zeros(2)),
                            L.is_same_size(L.zeros(()), L.tensor(5))],
    "same_size_list": lambda L: L.zeros(1).is_same_size([1]),
    "same_size_list_function": lambda L: L.is_same_size([1], L.zeros(1)),
    "device": lambda L: [L.zeros(2).get_device(), L.get_device(L.zeros(())), L.zeros(2).is_cpu,
                         L.zeros(2, requires_grad=True).is_cpu],
    "device_number": lambda L: L.get_device(1),
    # addresses differ run to run: compared as offsets between views and as equalities
    "data_ptr": lambda L: (lambda a: [a[0, 1:].data_ptr() - a.data_ptr(),
                                      a[1].data_ptr() - a.data_ptr(),
                                      a.view(6).data_ptr() == a.data_ptr(),
                                      a.t().data_ptr() == a.data_ptr(),
                                      a.clone().data_ptr() == a.data_ptr(),
                                      a.detach().data_ptr() == a.data_ptr(),
                                      L.empty(0).data_ptr(), a[2:].data_ptr(),
                                      type(a.data_ptr()) is int])(
        L.ones(2, 3, dtype=L.float64)),
    "complex_list": lambda L: L.is_complex([1.0]),
    "signed_number": lambda L: L.is_signed(1),
}


@pytest.mark.parametrize("case", sorted(QUERIES))
def test_query_matches_torch(case):
    same_as_torch(QUERIES[case])


def test_is_nonzero_error_says_what_to_do():
    with pytest.raises(RuntimeError, match=r"more than one value is ambiguous.*\.any\(\) or "
                                           r"\.all\(\)"):
        tg.tensor([1, 2]).is_nonzero()
