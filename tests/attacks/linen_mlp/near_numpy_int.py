"""Near miss: count_params returns a NumPy integer, not a Python int."""
import flax.linen as nn
import jax
import numpy as np
MESSAGE = r"int"
class MLP(nn.Module):
    hidden: int = 64
    @nn.compact
    def __call__(self, x):
        return nn.Dense(1)(nn.relu(nn.Dense(self.hidden)(x)))
def count_params(params):
    return np.sum([np.size(p) for p in jax.tree.leaves(params)])
