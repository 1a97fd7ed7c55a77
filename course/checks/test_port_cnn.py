"""Checks for port_cnn: a PyTorch CNN's state_dict converted to Flax NNX, and the NNX CNN itself.

Evidence: the learner's process receives a state_dict (NumPy arrays of a TorchCNN
whose weights and BatchNorm statistics are drawn here, fresh) and returns the
converted arrays; it receives NCHW images and returns `predict`'s logits; it runs
one train-mode pass of its CNN and returns the logits and the running statistics.
The PyTorch model lives here: every expected value (the exact conversion, the
logits in eval and train mode, the BatchNorm update) is computed here, and so is
the diagnosis of what went wrong. Nothing expected is ever sent to the learner.
"""

from __future__ import annotations

import numpy as np

from course.engine.checking import fail

TIMEOUT = 90
SHAPES = [(2, 8, 3), (3, 12, 5)]  # (in_channels, size, n_classes): a small fixed set, so programs are reused;
# never one channel, where reshaping NCHW to NHWC happens to equal the transpose.
BATCH = 4
CONVS = ("conv1", "conv2")
BNS = ("bn1", "bn2")
LEAVES = {"conv1": ("kernel", "bias"), "bn1": ("scale", "bias", "mean", "var"),
          "conv2": ("kernel", "bias"), "bn2": ("scale", "bias", "mean", "var"), "fc": ("kernel", "bias")}
RTOL, ATOL = 1e-4, 1e-5


# --- probes (run in the learner's process; they only gather evidence) -------------------------

def probe_convert(module, state_dict, size):
    return module.torch_to_nnx(state_dict, size)


def probe_model(module, in_channels, n_classes, size, params, mode, x):
    """Build the learner's CNN, load `params`, then `predict(model, x)` (mode 'predict', x NCHW)
    or one train-mode call `model(x)` (mode 'train', x NHWC)."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from flax import nnx

    # Built abstractly (no initialisation to compute): every variable is then loaded from `params`.
    model = nnx.eval_shape(lambda: module.CNN(in_channels, n_classes, size, rngs=nnx.Rngs(0)))
    if not isinstance(model, nnx.Module):
        return {"load_error": f"CNN(...) built a {type(model).__name__}, not an nnx.Module"}
    state = nnx.state(model)
    info = {"structure": {".".join(map(str, path)): list(var.get_value().shape)
                          for path, var in nnx.to_flat_state(state)}}
    try:
        # JAX arrays: NNX keeps NumPy arrays as they are and would update them in place.
        nnx.replace_by_pure_dict(state, jax.tree.map(jnp.asarray, params))
        nnx.update(model, state)
    except Exception as exc:  # noqa: BLE001 - reported to the parent as evidence
        info["load_error"] = f"{type(exc).__name__}: {exc}"
        return info
    if mode == "predict":
        try:
            info["logits"] = module.predict(model, x)
        except Exception as exc:  # noqa: BLE001 - the parent names the likely mistake
            info["predict_error"] = f"{type(exc).__name__}: {exc}"
        return info
    model.train()
    info["logits"] = model(jnp.asarray(x))
    info["stats"] = nnx.to_pure_dict(nnx.state(model, nnx.BatchStat))
    return info


# --- the trusted side ----------------------------------------------------------------------------

def _case(rng):
    in_channels, size, n_classes = SHAPES[int(rng.integers(len(SHAPES)))]
    return in_channels, size, n_classes


def _state_dict(rng, in_channels, size, n_classes):
    """A TorchCNN state_dict with fresh weights and BatchNorm statistics, as NumPy arrays."""
    def w(*shape, fan_in):
        return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)

    feat = 16 * (size // 4) ** 2
    sd = {
        "conv1.weight": w(8, in_channels, 3, 3, fan_in=9 * in_channels),
        "conv1.bias": w(8, fan_in=9),
        "conv2.weight": w(16, 8, 3, 3, fan_in=72),
        "conv2.bias": w(16, fan_in=9),
        "fc.weight": w(n_classes, feat, fan_in=feat),
        "fc.bias": w(n_classes, fan_in=4),
    }
    for bn, c in (("bn1", 8), ("bn2", 16)):
        sd[f"{bn}.weight"] = rng.uniform(0.5, 1.5, c).astype(np.float32)
        sd[f"{bn}.bias"] = (0.2 * rng.standard_normal(c)).astype(np.float32)
        sd[f"{bn}.running_mean"] = (0.5 * rng.standard_normal(c)).astype(np.float32)
        sd[f"{bn}.running_var"] = rng.uniform(0.5, 2.0, c).astype(np.float32)
        sd[f"{bn}.num_batches_tracked"] = np.array(int(rng.integers(10, 1000)), dtype=np.int64)
    return sd


def _images(rng, in_channels, size):
    """NCHW images: smooth blobs plus noise, not centred, so BatchNorm has real work to do."""
    yy, xx = np.mgrid[0:size, 0:size] / size
    cy, cx = rng.uniform(0.2, 0.8, (2, BATCH, in_channels, 1, 1))
    blobs = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) * 20.0)
    return (blobs + 0.3 * rng.standard_normal(blobs.shape) + 0.5).astype(np.float32)


def _expected_params(sd, size):
    side = size // 4
    weight = sd["fc.weight"]
    out = {conv: {"kernel": sd[f"{conv}.weight"].transpose(2, 3, 1, 0), "bias": sd[f"{conv}.bias"]} for conv in CONVS}
    for bn in BNS:
        out[bn] = {"scale": sd[f"{bn}.weight"], "bias": sd[f"{bn}.bias"],
                   "mean": sd[f"{bn}.running_mean"], "var": sd[f"{bn}.running_var"]}
    kernel = weight.reshape(weight.shape[0], -1, side, side).transpose(2, 3, 1, 0).reshape(-1, weight.shape[0])
    out["fc"] = {"kernel": kernel, "bias": sd["fc.bias"]}
    return {layer: {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in leaves.items()} for layer, leaves in out.items()}


def _torch_forward(sd, x_nchw, *, train, conv2_same=False, capture=None, eps=1e-5):
    """TorchCNN's forward with the given weights; BatchNorm inputs go to `capture` if given."""
    import torch
    import torch.nn.functional as F

    t = {k: torch.from_numpy(np.array(v)) for k, v in sd.items()}
    stats = {bn: (t[f"{bn}.running_mean"].clone(), t[f"{bn}.running_var"].clone()) for bn in BNS}

    def bn(name, h):
        if capture is not None:
            capture[name] = h.detach().numpy().copy()
        mean, var = stats[name]
        return F.batch_norm(h, mean, var, t[f"{name}.weight"], t[f"{name}.bias"], training=train,
                            momentum=0.1, eps=eps)

    with torch.no_grad():
        h = F.conv2d(torch.from_numpy(x_nchw), t["conv1.weight"], t["conv1.bias"], padding=1)
        h = F.max_pool2d(torch.relu(bn("bn1", h)), 2)
        if conv2_same:
            h = F.conv2d(F.pad(h, (0, 1, 0, 1)), t["conv2.weight"], t["conv2.bias"], stride=2)
        else:
            h = F.conv2d(h, t["conv2.weight"], t["conv2.bias"], stride=2, padding=1)
        h = torch.relu(bn("bn2", h))
        logits = F.linear(h.flatten(1), t["fc.weight"], t["fc.bias"])
    return logits.numpy(), {name: (m.numpy(), v.numpy()) for name, (m, v) in stats.items()}


