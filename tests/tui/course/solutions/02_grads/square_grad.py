"""The gradient of sum(x ** 2)."""
import jax
import jax.numpy as jnp


def square_grad(x):
    return jax.grad(lambda v: jnp.sum(v ** 2))(jnp.asarray(x))
