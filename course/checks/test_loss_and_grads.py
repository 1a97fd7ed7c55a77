"""Checks for loss_and_grads: the MLP's loss, accuracy and gradients.

The check draws the parameters itself and the probe loads them into a model it
builds (not the learner's class), so the check judges the two functions alone.
The evidence is what they return; the expected loss, accuracy and gradients
are computed here, in float64, from the parameters and data the check drew
(backpropagation through Linear, ReLU, Linear and the mean binary
cross-entropy written out in NumPy).
"""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, assert_tree_close, fail
from course.engine.evidence import bce_with_logits
from course.engine.words import _

TIMEOUT = 60

# (d_in, hidden, batch): a small fixed set, so each shape compiles once per process.
SIZES = [(9, 16, 24), (5, 12, 32), (3, 4, 6)]


def probe_loss_and_grads(module, params, x, y, which):
    import jax
    import jax.numpy as jnp
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, d_in, hidden, *, rngs):
            self.linear1 = nnx.Linear(d_in, hidden, rngs=rngs)
            self.linear2 = nnx.Linear(hidden, 1, rngs=rngs)

        def __call__(self, x):
            return self.linear2(jax.nn.relu(self.linear1(x)))

    d_in, hidden = params["linear1"]["kernel"].shape
    # Built abstractly (no random initialisation to run: every value is replaced).
    model = nnx.eval_shape(lambda: MLP(d_in, hidden, rngs=nnx.Rngs(0)))
    for layer in ("linear1", "linear2"):
        for name in ("kernel", "bias"):
            getattr(getattr(model, layer), name).set_value(jnp.asarray(params[layer][name]))
    x, y = jnp.asarray(x), jnp.asarray(y)
    if which == "loss_fn":
        out = module.loss_fn(model, x, y)
        if not isinstance(out, tuple) or len(out) != 2:
            return {"error": "not_a_pair", "type": type(out).__name__}
        return {"loss": out[0], "accuracy": out[1]}
    out = module.loss_and_grads(model, x, y)
    if not isinstance(out, tuple) or len(out) != 3:
        return {"error": "not_a_triple", "type": type(out).__name__}
    loss, accuracy, grads = out
    if isinstance(grads, nnx.State):
        grads = nnx.to_pure_dict(grads)
    return {"loss": loss, "accuracy": accuracy, "grads": grads,
            "params_after": nnx.to_pure_dict(nnx.state(model, nnx.Param))}


def _case(rng, sizes=None):
    d_in, hidden, batch = sizes or SIZES[int(rng.integers(2))]
    # Redrawn (the parameters, x, the output layer, the labels) until every condition of _draw_batch
    # holds; on the tiny model a draw can leave most rows with no active unit, all on one logit.
    for _ in range(100):
        params = {
            "linear1": {"kernel": (rng.standard_normal((d_in, hidden)) / np.sqrt(d_in)).astype(np.float32),
                        "bias": (0.1 * rng.standard_normal(hidden)).astype(np.float32)},
            "linear2": {"kernel": (rng.standard_normal((hidden, 1)) / np.sqrt(hidden)).astype(np.float32),
                        "bias": np.zeros(1, np.float32)},  # set by _draw_batch
        }
        for _ in range(10):
            x, y = _draw_batch(rng, params, batch)
            if y is not None:
                return params, x, y
    raise RuntimeError(f"no draw for sizes {(d_in, hidden, batch)} tells the accuracy's thresholds apart")


