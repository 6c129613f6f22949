"""op_db rows of the ops in tapegrad.ops.pooling."""
rows: list = []

# (op name, sample name or None) -> why the node name differs from torch's
name_differences: dict = {}
