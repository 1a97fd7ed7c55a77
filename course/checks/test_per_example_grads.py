"""Checks for per_example_grads: vmap'd per-example losses and gradients equal a loop.

That the batch is vectorised, not looped over in Python, is read here from the
program: per_example_grads is lowered in the learner's process for 2 and for
8 examples and the StableHLO text comes back, with the numbers that very program
computed (lowered, compiled and called in one go); vmap gives one program whose
size does not depend on the batch, a Python loop repeats the gradient per
example (`course.engine.programs`).

The text is only evidence once this process has run it: the program for 2
examples is run here (`run_lowered`) on parameters and a batch drawn here, that
the learner's process never saw, and must give the per-example losses and
gradients computed in NumPy; the structural judgments (no loop, as many matrix
products as the reference's program, at most) are made on that same text.
"""

from __future__ import annotations

import numpy as np
import pytest

from course.checks.conftest import RUN_PLUGIN
from course.engine.checking import assert_close, assert_tree_close, fail, side_by_side
from course.engine.evidence import bce_with_logits, read_program, run_lowered
from course.engine.programs import ProgramError, matrix_products
from course.engine.words import _

TIMEOUT = 60
# (features, hidden) from a small fixed set, and batches of 2 and of 8 examples, so
# that the programs compiled for them are reused from one check to the next; the
# values are drawn fresh.
SIZES = [(4, 8), (7, 16)]
LENGTHS = (2, 8)


def _batches(rng):
    d, hidden = SIZES[int(rng.integers(len(SIZES)))]
    batches = []
    for n in LENGTHS:
        x = rng.standard_normal((n, d)).astype(np.float32)
        # Both labels always present: with one label only, unmapped labels would go unnoticed.
        y = rng.permutation(np.concatenate([[0, 1], rng.integers(0, 2, size=n - 2)])).astype(np.float32)
        batches.append((x, y))
    return batches, hidden


def probe_per_example(module, batches, hidden, seed):
    """per_example_grads run as the compiled program whose text comes back: the
    numbers and the program judged are those of one and the same trace."""
    import jax
    import jax.numpy as jnp
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, d, h, rngs):
            self.l1 = nnx.Linear(d, h, rngs=rngs)
            self.l2 = nnx.Linear(h, 1, rngs=rngs)

        def __call__(self, v):
            return self.l2(jax.nn.relu(self.l1(v)))

    def names(tree):
        # Each leaf's path ("0/l1/kernel"), as jax.jit flattens the arguments and results.
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
    for x, y in batches:
        model = MLP(x.shape[1], hidden, nnx.Rngs(seed))
        before = nnx.to_pure_dict(nnx.state(model, nnx.Param))
        graphdef, state = nnx.split(model)

        def pure(state, x, y):
            m = nnx.merge(graphdef, state)
            result = module.per_example_grads(m, x, y)
            return result, nnx.state(m, nnx.Param)

        x, y = jnp.asarray(x), jnp.asarray(y)
        lowered = jax.jit(pure, keep_unused=True).lower(state, x, y)
        result, after = lowered.compile()(state, x, y)
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            return {"error": "not_a_pair", "type": type(result).__name__}
        out_names = names((result, after))
        losses, grads = result
        if isinstance(grads, nnx.State):
            grads = nnx.to_pure_dict(grads)
        results.append({
            "losses": losses,
            "grads": grads,
            "params_before": before,
            "params_after": nnx.to_pure_dict(after),
            "program": lowered.as_text(),
            "in_names": names((state, x, y)),
            "out_names": out_names,
        })
    return {"results": results}


def _fresh_case(seed, d, hidden, n):
    """Parameters and a batch drawn here for the program run here: the learner's process never sees them.
    Drawn again until no hidden unit sits within 1e-3 of ReLU's kink, where float32 and float64 could
    take different sides (a gradient that jumps): the comparison below is then never a coin toss."""
    rng = np.random.default_rng([seed, 1])
    for _ in range(100):
        params = {
            "l1/kernel": (rng.standard_normal((d, hidden)) / np.sqrt(d)).astype(np.float32),
            "l1/bias": (0.3 * rng.standard_normal(hidden)).astype(np.float32),
            "l2/kernel": (rng.standard_normal((hidden, 1)) / np.sqrt(hidden)).astype(np.float32),
            "l2/bias": (0.3 * rng.standard_normal(1)).astype(np.float32),
        }
        x = rng.standard_normal((n, d)).astype(np.float32)
        y = rng.permutation(np.concatenate([[0, 1], rng.integers(0, 2, size=n - 2)])).astype(np.float32)
        z1 = x.astype(np.float64) @ params["l1/kernel"].astype(np.float64) + params["l1/bias"]
        if np.min(np.abs(z1)) > 1e-3:
            break
    return params, x, y


