"""Checks for loss_and_grads: the MLP's loss, accuracy and gradients.

The model is built inside the probe (not taken from the learner's file), so the
check judges the two functions alone. Gradients are compared with the reference
and, on a tiny model, with central finite differences computed here in float64.
"""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, assert_tree_close, fail

TIMEOUT = 60


def probe_loss_and_grads(module, d_in, hidden, seed, x, y, which):
    import jax
    import jax.numpy as jnp
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, d_in, hidden, *, rngs):
            self.linear1 = nnx.Linear(d_in, hidden, rngs=rngs)
            self.linear2 = nnx.Linear(hidden, 1, rngs=rngs)

        def __call__(self, x):
            return self.linear2(jax.nn.relu(self.linear1(x)))

    def plain(tree):
        return nnx.to_pure_dict(tree) if isinstance(tree, nnx.State) else tree

    model = MLP(d_in, hidden, rngs=nnx.Rngs(seed))
    before = nnx.to_pure_dict(nnx.state(model, nnx.Param))
    x, y = jnp.asarray(x), jnp.asarray(y)
    if which == "loss_fn":
        out = module.loss_fn(model, x, y)
        if not isinstance(out, tuple) or len(out) != 2:
            return {"error": f"loss_fn returned {type(out).__name__}, expected a tuple (loss, accuracy)"}
        return {"loss": out[0], "accuracy": out[1]}
    out = module.loss_and_grads(model, x, y)
    if not isinstance(out, tuple) or len(out) != 3:
        return {"error": f"loss_and_grads returned {type(out).__name__}, expected a tuple (loss, accuracy, grads)"}
    loss, accuracy, grads = out
    return {"loss": loss, "accuracy": accuracy, "grads": plain(grads),
            "params_before": before, "params_after": nnx.to_pure_dict(nnx.state(model, nnx.Param))}


def _data(rng, batch, d_in):
    x = rng.standard_normal((batch, d_in)).astype(np.float32)
    y = rng.integers(0, 2, size=batch).astype(np.float32)
    return x, y


def _call(side, rng_sizes, seed, x, y, which):
    d_in, hidden = rng_sizes
    got = side.probe(probe_loss_and_grads, d_in, hidden, seed, x, y, which)
    if "error" in got:
        fail(got["error"] + ".")
    return got


def test_loss_fn_matches_reference(learner, reference, rng, seed):
    d_in, hidden, batch = int(rng.integers(2, 12)), int(rng.integers(3, 20)), int(rng.integers(5, 40))
    x, y = _data(rng, batch, d_in)
    got = _call(learner, (d_in, hidden), seed, x, y, "loss_fn")
    want = _call(reference, (d_in, hidden), seed, x, y, "loss_fn")
    where = f"loss_fn(MLP({d_in}, {hidden}), x {x.shape}, y {y.shape})"
    assert_close(got["loss"], want["loss"], what=f"{where}[0], the mean binary cross-entropy", rtol=1e-4, atol=1e-6)
    assert_close(got["accuracy"], want["accuracy"], what=f"{where}[1], the accuracy", rtol=1e-5, atol=1e-6)


def test_gradients_match_reference(learner, reference, rng, seed):
    d_in, hidden, batch = int(rng.integers(2, 12)), int(rng.integers(3, 20)), int(rng.integers(5, 40))
    x, y = _data(rng, batch, d_in)
    got = _call(learner, (d_in, hidden), seed, x, y, "grads")
    want = _call(reference, (d_in, hidden), seed, x, y, "grads")
    where = f"loss_and_grads(MLP({d_in}, {hidden}), x {x.shape}, y {y.shape})"
    assert_close(got["loss"], want["loss"], what=f"{where}[0], the loss", rtol=1e-4, atol=1e-6)
    assert_close(got["accuracy"], want["accuracy"], what=f"{where}[1], the accuracy")
    assert_tree_close(got["grads"], want["grads"], what=f"{where}[2], the gradients", rtol=1e-3, atol=1e-5)


def test_model_is_not_changed(learner, rng, seed):
    x, y = _data(rng, 8, 4)
    got = _call(learner, (4, 6), seed, x, y, "grads")
    assert_tree_close(got["params_after"], got["params_before"],
                      what="the model's parameters after loss_and_grads (computing gradients must not update them)")


def _numpy_loss(params, x, y):
    h = np.maximum(x @ params["linear1"]["kernel"] + params["linear1"]["bias"], 0.0)
    z = (h @ params["linear2"]["kernel"] + params["linear2"]["bias"])[:, 0]
    return np.mean(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z))))


def test_gradients_match_finite_differences(learner, rng, seed):
    x, y = _data(rng, 6, 3)
    got = _call(learner, (3, 4), seed, x, y, "grads")
    params = {layer: {name: np.asarray(v, dtype=np.float64) for name, v in leaves.items()}
              for layer, leaves in got["params_before"].items()}
    eps = 1e-6
    numeric = {}
    for layer, leaves in params.items():
        numeric[layer] = {}
        for name, value in leaves.items():
            g = np.zeros_like(value)
            for idx in np.ndindex(value.shape):
                old = value[idx]
                value[idx] = old + eps
                up = _numpy_loss(params, x.astype(np.float64), y.astype(np.float64))
                value[idx] = old - eps
                down = _numpy_loss(params, x.astype(np.float64), y.astype(np.float64))
                value[idx] = old
                g[idx] = (up - down) / (2 * eps)
            numeric[layer][name] = g.astype(np.float32)
    assert_tree_close(got["grads"], numeric,
                      what="loss_and_grads on MLP(3, 4) with 6 rows, against central finite differences "
                           "of the mean binary cross-entropy (float64)",
                      rtol=1e-3, atol=1e-5)
