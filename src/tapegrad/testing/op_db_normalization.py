"""op_db rows of the ops in tapegrad.ops.normalization: layer_norm, batch_norm, group_norm,
rms_norm and embedding, in nn.functional and (where torch has them) in the tapegrad namespace.

batch_norm's running statistics are NoGrad arrays (buffers, never differentiated; each run gets
fresh tensors, so the in-place update in training mode does not leak between runs). embedding
samples with ``padding_idx`` or ``scale_grad_by_freq`` skip gradcheck (torch's gradient there is
deliberately not the derivative: zero for the padding row, divided by the index's count) but
keep gradgradcheck (the double backward is the exact derivative of that gradient); ``max_norm``
renormalizes the weight in place on every call, so it is compared with torch only. group_norm
has no sample with a bias but no weight: torch 2.13's backward fails there ("tensor does not
have a device"); tests/test_normalization.py checks tapegrad's with gradcheck.
"""
from __future__ import annotations

import numpy as np

from .op_db import NoGrad, OpInfo
from .op_db import SampleInput as S


def _F(name, **kw):
    return OpInfo("nn.functional." + name, **kw)


def _pos(make, *shape):
    return make(*shape, low=0.5, high=2.0)


def s_layer_norm(make, dt):
    return [
        S(make(2, 3, 4), ((4,),), name="plain"),
        S(make(2, 3, 4), ((4,), make(4), make(4)), name="affine"),
        S(make(2, 3, 4), ((3, 4), make(3, 4), make(3, 4)), {"eps": 1e-3}, name="2dims_eps"),
        S(make(2, 2, 2, 3), ((2, 2, 3), make(2, 2, 3)), name="3dims_weight_only"),
        S(make(5), ([5], None, make(5)), name="1d_bias_only"),
        S(make(4, 3).T, ((4,), make(4), make(4)), name="noncontig"),
        S(make(0, 4), ((4,), make(4), make(4)), name="empty"),
    ]


def s_layer_norm_ns(make, dt):
    return [
        S(make(2, 3, 4), ((4,), make(4), make(4)), name="affine"),
        S(make(3, 4), ([3, 4], None, None, 1e-3, False), name="2dims_eps"),
    ]


def s_batch_norm(make, dt):
    def stats(c):
        return NoGrad(make(c)), NoGrad(_pos(make, c))
    return [
        S(make(4, 3), (*stats(3), make(3), make(3), True), name="train_2d"),
        S(make(4, 3, 5), (*stats(3), make(3), make(3), True, 0.2), name="train_3d_momentum"),
        S(make(2, 3, 2, 2), (*stats(3), make(3), make(3)), {"training": True, "eps": 1e-3},
          name="train_4d_eps"),
        S(make(4, 3), (None, None), {"training": True}, name="train_no_stats"),
        S(make(4, 3, 2), (*stats(3), None, make(3), True), name="train_bias_only"),
        S(make(3, 5).T, (*stats(3), make(3), make(3), True), name="train_noncontig"),
        S(make(4, 3, 5), (*stats(3), make(3), make(3)), name="eval_3d"),
        S(make(2, 3, 2, 2), stats(3), {"training": False}, name="eval_4d_no_affine"),
        S(make(1, 3), (*stats(3), make(3), None), name="eval_batch_1_weight_only"),
    ]


def s_batch_norm_ns(make, dt):
    def stats(c):
        return NoGrad(make(c)), NoGrad(_pos(make, c))
    return [
        S(make(4, 3, 2), (make(3), make(3), *stats(3), True, 0.1, 1e-5, False), name="train"),
        S(make(4, 3), (None, None, None, None, True, 0.1, 1e-5, False), name="train_no_stats"),
        S(make(2, 3, 2, 2), (make(3), None, *stats(3), False, 0.1, 1e-3, False), name="eval"),
    ]


def s_group_norm(make, dt):
    return [
        S(make(2, 4, 3), (2, make(4), make(4)), name="3d"),
        S(make(2, 6), (2,), name="2d_no_affine"),
        S(make(2, 4, 2, 2), (1, make(4), make(4)), {"eps": 1e-3}, name="4d_one_group"),
        S(make(2, 4, 2, 2), (4, make(4)), name="4d_group_per_channel"),
        S(make(3, 4, 2).transpose(2, 1, 0), (1, make(4), make(4)), name="noncontig"),
    ]


def s_group_norm_ns(make, dt):
    return [S(make(2, 4, 3), (2, make(4), make(4), 1e-5, False), name="3d")]


def s_rms_norm(make, dt):
    return [
        S(make(2, 3, 4), ((4,), make(4)), name="weight"),
        S(make(2, 3, 4), ((3, 4),), name="2dims"),
        S(make(4), ([4],), {"eps": 1e-3}, name="1d_eps"),
        S(make(4, 3).T, ((4,), make(4)), {"eps": 1e-6}, name="noncontig"),
    ]


_IDX = np.array([[1, 2, 1, 4], [4, 0, 3, 1]], np.int64)


def s_embedding(make, dt):
    return [
        S(_IDX, (make(5, 3),), name="2d_repeated"),
        S(np.array(3, np.int64), (make(5, 3),), name="0d"),
        S(np.array([0, 2, 2], np.int32), (make(4, 2),), name="int32"),
        S(np.zeros((0,), np.int64), (make(5, 3),), name="empty"),
        S(_IDX, (make(5, 3),), {"padding_idx": 1}, name="padding", gradcheck=False,
          gradgradcheck=True),
        S(_IDX, (make(5, 3),), {"padding_idx": -1}, name="padding_negative", gradcheck=False,
          gradgradcheck=True),
        S(_IDX, (make(5, 3),), {"scale_grad_by_freq": True, "padding_idx": 0},
          name="scale_grad_by_freq", gradcheck=False, gradgradcheck=True),
        S(_IDX, (make(5, 3),), {"max_norm": 1.0}, name="max_norm", gradcheck=False),
        S(_IDX[0], (make(5, 3),), {"max_norm": 1.5, "norm_type": 1.0}, name="max_norm_l1",
          gradcheck=False),
    ]


def s_embedding_ns(make, dt):
    return [
        S(make(5, 3), (_IDX,), name="2d_repeated"),
        S(make(5, 3), (_IDX, 4), name="padding", gradcheck=False, gradgradcheck=True),
        S(make(5, 3), (_IDX, -1, True), name="scale_grad_by_freq", gradcheck=False,
          gradgradcheck=True),
    ]


rows: list = [
    _F("layer_norm", sample_inputs_func=s_layer_norm),
    _F("batch_norm", sample_inputs_func=s_batch_norm),
    _F("group_norm", sample_inputs_func=s_group_norm),
    _F("rms_norm", sample_inputs_func=s_rms_norm, aliases=("rms_norm",)),
    _F("embedding", sample_inputs_func=s_embedding),
    OpInfo("layer_norm", sample_inputs_func=s_layer_norm_ns),
    OpInfo("batch_norm", sample_inputs_func=s_batch_norm_ns),
    OpInfo("group_norm", sample_inputs_func=s_group_norm_ns),
    OpInfo("embedding", sample_inputs_func=s_embedding_ns),
]

# (op name, sample name or None) -> why the node name differs from torch's
name_differences: dict = {}