def _back_to_torch(params, sd):
    """The state_dict that `params` (NNX layout) stand for: the exact inverse of the conversion.

    Evaluating it with TorchCNN's forward gives what an NNX CNN holding `params` computes, without
    building one here."""
    back = dict(sd)
    for conv in CONVS:
        back[f"{conv}.weight"] = np.asarray(params[conv]["kernel"]).transpose(3, 2, 0, 1)
        back[f"{conv}.bias"] = np.asarray(params[conv]["bias"])
    for bn in BNS:
        back[f"{bn}.weight"] = np.asarray(params[bn]["scale"])
        back[f"{bn}.bias"] = np.asarray(params[bn]["bias"])
        back[f"{bn}.running_mean"] = np.asarray(params[bn]["mean"])
        back[f"{bn}.running_var"] = np.asarray(params[bn]["var"])
    kernel = np.asarray(params["fc"]["kernel"])
    out = kernel.shape[1]
    side = int(round(np.sqrt(kernel.shape[0] / 16)))
    back["fc.weight"] = kernel.reshape(side, side, 16, out).transpose(3, 2, 0, 1).reshape(out, -1)
    back["fc.bias"] = np.asarray(params["fc"]["bias"])
    return {k: np.ascontiguousarray(v, dtype=np.float32) if k in sd and sd[k].dtype == np.float32 else v
            for k, v in back.items()}


def _close(a, b):
    return isinstance(a, np.ndarray) and a.shape == np.shape(b) and bool(np.allclose(a, b, rtol=RTOL, atol=ATOL))


