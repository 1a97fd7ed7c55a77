"""Near miss: everything is placed on a mesh of its own over the first 2 devices, not on the 4-device mesh it is given."""

MESSAGE = r"not fully replicated|Shard x and y"

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


def _half(mesh: Mesh) -> Mesh:
    return jax.make_mesh((2,), ("data",), devices=mesh.devices.flat[:2])


def replicate(model: nnx.Module, optimizer: nnx.Optimizer, mesh: Mesh) -> None:
    state = nnx.state((model, optimizer))
    nnx.update((model, optimizer), jax.device_put(state, NamedSharding(_half(mesh), P())))


def data_parallel_step(model, optimizer, x, y, mesh: Mesh) -> jax.Array:
    half = _half(mesh)
    batch = NamedSharding(half, P("data"))
    x, y = jax.device_put(x, batch), jax.device_put(y, batch)
    with jax.set_mesh(half):
        return train_step(model, optimizer, x, y)
