"""Port a small PyTorch CNN to Flax NNX: layouts, the flatten order, BatchNorm.

`TorchCNN` below is the PyTorch model (do not change it). For images of
`size` x `size` pixels (size a multiple of 4) with `in_channels` channels:

    conv1: Conv2d(in_channels, 8, 3, padding=1) -> bn1: BatchNorm2d(8) -> ReLU -> MaxPool2d(2)
    conv2: Conv2d(8, 16, 3, stride=2, padding=1) -> bn2: BatchNorm2d(16) -> ReLU
    flatten -> fc: Linear(16 * (size // 4) ** 2, n_classes)

Your task: write

    class CNN(nnx.Module)          CNN(in_channels, n_classes, size, *, rngs=...)
    torch_to_nnx(state_dict, size) -> dict
    nnx_to_torch(params, size) -> dict
    predict(model, images) -> logits

- `CNN` is the same network in Flax NNX, with the attributes conv1, bn1,
  conv2, bn2, fc (nnx.Conv, nnx.BatchNorm, nnx.Linear; pooling with
  nnx.max_pool). `model(x)` takes NHWC images, x of shape
  (N, size, size, in_channels), and returns (N, n_classes) logits. It
  flattens its last feature map as it is, x.reshape(N, -1), in (H, W, C)
  order. Its padding must reproduce PyTorch's `padding=1` for both convs,
  including the stride-2 one. Its BatchNorm layers behave like PyTorch's
  defaults: eps 1e-5, and running statistics updated with PyTorch's
  momentum 0.1 (say it the Flax way), using whichever statistics the
  model's mode asks for (model.train() / model.eval()).
- `torch_to_nnx(state_dict, size)` converts a `TorchCNN.state_dict()` whose
  tensors are given as NumPy arrays (names as PyTorch writes them: 'conv1.weight',
  'bn1.running_mean', 'bn1.num_batches_tracked', ...) into a nested dict with
  the layout of `nnx.to_pure_dict(nnx.state(CNN(...)))`:
      {'conv1': {'kernel', 'bias'}, 'bn1': {'scale', 'bias', 'mean', 'var'},
       'conv2': {...}, 'bn2': {...}, 'fc': {'kernel', 'bias'}}
  with float32 JAX arrays, exactly these entries and no others. Conv kernels
  go from PyTorch's (out, in, kH, kW) to Flax's (kH, kW, in, out); the first
  Linear's rows must follow the NHWC flatten order of `CNN`, not PyTorch's
  (C, H, W).
- `nnx_to_torch(params, size)` goes the other way, to export a model trained
  in JAX: from a nested dict laid out like `torch_to_nnx`'s result (NumPy or
  JAX arrays) to a dict of float32 NumPy arrays with exactly the keys of
  `TorchCNN(...).state_dict()` except the two `num_batches_tracked` (load it
  with `strict=False`), in PyTorch's layouts. The lesson converts one way
  only: invert each step.
- `predict(model, images)` takes images the way a PyTorch DataLoader gives
  them, NCHW float32 of shape (N, in_channels, size, size), and returns the
  logits of `model` in evaluation mode (running statistics), shape
  (N, n_classes), float32. It must leave the caller's model in the mode it
  was in (lesson 7's `nnx.view`), and be a JAX function of the images: the
  check lowers `jax.jit(lambda images: predict(model, images))`.

What is checked (the PyTorch model gets fresh random weights and BatchNorm
statistics at every check; shapes come from a small set):
- the arrays returned by `torch_to_nnx` against the exact conversion of the
  state_dict (float32, rtol 1e-4, atol 1e-5), the whole nested structure,
  and the logits that the network computes with them against `TorchCNN`'s
  logits in eval mode; `nnx_to_torch` against the exact inverse;
- your `CNN`, loaded with correctly converted weights, as JAX programs:
  its forward passes are lowered with jax.jit in your process on shapes
  alone and run by the check on images it draws afterwards. `predict`
  against `TorchCNN`'s eval logits; the train-mode forward pass, before and
  after `predict`, against `TorchCNN`'s in train mode;
- after one train-mode call of your `CNN`, its eval-mode logits against
  `TorchCNN`'s with the running statistics the update must give: the running
  mean as PyTorch's, the running var 0.9 * old + 0.1 * (biased batch
  variance), which is what nnx.BatchNorm computes. PyTorch's running_var
  uses the unbiased batch variance (n / (n - 1) times larger, n = N * H * W),
  so it differs slightly, and that difference is expected.
"""

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


