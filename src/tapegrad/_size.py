"""Size: a tuple of ints that prints like torch's ``torch.Size([2, 3])``."""


class Size(tuple):
    """The shape of a tensor: a tuple of ints."""

    __slots__ = ()

    def __repr__(self):
        return f"tapegrad.Size({list(self)})"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        r = tuple.__getitem__(self, item)
        return Size(r) if isinstance(item, slice) else r