def _check_leaf(layer, name, got, want, sd, call):
    """Fail with a message that names the mistake when one converted array is wrong."""
    where = f"{call}['{layer}']['{name}']"
    if not isinstance(got, np.ndarray):
        fail(f"{where} is a {type(got).__name__}, expected a float32 array of shape {want.shape}.")
    if got.dtype != np.float32:
        fail(f"{where} has dtype {got.dtype}, expected float32 (the model's parameters are float32).")
    if layer in CONVS and name == "kernel":
        weight = sd[f"{layer}.weight"]
        if got.shape == weight.shape and np.allclose(got, weight):
            fail(f"{where} has shape {got.shape}: that is PyTorch's (out, in, kH, kW) layout, unchanged. nnx.Conv "
                 f"wants (kH, kW, in, out) = {want.shape}: weight.transpose(2, 3, 1, 0).")
        if got.shape == want.shape and _close(got, weight.transpose(3, 2, 1, 0)):
            fail(f"{where} has kH and kW swapped: weight.transpose(3, 2, 1, 0) gives (kW, kH, in, out), and for "
                 "a square kernel the shape looks right. Use transpose(2, 3, 1, 0).")
    if layer == "fc" and name == "kernel":
        weight = sd["fc.weight"]
        if got.shape == weight.shape:
            fail(f"{where} has shape {got.shape}, PyTorch's (out, in): nnx.Linear's kernel is (in, out), "
                 "the weight transposed.")
        if _close(got, weight.T):
            c, s = 16, int(round(np.sqrt(weight.shape[1] / 16)))
            fail(f"{where} is fc.weight.T with its rows in PyTorch's flatten order (C, H, W). Your CNN flattens "
                 f"an NHWC map, in (H, W, C) order: reorder the rows, e.g. weight.reshape(out, {c}, {s}, {s})"
                 f".transpose(2, 3, 1, 0).reshape(-1, out). Without it the shapes fit and the logits are wrong.")
    if layer in BNS:
        other = {"mean": "var", "var": "mean"}.get(name)
        if other and _close(got, sd[f"{layer}.running_{other}"]):
            fail(f"{where} holds running_{other}: mean and var are swapped. mean <- running_mean, "
                 "var <- running_var.")
        if name == "var" and _close(got, np.sqrt(sd[f"{layer}.running_var"])):
            fail(f"{where} is the square root of running_var: Flax's var is a variance, like PyTorch's.")
        if name == "scale" and _close(got, sd[f"{layer}.bias"]):
            fail(f"{where} holds {layer}.bias: scale <- {layer}.weight, bias <- {layer}.bias.")
    if got.shape != want.shape:
        fail(f"{where} has shape {got.shape}, expected {want.shape}.")
    if not _close(got, want):
        diff = float(np.max(np.abs(got - want)))
        fail(f"{where} differs from the converted {layer} by up to {diff:.3g}.")


def _converted(learner, rng, seed):
    in_channels, size, n_classes = _case(rng)
    sd = _state_dict(rng, in_channels, size, n_classes)
    call = f"torch_to_nnx(TorchCNN({in_channels}, {n_classes}, {size}).state_dict(), {size})"
    got = learner.probe(probe_convert, sd, size)
    if not isinstance(got, dict):
        fail(f"{call} returned a {type(got).__name__}, expected a nested dict like "
             "nnx.to_pure_dict(nnx.state(CNN(...))).")
    want = _expected_params(sd, size)
    for layer, names in LEAVES.items():
        sub = got.get(layer)
        if not isinstance(sub, dict):
            fail(f"{call} has no entry '{layer}' (a dict of {', '.join(names)}); it has {sorted(map(str, got))}.")
        for name in names:
            if name not in sub:
                hint = {"scale": " (PyTorch calls it weight)", "mean": " (PyTorch: running_mean)",
                        "var": " (PyTorch: running_var)", "kernel": " (PyTorch calls it weight)"}.get(name, "")
                fail(f"{call}['{layer}'] has no '{name}'{hint}; it has {sorted(map(str, sub))}.")
    extra = sorted(set(map(str, got)) - set(LEAVES))
    if extra:
        fail(f"{call} has entries {extra} that the NNX CNN does not have (num_batches_tracked has no NNX "
             "counterpart: leave it out).")
    return in_channels, size, n_classes, sd, got, want, call


def test_converted_arrays_match_the_exact_conversion(learner, rng, seed):
    in_channels, size, n_classes, sd, got, want, call = _converted(learner, rng, seed)
    for layer, names in LEAVES.items():
        for name in names:
            _check_leaf(layer, name, got[layer][name], want[layer][name], sd, call)


