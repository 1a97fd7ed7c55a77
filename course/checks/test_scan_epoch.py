"""Checks for scan_epoch: a lax.scan-fused epoch equals the step-by-step loop and compiles once."""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, assert_equal, assert_tree_close, fail

TIMEOUT = 120


def probe_epoch(module, xb, yb, hidden, lr, seed):
    import jax
    import jax.numpy as jnp
    import optax
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, d, h, rngs):
            self.l1 = nnx.Linear(d, h, rngs=rngs)
            self.l2 = nnx.Linear(h, 1, rngs=rngs)

        def __call__(self, v):
            return self.l2(jax.nn.relu(self.l1(v)))

    model = MLP(xb.shape[-1], hidden, nnx.Rngs(seed))
    optimizer = nnx.Optimizer(model, optax.adam(lr), wrt=nnx.Param)
    losses = module.scan_epoch(model, optimizer, jnp.asarray(xb), jnp.asarray(yb))
    return {
        "losses": losses,
        "params": nnx.to_pure_dict(nnx.state(model, nnx.Param)),
        "step": int(optimizer.step[...]),
    }


def probe_program_sizes(module, lengths, batch, features):
    import jax
    import jax.numpy as jnp
    import optax
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, d, h, rngs):
            self.l1 = nnx.Linear(d, h, rngs=rngs)
            self.l2 = nnx.Linear(h, 1, rngs=rngs)

        def __call__(self, v):
            return self.l2(jax.nn.relu(self.l1(v)))

    model = MLP(features, 8, nnx.Rngs(0))
    graphdef, state = nnx.split((model, nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)))

    def pure(state, xb, yb):
        m, opt = nnx.merge(graphdef, state)
        losses = module.scan_epoch(m, opt, xb, yb)
        return nnx.state((m, opt)), losses

    sizes = []
    for n in lengths:
        xb = jnp.zeros((n, batch, features), jnp.float32)
        yb = jnp.zeros((n, batch), jnp.float32)
        sizes.append(len(str(jax.make_jaxpr(pure)(state, xb, yb))))
    return sizes


def _epoch(rng):
    n, b, d = int(rng.integers(2, 7)), int(rng.integers(3, 9)), int(rng.integers(3, 10))
    xb = rng.standard_normal((n, b, d)).astype(np.float32)
    yb = rng.integers(0, 2, size=(n, b)).astype(np.float32)
    return xb, yb, int(rng.integers(4, 17)), float(rng.choice([1e-3, 1e-2, 5e-2]))


def test_epoch_equals_the_step_by_step_loop(learner, reference, rng, seed):
    xb, yb, hidden, lr = _epoch(rng)
    got = learner.probe(probe_epoch, xb, yb, hidden, lr, seed)
    want = reference.probe(probe_epoch, xb, yb, hidden, lr, seed)
    call = f"scan_epoch(model, Adam({lr}), xb {xb.shape}, yb {yb.shape})"
    assert_close(got["losses"], want["losses"], what=f"{call}: losses", rtol=1e-4, atol=1e-5)
    assert_equal(got["step"], want["step"], what=f"{call}: optimizer.step afterwards (one update per batch)")
    assert_tree_close(got["params"], want["params"], what=f"{call}: parameters afterwards", rtol=1e-4, atol=1e-5)


def test_compiled_program_does_not_grow_with_the_epoch(learner, rng):
    batch, features = int(rng.integers(3, 7)), int(rng.integers(3, 8))
    small, large = learner.probe(probe_program_sizes, [2, 8], batch, features)
    if large > small * 1.25:
        fail(
            "scan_epoch traced for 8 batches gives a program "
            f"{large / small:.1f}x the size of the one for 2 batches: the loop over batches is "
            "unrolled. Use jax.lax.scan (or nnx.scan) so that one step is compiled once."
        )
