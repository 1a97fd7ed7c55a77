"""Near miss: everything is saved, but restore copies back only the nnx.Param variables, so the batch-norm statistics are the fresh model's."""
import os

import orbax.checkpoint as ocp
from flax import nnx

MESSAGE = r"bit for bit|variables"


def save_model(model, path):
    ckpt = ocp.StandardCheckpointer()
    ckpt.save(os.path.abspath(path), nnx.state(model))
    ckpt.wait_until_finished()


def restore_model(path, make_model):
    model = make_model()
    graphdef, state = nnx.split(model)
    restored = ocp.StandardCheckpointer().restore(os.path.abspath(path), state)
    nnx.update(model, nnx.filter_state(restored, nnx.Param))
    return model
