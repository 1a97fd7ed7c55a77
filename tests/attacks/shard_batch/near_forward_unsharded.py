"""Near miss: forward_sharded runs the model on the whole NumPy batch, never sharded."""

MESSAGE = r"Shard the batch"

import jax
import numpy as np
from flax import nnx
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def data_mesh() -> Mesh:
    return jax.make_mesh((len(jax.devices()),), ("data",))


def shard_batch(x: np.ndarray, mesh: Mesh) -> jax.Array:
    return jax.device_put(x, NamedSharding(mesh, P("data")))


def forward_sharded(model: nnx.Module, x: np.ndarray, mesh: Mesh) -> np.ndarray:
    out = nnx.jit(lambda m, v: m(v))(model, x)
    return np.asarray(out)
