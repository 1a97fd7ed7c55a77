"""Near miss: forward_sharded reshards the batch to whole and runs it through jax.shard_map with in_specs P(), so every device runs the model on every row."""

MESSAGE = r"sharded batch as it is"

import jax
import numpy as np
from flax import nnx
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def data_mesh() -> Mesh:
    return jax.make_mesh((len(jax.devices()),), ("data",))


def shard_batch(x: np.ndarray, mesh: Mesh) -> jax.Array:
    return jax.device_put(x, NamedSharding(mesh, P("data")))


@nnx.jit
def _forward(model: nnx.Module, x: jax.Array) -> jax.Array:
    graphdef, state = nnx.split(model)

    def local(state, rows):
        return nnx.merge(graphdef, state)(rows)

    return jax.shard_map(local, in_specs=(P(), P()), out_specs=P(), check_vma=False)(state, jax.sharding.reshard(x, P()))


def forward_sharded(model: nnx.Module, x: np.ndarray, mesh: Mesh) -> np.ndarray:
    xs = shard_batch(x, mesh)
    with jax.set_mesh(mesh):
        out = _forward(model, xs)
    return np.asarray(out)
