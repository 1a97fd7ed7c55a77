"""The training variants. Each module has `train(ctx: TrainContext) -> np.ndarray`
returning the logits of the test passengers; it builds the 9→64→1 ReLU MLP,
trains it with binary cross-entropy on logits and Adam, and sets the clock
marks on `ctx` (see `course.lab.context`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class VariantInfo:
    label: str
    module: str
    function: str
    input_path: str
    # False for eager code: nothing is compiled, so there is no compile time to show.
    compiled: bool = True


REGISTRY: dict[str, VariantInfo] = {
    "torch_eager": VariantInfo(
        "PyTorch nn.Module, eager loop", "course.lab.variants.torch_eager", "train",
        "DataLoader", compiled=False),
    "nnx_eager": VariantInfo(
        "Flax NNX, eager (no jit)", "course.lab.variants.nnx_mlp", "train_eager",
        "DataLoader+NumPy collate", compiled=False),
    "nnx_jit": VariantInfo(
        "Flax NNX, @nnx.jit step", "course.lab.variants.nnx_mlp", "train_nnx_jit",
        "NumPy"),
    "nnx_split_merge": VariantInfo(
        "Flax NNX, split/merge + jax.jit", "course.lab.variants.nnx_mlp", "train_split_merge",
        "NumPy"),
    "linen_jit": VariantInfo(
        "Flax Linen, jax.jit step", "course.lab.variants.linen_mlp", "train",
        "NumPy"),
    "jax_scan": VariantInfo(
        "lax.scan over batches and epochs", "course.lab.variants.scan_loop", "train",
        "on device"),
}


def load(name: str):
    info = REGISTRY[name]
    return getattr(importlib.import_module(info.module), info.function)
