"""clip_gradient with jax.custom_vjp and limit as an ordinary argument, its cotangent given back as None."""
import jax
import jax.numpy as jnp


@jax.custom_vjp
def clip_gradient(x, limit):
    return x


def fwd(x, limit):
    return x, limit


def bwd(limit, g):
    return jnp.clip(g, -limit, limit), None


clip_gradient.defvjp(fwd, bwd)
