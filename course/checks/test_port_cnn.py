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
import pytest

from course.checks.conftest import RUN_PLUGIN
from course.engine.checking import fail
from course.engine.programs import ProgramError, parse, run
from course.engine.words import _

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
    import jax

    converted = module.torch_to_nnx(state_dict, size)
    leaves = jax.tree.leaves(converted)
    # Whether the leaves are JAX arrays is only a matter of the learner's own model (lesson 21: NNX
    # keeps NumPy arrays and a train-mode BatchNorm writes into them); the values are judged here.
    return {"converted": converted, "numpy_leaves": sum(not isinstance(v, jax.Array) for v in leaves)}


def probe_back(module, params, size):
    import jax
    import jax.numpy as jnp
    import numpy as np

    # Once with NumPy arrays, once with JAX arrays: those of nnx.to_pure_dict(nnx.state(model)), as a
    # model trained in JAX gives them. The wire turns JAX arrays into NumPy ones, so which values
    # were not NumPy arrays is said here (only a fail rests on it).
    from_jax = module.nnx_to_torch(jax.tree.map(jnp.asarray, params), size)
    not_numpy = sorted(str(k)[:80] for k, v in from_jax.items() if not isinstance(v, np.ndarray)) \
        if isinstance(from_jax, dict) else []
    return {"numpy": module.nnx_to_torch(params, size), "jax": from_jax, "not_numpy": not_numpy}


