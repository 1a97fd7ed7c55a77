"""Checks for port_torch_weights: a PyTorch MLP's weights copied into the NNX MLP."""

from __future__ import annotations

from course.engine.checking import assert_close, assert_equal, fail

TIMEOUT = 60


def _case(rng):
    d_in, hidden, d_out = (int(v) for v in rng.choice(range(2, 24), size=3, replace=False))
    x = rng.standard_normal((int(rng.integers(2, 9)), d_in)).astype("float32")
    return [d_in, hidden, d_out], x


def probe_port(module, sizes, seed, x):
    import numpy as np
    import torch
    from flax import nnx

    torch.manual_seed(seed)
    torch_model = module.TorchMLP(*sizes)
    # A different seed on the NNX side: a port that copies nothing cannot match by luck.
    model = module.MLP(*sizes, rngs=nnx.Rngs(seed + 1))
    module.port_weights(torch_model, model)
    with torch.no_grad():
        torch_out = torch_model(torch.from_numpy(x)).numpy()
    params = {
        ".".join(map(str, path)): np.asarray(var[...])
        for path, var in nnx.to_flat_state(nnx.state(model, nnx.Param))
    }
    return {
        "torch_out": torch_out,
        "nnx_out": np.asarray(model(x)),
        "params": params,
    }


def _port(learner, reference, rng, seed):
    sizes, x = _case(rng)
    return sizes, x, learner.probe(probe_port, sizes, seed, x), reference.probe(probe_port, sizes, seed, x)


def test_ported_model_matches_torch_outputs(learner, reference, rng, seed):
    sizes, x, got, want = _port(learner, reference, rng, seed)
    assert_close(got["torch_out"], want["torch_out"],
                 what=f"TorchMLP{tuple(sizes)} outputs (TorchMLP and MLP are given: leave them unchanged)")
    assert_close(got["nnx_out"], want["torch_out"], rtol=1e-4, atol=1e-5,
                 what=f"MLP{tuple(sizes)}(x) after port_weights, against TorchMLP(x), for x of shape {x.shape}")


def test_parameters_are_the_transposed_torch_weights(learner, reference, rng, seed):
    sizes, x, got, want = _port(learner, reference, rng, seed)
    missing = sorted(set(want["params"]) - set(got["params"]))
    if missing:
        fail(f"after port_weights, the model has no nnx.Param at {', '.join(missing)}: write into the parameter with `param[...] = value` "
             "instead of assigning a bare array to the attribute.")
    assert_equal(sorted(got["params"]), sorted(want["params"]), what="the nnx.Param paths after port_weights")
    for path, value in want["params"].items():
        if got["params"][path].dtype != value.dtype:
            fail(f"{path} has dtype {got['params'][path].dtype} after port_weights, expected {value.dtype}.")
        assert_close(got["params"][path], value, what=f"{path} after port_weights (kernels are weight.T)")

