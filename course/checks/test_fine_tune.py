"""Checks for fine_tune: the learner's optimizer and step against the reference's, step by step.

Evidence: the learner's process trains a model from a start and on batches chosen
here, and returns the parameters after every step and the losses. The reference
trains the same way in the trusted process; every comparison, and the diagnosis of
what went wrong (a body that moved, an update off the accumulation beat, no
warm-up), is made here from the two trajectories.
"""

from __future__ import annotations

import numpy as np
import pytest

from course.checks.conftest import RUN_PLUGIN
from course.engine.checking import assert_close, fail, side_by_side
from course.engine.programs import ProgramError, run as run_program
from course.engine.words import _

TIMEOUT = 90
# (d, h, warmup_steps, accumulate): a small fixed set, so compiled programs are reused
# from one check to the next (the schedule's and the accumulation's step counts are
# constants of the compiled step); the values are drawn fresh. The two step counts
# differ, so that one taken for the other shows.
SETTINGS = [(5, 8, 2, 3), (9, 16, 3, 2)]
BATCH = 8
LR = 0.05
EVAL_ROWS = 16


def probe_trajectory(module, d, h, seed, lr, warmup_steps, accumulate, xs, ys, start):
    EVAL_ROWS = 16  # noqa: N806 - probes run apart from this module: the constant, written out
    import jax
    import jax.numpy as jnp
    from flax import nnx

    class Classifier(nnx.Module):
        def __init__(self, d, h, *, rngs):
            self.body = nnx.Linear(d, h, rngs=rngs)
            self.head = nnx.Linear(h, 1, rngs=rngs)

        def __call__(self, x):
            return self.head(jax.nn.relu(self.body(x)))

    import numpy as np

    def snapshot():
        # Copies now: a step may replace (or donate) the arrays the model holds.
        return jax.tree.map(np.array, nnx.to_pure_dict(nnx.state(model, nnx.Param)))

    model = Classifier(d, h, rngs=nnx.Rngs(seed))
    model.body.kernel.set_value(jnp.asarray(start["body_kernel"]))
    model.body.bias.set_value(jnp.asarray(start["body_bias"]))
    model.head.kernel.set_value(jnp.asarray(start["head_kernel"]))
    model.head.bias.set_value(jnp.asarray(start["head_bias"]))
    start = snapshot()
    optimizer = module.make_optimizer(model, lr, warmup_steps, accumulate)
    losses, params = [], []
    for x, y in zip(xs, ys):
        loss = module.train_step(model, optimizer, jnp.asarray(x), jnp.asarray(y))
        losses.append(float(jnp.asarray(loss).reshape(())))
        params.append(snapshot())
    # The trained model's forward pass, its parameters held as constants, lowered on a shape
    # alone: the check runs it on inputs it draws afterwards.
    forward = jax.jit(lambda v: model(v)).lower(jax.ShapeDtypeStruct((EVAL_ROWS, d), jnp.float32)).as_text()
    return {"start": start, "losses": losses, "params": params, "forward": forward}


def _flat(tree, prefix=""):
    out = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flat(value, name + "."))
        else:
            out[name] = value
    return out


def _lecun(rng, shape):
    """Flax's default kernel initialiser: a truncated normal of variance 1 / fan_in."""
    out = rng.standard_normal(shape)
    while (bad := np.abs(out) > 2).any():
        out[bad] = rng.standard_normal(int(bad.sum()))
    return (out / np.sqrt(shape[0]) / 0.87962566).astype(np.float32)


def _head_grad(s, x, y):
    """The gradient of the mean binary cross-entropy with logits over the head's parameters."""
    hidden = np.maximum(x @ s["body_kernel"] + s["body_bias"], 0.0)
    p = 1 / (1 + np.exp(-(hidden @ s["head_kernel"] + s["head_bias"])[:, 0]))
    r = (p - y) / len(y)
    return {"head_kernel": hidden.T @ r[:, None], "head_bias": np.array([r.sum()])}


