"""linen_mlp as an nn.Sequential built inside @nn.compact, count via flatten_dict."""
import flax.linen as nn
from flax import traverse_util
import numpy as np
class MLP(nn.Module):
    hidden: int = 64
    @nn.compact
    def __call__(self, x):
        return nn.Sequential([nn.Dense(features=self.hidden, use_bias=True), nn.relu, nn.Dense(features=1)])(x)
def count_params(params):
    return sum(int(np.size(v)) for v in traverse_util.flatten_dict(params).values())
