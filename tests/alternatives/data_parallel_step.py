"""Another correct data_parallel_step: replicate leaf by leaf with jax.tree.map, shard under
jax.set_mesh with a bare PartitionSpec."""

import jax
import optax
from flax import nnx
from jax.sharding import NamedSharding, PartitionSpec as P


def loss_fn(model, x, y):
    logits = model(x).squeeze(-1)
    return optax.sigmoid_binary_cross_entropy(logits, y).mean()


@nnx.jit
def train_step(model, optimizer, x, y):
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
    optimizer.update(model, grads)
    return loss


def replicate(model, optimizer, mesh):
    everywhere = NamedSharding(mesh, P())
    for obj in (model, optimizer):
        state = nnx.state(obj)
        nnx.update(obj, jax.tree.map(lambda a: jax.device_put(a, everywhere), state))


def data_parallel_step(model, optimizer, x, y, mesh):
    with jax.set_mesh(mesh):
        x = jax.device_put(x, P("data"))
        y = jax.device_put(y, P("data"))
        return train_step(model, optimizer, x, y)
