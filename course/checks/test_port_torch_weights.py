"""Checks for port_torch_weights: a PyTorch MLP's weights copied into the NNX MLP.

The check draws the PyTorch weights itself and loads them into `TorchMLP` with
`load_state_dict`; the learner's `port_weights` copies them into `MLP`. The
evidence is the NNX model's parameters and outputs; the expected kernels
(weight.T), biases and logits are computed here from the weights the check drew.
"""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, assert_equal, fail
from course.engine.evidence import mlp_forward
from course.engine.words import _

TIMEOUT = 60
# (d_in, hidden, d_out, rows of x) from a small fixed set so that compiled programs are reused between runs.
# Within each member all four differ (no kernel is square, so a missing transpose cannot pass); hidden is
# wider than d_in in one member and narrower in the other.
SIZES = [(7, 12, 3, 5), (10, 6, 4, 3)]


def _case(rng):
    d_in, hidden, d_out, rows = SIZES[int(rng.integers(len(SIZES)))]
    weights = {
        "fc1.weight": rng.standard_normal((hidden, d_in)).astype(np.float32),
        "fc1.bias": rng.standard_normal(hidden).astype(np.float32),
        "fc2.weight": rng.standard_normal((d_out, hidden)).astype(np.float32),
        "fc2.bias": rng.standard_normal(d_out).astype(np.float32),
    }
    x = rng.standard_normal((rows, d_in)).astype(np.float32)
    return [d_in, hidden, d_out], weights, x


def probe_port(module, sizes, weights, seed, x):
    import jax
    import numpy as np
    import torch
    from flax import nnx

    torch_model = module.TorchMLP(*sizes)
    torch_model.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()})
    model = module.MLP(*sizes, rngs=nnx.Rngs(seed))

    def params():
        return {".".join(map(str, path)): np.array(var[...])
                for path, var in nnx.to_flat_state(nnx.state(model, nnx.Param))}

    before = params()
    module.port_weights(torch_model, model)
    try:
        out = {"nnx_out": model(np.asarray(x))}
    except Exception as e:  # judged after the parameters, which say more about the mistake
        out = {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
    after = params()
    not_jax = [".".join(map(str, path)) for path, var in nnx.to_flat_state(nnx.state(model, nnx.Param))
               if not isinstance(var[...], jax.Array)]
    return {**out, "params": after, "before": before, "not_jax": not_jax}


def _expected(weights):
    return {
        "linear1.kernel": weights["fc1.weight"].T, "linear1.bias": weights["fc1.bias"],
        "linear2.kernel": weights["fc2.weight"].T, "linear2.bias": weights["fc2.bias"],
    }


def _port(learner, rng, seed):
    sizes, weights, x = _case(rng)
    return sizes, weights, x, learner.probe(probe_port, sizes, weights, seed, x)


def test_ported_model_matches_torch_outputs(learner, rng, seed):
    sizes, weights, x, got = _port(learner, rng, seed)
    _untouched(got)
    if "error" in got:
        _judge_params(got, weights)
        fail(_("MLP{sizes}(x) after port_weights raised {error}.").format(sizes=tuple(sizes), error=got['error']))
    params = {"linear1": {"kernel": weights["fc1.weight"].T, "bias": weights["fc1.bias"]},
              "linear2": {"kernel": weights["fc2.weight"].T, "bias": weights["fc2.bias"]}}
    want = mlp_forward(params, x).astype(np.float32)  # what TorchMLP(x) computes, in float64 here
    assert_close(got["nnx_out"], want, rtol=1e-4, atol=1e-5, dtype=np.float32,
                 what=_("MLP{sizes}(x) after port_weights, against TorchMLP(x), for x of shape {shape}").format(
                     sizes=tuple(sizes), shape=x.shape))


def test_parameters_are_the_transposed_torch_weights(learner, rng, seed):
    sizes, weights, x, got = _port(learner, rng, seed)
    _judge_params(got, weights)
    _holds_jax_arrays(got)


def _holds_jax_arrays(got):
    """Name the parameters that hold NumPy arrays (the statement asks for float32 JAX arrays): a NumPy
    view such as weight.detach().numpy() shares torch's memory, so training torch on would change them."""
    not_jax = got.get("not_jax")
    if not_jax is None or not_jax:
        fail(_("after port_weights, the nnx.Params {names} hold NumPy arrays, not "
               "JAX arrays (a view such as weight.detach().numpy() even shares torch's memory). Store float32 JAX "
               "arrays in them: param[...] = value, or jnp.asarray(weight.detach().numpy().T) and so on.").format(
            names=", ".join(not_jax or [_("of the model")])))


def _untouched(got):
    """Name the parameters that port_weights left as the model's own initialisation."""
    before, after = got.get("before") or {}, got["params"]
    same = [p for p in sorted(before) if p in after and np.shape(after[p]) == np.shape(before[p])
            and np.array_equal(after[p], before[p])]
    if before and len(same) == len(before):
        fail(_("port_weights left every parameter of the model it was given as it was. Copy the weights into "
               "that model, in place, like load_state_dict (what port_weights returns is ignored)."))
    if same:
        fail(_("port_weights did not change {names}: copy every weight and bias of fc1 and fc2.").format(
            names=", ".join(same)))


def _judge_params(got, weights):
    _untouched(got)
    want = _expected(weights)
    missing = sorted(set(want) - set(got["params"]))
    if missing:
        fail(_("after port_weights, the model has no nnx.Param at {paths}: write into the parameter "
               "with `param[...] = value` instead of assigning a bare array to the attribute.").format(
            paths=", ".join(missing)))
    assert_equal(sorted(got["params"]), sorted(want), what=_("the nnx.Param paths after port_weights"))
    for path, value in want.items():
        g = got["params"][path]
        if np.shape(g) == value.shape[::-1] and value.ndim == 2 and np.allclose(g, value.T):
            fail(_("{path} after port_weights has shape {shape}: that is torch's weight as it is. "
                   "nnx.Linear's kernel is (in, out): copy weight.T.").format(path=path, shape=np.shape(g)))
        assert_close(g, value, what=_("{path} after port_weights (kernels are weight.T)").format(path=path),
                     dtype=np.float32)
