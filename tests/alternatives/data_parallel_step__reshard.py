"""data_parallel_step with the mesh set as context: replicate reshards every array of
the state to PartitionSpec() with jax.sharding.reshard, and the batch is placed with
jax.device_put and a bare PartitionSpec("data")."""

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


def replicate(model, optimizer, mesh):
    state = nnx.state((model, optimizer))
    with jax.set_mesh(mesh):
        nnx.update((model, optimizer), jax.tree.map(lambda a: jax.sharding.reshard(a, P()), state))


def data_parallel_step(model, optimizer, x, y, mesh):
    with jax.set_mesh(mesh):
        x, y = jax.device_put((x, y), P("data"))
        return train_step(model, optimizer, x, y)
