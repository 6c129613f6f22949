"""op_db rows of the ops in tapegrad.ops.shape_extra. What rows cannot say (errors, the same-object
returns, unique_consecutive's node, views) is in tests/test_shape_extra_ops.py."""
import numpy as np

from .op_db import Attr, OpInfo, SampleInput, _a, _i

S = SampleInput


def s_tensor_split(make, dt):
    return [S(make(7, 3), (3,), name="sections_uneven"),
            S(make(3, 4), (5, 1), name="more_sections_than_elements"),
            S(make(2, 6), ([1, 4],), {"dim": -1}, name="indices_negdim"),
            S(make(6, 2), ((-2, 2, 9),), name="negative_and_past_end"),
            S(make(5), ([],), name="no_indices"),
            S(make(5), (_i(2),), name="tensor_sections"),
            S(make(2, 5), (_i([1, 3]), 1), name="tensor_indices"),
            S(make(0, 3), (2,), name="empty"),
            S(make(4, 3).T, (2, 1), name="noncontig"),
            S(make(7), ([_i([2]), _i(4), 5],), name="one_element_tensor_indices"),
            S(make(7), (), {"sections": _i(3)}, name="sections_kw_0d_tensor")]


def s_hsplit(make, dt):
    return [S(make(2, 6), (3,), name="2d"), S(make(6), (2,), name="1d"),
            S(make(2, 4, 3), ([1, 3],), name="indices"), S(make(2, 0), (1,), name="empty"),
            S(make(2, 6), (), {"sections": 2}, name="sections_kw"),
            S(make(2, 6), (), {"indices": [1]}, name="indices_kw"),
            S(make(2, 6), (_i(3),), name="0d_tensor_sections")]


def s_vsplit(make, dt):
    return [S(make(6, 2), (3,), name="sections"), S(make(4, 3, 2), ([1, -1],), name="indices"),
            S(make(0, 3), (1,), name="empty"),
            S(make(6, 2), (), {"indices": [1, -1]}, name="indices_kw")]


def s_dsplit(make, dt):
    return [S(make(2, 3, 4), (2,), name="sections"), S(make(1, 2, 5), ([2],), name="indices"),
            S(make(1, 2, 4), (), {"sections": 2}, name="sections_kw")]


def s_atleast(make, dt):
    return [S(make(), name="0d"), S(make(4), name="1d"), S(make(2, 3), name="2d"),
            S(make(2, 1, 3), name="3d"), S(make(0), name="empty"),
            S(make(), (make(3), make(2, 2)), name="several"),
            S([make(), make(2)], name="list"), S(_i([1, 2]), name="int")]


def s_broadcast_tensors(make, dt):
    return [S(make(3, 1), (make(4),), name="two"),
            S(make(), (make(2, 1, 3), make(4, 1)), name="0d_and_3"),
            S(make(2, 3), (make(2, 3),), name="same_shape"),
            S(make(0, 1), (make(3),), name="empty"),
            S(make(3), (_i([[1], [2]]),), name="int_other"),
            S(make(3, 2).T, (make(3, 1, 1),), name="noncontig")]


def s_block_diag(make, dt):
    return [S(make(2, 3), (make(1, 2),), name="2d"),
            S(make(), (make(3), make(2, 2)), name="0d_1d_2d"),
            S(make(2), name="one"),
            S(make(0, 2), (make(2, 0), make(1, 1)), name="empty_blocks"),
            S(make(2, 2), (_i([1, 2]),), name="int_block"),
            S(make(3, 2).T, (make(1),), name="noncontig")]


def s_cartesian_prod(make, dt):
    return [S(make(3), (make(2),), name="two"), S(make(2), (make(2), make(3)), name="three"),
            S(make(4), name="one"), S(make(2), (make(0),), name="empty"),
            S(_i([1, 2]), (_i([3, 4, 5]),), name="int")]


def s_tril_indices(make, dt):
    return [S(3, (3,), name="square"), S(3, (5, 1), name="wide_offset"),
            S(5, (2, -2), name="tall_negative_offset"), S(3, (3, -5), name="empty_by_offset"),
            S(0, (4,), name="no_rows"), S(4, (3,), {"dtype": Attr("int32")}, name="int32"),
            S(_i(4), (_i(3), _i(-1)), name="0d_tensors"),
            S(2 ** 40, (0,), name="huge_without_columns")]


