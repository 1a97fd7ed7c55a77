"""Checks for scan_layers: stacked layers made with nnx.vmap and applied with a scan.

Whether the layers are applied by a compiled loop is read here from the
program: StackedMLP is lowered with 2 and with 6 layers in the learner's
process and the StableHLO text comes back (`course.engine.programs`).
"""

from __future__ import annotations

import numpy as np
import pytest

from course.checks.conftest import RUN_PLUGIN
from course.engine.programs import ProgramError, parse
from course.engine.checking import assert_close, assert_equal, fail, side_by_side

TIMEOUT = 120
# (n_layers, width, batch) from a small fixed set, so that the programs compiled for
# them are reused from one check to the next; the values are drawn fresh. One batch
# is a single row.
SIZES = [(3, 4, 1), (5, 8, 4)]


def probe_stack(module, n_layers, width, x, seed):
    import jax.numpy as jnp
    from flax import nnx

    model = module.StackedMLP(n_layers, width, rngs=nnx.Rngs(seed))
    layers = getattr(model, "layers", None)
    if not isinstance(layers, nnx.Linear):
        return {"error": f"StackedMLP.layers is {type(layers).__name__}, not one (stacked) nnx.Linear"}
    return {
        "kernel_shape": list(layers.kernel[...].shape),
        "bias_shape": list(layers.bias[...].shape),
        "kernel": layers.kernel[...],
        "bias": layers.bias[...],
        "out": model(jnp.asarray(x)),
    }


def probe_programs(module, depths, width):
    import jax
    import jax.numpy as jnp
    from flax import nnx

    programs = []
    for n in depths:
        graphdef, state = nnx.split(module.StackedMLP(n, width, rngs=nnx.Rngs(0)))
        x = jax.ShapeDtypeStruct((2, width), jnp.float32)
        programs.append(jax.jit(lambda s, v: nnx.merge(graphdef, s)(v)).lower(state, x).as_text())
    return programs


def _case(rng):
    n_layers, width, batch = SIZES[int(rng.integers(len(SIZES)))]
    return n_layers, width, rng.standard_normal((batch, width)).astype(np.float32)


@pytest.fixture(scope="module")
def stack(learner, reference, request):
    """The learner's and the reference's StackedMLP evidence, gathered once per check run
    (each run is its own pytest session): the checks below judge different parts of it."""
    seed = request.config.pluginmanager.get_plugin(RUN_PLUGIN).seed
    n_layers, width, x = _case(np.random.default_rng(seed))
    got, want = side_by_side(learner, reference).probe(probe_stack, n_layers, width, x, seed)
    if "error" in got:
        fail(got["error"])
    return n_layers, width, x, got, want


def test_parameters_are_stacked_along_a_layer_axis(stack):
    n_layers, width, _, got, want = stack
    what = f"StackedMLP({n_layers}, {width})"
    assert_equal(got["kernel_shape"], want["kernel_shape"], what=f"{what}.layers.kernel shape")
    assert_equal(got["bias_shape"], want["bias_shape"], what=f"{what}.layers.bias shape")


def test_layers_start_out_different(stack):
    n_layers, width, _, got, _ = stack
    kernel = np.asarray(got["kernel"])
    if kernel.ndim == 3 and all(np.array_equal(kernel[0], k) for k in kernel[1:]):
        fail(
            f"StackedMLP({n_layers}, {width}): all {n_layers} layers have the same kernel. "
            "Give each layer its own key (split the key into n_layers keys before nnx.vmap)."
        )


def test_output_applies_every_layer_in_order(stack):
    n_layers, width, x, got, _ = stack
    kernel, bias = np.asarray(got["kernel"], np.float64), np.asarray(got["bias"], np.float64)
    if kernel.shape != (n_layers, width, width) or bias.shape != (n_layers, width):
        fail(f"StackedMLP({n_layers}, {width}): stacked parameters expected, got kernel {kernel.shape}, bias {bias.shape}.")
    h = x.astype(np.float64)
    for i in range(n_layers):
        h = np.tanh(h @ kernel[i] + bias[i])
    assert_close(
        got["out"], h.astype(np.float32),
        what=f"StackedMLP({n_layers}, {width})(x {x.shape}) against tanh(x @ kernel[i] + bias[i]) for each layer",
        rtol=1e-4, atol=1e-5,
    )


def test_compiled_program_does_not_grow_with_depth(learner, rng):
    _, width, _ = SIZES[int(rng.integers(len(SIZES)))]
    texts = learner.probe(probe_programs, [2, 6], width)
    if not isinstance(texts, list) or len(texts) != 2:
        fail(f"the check could not lower StackedMLP with 2 and 6 layers (got {type(texts).__name__}).")
    try:
        shallow, deep = parse(texts[0]), parse(texts[1])
    except ProgramError as e:
        fail(f"StackedMLP could not be read as a compiled program: {e}.")
    for n, program in ((2, shallow), (6, deep)):
        if not program.takes((n, width, width)):
            fail(f"StackedMLP with {n} layers gave a program whose inputs are {sorted({a.shape for a in program.args})}, "
                 f"without the stacked kernel ({n}, {width}, {width}).")
    if deep.size > shallow.size * 1.25 or deep.count("dot_general") > shallow.count("dot_general"):
        fail(f"StackedMLP with 6 layers compiles to {deep.size} operations and {deep.count('dot_general')} matrix "
             f"products, with 2 layers to {shallow.size} and {shallow.count('dot_general')}: the layers are "
             "applied in an unrolled Python loop. Use nnx.scan (or jax.lax.scan) over the stacked layers.")
    if deep.loops < 1:
        fail("StackedMLP's compiled program has no loop: apply the stacked layers with nnx.scan.")
