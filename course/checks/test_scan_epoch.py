"""Checks for scan_epoch: a lax.scan-fused epoch equals the step-by-step loop and compiles once.

Whether the loop over batches is a compiled loop is read here from the
program: the learner's epoch is lowered for 2 and for 8 batches in the
learner's process and the StableHLO text comes back; a scan is a `while`
loop whose body does not grow with the number of batches, an unrolled Python
loop repeats the step eight times (`course.engine.programs`). The numbers
compared with the step-by-step loop come from running those same programs, so
the program judged is the one that computed them.

The text is only evidence once this process has run it: the program for 2
batches is run here (`run_lowered`, in a short-lived process of its own since it
holds a loop) on parameters, an Adam state and batches drawn here, that the
learner's process never saw, and must give what Adam gives in NumPy; the
structural judgments (a loop, the matrix products inside it, no more of them
than the reference's program) are made on that same text.
"""

from __future__ import annotations

import numpy as np
import pytest

from course.checks.conftest import RUN_PLUGIN
from course.engine.checking import assert_close, assert_equal, assert_tree_close, fail, side_by_side
from course.engine.evidence import bce_with_logits, read_program, run_lowered
from course.engine.programs import ProgramError, matrix_products
from course.engine.words import _

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

    def names(tree):
        # Each leaf's path ("0/0/l1/kernel"), as jax.jit flattens the arguments and results.
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
    for xb, yb in epochs:
        model = MLP(xb.shape[-1], hidden, nnx.Rngs(seed))
        optimizer = nnx.Optimizer(model, optax.adam(lr), wrt=nnx.Param)
        graphdef, state = nnx.split((model, optimizer))

        def pure(state, xb, yb):
            m, opt = nnx.merge(graphdef, state)
            losses = module.scan_epoch(m, opt, xb, yb)
            return nnx.state((m, opt)), losses

        xb, yb = jnp.asarray(xb), jnp.asarray(yb)
        lowered = jax.jit(pure, keep_unused=True).lower(state, xb, yb)
        in_names = names((state, xb, yb))
        state, losses = lowered.compile()(state, xb, yb)
        nnx.update((model, optimizer), state)
        results.append({
            "losses": losses,
            "params": nnx.to_pure_dict(nnx.state(model, nnx.Param)),
            "step": int(optimizer.step[...]),
            "program": lowered.as_text(),
            "in_names": in_names,
            "out_names": names((state, losses)),
        })
    return results


LENGTHS = (2, 8)  # epochs of 2 and of 8 batches: the program for 8 must be no bigger


def _epochs(rng):
    # Shapes from a small set (compiled programs are reused between runs); values fresh.
    b, d = int(rng.choice([4, 8])), int(rng.choice([3, 6]))
    epochs = [(rng.standard_normal((n, b, d)).astype(np.float32),
               rng.integers(0, 2, size=(n, b)).astype(np.float32)) for n in LENGTHS]
    return epochs, int(rng.choice([8, 16])), float(rng.choice([1e-3, 1e-2, 5e-2]))


PARAMS = ("l1/bias", "l1/kernel", "l2/bias", "l2/kernel")
B1, B2, EPS = 0.9, 0.999, 1e-8  # optax.adam's defaults


def _fresh_state(rng, d, hidden):
    """The model's parameters and a running Adam state (its step count, first and second moments),
    drawn here for the program run here: the learner's process never sees them. Second moments
    well above zero keep Adam's update a smooth function of the gradient."""
    shapes = {"l1/bias": (hidden,), "l1/kernel": (d, hidden), "l2/bias": (1,), "l2/kernel": (hidden, 1)}
    fan_in = {"l1": d, "l2": hidden}
    params = {k: (rng.standard_normal(shape) / np.sqrt(fan_in[k[:2]]) if k.endswith("kernel")
                  else 0.3 * rng.standard_normal(shape)).astype(np.float32) for k, shape in shapes.items()}
    mu = {k: (0.05 * rng.standard_normal(shape)).astype(np.float32) for k, shape in shapes.items()}
    nu = {k: ((0.02 + 0.2 * rng.random(shape)) ** 2).astype(np.float32) for k, shape in shapes.items()}
    return params, mu, nu, np.int32(rng.integers(1, 50)), np.uint32(rng.integers(1, 1000))


