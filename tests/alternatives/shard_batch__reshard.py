"""shard_batch with jax.sharding.reshard inside jax.set_mesh, and the forward pass as
jax.jit over nnx.split's state with explicit in_shardings (replicated parameters,
rows split over "data")."""

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def data_mesh():
    return jax.make_mesh((jax.device_count(),), ("data",))


def shard_batch(x, mesh):
    with jax.set_mesh(mesh):
        return jax.sharding.reshard(jnp.asarray(x), P("data"))


def forward_sharded(model, x, mesh):
    graphdef, state = nnx.split(model)
    forward = jax.jit(lambda s, v: nnx.merge(graphdef, s)(v),
                      in_shardings=(NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))))
    with jax.set_mesh(mesh):
        out = forward(state, shard_batch(x, mesh))
    return jax.device_get(out)