def test_converted_weights_reproduce_torch_logits(learner, rng, seed):
    in_channels, size, n_classes, sd, got, want, call = _converted(learner, rng, seed)
    for layer, names in LEAVES.items():
        for name in names:
            value = got[layer][name]
            if not isinstance(value, np.ndarray) or value.shape != want[layer][name].shape:
                _check_leaf(layer, name, value, want[layer][name], sd, call)
    images = _images(rng, in_channels, size)
    torch_logits, _ = _torch_forward(sd, images, train=False)
    logits, _ = _torch_forward(_back_to_torch(got, sd), images, train=False)
    if not np.allclose(logits, torch_logits, rtol=RTOL, atol=ATOL):
        for layer, names in LEAVES.items():
            for name in names:
                _check_leaf(layer, name, got[layer][name], want[layer][name], sd, call)
        diff = float(np.max(np.abs(logits - torch_logits)))
        fail(f"the CNN holding the arrays of {call} gives logits up to {diff:.3g} away from TorchCNN's in eval mode "
             f"(images {images.shape}).")


def _structure_problem(info, want, call):
    structure = info.get("structure")
    if not isinstance(structure, dict):
        return
    expected = {f"{layer}.{name}": list(want[layer][name].shape) for layer, names in LEAVES.items() for name in names}
    for path, shape in expected.items():
        if path not in structure:
            fail(f"{call}: the model has no variable {path} (it has {sorted(structure)}). Name the layers conv1, "
                 "bn1, conv2, bn2, fc, built from nnx.Conv, nnx.BatchNorm and nnx.Linear.")
        if list(structure[path]) != shape:
            fail(f"{call}: {path} has shape {tuple(structure[path])}, expected {tuple(shape)}.")


def test_predict_takes_nchw_images_in_eval_mode(learner, rng, seed):
    in_channels, size, n_classes = _case(rng)
    sd = _state_dict(rng, in_channels, size, n_classes)
    images = _images(rng, in_channels, size)
    params = _expected_params(sd, size)
    call = f"predict(CNN({in_channels}, {n_classes}, {size}) with converted weights, images {images.shape} NCHW)"
    info = learner.probe(probe_model, in_channels, n_classes, size, params, "predict", images)
    _structure_problem(info, params, call)
    if "load_error" in info:
        fail(f"{call}: loading the converted weights into your CNN failed: {info['load_error']}")
    if "predict_error" in info:
        error = str(info["predict_error"]).rstrip(".")
        if "feature dimension" in error:
            fail(f"{call} raised {error}. The images are NCHW, as PyTorch delivers them, and nnx.Conv reads the "
                 "last axis as the channels: transpose them with (0, 2, 3, 1) before calling the model.")
        fail(f"{call} raised {error}.")
    logits = info.get("logits")
    want, _ = _torch_forward(sd, images, train=False)
    if not isinstance(logits, np.ndarray) or logits.shape != want.shape:
        fail(f"{call} returned {getattr(logits, 'shape', type(logits).__name__)}, expected an array of shape "
             f"{want.shape}.")
    if logits.dtype != np.float32:
        fail(f"{call} returned dtype {logits.dtype}, expected float32.")
    if np.allclose(logits, want, rtol=RTOL, atol=ATOL):
        return
    reshaped = images.reshape(images.shape[0], size, size, in_channels).transpose(0, 3, 1, 2)
    if np.allclose(logits, _torch_forward(sd, np.ascontiguousarray(reshaped), train=False)[0], rtol=RTOL, atol=ATOL):
        fail(f"{call}: the logits are those of the images reshaped to NHWC. reshape keeps the memory order and "
             "scrambles pixels and channels; transpose(0, 2, 3, 1) moves the channel axis.")
    if np.allclose(logits, _torch_forward(sd, images, train=True)[0], rtol=RTOL, atol=ATOL):
        fail(f"{call}: the logits use the batch's statistics, not the running ones. Put the model in evaluation "
             "mode (model.eval()) first, like PyTorch's model.eval().")
    if np.allclose(logits, _torch_forward(sd, images, train=False, conv2_same=True)[0], rtol=RTOL, atol=ATOL):
        fail(f"{call}: conv2 pads like padding='SAME'. With stride 2 on an even size, 'SAME' pads (0, 1): one "
             "row and column at the end only; PyTorch's padding=1 pads (1, 1). Use padding=1 (or ((1, 1), (1, 1))).")
    if np.allclose(logits, _torch_forward(sd, images, train=False, eps=1e-3)[0], rtol=RTOL, atol=ATOL):
        fail(f"{call}: the BatchNorm layers use epsilon=1e-3 (Keras' default). PyTorch's BatchNorm2d uses eps=1e-5, "
             "which is also nnx.BatchNorm's default: keep epsilon=1e-5.")
    diff = float(np.max(np.abs(logits - want)))
    fail(f"{call}: the logits differ from TorchCNN's in eval mode by up to {diff:.3g}. Check, in order: NCHW -> "
         "NHWC with a transpose, padding=1 on both convs, max-pool 2x2 with stride 2, ReLU after each BatchNorm, "
         "and the flatten x.reshape(N, -1) of the NHWC map.")


