"""Near miss: x is split by rows over "data" but the labels y are left unsharded."""

MESSAGE = r"Shard x and y"

import jax
import optax
from flax import nnx
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def loss_fn(model: nnx.Module, x: jax.Array, y: jax.Array) -> jax.Array:
    logits = model(x).squeeze(-1)
    return optax.sigmoid_binary_cross_entropy(logits, y).mean()


@nnx.jit
def train_step(model: nnx.Module, optimizer: nnx.Optimizer, x: jax.Array, y: jax.Array) -> jax.Array:
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
    optimizer.update(model, grads)
    return loss


def replicate(model: nnx.Module, optimizer: nnx.Optimizer, mesh: Mesh) -> None:
    state = nnx.state((model, optimizer))
    nnx.update((model, optimizer), jax.device_put(state, NamedSharding(mesh, P())))


def data_parallel_step(model, optimizer, x, y, mesh: Mesh) -> jax.Array:
    x = jax.device_put(x, NamedSharding(mesh, P("data")))
    with jax.set_mesh(mesh):
        return train_step(model, optimizer, x, y)