def _adam_epoch_in_numpy(params, mu, nu, count, xb, yb, lr):
    """The step-by-step loop in float64: mean BCE of the MLP, its gradient by hand, optax.adam's update.
    Also returns how close any hidden unit came to ReLU's kink (where the gradient jumps)."""
    p = {k: np.asarray(v, np.float64) for k, v in params.items()}
    mu = {k: np.asarray(v, np.float64) for k, v in mu.items()}
    nu = {k: np.asarray(v, np.float64) for k, v in nu.items()}
    losses, margin = [], np.inf
    for t, (x, y) in enumerate(zip(xb.astype(np.float64), yb.astype(np.float64)), start=int(count) + 1):
        z1 = x @ p["l1/kernel"] + p["l1/bias"]
        margin = min(margin, float(np.min(np.abs(z1))))
        a = np.maximum(z1, 0.0)
        z = (a @ p["l2/kernel"] + p["l2/bias"])[:, 0]
        losses.append(bce_with_logits(z, y).mean())
        gz = (0.5 * (1.0 + np.tanh(z / 2.0)) - y) / len(y)
        dz1 = gz[:, None] * p["l2/kernel"][:, 0][None, :] * (z1 > 0)
        grads = {"l1/kernel": x.T @ dz1, "l1/bias": dz1.sum(0),
                 "l2/kernel": a.T @ gz[:, None], "l2/bias": gz.sum(keepdims=True)}
        for k, g in grads.items():
            mu[k] = B1 * mu[k] + (1 - B1) * g
            nu[k] = B2 * nu[k] + (1 - B2) * g * g
            p[k] = p[k] - lr * (mu[k] / (1 - B1 ** t)) / (np.sqrt(nu[k] / (1 - B2 ** t)) + EPS)
    return np.array(losses), p, margin


@pytest.fixture(scope="module")
def both(learner, reference, request):
    """The learner's and the reference's epochs, gathered once per check run (each run is
    its own pytest session): the checks below judge different parts of them."""
    seed = request.config.pluginmanager.get_plugin(RUN_PLUGIN).seed
    epochs, hidden, lr = _epochs(np.random.default_rng(seed))
    got, want = side_by_side(learner, reference).probe(probe_epochs, epochs, hidden, lr, seed)
    if not isinstance(got, list) or len(got) != len(LENGTHS):
        fail(_("the check could not run scan_epoch under jax.jit (got {type}).").format(
            type=type(got).__name__))
    return epochs, lr, got, want


def test_epoch_equals_the_step_by_step_loop(both):
    epochs, lr, got, want = both
    for (xb, yb), g, w in zip(epochs, got, want):
        call = _("scan_epoch(model, Adam({lr}), xb {shape}, yb {shape2}) under jax.jit").format(
            lr=lr, shape=xb.shape, shape2=yb.shape)
        assert_close(g["losses"], w["losses"], what=f"{call}: losses", rtol=1e-4, atol=1e-5)
        assert_equal(g["step"], w["step"], what=_("{call}: optimizer.step afterwards (one update per batch)").format(
            call=call))
        assert_tree_close(g["params"], w["params"], what=_("{call}: parameters afterwards").format(
            call=call), rtol=1e-4, atol=1e-5)


