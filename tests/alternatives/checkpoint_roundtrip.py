"""Another correct checkpoint_roundtrip: one .npz file of the flat state, no Orbax."""

import os

import jax.numpy as jnp
import numpy as np
from flax import nnx


def save_model(model, path):
    os.makedirs(path)
    flat = {"/".join(map(str, key)): np.asarray(value) for key, value in nnx.to_flat_state(nnx.state(model))}
    np.savez(os.path.join(path, "state.npz"), **flat)


def restore_model(path, make_model):
    model = make_model()
    state = nnx.state(model)
    with np.load(os.path.join(path, "state.npz")) as data:
        for key, variable in nnx.to_flat_state(state):
            variable[...] = jnp.asarray(data["/".join(map(str, key))])
    nnx.update(model, state)
    return model