def probe_model(module, in_channels, n_classes, size, params, x_train, images=None):
    """Build the learner's CNN, load `params`, and lower its forward passes on shapes alone: in train
    mode before and after `predict` was lowered (NCHW), and in eval mode after one train-mode call on
    `x_train` (NHWC, drawn by the check). The programs hold the model's variables as constants; the
    check runs them on inputs it draws afterwards."""
    import jax
    import jax.numpy as jnp
    from flax import nnx

    # Built abstractly (no initialisation to compute): every variable is then loaded from `params`.
    model = nnx.eval_shape(lambda: module.CNN(in_channels, n_classes, size, rngs=nnx.Rngs(0)))
    if not isinstance(model, nnx.Module):
        return {"not_module": type(model).__name__}
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
    nhwc = jax.ShapeDtypeStruct((x_train.shape[0], size, size, in_channels), jnp.float32)
    nchw = jax.ShapeDtypeStruct((x_train.shape[0], in_channels, size, size), jnp.float32)

    def lowered(m, key):
        graphdef, variables = nnx.split(m)
        # Fresh Variables made inside the trace (the tree map), so a train-mode BatchNorm may update them there.
        forward = jax.jit(lambda x: nnx.merge(graphdef, jax.tree.map(lambda a: a, variables))(x))
        info[key] = forward.lower(nhwc).as_text()
        if images is not None:  # only where the check cannot run the program itself (see _RUNS_CONVOLUTIONS)
            info[key + "_out"] = forward(jnp.transpose(jnp.asarray(images), (0, 2, 3, 1)))

    model.train()
    lowered(model, "train_before")
    try:
        # predict lowered on a copy made inside the trace (a model.eval() in it may then run), and
        # called once on the model itself, whose mode afterwards shows in "train_after".
        graphdef, variables = nnx.split(model)
        predict = jax.jit(lambda im: module.predict(nnx.merge(graphdef, jax.tree.map(lambda a: a, variables)), im))
        info["predict"] = predict.lower(nchw).as_text()
        if images is not None:
            info["predict_out"] = predict(jnp.asarray(images))
        module.predict(model, jnp.zeros(nchw.shape, jnp.float32))
    except Exception as exc:  # noqa: BLE001 - the parent names the likely mistake
        info["predict_error"] = f"{type(exc).__name__}: {exc}"
    lowered(model, "train_after")
    model.train()
    model(jnp.asarray(x_train))
    model.eval()
    lowered(model, "eval_after_step")
    # predict on a model in evaluation mode must leave it there too (not switch it back to train).
    try:
        module.predict(model, jnp.zeros(nchw.shape, jnp.float32))
    except Exception as exc:  # noqa: BLE001 - the parent names the mistake
        info["eval_predict_error"] = f"{type(exc).__name__}: {exc}"
        return info
    lowered(model, "eval_after_predict")
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
        fail(_("{where} is a {type}, expected a float32 array of shape {shape}.").format(
            where=where, type=type(got).__name__, shape=want.shape))
    if got.dtype != np.float32:
        fail(_("{where} has dtype {dtype}, expected float32 (the model's parameters are float32).").format(
            where=where, dtype=got.dtype))
    if layer in CONVS and name == "kernel":
        weight = sd[f"{layer}.weight"]
        if got.shape == weight.shape and np.allclose(got, weight):
            fail(_("{where} has shape {shape}: that is PyTorch's (out, in, kH, kW) layout, unchanged. nnx.Conv "
                   "wants (kH, kW, in, out) = {want}: weight.transpose(2, 3, 1, 0).").format(
                where=where, shape=got.shape, want=want.shape))
        if got.shape == want.shape and _close(got, weight.transpose(3, 2, 1, 0)):
            fail(_("{where} has kH and kW swapped: weight.transpose(3, 2, 1, 0) gives (kW, kH, in, out), and for "
                   "a square kernel the shape looks right. Use transpose(2, 3, 1, 0).").format(where=where))
    if layer == "fc" and name == "kernel":
        weight = sd["fc.weight"]
        if got.shape == weight.shape:
            fail(_("{where} has shape {shape}, PyTorch's (out, in): nnx.Linear's kernel is (in, out), "
                   "the weight transposed.").format(where=where, shape=got.shape))
        if _close(got, weight.T):
            c, s = 16, int(round(np.sqrt(weight.shape[1] / 16)))
            fail(_("{where} is fc.weight.T with its rows in PyTorch's flatten order (C, H, W). Your CNN flattens "
                   "an NHWC map, in (H, W, C) order: reorder the rows, e.g. weight.reshape(out, {c}, {s}, {s})"
                   ".transpose(2, 3, 1, 0).reshape(-1, out). Without it the shapes fit and the logits are wrong.").format(
                where=where, c=c, s=s))
    if layer in BNS:
        other = {"mean": "var", "var": "mean"}.get(name)
        if other and _close(got, sd[f"{layer}.running_{other}"]):
            fail(_("{where} holds running_{other}: mean and var are swapped. mean <- running_mean, "
                   "var <- running_var.").format(where=where, other=other))
        if name == "var" and _close(got, np.sqrt(sd[f"{layer}.running_var"])):
            fail(_("{where} is the square root of running_var: Flax's var is a variance, like PyTorch's.").format(
                where=where))
        if name == "scale" and _close(got, sd[f"{layer}.bias"]):
            fail(_("{where} holds {layer}.bias: scale <- {layer}.weight, bias <- {layer}.bias.").format(
                where=where, layer=layer))
    if got.shape != want.shape:
        fail(_("{where} has shape {shape}, expected {want}.").format(where=where, shape=got.shape, want=want.shape))
    if not _close(got, want):
        diff = float(np.max(np.abs(got - want)))
        fail(_("{where} differs from the converted {layer} by up to {diff:.3g}.").format(
            where=where, layer=layer, diff=diff))


