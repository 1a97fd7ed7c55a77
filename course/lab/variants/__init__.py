"""The training variants. Each module has `train(ctx: TrainContext) -> np.ndarray`
returning the logits of the test passengers; it builds the 9→64→1 ReLU MLP,
trains it with binary cross-entropy on logits and Adam, and sets the clock
marks on `ctx` (see `course.lab.context`).

The registry's order is the ladder the lab shows, from the article's PyTorch
loop to the fully fused one; `VariantInfo.rung` says in one line what each rung
does differently (the lab prints those lines as the key to the names).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from course.i18n import N_


@dataclass(frozen=True)
class VariantInfo:
    # English, as the JSON report keeps it (marked for translation; shown with `variant_label`).
    label: str
    module: str
    function: str
    input_path: str
    # False for eager code: nothing is compiled, so there is no compile time to show.
    compiled: bool = True
    # One line on what this rung of the ladder changes (marked for translation; shown with `_()`).
    rung: str = ""


REGISTRY: dict[str, VariantInfo] = {
    "torch_eager": VariantInfo(
        N_("PyTorch nn.Module, eager loop"), "course.lab.variants.torch_eager", "train",
        "DataLoader", compiled=False,
        rung=N_("PyTorch eager: the article's starting point")),
    "nnx_eager": VariantInfo(
        N_("Flax NNX, eager (no jit)"), "course.lab.variants.nnx_mlp", "train_eager",
        "DataLoader+NumPy collate", compiled=False,
        rung=N_("NNX, no jit: each JAX op dispatched from Python")),
    "nnx_jit": VariantInfo(
        N_("Flax NNX, @nnx.jit step"), "course.lab.variants.nnx_mlp", "train_nnx_jit",
        "NumPy",
        rung=N_("@nnx.jit: compiled, but a Python graph walk per call")),
    "nnx_tree": VariantInfo(
        N_("Flax NNX, tree mode: nnx.jit_partial"), "course.lab.variants.nnx_mlp", "train_tree",
        "NumPy",
        rung=N_("tree mode (graph=False): state flattened once, no walk")),
    "nnx_split_merge": VariantInfo(
        N_("Flax NNX, split/merge + jax.jit"), "course.lab.variants.nnx_mlp", "train_split_merge",
        "NumPy",
        rung=N_("split once, jax.jit on the state: no NNX work per call")),
    "linen_jit": VariantInfo(
        N_("Flax Linen, jax.jit step"), "course.lab.variants.linen_mlp", "train",
        "NumPy",
        rung=N_("Linen: plain parameter pytrees, jax.jit on the step")),
    "jax_scan": VariantInfo(
        N_("lax.scan over batches and epochs"), "course.lab.variants.scan_loop", "train",
        N_("on device"),
        rung=N_("lax.scan over the whole loop: no Python per step")),
}


def ladder_lines(names: list[str]) -> list[str]:
    """`nnx_tree         tree mode (graph=False): ...`: what each variant's rung changes, one line each."""
    from course.i18n import _

    width = max((len(n) for n in names), default=0)
    return [f"{name:<{width}}  {_(REGISTRY[name].rung)}" for name in names if name in REGISTRY]


def variant_label(name: str, label: str | None = None) -> str:
    """What `name` is, in the language in use; `label` (a report's English) for a name not in the registry."""
    from course.i18n import _

    info = REGISTRY.get(name)
    return _(info.label) if info is not None else (label if label is not None else name)


def load(name: str):
    info = REGISTRY[name]
    return getattr(importlib.import_module(info.module), info.function)
