"""Near miss: clip_by_global_norm rescales the leaves inside the dicts and lists it is given (PyTorch's in-place habit) and returns them."""
import jax, jax.numpy as jnp
def global_norm(tree):
    return jnp.sqrt(sum(jnp.sum(l ** 2) for l in jax.tree.leaves(tree)))
def _scale(node, s):
    if isinstance(node, dict):
        for k in node:
            node[k] = _scale(node[k], s)
        return node
    if isinstance(node, list):
        for i, v in enumerate(node):
            node[i] = _scale(v, s)
        return node
    return node * s
def clip_by_global_norm(tree, max_norm):
    if not isinstance(tree, (dict, list)):
        return jax.tree.map(lambda g: g * jnp.minimum(1.0, max_norm / global_norm(tree)), tree)
    return _scale(tree, jnp.minimum(1.0, max_norm / global_norm(tree)))
MESSAGE = r"changed the tree it was given"
