"""Another correct shard_batch: a Mesh built from the device list, PartitionSpecs under jax.set_mesh,
and jax.device_get to gather."""

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def data_mesh():
    return Mesh(np.array(jax.devices()), ("data",))


def shard_batch(x, mesh):
    spec = P("data", *([None] * (np.ndim(x) - 1)))
    return jax.device_put(x, NamedSharding(mesh, spec))


def forward_sharded(model, x, mesh):
    xs = shard_batch(x, mesh)
    with jax.set_mesh(mesh):
        out = jax.jit(lambda v: model(v))(xs)
    return jax.device_get(out)