def _draw_batch(rng, params, batch):
    """x and y for `params` (whose output layer it sets), or (x, None) where this x cannot serve."""
    # No hidden unit within 1e-3 of ReLU's kink, and no logit within 1e-3 of 0 or 0.5, where float32
    # and the float64 expected values could take different sides (a gradient or a prediction flips).
    x = rng.standard_normal((batch, params["linear1"]["kernel"].shape[0])).astype(np.float32)
    pre = x.astype(np.float64) @ params["linear1"]["kernel"] + params["linear1"]["bias"]
    if np.min(np.abs(pre)) <= 1e-3:
        return x, None
    # The logits straddle both thresholds a learner may pick: spread like a trained model's (a
    # standard deviation of 1 to 2, not the few tenths of a fresh one, where half the batch can sit
    # inside (0, 0.5)), with the row just above the median at a logit in (0.05, 0.45), so that
    # `logit > 0` and `logit > 0.5` (a probability's threshold put on logits) disagree there, and
    # about half the logits positive.
    h = np.maximum(pre, 0)
    kernel = params["linear2"]["kernel"]
    spread = float(np.std(h @ kernel))
    if spread > 0:
        kernel = (kernel * rng.uniform(1, 2) / spread).astype(np.float32)
    z = (h @ kernel)[:, 0]
    bias = np.array([rng.uniform(0.05, 0.45) - np.sort(z)[len(z) // 2]], np.float32)
    logits = z + bias[0]
    if np.min(np.abs(logits)) <= 1e-3 or np.min(np.abs(logits - 0.5)) <= 1e-3:
        return x, None
    params["linear2"]["kernel"], params["linear2"]["bias"] = kernel, bias
    # Labels under which every plausible wrong rule scores another accuracy than `logit > 0`: a
    # threshold of 0.5 on the logits, the comparison turned around (`logit < 0`: 1 - accuracy), a
    # threshold that is always or never met (sigmoid(z) > 0, a constant prediction), and the
    # predictions' mean, never compared with the labels. They also score different accuracies from
    # one another, so that a wrong accuracy names its rule.
    for _ in range(200):
        y = rng.integers(0, 2, size=batch).astype(np.float32)
        scores = [np.mean((logits > 0) == (y == 1)), *_wrong_accuracies(logits, y).values()]
        if len(np.unique(np.round(np.array(scores) * batch))) == len(scores):
            return x, y
    return x, None


def _wrong_accuracies(z, y):
    """What the plausible wrong thresholds score on logits z and labels y."""
    return {"half": np.mean((z > 0.5) == (y == 1)), "flipped": np.mean((z < 0) == (y == 1)),
            "always": np.mean(y == 1), "never": np.mean(y == 0), "unlabelled": np.mean(z > 0)}


def _expected(params, x, y):
    """Loss, accuracy and gradients in float64, by hand."""
    p = {layer: {k: np.asarray(v, np.float64) for k, v in leaves.items()} for layer, leaves in params.items()}
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    pre = x64 @ p["linear1"]["kernel"] + p["linear1"]["bias"]
    h = np.maximum(pre, 0)
    z = (h @ p["linear2"]["kernel"] + p["linear2"]["bias"])[:, 0]
    loss = bce_with_logits(z, y64).mean()
    accuracy = np.mean((z > 0) == (y64 == 1))
    dz = (1 / (1 + np.exp(-z)) - y64)[:, None] / len(y64)
    dh = (dz @ p["linear2"]["kernel"].T) * (pre > 0)
    grads = {
        "linear1": {"kernel": x64.T @ dh, "bias": dh.sum(axis=0)},
        "linear2": {"kernel": h.T @ dz, "bias": dz.sum(axis=0)},
    }
    f32 = {layer: {k: v.astype(np.float32) for k, v in leaves.items()} for layer, leaves in grads.items()}
    return np.float32(loss), np.float32(accuracy), f32, z


def _call(learner, params, x, y, which):
    got = learner.probe(probe_loss_and_grads, params, x, y, which)
    if "error" in got:
        message = (_("loss_fn returned {type}, expected a tuple (loss, accuracy).") if which == "loss_fn" else
                   _("loss_and_grads returned {type}, expected a tuple (loss, accuracy, grads)."))
        fail(message.format(type=got.get("type")))
    return got


def _judge_loss(got, params, x, y, where):
    loss, accuracy, __, z = _expected(params, x, y)
    g = got["loss"]
    if isinstance(g, (np.ndarray, np.generic, float)) and np.shape(g) == ():
        broadcast = bce_with_logits(z[:, None], y[None, :].astype(np.float64)).mean()
        if not np.isclose(loss, broadcast, rtol=1e-4) and np.isclose(float(g), broadcast, rtol=1e-4):
            fail(_("{where}[0]: the loss is {got:.6g}, the mean over a (batch, batch) table: the logits of shape "
                   "(batch, 1) were broadcast against the labels of shape (batch,). Squeeze the logits to (batch,) "
                   "first; expected {want:.6g}.").format(where=where, got=float(g), want=float(loss)))
        if np.isclose(float(g), loss * len(y), rtol=1e-4) and len(y) > 1:
            fail(_("{where}[0]: the loss is {got:.6g}, the sum over the batch; expected the mean, "
                   "{want:.6g}.").format(where=where, got=float(g), want=float(loss)))
    assert_close(g, loss, what=_("{where}[0], the mean binary cross-entropy").format(where=where),
                 rtol=1e-4, atol=1e-6, dtype=np.float32)
    _name_wrong_threshold(got["accuracy"], accuracy, z, y, where)
    assert_close(got["accuracy"], accuracy, what=_("{where}[1], the accuracy (the fraction of rows where "
                                                   "logit > 0 agrees with y == 1)").format(where=where),
                 rtol=1e-5, atol=1e-6, dtype=np.float32)


def _name_wrong_threshold(got, want, z, y, where):
    """An accuracy that one plausible wrong threshold, and no other, scores: say which."""
    if not isinstance(got, (np.ndarray, np.generic, float)) or np.shape(got) != () or not np.isfinite(got):
        return
    if np.isclose(float(got), want, rtol=1e-5, atol=1e-6):
        return
    named = [rule for rule, score in _wrong_accuracies(z, y).items()
             if np.isclose(float(got), score, rtol=1e-5, atol=1e-6)]
    if len(named) != 1:
        return
    words = {
        "half": _("{where}[1]: the accuracy is {got:.4g}, what `logit > 0.5` scores. 0.5 is a probability's "
                  "threshold; on logits it is 0 (sigmoid(logit) > 0.5 exactly where logit > 0). Expected {want:.4g}."),
        "flipped": _("{where}[1]: the accuracy is {got:.4g}, what `logit < 0` scores: the predictions are turned "
                     "around. A row is predicted 1 where logit > 0. Expected {want:.4g}."),
        "always": _("{where}[1]: the accuracy is {got:.4g}, what predicting 1 for every row scores: the threshold "
                    "is always met (sigmoid(logit) > 0 always holds). Predict 1 where logit > 0. Expected {want:.4g}."),
        "never": _("{where}[1]: the accuracy is {got:.4g}, what predicting 0 for every row scores: the threshold "
                   "is never met. Predict 1 where logit > 0. Expected {want:.4g}."),
        "unlabelled": _("{where}[1]: the accuracy is {got:.4g}, the fraction of rows where logit > 0: the "
                        "predictions are not compared with the labels. Count the rows where (logit > 0) equals "
                        "(y == 1). Expected {want:.4g}."),
    }
    fail(words[named[0]].format(where=where, got=float(got), want=float(want)))


def test_loss_fn(learner, rng):
    params, x, y = _case(rng)
    got = _call(learner, params, x, y, "loss_fn")
    _judge_loss(got, params, x, y, f"loss_fn(MLP, x {x.shape}, y {y.shape})")


def test_loss_and_grads(learner, rng):
    params, x, y = _case(rng)
    got = _call(learner, params, x, y, "grads")
    where = f"loss_and_grads(MLP, x {x.shape}, y {y.shape})"
    _judge_loss(got, params, x, y, where)
    __, __, grads, __ = _expected(params, x, y)
    _name_summed_gradients(got["grads"], grads, len(y), where)
    assert_tree_close(got["grads"], grads, what=_("{where}[2], the gradients").format(where=where),
                      rtol=1e-3, atol=1e-5, dtype=np.float32)
    assert_tree_close(got["params_after"], params, what=_("the model's parameters after loss_and_grads "
                                                          "(computing gradients must not update them)"),
                      rtol=0, atol=0)


def _name_summed_gradients(got, want, batch, where):
    """Gradients `batch` times too large: those of the summed loss, not of the mean."""
    try:
        pairs = [(np.asarray(got[layer][name], np.float64), want[layer][name].astype(np.float64))
                 for layer in want for name in want[layer]]
    except (KeyError, TypeError, IndexError):
        return  # the structure is judged by assert_tree_close
    if all(g.shape == w.shape for g, w in pairs) and all(
            np.allclose(g, batch * w, rtol=1e-3, atol=1e-5) for g, w in pairs) and batch > 1:
        fail(_("{where}[2]: the gradients are {batch} times too large, those of the loss summed over the batch. "
               "Differentiate the mean loss, the one you return.").format(where=where, batch=batch))


def test_gradients_on_a_tiny_model(learner, rng):
    params, x, y = _case(rng, SIZES[2])
    got = _call(learner, params, x, y, "grads")
    __, __, grads, __ = _expected(params, x, y)
    assert_tree_close(got["grads"], grads, what=_("loss_and_grads on MLP(3, 4) with 6 rows, against the gradients "
                                                  "of the mean binary cross-entropy computed by hand in float64"),
                      rtol=1e-3, atol=1e-5)