def _setup(rng, seed):
    """The model's whole start and the batches, drawn so that clipping shows on every draw.

    The inputs' spread alternates from one real update to the next: large, so the mean
    gradient's norm exceeds 1 and clipping acts, then small, so it does not. With positive
    biases in the (frozen) body, the head's gradients stay large for small inputs while the
    body's shrink with them, so clipping over the body's gradients too scales the updates
    unevenly, which Adam does not hide (an even scale it would). Whether a drawn update's norm
    is clearly above 1 (at least 1.25) or clearly below (at most 0.75) is decided here, by
    replaying the reference's updates in NumPy, and an update whose norm is not is drawn again:
    otherwise, on a few draws in a hundred, no clipping, clipping after AdamW, or the SUM of
    the accumulated gradients instead of their mean trains the head exactly as the reference does.
    """
    d, h, warmup, accumulate = SETTINGS[int(rng.integers(len(SETTINGS)))]
    start = {"body_kernel": _lecun(rng, (d, h)), "body_bias": rng.uniform(0.5, 1.5, h).astype(np.float32),
             "head_kernel": _lecun(rng, (h, 1)), "head_bias": np.zeros(1, np.float32)}
    s = {k: v.astype(np.float64) for k, v in start.items()}
    mu = {k: np.zeros_like(s[k]) for k in ("head_kernel", "head_bias")}
    nu = {k: np.zeros_like(s[k]) for k in mu}
    xs, ys = [], []
    for n in range(warmup + 3):
        large = n % 2 == 0
        for _try in range(200):
            x = ((4.0 if large else 0.05) * rng.standard_normal((accumulate, BATCH, d))).astype(np.float32)
            if large:
                y = rng.integers(0, 2, size=(accumulate, BATCH)).astype(np.float32)
            else:  # labels drawn from the model's own probabilities: a small mean gradient
                hidden = np.maximum(x @ s["body_kernel"] + s["body_bias"], 0.0)
                p = 1 / (1 + np.exp(-(hidden @ s["head_kernel"] + s["head_bias"])[..., 0]))
                y = (rng.random((accumulate, BATCH)) < p).astype(np.float32)
            parts = [_head_grad(s, xi, yi) for xi, yi in zip(x, y)]
            g = {k: sum(part[k] for part in parts) / accumulate for k in mu}
            norm = float(np.sqrt(sum((v * v).sum() for v in g.values())))
            if (norm >= 1.25) if large else (norm <= 0.75):
                break
        xs.append(x)
        ys.append(y)
        # The reference's update: clip to global norm 1, then AdamW (weight decay 0.01), warmed up.
        lr, t = LR * min(n + 1, warmup) / warmup, n + 1
        for k, v in g.items():
            v = v / max(norm, 1.0)
            mu[k] = 0.9 * mu[k] + 0.1 * v
            nu[k] = 0.999 * nu[k] + 0.001 * v * v
            s[k] = s[k] - lr * ((mu[k] / (1 - 0.9 ** t)) / (np.sqrt(nu[k] / (1 - 0.999 ** t)) + 1e-8) + 0.01 * s[k])
    return (d, h, seed, LR, warmup, accumulate, np.concatenate(xs), np.concatenate(ys), start)


@pytest.fixture(scope="module")
def run(learner, reference, request):
    """Both trajectories, computed once per check run (each run is its own pytest session)."""
    seed = request.config.pluginmanager.get_plugin(RUN_PLUGIN).seed
    args = _setup(np.random.default_rng(seed), seed)
    got, want = side_by_side(learner, reference).probe(probe_trajectory, *args)
    d, h, _seed, lr, warmup, accumulate, xs, _ys, _start = args
    call = _("make_optimizer(model, lr={lr}, warmup_steps={warmup}, accumulate={accumulate}) on "
             "Classifier({d}, {h}), {n} batches of {batch}").format(
        lr=lr, warmup=warmup, accumulate=accumulate, d=d, h=h, n=len(xs), batch=BATCH)
    return got, want, warmup, accumulate, call


def test_the_body_stays_frozen(run):
    got, call = run[0], run[4]
    start = _flat(got["start"])
    for step, params in enumerate(got["params"]):
        flat = _flat(params)
        for name in ("body.kernel", "body.bias"):
            if name not in flat:
                fail(_("{call}: the model has no parameter {name} after step {step}. Do not change the "
                       "Classifier.").format(call=call, name=name, step=step))
            if not np.array_equal(flat[name], start[name]):
                fail(_("{call}: {name} changed at train_step call {step}; the body is frozen. "
                       "Give the optimizer only the head's parameters (wrt= a filter), or map the body to "
                       "optax.set_to_zero(). Zeroing its gradient is not enough: AdamW's weight decay still "
                       "moves it.").format(call=call, name=name, step=step + 1))


def _head_moves(got):
    """For each call, whether the head's parameters changed during it."""
    previous = _flat(got["start"])
    moves = []
    for params in got["params"]:
        flat = _flat(params)
        moves.append(not all(np.array_equal(flat.get(n), previous.get(n)) for n in ("head.kernel", "head.bias")))
        previous = flat
    return moves


