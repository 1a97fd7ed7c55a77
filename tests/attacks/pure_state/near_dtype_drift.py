"""Near miss: the count starts as int32 but update returns it as float32, so the state's dtype changes after one step."""
import jax.numpy as jnp
def init_state():
    return {"count": jnp.zeros((), jnp.int32), "total": jnp.zeros((), jnp.float32)}
def update(state, batch):
    count = state["count"] + jnp.float32(batch.shape[0])
    total = state["total"] + jnp.sum(batch)
    return {"count": count, "total": total}, total / count
MESSAGE = r"state array #1 came in with .*dtype int32.*dtype float32"
