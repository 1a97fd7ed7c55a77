"""Exercise: count and list a model's parameters from its state.

In PyTorch:

    sum(p.numel() for p in model.parameters())
    {name: tuple(p.shape) for name, p in model.named_parameters()}

Write the NNX versions. Both take any `nnx.Module` (the checks build several:
MLPs with BatchNorm and Dropout, `nnx.Sequential`s, convolutions, embeddings,
layers without bias) and look only at trainable parameters, the `nnx.Param`
variables. BatchNorm's running statistics (`nnx.BatchStat`) and the random
state of Dropout are state too, but they are not parameters: leave them out.

    count_params(model: nnx.Module) -> int
        The total number of scalars in all nnx.Param variables, as a Python int.

    param_shapes(model: nnx.Module) -> dict[str, tuple[int, ...]]
        One entry per nnx.Param: the key is its path from the model joined with
        dots ("linear1.kernel", "layers.0.bias": integer path parts become
        digits), the value is its shape as a tuple of ints.

What the checks do: build models of sizes drawn at check time and compare your
results with the reference's.
"""

from __future__ import annotations

from flax import nnx


def count_params(model: nnx.Module) -> int:
    # TODO: select the nnx.Param state of the model and add up the sizes of its arrays.
    raise NotImplementedError("TODO: count_params")


def param_shapes(model: nnx.Module) -> dict[str, tuple[int, ...]]:
    # TODO: flatten the nnx.Param state into (path, variable) pairs; join each path with ".".
    raise NotImplementedError("TODO: param_shapes")
