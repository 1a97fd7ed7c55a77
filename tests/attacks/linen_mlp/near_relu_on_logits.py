"""Near miss: a ReLU after the last Dense as well, so the logits are never negative."""
import flax.linen as nn
import jax
MESSAGE = r"apply"
class MLP(nn.Module):
    hidden: int = 64
    @nn.compact
    def __call__(self, x):
        return nn.relu(nn.Dense(1)(nn.relu(nn.Dense(self.hidden)(x))))
def count_params(params):
    return sum(int(p.size) for p in jax.tree.leaves(params))
