"""Near miss: saves and restores only the nnx.Param variables, dropping the batch-norm statistics."""

import os

import jax.numpy as jnp
import numpy as np
from flax import nnx

MESSAGE = r"every variable|batch-norm statistics"


def save_model(model, path):
    os.makedirs(path)
    flat = {"/".join(map(str, k)): np.asarray(v) for k, v in nnx.to_flat_state(nnx.state(model, nnx.Param))}
    np.savez(os.path.join(path, "params.npz"), **flat)


def restore_model(path, make_model):
    model = make_model()
    state = nnx.state(model, nnx.Param)
    with np.load(os.path.join(path, "params.npz")) as data:
        for key, variable in nnx.to_flat_state(state):
            variable[...] = jnp.asarray(data["/".join(map(str, key))])
    nnx.update(model, state)
    return model
