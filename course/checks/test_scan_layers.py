"""Checks for scan_layers: stacked layers made with nnx.vmap and applied with a scan.

Whether the layers are applied by a compiled loop is read here from the
program: StackedMLP with 2 and with 6 layers is lowered under jax.jit in the
learner's process, compiled and called in one go, and the StableHLO text comes
back with its output (`course.engine.programs`). The program judged is then the
one that computed the output, and it computes it from stacked parameters drawn
here, put in place of the initialised ones.
"""

from __future__ import annotations

import numpy as np
import pytest

from course.checks.conftest import RUN_PLUGIN
from course.engine.programs import ProgramError, parse
from course.engine.checking import assert_close, fail

TIMEOUT = 120
# (width, batch) from a small fixed set and depths 2 and 6, so that the programs
# compiled for them are reused from one check to the next; the values are drawn
# fresh. One batch is a single row.
SIZES = [(4, 1), (8, 4)]
DEPTHS = (2, 6)


def probe_stacks(module, cases, seed):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from flax import nnx

    results = []
    for n_layers, x, kernel, bias in cases:
        width = x.shape[1]
        model = module.StackedMLP(n_layers, width, rngs=nnx.Rngs(seed))
        layers = getattr(model, "layers", None)
        if not isinstance(layers, nnx.Linear):
            return {"error": f"StackedMLP.layers is {type(layers).__name__}, not one (stacked) nnx.Linear"}
        init_kernel, init_bias = np.asarray(layers.kernel[...]), np.asarray(layers.bias[...])
        if init_kernel.shape != kernel.shape or init_bias.shape != bias.shape:
            return {"error": f"StackedMLP({n_layers}, {width}).layers has kernel {init_kernel.shape} and bias "
                             f"{init_bias.shape}; expected stacked parameters: kernel {kernel.shape} and bias "
                             f"{bias.shape} (one Linear made with nnx.vmap over {n_layers} keys)"}
        layers.kernel[...] = jnp.asarray(kernel)
        layers.bias[...] = jnp.asarray(bias)
        graphdef, state = nnx.split(model)
        lowered = jax.jit(lambda s, v: nnx.merge(graphdef, s)(v)).lower(state, jnp.asarray(x))
        out = lowered.compile()(state, jnp.asarray(x))
        results.append({"init_kernel": init_kernel, "out": out, "program": lowered.as_text()})
    return {"results": results}


def _cases(rng):
    width, batch = SIZES[int(rng.integers(len(SIZES)))]
    cases = []
    for n in DEPTHS:
        x = rng.standard_normal((batch, width)).astype(np.float32)
        kernel = (rng.standard_normal((n, width, width)) / np.sqrt(width)).astype(np.float32)
        bias = (0.3 * rng.standard_normal((n, width))).astype(np.float32)
        cases.append((n, x, kernel, bias))
    return cases


@pytest.fixture(scope="module")
def stack(learner, request):
    """The learner's StackedMLP evidence, gathered once per check run (each run is its own
    pytest session): the checks below judge different parts of it."""
    seed = request.config.pluginmanager.get_plugin(RUN_PLUGIN).seed
    cases = _cases(np.random.default_rng(seed))
    got = learner.probe(probe_stacks, cases, seed)
    if "error" in got:
        fail(got["error"] + ".")
    return cases, got["results"]


def test_layers_start_out_different(stack):
    cases, got = stack
    for (n_layers, x, _, _), g in zip(cases, got):
        kernel = np.asarray(g["init_kernel"])
        if all(np.array_equal(kernel[0], k) for k in kernel[1:]):
            fail(
                f"StackedMLP({n_layers}, {x.shape[1]}): all {n_layers} layers have the same kernel. "
                "Give each layer its own key (split the key into n_layers keys before nnx.vmap)."
            )


def test_output_applies_every_layer_in_order(stack):
    cases, got = stack
    for (n_layers, x, kernel, bias), g in zip(cases, got):
        h = x.astype(np.float64)
        for i in range(n_layers):
            h = np.tanh(h @ kernel[i].astype(np.float64) + bias[i])
        assert_close(
            g["out"], h.astype(np.float32),
            what=f"StackedMLP({n_layers}, {x.shape[1]})(x {x.shape}) under jax.jit, with stacked parameters set by "
                 "the check, against tanh(x @ kernel[i] + bias[i]) for each layer in order",
            rtol=1e-4, atol=1e-5,
        )


def test_compiled_program_does_not_grow_with_depth(stack):
    cases, got = stack
    programs = []
    for (n, x, _, _), g in zip(cases, got):
        width = x.shape[1]
        try:
            program = parse(g.get("program"))
        except ProgramError as e:
            fail(f"StackedMLP could not be read as a compiled program: {e}.")
        if not program.takes((n, width, width)):
            fail(f"StackedMLP with {n} layers gave a program whose inputs are {sorted({a.shape for a in program.args})}, "
                 f"without the stacked kernel ({n}, {width}, {width}).")
        programs.append(program)
    shallow, deep = programs
    if deep.size > shallow.size * 1.25 or deep.count("dot_general") > shallow.count("dot_general"):
        fail(f"StackedMLP with {DEPTHS[1]} layers compiles to {deep.size} operations and {deep.count('dot_general')} "
             f"matrix products, with {DEPTHS[0]} layers to {shallow.size} and {shallow.count('dot_general')}: the "
             "layers are applied in an unrolled Python loop. Use nnx.scan (or jax.lax.scan) over the stacked layers.")
    if deep.loops < 1:
        fail("StackedMLP's compiled program has no loop: apply the stacked layers with nnx.scan.")
