"""checkpoint_roundtrip with ocp.PyTreeCheckpointer over nnx.to_pure_dict, restored into a concrete fresh model with replace_by_pure_dict."""
import os

import jax
import numpy as np
import orbax.checkpoint as ocp
from flax import nnx


def save_model(model, path):
    pure = nnx.to_pure_dict(nnx.state(model))
    ocp.PyTreeCheckpointer().save(os.path.abspath(path), jax.tree.map(np.asarray, pure))


def restore_model(path, make_model):
    model = make_model()
    state = nnx.state(model)
    pure = ocp.PyTreeCheckpointer().restore(os.path.abspath(path))
    nnx.replace_by_pure_dict(state, pure)
    nnx.update(model, state)
    return model
