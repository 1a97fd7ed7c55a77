"""Checks for scan_epoch: a lax.scan-fused epoch equals the step-by-step loop and compiles once.

Whether the loop over batches is a compiled loop is read here from the
program: the learner's epoch is lowered for 2 and for 8 batches in the
learner's process and the StableHLO text comes back; a scan is a `while`
loop whose body does not grow with the number of batches, an unrolled Python
loop repeats the step eight times (`course.engine.programs`). The numbers
compared with the step-by-step loop come from running those same programs, so
the program judged is the one that computed them.
"""

from __future__ import annotations

import numpy as np
import pytest

from course.checks.conftest import RUN_PLUGIN
from course.engine.checking import assert_close, assert_equal, assert_tree_close, fail, side_by_side
from course.engine.evidence import read_program

TIMEOUT = 120


def probe_epochs(module, epochs, hidden, lr, seed):
    """Each epoch run as the compiled program whose text comes back: the numbers
    and the program checked are those of one and the same trace."""
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

    results = []
    for xb, yb in epochs:
        model = MLP(xb.shape[-1], hidden, nnx.Rngs(seed))
        optimizer = nnx.Optimizer(model, optax.adam(lr), wrt=nnx.Param)
        graphdef, state = nnx.split((model, optimizer))

        def pure(state, xb, yb):
            m, opt = nnx.merge(graphdef, state)
            losses = module.scan_epoch(m, opt, xb, yb)
            return nnx.state((m, opt)), losses

        xb, yb = jnp.asarray(xb), jnp.asarray(yb)
        lowered = jax.jit(pure).lower(state, xb, yb)
        state, losses = lowered.compile()(state, xb, yb)
        nnx.update((model, optimizer), state)
        results.append({
            "losses": losses,
            "params": nnx.to_pure_dict(nnx.state(model, nnx.Param)),
            "step": int(optimizer.step[...]),
            "program": lowered.as_text(),
        })
    return results


LENGTHS = (2, 8)  # epochs of 2 and of 8 batches: the program for 8 must be no bigger


def _epochs(rng):
    # Shapes from a small set (compiled programs are reused between runs); values fresh.
    b, d = int(rng.choice([4, 8])), int(rng.choice([3, 6]))
    epochs = [(rng.standard_normal((n, b, d)).astype(np.float32),
               rng.integers(0, 2, size=(n, b)).astype(np.float32)) for n in LENGTHS]
    return epochs, int(rng.choice([8, 16])), float(rng.choice([1e-3, 1e-2, 5e-2]))


@pytest.fixture(scope="module")
def both(learner, reference, request):
    """The learner's and the reference's epochs, gathered once per check run (each run is
    its own pytest session): the checks below judge different parts of them."""
    seed = request.config.pluginmanager.get_plugin(RUN_PLUGIN).seed
    epochs, hidden, lr = _epochs(np.random.default_rng(seed))
    got, want = side_by_side(learner, reference).probe(probe_epochs, epochs, hidden, lr, seed)
    if not isinstance(got, list) or len(got) != len(LENGTHS):
        fail(f"the check could not run scan_epoch under jax.jit (got {type(got).__name__}).")
    return epochs, lr, got, want


def test_epoch_equals_the_step_by_step_loop(both):
    epochs, lr, got, want = both
    for (xb, yb), g, w in zip(epochs, got, want):
        call = f"scan_epoch(model, Adam({lr}), xb {xb.shape}, yb {yb.shape}) under jax.jit"
        assert_close(g["losses"], w["losses"], what=f"{call}: losses", rtol=1e-4, atol=1e-5)
        assert_equal(g["step"], w["step"], what=f"{call}: optimizer.step afterwards (one update per batch)")
        assert_tree_close(g["params"], w["params"], what=f"{call}: parameters afterwards", rtol=1e-4, atol=1e-5)


def test_compiled_program_does_not_grow_with_the_epoch(both):
    epochs, _, got, _ = both
    (small_xb, _), (large_xb, _) = epochs
    programs = []
    for xb, g in zip((small_xb, large_xb), got):
        program = read_program(g.get("program"), what=f"scan_epoch under jax.jit for xb {xb.shape}")
        if not program.takes(xb.shape):
            fail(f"scan_epoch lowered for xb {xb.shape} gave a program that takes "
                 f"{sorted({a.shape for a in program.args})}, not xb {xb.shape}.")
        programs.append(program)
    small, large = programs
    call = f"scan_epoch lowered for xb {small_xb.shape} and {large_xb.shape}"
    if large.size > small.size * 1.25 or large.count("dot_general") > small.count("dot_general"):
        fail(f"{call}: the program for {len(large_xb)} batches has {large.size} operations and "
             f"{large.count('dot_general')} matrix products, the one for {len(small_xb)} batches {small.size} and "
             f"{small.count('dot_general')}: the loop over batches is unrolled. Use jax.lax.scan (or nnx.scan) so "
             "that one step is compiled once.")
    if large.loops < 1:
        fail(f"{call}: the program has no loop; the batches must be walked by jax.lax.scan (or nnx.scan).")
