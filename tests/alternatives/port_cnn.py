"""A second correct port: explicit (low, high) padding pairs, Flax's momentum written as 1 - PyTorch's,
the classifier's rows reordered by an index permutation, einsum for the kernels, JAX arrays out."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import torch
from flax import nnx


class TorchCNN(torch.nn.Module):
    """The PyTorch model to port. Do not change it."""

    def __init__(self, in_channels: int, n_classes: int, size: int):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(in_channels, 8, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.bn2 = torch.nn.BatchNorm2d(16)
        self.fc = torch.nn.Linear(16 * (size // 4) ** 2, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.nn.functional.max_pool2d(torch.relu(self.bn1(self.conv1(x))), 2)
        x = torch.relu(self.bn2(self.conv2(x)))
        return self.fc(x.flatten(1))


TORCH_MOMENTUM = 0.1
NAMES = {"weight": "scale", "bias": "bias", "running_mean": "mean", "running_var": "var"}


class CNN(nnx.Module):
    def __init__(self, in_channels: int, n_classes: int, size: int, *, rngs: nnx.Rngs):
        pad = ((1, 1), (1, 1))
        self.conv1 = nnx.Conv(in_channels, 8, kernel_size=(3, 3), strides=(1, 1), padding=pad, rngs=rngs)
        self.bn1 = nnx.BatchNorm(8, momentum=1.0 - TORCH_MOMENTUM, rngs=rngs)
        self.conv2 = nnx.Conv(8, 16, kernel_size=(3, 3), strides=(2, 2), padding=pad, rngs=rngs)
        self.bn2 = nnx.BatchNorm(16, momentum=1.0 - TORCH_MOMENTUM, rngs=rngs)
        self.fc = nnx.Linear(16 * (size // 4) ** 2, n_classes, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        x = jax.nn.relu(self.bn1(self.conv1(x)))
        x = nnx.max_pool(x, window_shape=(2, 2), strides=(2, 2), padding="VALID")
        x = jax.nn.relu(self.bn2(self.conv2(x)))
        return self.fc(jnp.reshape(x, (x.shape[0], -1)))


def torch_to_nnx(state_dict: dict[str, np.ndarray], size: int) -> dict:
    out: dict = {}
    for key, value in state_dict.items():
        layer, name = key.split(".")
        value = np.asarray(value)
        if name == "num_batches_tracked":
            continue
        if layer.startswith("conv"):
            entry = {"weight": ("kernel", lambda w: np.einsum("oihw->hwio", w))}.get(name, (name, lambda b: b))
        elif layer.startswith("bn"):
            entry = (NAMES[name], lambda v: v)
        elif name == "weight":
            side = size // 4
            # Column j of the NHWC flatten (h, w, c) is column perm[j] of PyTorch's (c, h, w) flatten.
            perm = np.arange(16 * side * side).reshape(16, side, side).transpose(1, 2, 0).reshape(-1)
            entry = ("kernel", lambda w: w[:, perm].T)
        else:
            entry = (name, lambda b: b)
        new_name, convert = entry
        out.setdefault(layer, {})[new_name] = jnp.asarray(convert(value), dtype=jnp.float32)
    return out


def predict(model: CNN, images: np.ndarray) -> jax.Array:
    # A clone in evaluation mode: the caller's model keeps its mode.
    evaluated = nnx.clone(model)
    evaluated.eval()
    return evaluated(jnp.moveaxis(jnp.asarray(images), 1, -1))


def nnx_to_torch(params: dict, size: int) -> dict[str, np.ndarray]:
    """einsum spells each layout change out."""
    p = jax.tree.map(lambda v: np.asarray(v, np.float32), params)
    sd = {}
    for conv in ("conv1", "conv2"):
        sd[f"{conv}.weight"] = np.einsum("hwio->oihw", p[conv]["kernel"])
        sd[f"{conv}.bias"] = p[conv]["bias"]
    for bn in ("bn1", "bn2"):
        sd.update({f"{bn}.weight": p[bn]["scale"], f"{bn}.bias": p[bn]["bias"],
                   f"{bn}.running_mean": p[bn]["mean"], f"{bn}.running_var": p[bn]["var"]})
    s = size // 4
    kernel = p["fc"]["kernel"]
    sd["fc.weight"] = np.einsum("hwco->ochw", kernel.reshape(s, s, 16, -1)).reshape(kernel.shape[1], -1)
    sd["fc.bias"] = p["fc"]["bias"]
    return {k: np.ascontiguousarray(v, np.float32) for k, v in sd.items()}
