"""shard_batch with jax.device_put(x, PartitionSpec("data")) inside jax.set_mesh (the
mesh comes from the context), and nnx.jit over a module-level forward that names
the model's input layout with jax.lax.with_sharding_constraint."""

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def data_mesh():
    return jax.make_mesh((len(jax.devices()),), ("data",))


def shard_batch(x, mesh):
    with jax.set_mesh(mesh):
        return jax.device_put(x, P("data"))


@nnx.jit
def _forward(model, v):
    return model(jax.lax.with_sharding_constraint(v, P("data")))


def forward_sharded(model, x, mesh):
    with jax.set_mesh(mesh):
        out = _forward(model, shard_batch(x, mesh))
    return np.asarray(out)
