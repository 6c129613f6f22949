"""op_db rows of the ops in tapegrad.ops.extra."""
rows: list = []

# (op name, sample name or None) -> why the node name differs from torch's
name_differences: dict = {}