def _converted(learner, rng, seed):
    in_channels, size, n_classes = _case(rng)
    sd = _state_dict(rng, in_channels, size, n_classes)
    call = f"torch_to_nnx(TorchCNN({in_channels}, {n_classes}, {size}).state_dict(), {size})"
    reply = learner.probe(probe_convert, sd, size)
    got = reply.get("converted") if isinstance(reply, dict) else None
    if not isinstance(got, dict):
        fail(_("{call} returned a {type}, expected a nested dict like "
               "nnx.to_pure_dict(nnx.state(CNN(...))).").format(call=call, type=type(got).__name__))
    want = _expected_params(sd, size)
    for layer, names in LEAVES.items():
        sub = got.get(layer)
        if not isinstance(sub, dict):
            fail(_("{call} has no entry '{layer}' (a dict of {names}); it has {has}.").format(
                call=call, layer=layer, names=", ".join(names), has=sorted(map(str, got))))
        extra = sorted(set(map(str, sub)) - set(names))
        if extra:
            fail(_("{call}['{layer}'] has entries {extra} that the NNX CNN's {layer} does not have; it must hold "
                   "exactly {names} (num_batches_tracked has no NNX counterpart: leave it out).").format(
                call=call, layer=layer, extra=extra, names=", ".join(names)))
        for name in names:
            if name not in sub:
                hint = {"scale": _(" (PyTorch calls it weight)"), "mean": _(" (PyTorch: running_mean)"),
                        "var": _(" (PyTorch: running_var)"), "kernel": _(" (PyTorch calls it weight)")}.get(name, "")
                fail(_("{call}['{layer}'] has no '{name}'{hint}; it has {has}.").format(
                    call=call, layer=layer, name=name, hint=hint, has=sorted(map(str, sub))))
    extra = sorted(set(map(str, got)) - set(LEAVES))
    if extra:
        fail(_("{call} has entries {extra} that the NNX CNN does not have (num_batches_tracked has no NNX "
               "counterpart: leave it out).").format(call=call, extra=extra))
    if reply.get("numpy_leaves"):
        fail(_("{call} returned {numpy_leaves} NumPy arrays: return JAX arrays (jnp.asarray), as lesson 21 "
               "advises. nnx.update keeps the arrays it is given, and a train-mode BatchNorm would then write its "
               "statistics into your converted dict in place.").format(call=call, numpy_leaves=reply['numpy_leaves']))
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
    torch_logits, __ = _torch_forward(sd, images, train=False)
    logits, __ = _torch_forward(_back_to_torch(got, sd), images, train=False)
    if not np.allclose(logits, torch_logits, rtol=RTOL, atol=ATOL):
        for layer, names in LEAVES.items():
            for name in names:
                _check_leaf(layer, name, got[layer][name], want[layer][name], sd, call)
        diff = float(np.max(np.abs(logits - torch_logits)))
        fail(_("the CNN holding the arrays of {call} gives logits up to {diff:.3g} away from TorchCNN's in eval mode "
               "(images {shape}).").format(call=call, diff=diff, shape=images.shape))


def _structure_problem(info, want, call):
    structure = info.get("structure")
    if not isinstance(structure, dict):
        return
    expected = {f"{layer}.{name}": list(want[layer][name].shape) for layer, names in LEAVES.items() for name in names}
    for path, shape in expected.items():
        if path not in structure:
            fail(_("{call}: the model has no variable {path} (it has {paths}). Name the layers conv1, "
                   "bn1, conv2, bn2, fc, built from nnx.Conv, nnx.BatchNorm and nnx.Linear.").format(
                call=call, path=path, paths=sorted(structure)))
        if list(structure[path]) != shape:
            fail(_("{call}: {path} has shape {shape}, expected {want}.").format(
                call=call, path=path, shape=tuple(structure[path]), want=tuple(shape)))



def _runs_convolutions() -> bool:
    """Whether course.engine.programs runs programs with `stablehlo.convolution` (a CNN's forward pass).

    Asked once, with a one-conv program lowered here from the check's own code."""
    global _RUNS_CONVOLUTIONS
    if _RUNS_CONVOLUTIONS is None:
        import jax
        import jax.numpy as jnp

        spec = jax.ShapeDtypeStruct((1, 4, 4, 1), jnp.float32)
        text = jax.jit(lambda x: jax.lax.conv_general_dilated(
            x, jnp.ones((3, 3, 1, 1), jnp.float32), (1, 1), "SAME",
            dimension_numbers=("NHWC", "HWIO", "NHWC"))).lower(spec).as_text()
        try:
            run(text, np.ones((1, 4, 4, 1), np.float32))
            _RUNS_CONVOLUTIONS = True
        except ProgramError:
            _RUNS_CONVOLUTIONS = False
    return _RUNS_CONVOLUTIONS


_RUNS_CONVOLUTIONS: bool | None = None