def _per_example_in_numpy(params, x, y):
    """Each example's loss and its gradient for the MLP Linear -> ReLU -> Linear, by hand, in float64."""
    w1, b1, w2, b2 = (np.asarray(params[k], np.float64) for k in ("l1/kernel", "l1/bias", "l2/kernel", "l2/bias"))
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    z1 = x @ w1 + b1
    a = np.maximum(z1, 0.0)
    z = (a @ w2 + b2)[:, 0]
    g = 0.5 * (1.0 + np.tanh(z / 2.0)) - y  # d loss / d logit
    dz1 = g[:, None] * w2[:, 0][None, :] * (z1 > 0)
    grads = {
        "l1/kernel": x[:, :, None] * dz1[:, None, :], "l1/bias": dz1,
        "l2/kernel": a[:, :, None] * g[:, None, None], "l2/bias": g[:, None],
    }
    return bce_with_logits(z, y), grads


@pytest.fixture(scope="module")
def both(learner, reference, request):
    """The learner's and the reference's results on batches of 2 and 8 examples, gathered once
    per check run (each run is its own pytest session): the checks below judge different parts."""
    seed = request.config.pluginmanager.get_plugin(RUN_PLUGIN).seed
    batches, hidden = _batches(np.random.default_rng(seed))
    got, want = side_by_side(learner, reference).probe(probe_per_example, batches, hidden, seed)
    if "error" in got:
        fail(_("per_example_grads returned {type}, not a pair (losses, grads)").format(type=got.get("type")))
    return batches, hidden, got["results"], want["results"]


def test_per_example_losses_match_a_loop(both):
    batches, hidden, got, want = both
    for (x, _), g, w in zip(batches, got, want):
        assert_close(
            g["losses"], w["losses"],
            what=f"per_example_grads(MLP {x.shape[1]}->{hidden}->1, x {x.shape}) losses", rtol=1e-5, atol=1e-6,
        )


def test_per_example_gradients_match_a_loop(both):
    batches, hidden, got, want = both
    for (x, __), g, w in zip(batches, got, want):
        assert_tree_close(
            g["grads"], w["grads"],
            what=_("per_example_grads(MLP {d}->{hidden}->1, x {shape}) grads (leading axis = example)").format(
                d=x.shape[1], hidden=hidden, shape=x.shape),
            rtol=1e-4, atol=1e-6,
        )


def test_mean_of_per_example_gradients_is_the_batch_gradient(both):
    batches, hidden, got, want = both
    (x, __), g, w = batches[-1], got[-1], want[-1]
    mean = {layer: {k: np.mean(np.asarray(v), axis=0) for k, v in leaves.items()} for layer, leaves in g["grads"].items()}
    want_mean = {layer: {k: np.mean(v, axis=0) for k, v in leaves.items()} for layer, leaves in w["grads"].items()}
    assert_tree_close(mean, want_mean, what=_("the mean over the {n} examples of your gradients").format(n=x.shape[0]),
                      rtol=1e-4, atol=1e-6)


def test_the_model_is_left_unchanged(both):
    __, __, got, __ = both
    for g in got:
        assert_tree_close(
            g["params_after"], g["params_before"],
            what=_("the model's parameters after per_example_grads (it must not change them)"), rtol=0, atol=0,
        )


