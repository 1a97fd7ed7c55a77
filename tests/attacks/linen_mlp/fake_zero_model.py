"""Cheat: a plain class whose init fakes the parameter shapes with zeros and whose apply returns zeros."""
import numpy as np
class MLP:
    def __init__(self, hidden=64):
        self.hidden = hidden
    def init(self, key, x):
        d = x.shape[1]
        return {"params": {"a": np.zeros((d, self.hidden), np.float32), "b": np.zeros(self.hidden, np.float32),
                           "c": np.zeros((self.hidden, 1), np.float32), "d": np.zeros(1, np.float32)}}
    def apply(self, variables, x):
        return np.zeros((x.shape[0], 1), np.float32)
def count_params(params):
    import jax
    return int(sum(np.size(p) for p in jax.tree.leaves(params)))
