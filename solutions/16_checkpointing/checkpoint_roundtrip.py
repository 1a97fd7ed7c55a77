"""Save an NNX model with Orbax and restore it into a fresh model (reference solution)."""

from collections.abc import Callable
from pathlib import Path

import orbax.checkpoint as ocp
from flax import nnx


def save_model(model: nnx.Module, path: str) -> None:
    checkpointer = ocp.StandardCheckpointer()
    checkpointer.save(Path(path).absolute(), nnx.state(model))
    checkpointer.wait_until_finished()


def restore_model(path: str, make_model: Callable[[], nnx.Module]) -> nnx.Module:
    # Shapes and dtypes only: no memory for a throw-away random init.
    abstract = nnx.eval_shape(make_model)
    graphdef, abstract_state = nnx.split(abstract)
    state = ocp.StandardCheckpointer().restore(Path(path).absolute(), abstract_state)
    return nnx.merge(graphdef, state)