def _run(info, key, what, x):
    """The output of the learner's program `key` on x: run here when the engine runs convolutions;
    otherwise the output the learner's process computed with that very jitted function, after its
    program was read here (verified, and free of calls out of JAX such as a callback to PyTorch)."""
    text = info.get(key)
    try:
        if _runs_convolutions():
            (out,) = run(text, x)
            return out
        program = parse(text)
    except (ProgramError, ValueError) as e:
        fail(_("{what}, lowered with jax.jit in your process, could not be run by the check: {e}").format(
            what=what, e=e))
    outside = sorted(op for op in program.ops if "custom_call" in op or "callback" in op)
    if outside:
        fail(_("{what}, lowered with jax.jit in your process, leaves JAX ({ops}): the forward pass "
               "must be JAX code (a callback into PyTorch is not a port).").format(
            what=what, ops=", ".join(outside)))
    if not program.takes(tuple(x.shape)):
        fail(_("{what}, lowered with jax.jit in your process, does not take images of shape {shape}.").format(
            what=what, shape=tuple(x.shape)))
    out = info.get(key + "_out")
    if not isinstance(out, np.ndarray):
        fail(_("{what} returned {type}, expected an array of logits.").format(what=what, type=type(out).__name__))
    return out


@pytest.fixture(scope="module")
def model_run(learner, request):
    """The learner's CNN, loaded with the exact conversion of a fresh TorchCNN, as programs: lowered
    once per check run on shapes alone, then run here on images drawn afterwards."""
    seed = request.config.pluginmanager.get_plugin(RUN_PLUGIN).seed
    rng = np.random.default_rng([seed, 21])
    in_channels, size, n_classes = _case(rng)
    sd = _state_dict(rng, in_channels, size, n_classes)
    params = _expected_params(sd, size)
    train_images = _images(rng, in_channels, size)
    fresh = _images(rng, in_channels, size)
    # Drawn here and, where the engine runs the programs, never sent: the programs run on them here.
    info = learner.probe(probe_model, in_channels, n_classes, size, params,
                         np.ascontiguousarray(train_images.transpose(0, 2, 3, 1)),
                         None if _runs_convolutions() else fresh)
    call = _("CNN({in_channels}, {n_classes}, {size}) with converted weights").format(
        in_channels=in_channels, n_classes=n_classes, size=size)
    if not isinstance(info, dict):
        fail(_("{call}: the check could not read your model ({type}).").format(call=call, type=type(info).__name__))
    if "not_module" in info:
        fail(_("{call}: loading the converted weights into your CNN failed: CNN(...) built a {type}, not an "
               "nnx.Module").format(call=call, type=info["not_module"]))
    _structure_problem(info, params, call)
    if "load_error" in info:
        fail(_("{call}: loading the converted weights into your CNN failed: {load_error}").format(
            call=call, load_error=info["load_error"]))
    return in_channels, size, n_classes, sd, train_images, fresh, info, call


