"""Checks for scan_epoch: a lax.scan-fused epoch equals the step-by-step loop and compiles once.

Whether the loop over batches is a compiled loop is read here from the
program: the learner's epoch is lowered for 2 and for 8 batches in the
learner's process and the StableHLO text comes back; a scan is a `while`
loop whose body does not grow with the number of batches, an unrolled Python
loop repeats the step eight times (`course.engine.programs`).
"""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, assert_equal, assert_tree_close, fail, side_by_side
from course.engine.programs import ProgramError, parse

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


def probe_programs(module, lengths, batch, features):
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

    programs = []
    for n in lengths:
        xb = jax.ShapeDtypeStruct((n, batch, features), jnp.float32)
        yb = jax.ShapeDtypeStruct((n, batch), jnp.float32)
        programs.append(jax.jit(pure).lower(state, xb, yb).as_text())
    return programs


def _epoch(rng):
    # Shapes from a small set (compiled programs are reused between runs); values fresh.
    n, b, d = int(rng.choice([3, 5])), int(rng.choice([4, 8])), int(rng.choice([3, 6]))
    xb = rng.standard_normal((n, b, d)).astype(np.float32)
    yb = rng.integers(0, 2, size=(n, b)).astype(np.float32)
    return xb, yb, int(rng.choice([8, 16])), float(rng.choice([1e-3, 1e-2, 5e-2]))


def test_epoch_equals_the_step_by_step_loop(learner, reference, rng, seed):
    xb, yb, hidden, lr = _epoch(rng)
    got, want = side_by_side(learner, reference).probe(probe_epoch, xb, yb, hidden, lr, seed)
    call = f"scan_epoch(model, Adam({lr}), xb {xb.shape}, yb {yb.shape})"
    assert_close(got["losses"], want["losses"], what=f"{call}: losses", rtol=1e-4, atol=1e-5)
    assert_equal(got["step"], want["step"], what=f"{call}: optimizer.step afterwards (one update per batch)")
    assert_tree_close(got["params"], want["params"], what=f"{call}: parameters afterwards", rtol=1e-4, atol=1e-5)


def test_compiled_program_does_not_grow_with_the_epoch(learner, rng):
    batch, features = int(rng.choice([4, 8])), int(rng.choice([3, 6]))
    texts = learner.probe(probe_programs, [2, 8], batch, features)
    if not isinstance(texts, list) or len(texts) != 2:
        fail(f"the check could not lower scan_epoch for 2 and 8 batches (got {type(texts).__name__}).")
    try:
        small, large = parse(texts[0]), parse(texts[1])
    except ProgramError as e:
        fail(f"scan_epoch could not be read as a compiled program: {e}.")
    call = f"scan_epoch lowered for xb (2, {batch}, {features}) and (8, {batch}, {features})"
    for n, program in ((2, small), (8, large)):
        if not program.takes((n, batch, features)):
            fail(f"{call}: the program lowered for {n} batches takes {sorted({a.shape for a in program.args})}, "
                 f"not xb ({n}, {batch}, {features}).")
    if large.size > small.size * 1.25 or large.count("dot_general") > small.count("dot_general"):
        fail(f"{call}: the program for 8 batches has {large.size} operations and {large.count('dot_general')} "
             f"matrix products, the one for 2 batches {small.size} and {small.count('dot_general')}: the loop "
             "over batches is unrolled. Use jax.lax.scan (or nnx.scan) so that one step is compiled once.")
    if large.loops < 1:
        fail(f"{call}: the program has no loop; the batches must be walked by jax.lax.scan (or nnx.scan).")
