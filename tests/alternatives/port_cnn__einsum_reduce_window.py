"""port_cnn with list padding, pooling by jax.lax.reduce_window, the fc kernel built with np.einsum
from a (n_classes, C, H, W) view, jnp arrays returned, and predict switching to eval mode and back to the mode the model was in."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import torch
from flax import nnx


class TorchCNN(torch.nn.Module):
    def __init__(self, in_channels: int, n_classes: int, size: int):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(in_channels, 8, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.bn2 = torch.nn.BatchNorm2d(16)
        self.fc = torch.nn.Linear(16 * (size // 4) ** 2, n_classes)

    def forward(self, x):
        x = torch.nn.functional.max_pool2d(torch.relu(self.bn1(self.conv1(x))), 2)
        x = torch.relu(self.bn2(self.conv2(x)))
        return self.fc(x.flatten(1))


class CNN(nnx.Module):
    def __init__(self, in_channels, n_classes, size, *, rngs):
        self.conv1 = nnx.Conv(in_channels, 8, kernel_size=(3, 3), padding=[(1, 1), (1, 1)], rngs=rngs)
        self.bn1 = nnx.BatchNorm(8, momentum=1 - 0.1, epsilon=1e-5, rngs=rngs)
        self.conv2 = nnx.Conv(8, 16, kernel_size=(3, 3), strides=(2, 2), padding=[(1, 1), (1, 1)], rngs=rngs)
        self.bn2 = nnx.BatchNorm(16, momentum=1 - 0.1, epsilon=1e-5, rngs=rngs)
        self.fc = nnx.Linear(16 * (size // 4) ** 2, n_classes, rngs=rngs)

    def __call__(self, x):
        x = jax.nn.relu(self.bn1(self.conv1(x)))
        x = jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        x = jax.nn.relu(self.bn2(self.conv2(x)))
        return self.fc(x.reshape(x.shape[0], -1))


def torch_to_nnx(state_dict, size):
    sd = {k: np.asarray(v, np.float32) for k, v in state_dict.items()}
    side = size // 4
    fc = sd["fc.weight"].reshape(sd["fc.weight"].shape[0], 16, side, side)
    out = {
        "fc": {"kernel": jnp.asarray(np.einsum("ochw->hwco", fc).reshape(-1, fc.shape[0])),
               "bias": jnp.asarray(sd["fc.bias"])},
    }
    for conv in ("conv1", "conv2"):
        out[conv] = {"kernel": jnp.asarray(np.einsum("oikl->klio", sd[f"{conv}.weight"])),
                     "bias": jnp.asarray(sd[f"{conv}.bias"])}
    for bn in ("bn1", "bn2"):
        out[bn] = {"scale": jnp.asarray(sd[f"{bn}.weight"]), "bias": jnp.asarray(sd[f"{bn}.bias"]),
                   "mean": jnp.asarray(sd[f"{bn}.running_mean"]), "var": jnp.asarray(sd[f"{bn}.running_var"])}
    return out


def predict(model, images):
    was_training = not model.bn1.use_running_average
    model.eval()
    try:
        return model(jnp.moveaxis(jnp.asarray(images, jnp.float32), 1, -1))
    finally:
        if was_training:
            model.train()


def nnx_to_torch(params, size):
    """jnp.transpose and jnp.moveaxis, back to NumPy at the end."""
    sd = {}
    for conv in ("conv1", "conv2"):
        sd[conv + ".weight"] = jnp.transpose(jnp.asarray(params[conv]["kernel"]), (3, 2, 0, 1))
        sd[conv + ".bias"] = jnp.asarray(params[conv]["bias"])
    for bn in ("bn1", "bn2"):
        for theirs, ours in (("weight", "scale"), ("bias", "bias"), ("running_mean", "mean"), ("running_var", "var")):
            sd[f"{bn}.{theirs}"] = jnp.asarray(params[bn][ours])
    kernel = jnp.asarray(params["fc"]["kernel"])
    out = kernel.shape[1]
    s = size // 4
    sd["fc.weight"] = jnp.moveaxis(kernel.reshape(s, s, 16, out), (3, 2), (0, 1)).reshape(out, -1)
    sd["fc.bias"] = jnp.asarray(params["fc"]["bias"])
    return {k: np.asarray(v, dtype=np.float32) for k, v in sd.items()}