def test_predict_takes_nchw_images_in_eval_mode(model_run):
    in_channels, size, n_classes, sd, __, images, info, model = model_run
    call = _("predict({model}, images {shape} NCHW), lowered with jax.jit and run by the check").format(
        model=model, shape=images.shape)
    if "predict_error" in info:
        error = str(info["predict_error"]).rstrip(".")
        if "feature dimension" in error:
            fail(_("{call} raised {error}. The images are NCHW, as PyTorch delivers them, and nnx.Conv reads the "
                   "last axis as the channels: transpose them with (0, 2, 3, 1) before calling the model.").format(
                call=call, error=error))
        fail(_("{call} raised {error}. predict must be a JAX function of the images: the check lowers "
               "jax.jit(lambda images: predict(model, images)).").format(call=call, error=error))
    logits = _run(info, "predict", f"predict({model})", images)
    want, __ = _torch_forward(sd, images, train=False)
    if logits.shape != want.shape:
        fail(_("{call} returned shape {shape}, expected {want}.").format(
            call=call, shape=logits.shape, want=want.shape))
    if logits.dtype != np.float32:
        fail(_("{call} returned dtype {dtype}, expected float32.").format(call=call, dtype=logits.dtype))
    if np.allclose(logits, want, rtol=RTOL, atol=ATOL):
        return
    reshaped = images.reshape(images.shape[0], size, size, in_channels).transpose(0, 3, 1, 2)
    if np.allclose(logits, _torch_forward(sd, np.ascontiguousarray(reshaped), train=False)[0], rtol=RTOL, atol=ATOL):
        fail(_("{call}: the logits are those of the images reshaped to NHWC. reshape keeps the memory order and "
               "scrambles pixels and channels; transpose(0, 2, 3, 1) moves the channel axis.").format(call=call))
    if np.allclose(logits, _torch_forward(sd, images, train=True)[0], rtol=RTOL, atol=ATOL):
        fail(_("{call}: the logits use the batch's statistics, not the running ones. Evaluate in evaluation mode: "
               "nnx.view(model, use_running_average=True)(x), like PyTorch's model.eval().").format(call=call))
    if np.allclose(logits, _torch_forward(sd, images, train=False, conv2_same=True)[0], rtol=RTOL, atol=ATOL):
        fail(_("{call}: conv2 pads like padding='SAME'. With stride 2 on an even size, 'SAME' pads (0, 1): one "
               "row and column at the end only; PyTorch's padding=1 pads (1, 1). Use padding=1 (or ((1, 1), (1, 1))).").format(
            call=call))
    if np.allclose(logits, _torch_forward(sd, images, train=False, eps=1e-3)[0], rtol=RTOL, atol=ATOL):
        fail(_("{call}: the BatchNorm layers use epsilon=1e-3 (Keras' default). PyTorch's BatchNorm2d uses eps=1e-5, "
               "which is also nnx.BatchNorm's default: keep epsilon=1e-5.").format(call=call))
    diff = float(np.max(np.abs(logits - want)))
    fail(_("{call}: the logits differ from TorchCNN's in eval mode by up to {diff:.3g}. Check, in order: NCHW -> "
           "NHWC with a transpose, padding=1 on both convs, max-pool 2x2 with stride 2, ReLU after each BatchNorm, "
           "and the flatten x.reshape(N, -1) of the NHWC map.").format(call=call, diff=diff))


def test_train_mode_forward_and_predict_leaves_the_mode(model_run):
    __, __, __, sd, __, images, info, model = model_run
    nhwc = np.ascontiguousarray(images.transpose(0, 2, 3, 1))
    call = _("{model}, model.train(), its forward pass on x {shape} run by the check").format(
        model=model, shape=nhwc.shape)
    want, __ = _torch_forward(sd, images, train=True)
    eval_logits, __ = _torch_forward(sd, images, train=False)
    before = _run(info, "train_before", _("the forward pass of {model} in train mode").format(model=model), nhwc)
    if before.shape != want.shape:
        fail(_("{call} returned shape {shape}, expected logits of shape {want}.").format(
            call=call, shape=before.shape, want=want.shape))
    if not np.allclose(before, want, rtol=RTOL, atol=ATOL):
        if np.allclose(before, eval_logits, rtol=RTOL, atol=ATOL):
            fail(_("{call}: in train mode the model normalised with the running statistics. BatchNorm must use the "
                   "batch's statistics in train mode: let model.train() / model.eval() set it, don't fix "
                   "use_running_average=True.").format(call=call))
        diff = float(np.max(np.abs(before - want)))
        fail(_("{call}: the train-mode logits differ from TorchCNN's in train mode by up to {diff:.3g}.").format(
            call=call, diff=diff))
    if "predict_error" in info:
        return  # named by the predict test
    after = _run(info, "train_after", _("the forward pass of {model} after predict").format(model=model), nhwc)
    if not np.allclose(after, before, rtol=RTOL, atol=ATOL):
        if np.allclose(after, eval_logits, rtol=RTOL, atol=ATOL):
            fail(_("{call}: after predict(model, images) the model is in evaluation mode. predict must not change "
                   "the caller's model (a later training step would stop updating BatchNorm): evaluate through "
                   "nnx.view(model, use_running_average=True) instead of model.eval().").format(call=call))
        fail(_("{call}: predict(model, images) changed the model: its train-mode logits differ afterwards.").format(
            call=call))
    # The same model in evaluation mode, before and after a predict: both programs run here.
    call = _("{model}, model.eval(), its forward pass on x {shape} run by the check before and after "
             "predict(model, images)").format(model=model, shape=nhwc.shape)
    if "eval_predict_error" in info:
        fail(_("{call}: predict raised {error} on a model in evaluation mode.").format(
            call=call, error=str(info["eval_predict_error"])[:300]))
    evaluated = _run(info, "eval_after_step", _("the forward pass of {model} in eval mode").format(model=model), nhwc)
    after = _run(info, "eval_after_predict", _("the forward pass of {model} after predict").format(model=model), nhwc)
    if np.shape(after) != np.shape(evaluated) or not np.allclose(after, evaluated, rtol=RTOL, atol=ATOL):
        fail(_("{call}: after predict the model no longer computes what it did in evaluation mode: predict "
               "switched it (to train mode?). predict must leave the caller's model in the mode it was in: "
               "evaluate through nnx.view(model, use_running_average=True), and change nothing on the model.").format(
            call=call))


