"""A data-parallel training step: the same result as one device, over a mesh.

PyTorch equivalent (DistributedDataParallel):
    model = DDP(model.to(rank), device_ids=[rank])   # weights replicated
    sampler = DistributedSampler(dataset)            # each rank its slice
    loss = loss_fn(model(x_slice), y_slice)
    loss.backward()                                  # gradients all-reduced
    optimizer.step()

In JAX there are no ranks: one program sees the whole batch, split over the
devices by its sharding, and the compiler inserts the all-reduce.

Your task: write

    replicate(model, optimizer, mesh) -> None
        put every array of model and optimizer on all devices of `mesh`,
        fully replicated (PartitionSpec()), updating them in place.
    data_parallel_step(model, optimizer, x, y, mesh) -> loss
        shard x (B, d) and y (B,) along axis 0 over the mesh axis "data",
        then run the given `train_step` inside `with jax.set_mesh(mesh):`.
        Returns the loss (a scalar array).

`train_step` and `loss_fn` are given; do not change them. `mesh` is a 1-D
mesh over all devices with axis name "data"; B is divisible by its size.

The check runs your code with 4 forced CPU devices
(XLA_FLAGS=--xla_force_host_platform_device_count=4).

What is checked: after `replicate`, every parameter and optimizer array is
on all 4 devices, replicated; the step runs the model on the batch split by
rows over the 4 devices (as XLA compiled it); after a few data-parallel steps,
the losses, parameters and step count equal single-device training from the
same start.
"""

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
    # TODO: nnx.state((model, optimizer)) -> jax.device_put with a replicated
    # NamedSharding -> nnx.update.
    raise NotImplementedError("TODO: replicate")


def data_parallel_step(model, optimizer, x, y, mesh: Mesh) -> jax.Array:
    # TODO: shard x and y over "data"; call train_step under jax.set_mesh(mesh).
    raise NotImplementedError("TODO: data_parallel_step")