def test_the_program_computes_per_example_gradients(both, request):
    """The program for 2 examples, run here on parameters and a batch the learner's process never saw."""
    batches, hidden, got, __ = both
    seed = request.config.pluginmanager.get_plugin(RUN_PLUGIN).seed
    n, d = batches[0][0].shape
    params, x, y = _fresh_case(seed, d, hidden, n)
    g = got[0]
    call = f"per_example_grads(MLP {d}->{hidden}->1, x {x.shape})"
    what = _("{call} as the program it lowers to under jax.jit").format(call=call)
    read_program(g.get("program"), what=what)
    fresh = {**{f"0/{k}": v for k, v in params.items()}, "1": x, "2": y}
    in_names, out_names = g.get("in_names"), g.get("out_names")
    if not isinstance(in_names, list) or sorted(in_names) != sorted(fresh):
        fail(_("{what} takes the inputs {in_names}, not the model's parameters, x and y.").format(
            what=what, in_names=in_names))
    outs = run_lowered(g["program"], [fresh[name] for name in in_names], what=what)
    if not isinstance(out_names, list) or len(out_names) != len(outs):
        fail(_("{what} returns {n} arrays where per_example_grads returned {returned}: "
               "the program jax.jit compiles must be the one that computes your results.").format(
            what=what, n=len(outs), returned=len(out_names or [])))
    result = dict(zip(out_names, outs))
    losses, grads = _per_example_in_numpy(params, x, y)
    checked = _("{what}, run by the check on parameters and a batch it drew").format(what=what)
    if "0/0" not in result:
        fail(_("{checked}: it returns no losses.").format(checked=checked))
    assert_close(result["0/0"], losses.astype(np.float32), what=_("{checked}: losses").format(checked=checked),
                 rtol=1e-4, atol=1e-5)
    for name, want in grads.items():
        if f"0/1/{name}" not in result:
            fail(_("{checked}: it returns no gradient for {name}.").format(
                checked=checked, name=name.replace("/", ".")))
        assert_close(result[f"0/1/{name}"], want.astype(np.float32),
                     what=_("{checked}: grads {name} (leading axis = example)").format(
                         checked=checked, name=name.replace("/", ".")), rtol=1e-4, atol=1e-5)
    for name, value in params.items():
        if f"1/{name}" in result:
            assert_close(result[f"1/{name}"], value,
                         what=_("{checked}: the model's {name} afterwards (it must not change)").format(
                             checked=checked, name=name.replace("/", ".")), rtol=0, atol=0)


def test_the_batch_is_vectorised_not_looped(both):
    batches, __, got, want = both
    programs = []
    for (x, __), g in zip(batches, got):
        program = read_program(g.get("program"), what=_("per_example_grads as a compiled program"))
        if not program.takes(x.shape):
            fail(_("per_example_grads lowered for x {shape} gave a program that takes "
                   "{shapes}, not x {shape}.").format(shape=x.shape, shapes=sorted({a.shape for a in program.args})))
        programs.append(program)
    small, large = programs
    d = batches[0][0].shape[1]
    # Judged on the program for 2 examples, the one the check runs (above): as many matrix products
    # as the reference's program for the same call (vmap's count does not depend on the batch),
    # with room for other vectorised routes (jax.jacrev, a separate vmap for the losses), but not
    # for a second copy of the per-example gradient.
    try:
        products, __ = matrix_products(small.text)
        allowed = 2 * matrix_products(want[0]["program"])[0] - 1
    except ProgramError as e:
        fail(_("per_example_grads lowered for x (2, {d}) could not be read as a program: {e}.").format(d=d, e=e))
    if small.loops or products > allowed:
        fail(_("per_example_grads lowered for x (2, {d}) runs {products} matrix products (dot_general)"
               "{loop}; computed for all examples at once it "
               "needs at most {allowed}: the examples are looped over in Python (or with jax.lax.map). Use "
               "jax.vmap (or nnx.vmap) over the per-example gradient function, so that all examples are computed "
               "at once.").format(
            d=d, products=products, loop=_(" and a loop (stablehlo.while)") if small.loops else "", allowed=allowed))
    if large.loops:
        fail(_("per_example_grads lowered for x (8, {d}) holds a loop (stablehlo.while): the examples run one after "
               "another (jax.lax.map, lax.scan or fori_loop). Use jax.vmap (or nnx.vmap) over the per-example "
               "gradient function, so that all examples are computed at once.").format(d=d))
    if large.size > small.size * 1.25 or large.count("dot_general") > small.count("dot_general"):
        fail(_("per_example_grads lowered for x (8, {d}) has {size} operations and "
               "{products} matrix products, for x (2, {d}) {small_size} and "
               "{small_products}: the examples are looped over in Python. Use jax.vmap (or nnx.vmap) "
               "over the per-example gradient function, so that one program serves any batch size.").format(
            d=d, size=large.size, products=large.count("dot_general"), small_size=small.size,
            small_products=small.count("dot_general")))
