"""The layers: Module and its subclasses."""
from .module import Module
from .linear import Identity, Linear
from .activation import GELU, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from .container import ModuleDict, ModuleList, Sequential
from .conv import Conv2d
from .dropout import Dropout
from .flatten import Flatten
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss,
                   MSELoss, NLLLoss, PoissonNLLLoss, SmoothL1Loss)
from .pooling import MaxPool2d

__all__ = ["Module", "Identity", "Linear", "ReLU", "Tanh", "Sigmoid", "GELU", "Softmax",
           "LogSoftmax", "Sequential", "ModuleList", "ModuleDict", "Conv2d", "MaxPool2d",
           "Dropout", "Flatten", "CrossEntropyLoss", "MSELoss", "NLLLoss", "BCELoss",
           "BCEWithLogitsLoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "KLDivLoss",
           "PoissonNLLLoss"]