def _with_stats(sd, stats):
    out = dict(sd)
    for bn, (mean, var) in stats.items():
        out[f"{bn}.running_mean"] = np.asarray(mean, np.float32)
        out[f"{bn}.running_var"] = np.asarray(var, np.float32)
    return out


def test_one_train_step_updates_batchnorm_like_torch(model_run):
    """The running statistics are judged from what the model computes with them: its eval-mode
    forward pass after one train-mode call, run here, against TorchCNN's with the expected statistics."""
    __, __, __, sd, train_images, images, info, model = model_run
    inputs = {}
    __, torch_stats = _torch_forward(sd, train_images, train=True, capture=inputs)
    batch = {}
    for bn in BNS:
        h = inputs[bn].astype(np.float64)
        batch[bn] = (h.mean(axis=(0, 2, 3)), h.var(axis=(0, 2, 3)), h.shape[0] * h.shape[2] * h.shape[3])

    def stats(momentum, unbiased=False):
        return {bn: (momentum * sd[f"{bn}.running_mean"] + (1 - momentum) * m,
                     momentum * sd[f"{bn}.running_var"] + (1 - momentum) * (v * n / (n - 1) if unbiased else v))
                for bn, (m, v, n) in batch.items()}

    nhwc = np.ascontiguousarray(images.transpose(0, 2, 3, 1))
    call = _("{model}, model.train(), one call on a batch of {n}, then model.eval(): its "
             "forward pass run by the check on fresh images").format(model=model, n=train_images.shape[0])
    logits = _run(info, "eval_after_step", _("the forward pass of {model} after one train-mode call").format(
        model=model),
                  nhwc)

    def gives(candidate):
        return logits.shape == (images.shape[0], sd["fc.bias"].shape[0]) and np.allclose(
            logits, _torch_forward(_with_stats(sd, candidate), images, train=False)[0], rtol=RTOL, atol=ATOL)

    if gives(stats(0.9)):
        return
    where = _("{call}: the running statistics of bn1 and bn2 afterwards").format(call=call)
    if gives({bn: (sd[f"{bn}.running_mean"], sd[f"{bn}.running_var"]) for bn in BNS}):
        fail(_("{where} have not changed: in train mode BatchNorm updates its running statistics.").format(where=where))
    if gives(stats(0.99)):
        fail(_("{where} are 0.99 * old + 0.01 * batch: nnx.BatchNorm's default momentum, 0.99. PyTorch's momentum "
               "0.1 weighs the batch: new = 0.9 * old + 0.1 * batch, which Flax writes momentum=0.9.").format(
            where=where))
    if gives(stats(0.1)):
        fail(_("{where} are 0.1 * old + 0.9 * batch: momentum=0.1 copied from PyTorch. Flax's momentum weighs the "
               "OLD value (new = momentum * old + (1 - momentum) * batch), PyTorch's the batch: PyTorch's 0.1 is "
               "Flax's 0.9.").format(where=where))
    if gives(stats(0.9, unbiased=True)) or gives({bn: torch_stats[bn] for bn in BNS}):
        fail(_("{where} follow PyTorch's running_var, which uses the unbiased batch variance (times n / (n - 1)). "
               "Keep nnx.BatchNorm's update: 0.9 * old + 0.1 * the biased variance.").format(where=where))
    fail(_("{where} are not 0.9 * old + 0.1 * the batch's statistics (PyTorch's momentum 0.1, the biased "
           "variance): the eval-mode logits differ from TorchCNN's with those statistics.").format(where=where))


