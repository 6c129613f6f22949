"""``tapegrad.optim``: optimizers shaped like ``torch.optim`` (same options, same update
arithmetic, same state_dict layout)."""
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam
from .adamw import AdamW
from . import lr_scheduler

__all__ = ["Optimizer", "SGD", "Adam", "AdamW"]
