"""The layers: Module and its subclasses."""
from .module import Module
from .linear import Identity, Linear
from .activation import LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from .container import Sequential
from .flatten import Flatten
from .loss import CrossEntropyLoss, MSELoss, NLLLoss

__all__ = ["Module", "Identity", "Linear", "ReLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax",
           "Sequential", "Flatten", "CrossEntropyLoss", "MSELoss", "NLLLoss"]
