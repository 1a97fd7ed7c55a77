"""Near miss: the running mean averages the batch means, ignoring how many values each batch had."""
import jax.numpy as jnp
def init_state():
    return {"batches": jnp.zeros((), jnp.float32), "sum_means": jnp.zeros((), jnp.float32)}
def update(state, batch):
    b = state["batches"] + 1
    s = state["sum_means"] + jnp.mean(batch)
    return {"batches": b, "sum_means": s}, s / b
MESSAGE = r"the mean returned by .*values differ"