def test_updates_follow_accumulation_and_warmup(run):
    got, accumulate, call = run[0], run[3], run[4]
    moves = _head_moves(got)
    off_beat = [i + 1 for i, moved in enumerate(moves) if moved and (i + 1) % accumulate != 0]
    if off_beat:
        fail(_("{call}: the head changed at train_step call(s) {calls}; with accumulate={accumulate} it may "
               "change only on calls {accumulate}, {twice}, ... Wrap the transformation in "
               "optax.MultiSteps(..., every_k_schedule={accumulate}).").format(
            call=call, calls=off_beat, accumulate=accumulate, twice=2 * accumulate))
    missed = [i + 1 for i, moved in enumerate(moves) if not moved and (i + 1) % accumulate == 0]
    if missed and missed[0] == accumulate:
        fail(_("{call}: the head did not change at the first real update (call {accumulate}). The warm-up is "
               "LambdaLR's min(n + 1, warmup_steps) / warmup_steps: the first update uses lr / warmup_steps, not "
               "0 (optax.linear_schedule(0.0, lr, warmup_steps) starts at 0). Try "
               "optax.linear_schedule(lr / warmup_steps, lr, warmup_steps - 1).").format(
            call=call, accumulate=accumulate))
    if missed:
        fail(_("{call}: the head did not change at train_step call(s) {calls}; every {accumulate}-th call is a "
               "real update.").format(call=call, calls=missed, accumulate=accumulate))
    if not any(moves):  # pragma: no cover - named above as a missed first update
        fail(_("{call}: the head never changed in {n} calls. Does train_step call optimizer.update, "
               "and does the optimizer see the head's parameters?").format(call=call, n=len(moves)))


def test_every_step_matches_the_reference(run):
    got, want, call = run[0], run[1], run[4]
    for step, (mine, ref) in enumerate(zip(got["params"], want["params"])):
        flat, ref_flat = _flat(mine), _flat(ref)
        for name in ("head.kernel", "head.bias"):
            g, w = flat.get(name), ref_flat[name]
            if not isinstance(g, np.ndarray) or g.shape != w.shape:
                fail(_("{call}: {name} after call {step} is not an array of shape {shape}.").format(
                    call=call, name=name, step=step + 1, shape=w.shape))
            if not np.allclose(g, w, rtol=1e-4, atol=1e-6):
                diff = float(np.max(np.abs(g - w)))
                fail(_("{call}: {name} after train_step call {step} differs from the reference's by up to "
                       "{diff:.3g}. Check, in order: clipping to global norm 1.0 on the head's gradients only, "
                       "before AdamW; AdamW's weight_decay=0.01 (PyTorch's default, not Optax's 1e-4); the "
                       "warm-up (lr / warmup_steps at the first update, lr from update warmup_steps - 1 on); the "
                       "MEAN (not the sum) of the accumulated gradients.").format(
                    call=call, name=name, step=step + 1, diff=diff))
    assert_close(np.array(got["losses"], np.float32), np.array(want["losses"], np.float32),
                 what=_("{call}: the loss returned by each train_step call (the mean binary cross-entropy "
                        "with logits of the batch, before the update)").format(call=call), rtol=1e-4, atol=1e-6)


def _forward(params, x):
    flat = {k: np.asarray(v, np.float64) for k, v in _flat(params).items()}
    hidden = np.maximum(x @ flat["body.kernel"] + flat["body.bias"], 0.0)
    return hidden @ flat["head.kernel"] + flat["head.bias"]


def test_trained_model_runs_here(run, rng):
    """The trained model as a program, run here: its parameters are what its forward pass uses, not
    what the learner's process reports reading from it."""
    got, want, call = run[0], run[1], run[4]
    d = _flat(want["start"])["body.kernel"].shape[0]
    x = (2.0 * rng.standard_normal((EVAL_ROWS, d))).astype(np.float32)
    try:
        (logits,) = run_program(got.get("forward"), x)
    except (ProgramError, ValueError) as e:
        fail(_("{call}: the trained model's forward pass, lowered with jax.jit, could not be run by the check: "
               "{error}").format(call=call, error=e))
    expected = _forward(want["params"][-1], x)
    if logits.shape != expected.shape:
        fail(_("{call}: the trained model returned logits of shape {shape} for x {x}, expected "
               "{expected}.").format(call=call, shape=logits.shape, x=x.shape, expected=expected.shape))
    if np.allclose(logits, expected, rtol=1e-4, atol=1e-5):
        return
    reported = _forward(got["params"][-1], x) if got.get("params") else None
    if reported is not None and not np.allclose(logits, reported, rtol=1e-4, atol=1e-5):
        fail(_("{call}: the trained model's forward pass, run by the check on fresh inputs, does not use the "
               "parameters your process reported (nnx.state / nnx.to_pure_dict): the model holds other weights. "
               "Is the body really frozen?").format(call=call))
    diff = float(np.max(np.abs(logits - expected)))
    fail(_("{call}: the trained model's logits on fresh inputs, run by the check, differ from the reference's by up "
           "to {diff:.3g}.").format(call=call, diff=diff))
