"""Checks for scan_layers: stacked layers made with nnx.vmap and applied with a scan.

Whether the layers are applied by a compiled loop is read here from the
program: StackedMLP with 2 and with 6 layers is lowered under jax.jit in the
learner's process, compiled and called in one go, and the StableHLO text comes
back with its output (`course.engine.programs`). The program judged is then the
one that computed the output, and it computes it from stacked parameters drawn
here, put in place of the initialised ones.

The text is only evidence once this process has run it: the program for 2
layers is run here (`run_lowered`, in a short-lived process of its own since it
holds a loop) on stacked parameters and an input drawn here, that the learner's
process never saw, and must give NumPy's result; the structural judgments (a
loop, the matrix products inside it, no more of them than the reference's
program) are made on that same text.
"""

from __future__ import annotations

import numpy as np
import pytest

from course.checks.conftest import RUN_PLUGIN
from course.engine.programs import ProgramError, matrix_products, parse
from course.engine.checking import assert_close, fail
from course.engine.evidence import run_lowered
from course.engine.words import N_, _, probe_said

TIMEOUT = 120
# What probe_stacks reports: [key, fields], worded here in the learner's language.
PROBE_ERRORS = {
    "not_linear": N_("StackedMLP.layers is {type}, not one (stacked) nnx.Linear."),
    "not_stacked": N_("StackedMLP({n_layers}, {width}).layers has kernel {kernel} and bias {bias}; expected stacked "
                      "parameters: kernel {want_kernel} and bias {want_bias} (one Linear made with nnx.vmap over "
                      "{n_layers} keys)."),
}
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

    def names(tree):
        # Each leaf's path ("0/layers/kernel"), as jax.jit flattens the arguments.
        out = []
        for path, _ in jax.tree_util.tree_flatten_with_path(tree)[0]:
            parts = []
            for k in path:
                if isinstance(k, jax.tree_util.DictKey):
                    parts.append(str(k.key))
                elif isinstance(k, jax.tree_util.SequenceKey):
                    parts.append(str(k.idx))
                elif isinstance(k, jax.tree_util.GetAttrKey) and k.name != "value":
                    parts.append(k.name)
                elif isinstance(k, jax.tree_util.FlattenedIndexKey):
                    parts.append(str(k.key))
            out.append("/".join(parts))
        return out

    results = []
    for n_layers, x, kernel, bias in cases:
        width = x.shape[1]
        model = module.StackedMLP(n_layers, width, rngs=nnx.Rngs(seed))
        layers = getattr(model, "layers", None)
        if not isinstance(layers, nnx.Linear):
            return {"error": ["not_linear", {"type": type(layers).__name__}]}
        init_kernel, init_bias = np.asarray(layers.kernel[...]), np.asarray(layers.bias[...])
        if init_kernel.shape != kernel.shape or init_bias.shape != bias.shape:
            return {"error": ["not_stacked", {
                "n_layers": n_layers, "width": width, "kernel": str(init_kernel.shape), "bias": str(init_bias.shape),
                "want_kernel": str(kernel.shape), "want_bias": str(bias.shape)}]}
        layers.kernel[...] = jnp.asarray(kernel)
        layers.bias[...] = jnp.asarray(bias)
        graphdef, state = nnx.split(model)
        lowered = jax.jit(lambda s, v: nnx.merge(graphdef, s)(v), keep_unused=True).lower(state, jnp.asarray(x))
        out = lowered.compile()(state, jnp.asarray(x))
        leaves = [v.value if isinstance(v, nnx.Variable) else v for v in jax.tree.leaves(state)]
        results.append({"init_kernel": init_kernel, "out": out, "program": lowered.as_text(),
                        "in_names": names((state, x)),
                        "in_values": [jax.random.key_data(v) if jnp.issubdtype(v.dtype, jax.dtypes.prng_key)
                                      else v for v in leaves] + [x]})
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


def probe_program(module, n_layers, width, batch):
    """StackedMLP lowered for these shapes (the reference's: its count of matrix products)."""
    import jax
    import jax.numpy as jnp
    from flax import nnx

    graphdef, state = nnx.split(nnx.eval_shape(lambda: module.StackedMLP(n_layers, width, rngs=nnx.Rngs(0))))
    x = jax.ShapeDtypeStruct((batch, width), jnp.float32)
    return jax.jit(lambda s, v: nnx.merge(graphdef, s)(v)).lower(state, x).as_text()


# The reference's program for (n_layers, width, batch): it depends on the shapes only.
_REFERENCE_PROGRAMS: dict = {}


@pytest.fixture(scope="module")
def stack(learner, reference, request):
    """The learner's StackedMLP evidence, gathered once per check run (each run is its own
    pytest session): the checks below judge different parts of it. The reference's program
    for the first call gives the count of matrix products a scan needs."""
    seed = request.config.pluginmanager.get_plugin(RUN_PLUGIN).seed
    cases = _cases(np.random.default_rng(seed))
    got = learner.probe(probe_stacks, cases, seed)
    if "error" in got:
        fail(probe_said(got["error"], PROBE_ERRORS) or str(got["error"])[:300])
    n, x = cases[0][0], cases[0][1]
    key = (n, x.shape[1], x.shape[0])
    if key not in _REFERENCE_PROGRAMS:
        _REFERENCE_PROGRAMS[key] = reference.probe(probe_program, *key)
    return cases, got["results"], _REFERENCE_PROGRAMS[key], seed


