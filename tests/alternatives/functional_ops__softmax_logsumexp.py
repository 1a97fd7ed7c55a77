"""Alternative: softmax as exp(x - logsumexp(x, axis)) (the log-softmax route, stable: finite for +-1000;
at |x| ~ 3000 float32 rounding of the logsumexp gives ~1.2e-4 relative error)."""
import jax
import jax.numpy as jnp


def relu(x):
    return jnp.maximum(x, 0)


def softmax(x, axis=-1):
    return jnp.exp(x - jax.nn.logsumexp(x, axis=axis, keepdims=True))


def binary_cross_entropy_with_logits(logits, targets):
    return jnp.mean(jnp.maximum(logits, 0) - logits * targets + jnp.log1p(jnp.exp(-jnp.abs(logits))))
