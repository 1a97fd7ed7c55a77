"""Alternative: a flax.struct.dataclass state updated with .replace()."""
import jax, jax.numpy as jnp
from flax import struct
@struct.dataclass
class S:
    n: jax.Array
    s: jax.Array
def init_state():
    return S(n=jnp.array(0.0, jnp.float32), s=jnp.array(0.0, jnp.float32))
def update(state, batch):
    new = state.replace(n=state.n + batch.shape[0], s=state.s + jnp.sum(batch))
    return new, new.s / new.n
