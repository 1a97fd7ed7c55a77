"""checkpoint_roundtrip with pickle: the state's leaves as NumPy arrays in one file, put back with jax.tree.unflatten."""
import os
import pickle

import jax
import numpy as np
from flax import nnx


def save_model(model, path):
    os.makedirs(path, exist_ok=True)
    leaves = [np.asarray(v) for v in jax.tree.leaves(nnx.state(model))]
    with open(os.path.join(path, "state.pkl"), "wb") as f:
        pickle.dump(leaves, f)


def restore_model(path, make_model):
    model = make_model()
    graphdef, state = nnx.split(model)
    with open(os.path.join(path, "state.pkl"), "rb") as f:
        leaves = pickle.load(f)
    state = jax.tree.unflatten(jax.tree.structure(state), [jax.numpy.asarray(v) for v in leaves])
    return nnx.merge(graphdef, state)
