"""shard_batch with a Mesh built by hand from a NumPy array of devices, a
PartitionSpec naming every axis, jax.jit with in_shardings for the forward pass,
and jax.device_get to gather the result."""

import jax
import numpy as np
from flax import nnx
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def data_mesh():
    return Mesh(np.asarray(jax.devices()).reshape(-1), axis_names=("data",))


def shard_batch(x, mesh):
    return jax.device_put(np.asarray(x), NamedSharding(mesh, P("data", *(None,) * (np.ndim(x) - 1))))


def forward_sharded(model, x, mesh):
    graphdef, state = nnx.split(model)
    rows = NamedSharding(mesh, P("data", None))

    @jax.jit
    def forward(state, v):
        return nnx.merge(graphdef, state)(jax.lax.with_sharding_constraint(v, rows))

    return np.asarray(jax.device_get(forward(state, shard_batch(x, mesh))))
