"""Split a batch over several devices and compute on it.

PyTorch equivalent (DataParallel-style scatter, then gather):
    chunks = x.chunk(n_devices)                       # one per GPU
    outs = [model_on[i](c.to(f"cuda:{i}")) for i, c in enumerate(chunks)]
    out = torch.cat([o.cpu() for o in outs])

Your task: write

    data_mesh() -> Mesh
        a 1-D mesh over ALL of jax.devices(), with the axis name "data".
    shard_batch(x, mesh) -> jax.Array
        x (a NumPy array (B, ...), B divisible by the number of devices)
        placed on the mesh so that axis 0 is split evenly over "data" and
        the other axes are whole: device k holds rows k*B/n .. (k+1)*B/n.
    forward_sharded(model, x, mesh) -> np.ndarray
        shard x, run `model` on it with nnx.jit inside `with jax.set_mesh(mesh):`
        and return the whole (B, ...) result as one NumPy array on the host.

The check runs your code with 4 forced CPU devices
(XLA_FLAGS=--xla_force_host_platform_device_count=4).

What is checked: the mesh's size and axis name, the shape and device of
every shard, that the values are unchanged, that the model in
forward_sharded really runs on the sharded batch (each device holding its
rows, as XLA compiled it), and the model's output against the same model run
without sharding, for varied batch sizes and features.
"""

import jax
import numpy as np
from flax import nnx
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def data_mesh() -> Mesh:
    # TODO: jax.make_mesh over all devices, axis name "data".
    raise NotImplementedError("TODO: data_mesh")


def shard_batch(x: np.ndarray, mesh: Mesh) -> jax.Array:
    # TODO: jax.device_put with a NamedSharding that splits axis 0 over "data".
    raise NotImplementedError("TODO: shard_batch")


def forward_sharded(model: nnx.Module, x: np.ndarray, mesh: Mesh) -> np.ndarray:
    # TODO: shard, run the model under jax.set_mesh(mesh), bring the result home.
    raise NotImplementedError("TODO: forward_sharded")
