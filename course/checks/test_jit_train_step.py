"""Checks for jit_train_step: one compilation per epoch, same result as the ragged loop.

Compilations are counted by the model itself: the probe's MLP records the input
shape every time it is called with a tracer (that is, every time a compiled
function that calls it is traced). Eager calls are not recorded.
"""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, assert_tree_close, fail

TIMEOUT = 120


def probe_epochs(module, d_in, hidden, seed, batch_size, epochs):
    import jax
    import jax.numpy as jnp
    import optax
    from flax import nnx

    traced = []

    class MLP(nnx.Module):
        def __init__(self, d_in, hidden, *, rngs):
            self.linear1 = nnx.Linear(d_in, hidden, rngs=rngs)
            self.linear2 = nnx.Linear(hidden, 1, rngs=rngs)

        def __call__(self, x):
            if isinstance(x, jax.core.Tracer):
                traced.append(list(x.shape))
            return self.linear2(jax.nn.relu(self.linear1(x)))

    model = MLP(d_in, hidden, rngs=nnx.Rngs(seed))
    optimizer = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)
    losses, traces_per_epoch = [], []
    for x, y in epochs:
        before = len(traced)
        losses.append(module.train_epoch(model, optimizer, x, y, batch_size))
        traces_per_epoch.append(traced[before:])
    return {"losses": losses, "traces": traces_per_epoch,
            "params": nnx.to_pure_dict(nnx.state(model, nnx.Param))}


def probe_ragged_reference(module, d_in, hidden, seed, batch_size, epochs):
    """The plain loop the padded one must reproduce: eager, ragged last batch."""
    import jax
    import jax.numpy as jnp
    import optax
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, d_in, hidden, *, rngs):
            self.linear1 = nnx.Linear(d_in, hidden, rngs=rngs)
            self.linear2 = nnx.Linear(hidden, 1, rngs=rngs)

        def __call__(self, x):
            return self.linear2(jax.nn.relu(self.linear1(x)))

    def loss_fn(model, x, y):
        return optax.sigmoid_binary_cross_entropy(model(x).squeeze(-1), y).mean()

    model = MLP(d_in, hidden, rngs=nnx.Rngs(seed))
    optimizer = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)
    losses = []
    for x, y in epochs:
        epoch = []
        for start in range(0, len(x), batch_size):
            loss, grads = nnx.value_and_grad(loss_fn)(model, jnp.asarray(x[start:start + batch_size]),
                                                      jnp.asarray(y[start:start + batch_size]))
            optimizer.update(model, grads)
            epoch.append(float(loss))
        losses.append(epoch)
    return {"losses": losses, "params": nnx.to_pure_dict(nnx.state(model, nnx.Param))}


def probe_masked_loss(module, d_in, hidden, seed, x, y, mask):
    import jax
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, d_in, hidden, *, rngs):
            self.linear1 = nnx.Linear(d_in, hidden, rngs=rngs)
            self.linear2 = nnx.Linear(hidden, 1, rngs=rngs)

        def __call__(self, x):
            return self.linear2(jax.nn.relu(self.linear1(x)))

    return module.masked_loss(MLP(d_in, hidden, rngs=nnx.Rngs(seed)), x, y, mask)


def _setup(rng):
    d_in, hidden = int(rng.integers(2, 10)), int(rng.integers(3, 16))
    batch_size = int(rng.integers(4, 12))
    n = batch_size * int(rng.integers(2, 5)) + int(rng.integers(1, batch_size))  # never a multiple
    epochs = []
    for _ in range(2):
        x = rng.standard_normal((n, d_in)).astype(np.float32)
        y = rng.integers(0, 2, size=n).astype(np.float32)
        epochs.append([x, y])
    return d_in, hidden, batch_size, n, epochs


def test_one_compilation_per_epoch(learner, rng, seed):
    d_in, hidden, batch_size, n, epochs = _setup(rng)
    got = learner.probe(probe_epochs, d_in, hidden, seed, batch_size, epochs)
    call = f"train_epoch(model, optimizer, x, y, batch_size={batch_size}) with {n} rows"
    first, second = got["traces"]
    if not first:
        fail(f"{call}: the model was never traced, so the step was not compiled. "
             "Decorate train_step with @nnx.jit (or compile it another way).")
    shapes = sorted({tuple(s) for s in first})
    if len(shapes) > 1:
        fail(f"{call}: the step was compiled for {len(shapes)} input shapes {shapes}; "
             "the short last batch must be padded to the full batch size.")
    if second:
        fail(f"{call}: the second epoch traced the step again (for shapes {sorted({tuple(s) for s in second})}). "
             "A compiled step must be reused across epochs: build it once, outside train_epoch's loop.")


def test_same_result_as_the_ragged_loop(learner, reference, rng, seed):
    d_in, hidden, batch_size, n, epochs = _setup(rng)
    got = learner.probe(probe_epochs, d_in, hidden, seed, batch_size, epochs)
    want = reference.probe(probe_ragged_reference, d_in, hidden, seed, batch_size, epochs)
    call = f"two epochs of train_epoch(..., batch_size={batch_size}) on {n} rows"
    n_batches = -(-n // batch_size)
    for e, losses in enumerate(got["losses"]):
        if not isinstance(losses, list) or len(losses) != n_batches:
            fail(f"{call}: epoch {e} returned {losses!r:.200}; expected a list of {n_batches} losses, "
                 "one per batch.")
    assert_tree_close(got["losses"], want["losses"],
                      what=f"{call}: the per-batch losses (the padded last batch must give the ragged batch's loss)",
                      rtol=1e-4, atol=1e-6)
    assert_tree_close(got["params"], want["params"], what=f"{call}: the parameters afterwards",
                      rtol=1e-4, atol=1e-5)


def test_masked_loss(learner, reference, rng, seed):
    d_in, hidden, batch = int(rng.integers(2, 10)), int(rng.integers(3, 16)), int(rng.integers(4, 20))
    x = rng.standard_normal((batch, d_in)).astype(np.float32)
    y = rng.integers(0, 2, size=batch).astype(np.float32)
    mask = (rng.random(batch) < 0.6).astype(np.float32)
    mask[0] = 1.0
    for m, label in ((mask, "a random 0/1 mask"), (np.ones(batch, np.float32), "an all-ones mask")):
        got = learner.probe(probe_masked_loss, d_in, hidden, seed, x, y, m)
        want = reference.probe(probe_masked_loss, d_in, hidden, seed, x, y, m)
        assert_close(got, want, what=f"masked_loss(model, x {x.shape}, y, mask) with {label}", rtol=1e-4, atol=1e-6)
