"""Alternative: optax.global_norm and the optax.clip_by_global_norm transformation."""
import optax
def global_norm(tree):
    return optax.global_norm(tree)
def clip_by_global_norm(tree, max_norm):
    updates, _ = optax.clip_by_global_norm(max_norm).update(tree, optax.EmptyState())
    return updates
