"""nan_hunt with a custom_jvp square root whose derivative is 0 at 0 (x * rsqrt of the guarded sum), and a check with any()."""
import jax
import jax.numpy as jnp
from jax.experimental import checkify


@jax.custom_jvp
def _sqrt0(s):
    return jnp.sqrt(s)


@_sqrt0.defjvp
def _sqrt0_jvp(primals, tangents):
    (s,), (ds,) = primals, tangents
    out = jnp.sqrt(s)
    return out, jnp.where(s > 0, ds / (2.0 * jnp.where(s > 0, out, 1.0)), 0.0)


def safe_normalize(x):
    r = _sqrt0(jnp.sum(jnp.square(x), axis=-1))[..., None]
    return x * jnp.where(r > 0, 1.0 / jnp.where(r > 0, r, 1.0), 0.0)


def checked_entropy(p):
    checkify.check(~jnp.any(p < 0), "checked_entropy: negative probability")
    logs = jnp.log(jnp.where(p == 0, 1.0, p))
    return -(p * logs).sum(-1)