def test_layers_start_out_different(stack):
    cases, got, __, __ = stack
    for (n_layers, x, __, __), g in zip(cases, got):
        kernel = np.asarray(g["init_kernel"])
        if all(np.array_equal(kernel[0], k) for k in kernel[1:]):
            fail(
                _("StackedMLP({n_layers}, {width}): all {n_layers} layers have the same kernel. Give each "
                  "layer its own key (split the key into n_layers keys before nnx.vmap).").format(
                      n_layers=n_layers, width=x.shape[1])
            )


def test_output_applies_every_layer_in_order(stack):
    cases, got, __, __ = stack
    for (n_layers, x, kernel, bias), g in zip(cases, got):
        h = x.astype(np.float64)
        for i in range(n_layers):
            h = np.tanh(h @ kernel[i].astype(np.float64) + bias[i])
        assert_close(
            g["out"], h.astype(np.float32),
            what=_("StackedMLP({n_layers}, {width})(x {shape}) under jax.jit, with stacked parameters set by "
                   "the check, against tanh(x @ kernel[i] + bias[i]) for each layer in order").format(
                       n_layers=n_layers, width=x.shape[1], shape=x.shape),
            rtol=1e-4, atol=1e-5,
        )


def _numpy_stack(x, kernel, bias):
    h = x.astype(np.float64)
    for i in range(len(kernel)):
        h = np.tanh(h @ kernel[i].astype(np.float64) + bias[i])
    return h.astype(np.float32)


def test_the_program_applies_the_layers(stack):
    """The program for 2 layers, run here on stacked parameters and an input the learner's process never saw."""
    cases, got, __, seed = stack
    (n, x, kernel, bias), g = cases[0], got[0]
    rng = np.random.default_rng([seed, 1])
    kernel = (rng.standard_normal(kernel.shape) / np.sqrt(x.shape[1])).astype(np.float32)
    bias = (0.3 * rng.standard_normal(bias.shape)).astype(np.float32)
    x = rng.standard_normal(x.shape).astype(np.float32)
    what = _("StackedMLP({n}, {width})(x {shape}) as the program it lowers to under jax.jit").format(
        n=n, width=x.shape[1], shape=x.shape)
    fresh = {"0/layers/kernel": kernel, "0/layers/bias": bias, "1": x}
    names, values = g.get("in_names"), g.get("in_values")
    if (not isinstance(names, list) or not isinstance(values, list) or len(names) != len(values)
            or not set(fresh) <= set(names)):
        fail(_("{what} takes the inputs {names}, not the model's state and x.").format(what=what, names=names))
    outs = run_lowered(g.get("program"), [fresh.get(name, value) for name, value in zip(names, values)], what=what)
    assert_close(
        outs[0] if len(outs) == 1 else outs, _numpy_stack(x, kernel, bias),
        what=_("{what}, run by the check on stacked parameters and an x it drew, against tanh(x @ kernel[i] + "
               "bias[i]) for each layer in order").format(what=what),
        rtol=1e-4, atol=1e-5,
    )


def test_compiled_program_does_not_grow_with_depth(stack):
    cases, got, want, __ = stack
    programs = []
    for (n, x, __, __), g in zip(cases, got):
        width = x.shape[1]
        try:
            program = parse(g.get("program"))
        except ProgramError as e:
            fail(_("StackedMLP could not be read as a compiled program: {e}.").format(e=e))
        if not program.takes((n, width, width)):
            fail(_("StackedMLP with {n} layers gave a program whose inputs are {shapes}, without the stacked kernel "
                   "({n}, {width}, {width}).").format(n=n, shapes=sorted({a.shape for a in program.args}), width=width))
        programs.append(program)
    shallow, deep = programs
    width = cases[0][1].shape[1]
    # Judged on the program for 2 layers, the one the check runs (above): the reference's program
    # for the same call runs one matrix product per layer, inside the scan's loop. An unrolled loop
    # has one per layer outside it (or inside a loop that runs once): 2 or more.
    try:
        products, in_loops = matrix_products(shallow.text)
        ref_products, ref_in_loops = matrix_products(want)
    except ProgramError as e:
        fail(_("StackedMLP with {n} layers could not be read as a compiled program: {e}.").format(
            n=DEPTHS[0], e=e))
    allowed = 2 * ref_products - 1
    if products - in_loops > ref_products - ref_in_loops or products > allowed:
        fail(_("StackedMLP({n}, {width}) compiles to {products} matrix products (dot_general), "
               "{products_in_loops} of them outside any loop; a scan over the stacked layers needs {ref_products}, "
               "inside its loop: the layers are applied in an unrolled Python loop. Use nnx.scan (or jax.lax.scan) "
               "over the stacked layers, so that one layer is compiled once.").format(
                   n=DEPTHS[0], width=width, products=products, products_in_loops=products - in_loops,
                   ref_products=ref_products))
    if deep.size > shallow.size * 1.25 or deep.count("dot_general") > shallow.count("dot_general"):
        fail(_("StackedMLP with {deep_n} layers compiles to {deep_size} operations and {deep_products} "
               "matrix products, with {shallow_n} layers to {shallow_size} and {shallow_products}: the layers are "
               "applied in an "
               "unrolled Python loop. Use nnx.scan (or jax.lax.scan) over the stacked layers.").format(
                   deep_n=DEPTHS[1], deep_size=deep.size, deep_products=deep.count('dot_general'),
                   shallow_n=DEPTHS[0], shallow_size=shallow.size, shallow_products=shallow.count('dot_general')))
    if deep.loops < 1 or shallow.loops < 1:
        fail(_("StackedMLP's compiled program has no loop: apply the stacked layers with nnx.scan."))
