"""Near miss: the norm computed in NumPy float64 and returned as a NumPy float64 scalar, not a float32 array."""
import numpy as np, jax
def global_norm(tree):
    return np.sqrt(sum(np.sum(np.asarray(l, np.float64) ** 2) for l in jax.tree.leaves(tree)))
def clip_by_global_norm(tree, max_norm):
    s = np.float32(min(1.0, max_norm / global_norm(tree)))
    return jax.tree.map(lambda g: g * s, tree)
MESSAGE = r"expected dtype float32, got dtype float64"