def test_nnx_to_torch_inverts_the_conversion(learner, seed):
    # A stream of its own: with the tests' common rng this state_dict would be the very one
    # torch_to_nnx was handed, and a learner's process that kept it could hand it back.
    rng = np.random.default_rng([seed, 22])
    in_channels, size, n_classes = _case(rng)
    sd = _state_dict(rng, in_channels, size, n_classes)
    params = _expected_params(sd, size)  # an NNX model's state, drawn here
    want = {k: v for k, v in _back_to_torch(params, sd).items() if not k.endswith("num_batches_tracked")}
    reply = learner.probe(probe_back, params, size)
    reply = reply if isinstance(reply, dict) else {}
    model = f"CNN({in_channels}, {n_classes}, {size})"
    _judge_back(reply.get("numpy"), want, params, f"nnx_to_torch(<the arrays of {model}, as NumPy arrays>, {size})")
    call = f"nnx_to_torch(nnx.to_pure_dict(nnx.state({model})), {size})"
    _judge_back(reply.get("jax"), want, params, call)
    not_numpy = reply.get("not_numpy")
    if isinstance(not_numpy, list) and not_numpy:
        fail(_("{call}, given the JAX arrays a model trained in JAX holds, returned {keys} as JAX arrays. It must "
               "return float32 NumPy arrays (torch.from_numpy and load_state_dict take NumPy, not JAX): "
               "np.asarray(value, dtype=np.float32).").format(
            call=call, keys=", ".join(str(k)[:80] for k in not_numpy[:4]) + (", ..." if len(not_numpy) > 4 else "")))


def _judge_back(got, want, params, call):
    """nnx_to_torch's result against the exact inverse of the conversion of `params`."""
    if not isinstance(got, dict):
        fail(_("{call} returned a {type}, expected a dict like TorchCNN(...).state_dict().").format(
            call=call, type=type(got).__name__))
    keys = set(map(str, got))
    missing, extra = sorted(set(want) - keys), sorted(keys - set(want))
    if missing or extra:
        fail(_("{call}: the keys differ from TorchCNN's state_dict (without num_batches_tracked): missing "
               "{missing}, unexpected {extra}.").format(call=call, missing=missing, extra=extra))
    for key, w in want.items():
        g = got[key]
        where = f"{call}['{key}']"
        if not isinstance(g, np.ndarray) or g.dtype != np.float32:
            fail(_("{where} is {got}, expected a float32 NumPy array of shape "
                   "{shape}.").format(where=where, got=getattr(g, "dtype", type(g).__name__), shape=w.shape))
        layer = key.split(".")[0]
        if layer in CONVS and key.endswith(".weight") and not _close(g, w):
            again = np.asarray(params[layer]["kernel"]).transpose(2, 3, 1, 0)
            if g.shape == again.shape and _close(g, again):
                fail(_("{where} is the kernel permuted with transpose(2, 3, 1, 0) again, which gives (in, out, kW, kH). "
                       "Going back from (kH, kW, in, out) to PyTorch's (out, in, kH, kW) takes the inverse "
                       "permutation, kernel.transpose(3, 2, 0, 1).").format(where=where))
        if key == "fc.weight" and g.shape == w.shape and _close(g, params["fc"]["kernel"].T):
            fail(_("{where} is fc's kernel transposed with its columns in NHWC order (H, W, C). PyTorch flattens "
                   "(C, H, W): reorder them back, kernel.reshape(s, s, 16, out).transpose(3, 2, 0, 1).reshape(out, -1).").format(
                where=where))
        if g.shape != w.shape:
            fail(_("{where} has shape {shape}, expected {want}.").format(where=where, shape=g.shape, want=w.shape))
        if not _close(g, w):
            fail(_("{where} differs from the exact inverse of the conversion by up to "
                   "{diff:.3g}.").format(where=where, diff=float(np.max(np.abs(g - w)))))
