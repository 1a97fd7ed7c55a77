"""Near miss: nnx_to_torch returns JAX arrays when it is given the JAX arrays of a trained model, not the float32 NumPy arrays torch.from_numpy needs."""

MESSAGE = r"NumPy"

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


def nnx_to_torch(params: dict, size: int) -> dict:
    # Each array keeps the type it came in with: NumPy stays NumPy, but the arrays of
    # nnx.to_pure_dict(nnx.state(model)) are JAX arrays, and so is everything returned for them.
    sd = {}
    for conv in ("conv1", "conv2"):
        sd[f"{conv}.weight"] = params[conv]["kernel"].transpose(3, 2, 0, 1)
        sd[f"{conv}.bias"] = params[conv]["bias"]
    for bn in ("bn1", "bn2"):
        sd[f"{bn}.weight"], sd[f"{bn}.bias"] = params[bn]["scale"], params[bn]["bias"]
        sd[f"{bn}.running_mean"], sd[f"{bn}.running_var"] = params[bn]["mean"], params[bn]["var"]
    kernel = params["fc"]["kernel"]
    side = size // 4
    sd["fc.weight"] = kernel.reshape(side, side, -1, kernel.shape[1]).transpose(3, 2, 0, 1).reshape(kernel.shape[1], -1)
    sd["fc.bias"] = params["fc"]["bias"]
    return sd


def predict(model: CNN, images: np.ndarray) -> jax.Array:
    # A view in evaluation mode: the caller's model keeps its own mode (model.eval() would leave it
    # there, and a later training step would silently stop updating BatchNorm).
    return nnx.view(model, use_running_average=True)(jnp.transpose(images, (0, 2, 3, 1)))