def test_one_train_step_updates_batchnorm_like_torch(learner, rng, seed):
    in_channels, size, n_classes = _case(rng)
    sd = _state_dict(rng, in_channels, size, n_classes)
    images = _images(rng, in_channels, size)
    params = _expected_params(sd, size)
    call = f"CNN({in_channels}, {n_classes}, {size}) with converted weights, model.train(), one call on x {(BATCH, size, size, in_channels)}"
    info = learner.probe(probe_model, in_channels, n_classes, size, params, "train",
                         np.ascontiguousarray(images.transpose(0, 2, 3, 1)))
    _structure_problem(info, params, call)
    if "load_error" in info:
        fail(f"{call}: loading the converted weights into your CNN failed: {info['load_error']}")
    inputs = {}
    want_logits, torch_stats = _torch_forward(sd, images, train=True, capture=inputs)
    logits = info.get("logits")
    if not isinstance(logits, np.ndarray) or logits.shape != want_logits.shape:
        fail(f"{call} returned {getattr(logits, 'shape', type(logits).__name__)}, expected logits of shape "
             f"{want_logits.shape}.")
    if not np.allclose(logits, want_logits, rtol=RTOL, atol=ATOL):
        eval_logits, _ = _torch_forward(sd, images, train=False)
        if np.allclose(logits, eval_logits, rtol=RTOL, atol=ATOL):
            fail(f"{call}: in train mode the model normalised with the running statistics. BatchNorm must use the "
                 "batch's statistics in train mode: let model.train() / model.eval() set it, don't fix "
                 "use_running_average=True.")
        diff = float(np.max(np.abs(logits - want_logits)))
        fail(f"{call}: the train-mode logits differ from TorchCNN's in train mode by up to {diff:.3g}.")
    stats = info.get("stats")
    for bn in BNS:
        h = inputs[bn].astype(np.float64)
        n = h.shape[0] * h.shape[2] * h.shape[3]
        batch_mean = h.mean(axis=(0, 2, 3))
        batch_var = h.var(axis=(0, 2, 3))  # biased, as nnx.BatchNorm computes it
        old_mean, old_var = sd[f"{bn}.running_mean"], sd[f"{bn}.running_var"]
        try:
            mean, var = stats[bn]["mean"], stats[bn]["var"]
        except (KeyError, TypeError):
            fail(f"{call}: the model has no BatchStat {bn}.mean / {bn}.var. Use nnx.BatchNorm.")
        for what, got, old, batch in (("mean", mean, old_mean, batch_mean), ("var", var, old_var, batch_var)):
            want = 0.9 * old + 0.1 * batch
            if _close(got, want):
                continue
            where = f"{call}: {bn}.{what} afterwards"
            if _close(got, old):
                fail(f"{where} has not changed: in train mode BatchNorm updates its running statistics.")
            if _close(got, 0.99 * old + 0.01 * batch):
                fail(f"{where} is 0.99 * old + 0.01 * batch: nnx.BatchNorm's default momentum, 0.99. PyTorch's "
                     "momentum 0.1 weighs the batch: new = 0.9 * old + 0.1 * batch, which Flax writes momentum=0.9.")
            if _close(got, 0.1 * old + 0.9 * batch):
                fail(f"{where} is 0.1 * old + 0.9 * batch: momentum=0.1 copied from PyTorch. Flax's momentum weighs "
                     "the OLD value (new = momentum * old + (1 - momentum) * batch), PyTorch's the batch: "
                     "PyTorch's 0.1 is Flax's 0.9.")
            if what == "var" and _close(got, torch_stats[bn][1]):
                fail(f"{where} matches PyTorch's running_var, which uses the unbiased batch variance "
                     f"(times n / (n - 1), n = {n}). Keep nnx.BatchNorm's update: 0.9 * old + 0.1 * the biased "
                     "variance.")
            if np.shape(got) != np.shape(want):
                fail(f"{where} has shape {np.shape(got)}, expected {np.shape(want)}.")
            diff = float(np.max(np.abs(np.asarray(got, np.float64) - want)))
            fail(f"{where} should be 0.9 * old + 0.1 * the batch {what} (PyTorch's momentum 0.1); it is off by up "
                 f"to {diff:.3g}.")
