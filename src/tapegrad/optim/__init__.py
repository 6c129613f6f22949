"""``tapegrad.optim``: optimizers shaped like ``torch.optim`` (same options, same update
arithmetic, same state_dict layout)."""
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam
from .adamw import AdamW
from .rmsprop import RMSprop
from .adagrad import Adagrad
from .adamax import Adamax
from .nadam import NAdam
from .radam import RAdam
from .adadelta import Adadelta
from .rprop import Rprop
from .asgd import ASGD
from .lbfgs import LBFGS
from . import lr_scheduler

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "NAdam",
           "RAdam", "Adadelta", "Rprop", "ASGD", "LBFGS",
           "lr_scheduler"]