class CNN(nnx.Module):
    def __init__(self, in_channels: int, n_classes: int, size: int, *, rngs: nnx.Rngs):
        # padding=1 and not 'SAME': with stride 2 on an even size, 'SAME' pads (0, 1), PyTorch (1, 1).
        self.conv1 = nnx.Conv(in_channels, 8, (3, 3), padding=1, rngs=rngs)
        self.bn1 = nnx.BatchNorm(8, momentum=0.9, epsilon=1e-5, rngs=rngs)
        self.conv2 = nnx.Conv(8, 16, (3, 3), strides=2, padding=1, rngs=rngs)
        self.bn2 = nnx.BatchNorm(16, momentum=0.9, epsilon=1e-5, rngs=rngs)
        self.fc = nnx.Linear(16 * (size // 4) ** 2, n_classes, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        x = nnx.max_pool(nnx.relu(self.bn1(self.conv1(x))), window_shape=(2, 2), strides=(2, 2))
        x = nnx.relu(self.bn2(self.conv2(x)))
        return self.fc(x.reshape(x.shape[0], -1))


def torch_to_nnx(state_dict: dict[str, np.ndarray], size: int) -> dict:
    sd = {name: np.asarray(value) for name, value in state_dict.items()}
    out = {}
    for conv in ("conv1", "conv2"):
        out[conv] = {"kernel": sd[f"{conv}.weight"].transpose(2, 3, 1, 0), "bias": sd[f"{conv}.bias"]}
    for bn in ("bn1", "bn2"):
        out[bn] = {
            "scale": sd[f"{bn}.weight"],
            "bias": sd[f"{bn}.bias"],
            "mean": sd[f"{bn}.running_mean"],
            "var": sd[f"{bn}.running_var"],
        }
    # fc.weight's columns are indexed (c, h, w); the NHWC flatten indexes them (h, w, c).
    weight = sd["fc.weight"]
    side = size // 4
    kernel = weight.reshape(weight.shape[0], -1, side, side).transpose(2, 3, 1, 0).reshape(-1, weight.shape[0])
    out["fc"] = {"kernel": kernel, "bias": sd["fc.bias"]}
    # JAX arrays: nnx.update keeps NumPy arrays as they are, and a train-mode BatchNorm would write into them.
    return {layer: {k: jnp.asarray(v, dtype=jnp.float32) for k, v in leaves.items()} for layer, leaves in out.items()}


def nnx_to_torch(params: dict, size: int) -> dict[str, np.ndarray]:
    p = {layer: {k: np.asarray(v, dtype=np.float32) for k, v in leaves.items()} for layer, leaves in params.items()}
    sd = {}
    for conv in ("conv1", "conv2"):
        sd[f"{conv}.weight"] = p[conv]["kernel"].transpose(3, 2, 0, 1)  # (kH, kW, in, out) -> (out, in, kH, kW)
        sd[f"{conv}.bias"] = p[conv]["bias"]
    for bn in ("bn1", "bn2"):
        sd[f"{bn}.weight"], sd[f"{bn}.bias"] = p[bn]["scale"], p[bn]["bias"]
        sd[f"{bn}.running_mean"], sd[f"{bn}.running_var"] = p[bn]["mean"], p[bn]["var"]
    # The kernel's rows are indexed (h, w, c); PyTorch's flatten wants the columns (c, h, w).
    kernel = p["fc"]["kernel"]
    side = size // 4
    sd["fc.weight"] = kernel.reshape(side, side, -1, kernel.shape[1]).transpose(3, 2, 0, 1).reshape(kernel.shape[1], -1)
    sd["fc.bias"] = p["fc"]["bias"]
    return {name: np.ascontiguousarray(value) for name, value in sd.items()}


def predict(model: CNN, images: np.ndarray) -> jax.Array:
    # A view in evaluation mode: the caller's model keeps its own mode (model.eval() would leave it
    # there, and a later training step would silently stop updating BatchNorm).
    return nnx.view(model, use_running_average=True)(jnp.transpose(images, (0, 2, 3, 1)))
