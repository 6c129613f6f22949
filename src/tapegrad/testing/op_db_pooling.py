"""op_db rows of the ops in tapegrad.ops.pooling: nn.functional.pad (constant, reflect, replicate,
circular), avg_pool1d / avg_pool2d, adaptive_avg_pool1d / adaptive_avg_pool2d and max_pool1d.

Samples cover stride / padding / ceil_mode / count_include_pad / divisor_override variants,
unbatched inputs, negative (cropping) pads, adaptive windows that overlap (7 -> 3) and the
(1, 1) adaptive output (torch's mean). max_pool1d's ties sample is compared with torch only.
"""
from __future__ import annotations

import numpy as np

from .op_db import OpInfo
from .op_db import SampleInput as S


def _F(name, **kw):
    return OpInfo("nn.functional." + name, **kw)


def s_pad(make, dt):
    return [
        S(make(2, 3, 4), ((1, 2),), name="const_1d"),
        S(make(2, 3, 4), ((1, 2, 0, 1),), {"value": 1.5}, name="const_2d_value"),
        S(make(2, 3), ((1, 0, 2, 1),), name="const_all_dims"),
        S(make(2, 3, 4), ((-1, 2, 1, -1),), name="const_negative"),
        S(make(2, 3, 4, 3), ((1, 1, 0, 2, 1, 0),), name="const_3dims"),
        S(make(2, 3, 4), ((2, 1),), {"mode": "reflect"}, name="reflect_1d"),
        S(make(3, 5), ((1, 3),), {"mode": "reflect"}, name="reflect_1d_unbatched"),
        S(make(1, 2, 4, 3), ((2, 1, 1, 3),), {"mode": "reflect"}, name="reflect_2d"),
        S(make(2, 4, 3), ((1, -1, 2, 0),), {"mode": "reflect"}, name="reflect_2d_unbatched_neg"),
        S(make(1, 1, 3, 3, 3), ((1, 1, 2, 0, 1, 2),), {"mode": "reflect"}, name="reflect_3d"),
        S(make(2, 3, 4), ((3, 1),), {"mode": "replicate"}, name="replicate_1d"),
        S(make(1, 2, 3, 3), ((2, 1, 0, 3),), {"mode": "replicate"}, name="replicate_2d"),
        S(make(2, 3, 3), ((1, 1, 1, 1),), {"mode": "replicate"}, name="replicate_2d_unbatched"),
        S(make(1, 1, 2, 3, 2), ((1, 2, 1, 0, 2, 1),), {"mode": "replicate"},
          name="replicate_3d"),
        S(make(2, 3, 4), ((2, 1),), {"mode": "circular"}, name="circular_1d"),
        S(make(1, 2, 3, 4), ((1, 3, 2, 1),), {"mode": "circular"}, name="circular_2d"),
        S(make(2, 3, 4), ((-1, 2, 1, 0),), {"mode": "circular"}, name="circular_neg_unbatched"),
        S(make(4, 3).T[None], ((1, 1),), {"mode": "reflect"}, name="noncontig"),
    ]


def s_avg_pool2d(make, dt):
    return [
        S(make(1, 2, 4, 4), (2,), name="k2"),
        S(make(2, 1, 5, 5), (3,), {"stride": 1, "padding": 1}, name="stride_pad"),
        S(make(2, 5, 4), ((3, 2), (2, 1)), name="unbatched_rect"),
        S(make(1, 2, 5, 6), (3, 2, 1), {"ceil_mode": True}, name="ceil"),
        S(make(1, 2, 5, 6), (3, 2, 1), {"ceil_mode": True, "count_include_pad": False},
          name="ceil_exclude_pad"),
        S(make(1, 1, 4, 5), ((2, 3),), {"padding": (1, 1), "divisor_override": 4},
          name="divisor_override"),
        S(make(1, 2, 4, 4).transpose(0, 1, 3, 2), (2, 1), name="noncontig"),
    ]


def s_avg_pool1d(make, dt):
    return [
        S(make(2, 3, 6), (2,), name="k2"),
        S(make(2, 7), (3, 2, 1), name="unbatched_pad"),
        S(make(1, 2, 7), (3, 2, 1), {"ceil_mode": True, "count_include_pad": False},
          name="ceil_exclude_pad"),
    ]


def s_adaptive_avg_pool2d(make, dt):
    return [
        S(make(1, 2, 7, 6), ((3, 4),), name="overlap"),
        S(make(2, 5, 4), (2,), name="unbatched"),
        S(make(1, 2, 3, 5), ((None, 2),), name="none"),
        S(make(2, 2, 3, 3), (1,), name="global_mean"),
        S(make(1, 1, 3, 4), ((5, 6),), name="upsample"),
    ]


def s_adaptive_avg_pool1d(make, dt):
    return [
        S(make(2, 3, 7), (3,), name="overlap"),
        S(make(2, 5), ((2,),), name="unbatched"),
        S(make(1, 2, 4), (1,), name="global"),
    ]


def s_max_pool1d(make, dt):
    return [
        S(make(2, 3, 6), (2,), name="k2"),
        S(make(2, 7), (3, 2, 1), name="unbatched_pad"),
        S(make(1, 2, 6), (3,), {"stride": 1, "return_indices": True}, name="indices"),
        S(np.array([[[1.0, 1.0, 0.0, 2.0]]], dt), (2,), name="ties", gradcheck=False),
    ]


rows: list = [
    _F("pad", sample_inputs_func=s_pad),
    _F("avg_pool2d", sample_inputs_func=s_avg_pool2d),
    _F("avg_pool1d", sample_inputs_func=s_avg_pool1d),
    _F("adaptive_avg_pool2d", sample_inputs_func=s_adaptive_avg_pool2d),
    _F("adaptive_avg_pool1d", sample_inputs_func=s_adaptive_avg_pool1d),
    _F("max_pool1d", sample_inputs_func=s_max_pool1d),
]

# (op name, sample name or None) -> why the node name differs from torch's
name_differences: dict = {}
