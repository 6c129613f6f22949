"""Test support: the op database (:mod:`tapegrad.testing.op_db`) that drives the op tests."""
from .op_db import (Attr, NoGrad, OpInfo, SampleInput, expected_node_name_differences, make_tensors,
                    not_ops, op_db, op_db_by_name)

__all__ = ["OpInfo", "SampleInput", "NoGrad", "Attr", "op_db", "op_db_by_name", "make_tensors",
           "expected_node_name_differences", "not_ops"]