def test_the_program_trains_on_the_checks_batches(both, request):
    """The program for 2 batches, run here on a state and batches the learner's process never saw."""
    epochs, lr, got, want = both
    seed = request.config.pluginmanager.get_plugin(RUN_PLUGIN).seed
    xb, yb = epochs[0]
    g = got[0]
    (n, __, d), hidden = xb.shape, int(np.asarray(want[0]["params"]["l1"]["bias"]).shape[0])
    rng = np.random.default_rng([seed, 1])
    for __ in range(100):
        # Drawn again until no hidden unit comes within 1e-3 of ReLU's kink, where float32 and float64
        # could take different sides: the comparison below is then never a coin toss.
        params, mu, nu, count, step = _fresh_state(rng, d, hidden)
        xb = rng.standard_normal(xb.shape).astype(np.float32)
        yb = rng.integers(0, 2, size=yb.shape).astype(np.float32)
        losses, trained, margin = _adam_epoch_in_numpy(params, mu, nu, count, xb, yb, lr)
        if margin > 1e-3:
            break
    what = _("scan_epoch(model, Adam({lr}), xb {shape}, yb {shape2}) as the program it lowers to under jax.jit").format(
        lr=lr, shape=xb.shape, shape2=yb.shape)
    fresh = {"0/1/step": step, "1": xb, "2": yb}
    for k in PARAMS:
        fresh[f"0/0/{k}"] = params[k]
        fresh[f"0/1/opt_state/0/mu/{k}"] = mu[k]
        fresh[f"0/1/opt_state/0/nu/{k}"] = nu[k]
    fresh["0/1/opt_state/0/count"] = count
    in_names, out_names = g.get("in_names"), g.get("out_names")
    if not isinstance(in_names, list) or sorted(in_names) != sorted(fresh):
        fail(_("{what} takes the inputs {in_names}, not the model's and the optimizer's state, xb and yb.").format(
            what=what, in_names=in_names))
    read_program(g.get("program"), what=what)
    outs = run_lowered(g["program"], [fresh[name] for name in in_names], what=what)
    if not isinstance(out_names, list) or len(out_names) != len(outs):
        fail(_("{what} returns {n_outs} arrays where the check's function returned {n_want}: the program "
               "jax.jit compiles must be the one that computes your results.").format(
                   what=what, n_outs=len(outs), n_want=len(out_names or [])))
    result = dict(zip(out_names, outs))
    checked = _("{what}, run by the check from a model, an Adam state and batches it drew").format(what=what)
    for name in ("1", "0/1/step", *(f"0/0/{k}" for k in PARAMS)):
        if name not in result:
            fail(_("{checked}: it returns no {name}: the state of (model, optimizer) and the losses must come "
                   "back.").format(
                
                checked=checked, name=name))
    assert_close(result["1"], losses.astype(np.float32), what=f"{checked}: losses", rtol=1e-4, atol=1e-5)
    assert_equal(int(result["0/1/step"]), int(step) + n, what=_("{checked}: optimizer.step afterwards (it was "
                                                                "{step})").format(checked=checked, step=step))
    for k in PARAMS:
        assert_close(result[f"0/0/{k}"], trained[k].astype(np.float32),
                     what=f"{checked}: {k.replace('/', '.')} afterwards", rtol=1e-4, atol=1e-5)


def test_compiled_program_does_not_grow_with_the_epoch(both):
    epochs, __, got, want = both
    (small_xb, __), (large_xb, __) = epochs
    programs = []
    for xb, g in zip((small_xb, large_xb), got):
        program = read_program(g.get("program"), what=_("scan_epoch under jax.jit for xb {shape}").format(
            shape=xb.shape))
        if not program.takes(xb.shape):
            fail(_("scan_epoch lowered for xb {shape} gave a program that takes {shapes}, not xb {shape}.").format(
                shape=xb.shape, shapes=sorted({a.shape for a in program.args})))
        programs.append(program)
    small, large = programs
    call = _("scan_epoch lowered for xb {shape} and {shape2}").format(shape=small_xb.shape, shape2=large_xb.shape)
    # Judged on the program for 2 batches, the one the check runs (above): the reference's program
    # for the same call runs one step's matrix products, inside the scan's loop. An unrolled loop
    # has them once per batch, outside it (or inside a loop that runs once).
    try:
        products, in_loops = matrix_products(small.text)
        ref_products, ref_in_loops = matrix_products(want[0]["program"])
    except ProgramError as e:
        fail(_("scan_epoch lowered for xb {shape} could not be read as a program: {e}.").format(
            shape=small_xb.shape, e=e))
    allowed = 2 * ref_products - 1
    if products - in_loops > ref_products - ref_in_loops or products > allowed:
        fail(_("scan_epoch lowered for xb {shape} runs {products} matrix products (dot_general), "
               "{products_in_loops} of them outside any loop; one step inside a scan's loop needs {ref_products}: "
               "the loop over batches is unrolled. Use jax.lax.scan (or nnx.scan) so that one step is compiled "
               "once.").format(
                   shape=small_xb.shape, products=products, products_in_loops=products - in_loops,
                   ref_products=ref_products))
    if large.size > small.size * 1.25 or large.count("dot_general") > small.count("dot_general"):
        fail(_("{call}: the program for {large_batches} batches has {large_size} operations and {large_products} "
               "matrix products, the one for {small_batches} batches {small_size} and {small_products}: the loop "
               "over batches is unrolled. Use jax.lax.scan (or nnx.scan) so that one step is compiled once.").format(
                   call=call, large_batches=len(large_xb), large_size=large.size,
                   large_products=large.count('dot_general'), small_batches=len(small_xb), small_size=small.size,
                   small_products=small.count('dot_general')))
    if large.loops < 1 or small.loops < 1:
        fail(_("{call}: the program has no loop; the batches must be walked by jax.lax.scan (or nnx.scan).").format(
            call=call))
