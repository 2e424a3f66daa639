"""A model for `autotune workloads --from-torch tiny_model:build` in autotune's tests: two
Linear layers on 3x4x4 inputs, and one parameter that never gets a gradient."""
import torch


class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(48, 16),
                                        torch.nn.ReLU(), torch.nn.Linear(16, 5))
        self.unused = torch.nn.Parameter(torch.zeros(7))

    def forward(self, x):
        return self.body(x)


def build():
    return Tiny()


def not_a_model():
    return 42