def s_isin(make, dt):
    return [S(_i([[1, 5, 2], [7, 2, 0]]), (_i([2, 7]),), name="int"),
            S(_i([[1, 5, 2], [7, 2, 0]]), (_i([[2], [7]]),), {"invert": True}, name="invert"),
            S(_a([1.0, 2.5, np.nan, 3.0], dt), (_i([3, 1]),), name="float_int"),
            S(_a([1.0, np.nan], dt), (_a([np.nan, 1.0], dt),), name="nan"),
            S(_i(4), (_i([4, 5]),), name="0d"),
            S(_i([1, 4]), (4,), name="number_test"),
            S(4, (_i([1, 4]),), name="number_element"),
            S(_i([1, 2, 3]), (_i([3, 1]),), {"assume_unique": True}, name="assume_unique"),
            S(_i(np.zeros((0, 2))), (_i([1]),), name="empty"),
            S(_i([1, 4]), (), {"test_element": 4}, name="test_element_kw")]


def s_unique_consecutive(make, dt):
    runs = _a([1.0, 1.0, 2.0, 2.0, 2.0, 1.0, 3.0, 3.0], dt)
    rows = _a([[1, 2], [1, 2], [3, 4], [1, 2]], dt)
    kw = {"return_inverse": True, "return_counts": True}
    return [S(runs, name="plain"), S(runs.reshape(2, 4), (), kw, name="2d_flattened"),
            S(rows, (), {**kw, "dim": 0}, name="dim0"),
            S(rows.T.copy(), (), {**kw, "dim": -1}, name="negdim"),
            S(_a(5.0, dt), (), kw, name="0d"), S(make(0, 3), (), {**kw, "dim": 0}, name="empty"),
            S(_a([np.nan, np.nan, 1.0], dt), (), {"return_counts": True}, name="nan"),
            S(np.array([True, True, False]), (), {"return_inverse": True}, name="bool"),
            S(make(2, 3, 4), (), {"dim": 2}, name="dim_last_layout")]


def s_unfold(make, dt):
    return [S(make(8), (0, 3, 2), name="overlap_free"), S(make(7), (0, 3, 1), name="overlap"),
            S(make(3, 5), (-1, 2, 2), name="negdim"), S(make(4, 3), (0, 2, 3), name="step_gt"),
            S(make(), (0, 1, 1), name="0d"), S(make(4), (0, 0, 1), name="size0"),
            S(make(), (0, 0, 1), name="0d_size0"),
            S(make(0, 2), (0, 0, 1), name="empty"),
            S(make(4, 3).T, (1, 3, 1), name="noncontig")]


def s_as_strided(make, dt):
    return [S(make(12), ((3, 3), (2, 1), 1), name="overlapping_windows_offset"),
            S(make(3, 4), ((2, 2), (4, 1)), name="default_offset"),
            S(make(3, 4), ((2, 2, 2), (1, 4, 0), 2), name="stride0"),
            S(make(3, 4), ((4, 3), (1, 4)), name="transposed"),
            S(make(4, 3).T, ((2, 3), (1, 3), 1), name="noncontig"),
            S(make(6), ((), (), 5), name="0d"),
            S(make(6), ((0, 2), (1, 1), 20), name="empty_offset_past_end"),
            S(make(12), (), {"size": [2, 3], "stride": [3, 1], "storage_offset": 2},
              name="kwargs")]


def _atleast_rows():
    # (the torch wrapper takes one tensor, several, or one list, as the samples give them)
    return [OpInfo(n, sample_inputs_func=s_atleast) for n in
            ("atleast_1d", "atleast_2d", "atleast_3d")]


rows = [
    OpInfo("tensor_split", sample_inputs_func=s_tensor_split),
    OpInfo("hsplit", sample_inputs_func=s_hsplit),
    OpInfo("vsplit", sample_inputs_func=s_vsplit),
    OpInfo("dsplit", sample_inputs_func=s_dsplit),
    *_atleast_rows(),
    OpInfo("broadcast_tensors", sample_inputs_func=s_broadcast_tensors),
    OpInfo("block_diag", sample_inputs_func=s_block_diag),
    OpInfo("cartesian_prod", sample_inputs_func=s_cartesian_prod),
    OpInfo("tril_indices", sample_inputs_func=s_tril_indices, supports_grad=False),
    OpInfo("triu_indices", sample_inputs_func=s_tril_indices, supports_grad=False),
    OpInfo("isin", sample_inputs_func=s_isin, supports_grad=False),
    # (torch records UniqueConsecutiveBackward0 without a derivative: tested in the test file)
    OpInfo("unique_consecutive", sample_inputs_func=s_unique_consecutive, supports_grad=False),
    OpInfo("unfold", method="unfold", sample_inputs_func=s_unfold),
    # (its errors, a view's input, as_strided_: tests/test_index_faithful.py)
    OpInfo("as_strided", sample_inputs_func=s_as_strided),
    # (on a clone: the in-place form restrides its input)
    OpInfo("as_strided_", sample_inputs_func=s_as_strided,
           op=lambda x, *a, **k: x.clone().as_strided_(*a, **k),
           torch_op=lambda torch: lambda x, *a, **k: x.clone().as_strided_(*a, **k)),
]

# (op name, sample name or None) -> why the node name differs from torch's
name_differences: dict = {}
