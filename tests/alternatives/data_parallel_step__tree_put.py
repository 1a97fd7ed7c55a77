"""data_parallel_step replicating with one jax.device_put over the (model,
optimizer) state tree, and sharding the batch as one (x, y) pytree."""

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
    graphdef, state = nnx.split((model, optimizer))
    nnx.update((model, optimizer), jax.device_put(state, NamedSharding(mesh, P())))


def data_parallel_step(model, optimizer, x, y, mesh):
    x, y = jax.device_put((x, y), NamedSharding(mesh, P("data")))
    with jax.set_mesh(mesh):
        return train_step(model, optimizer, x, y)
