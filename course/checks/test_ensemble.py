"""Checks for ensemble: stacked members that differ, predictions that follow from the
parameters, and dropout masks that differ per copy.

The learner's process returns evidence only: the ensemble's parameters as arrays,
its predictions on a batch chosen here, and the dropped copies of an array chosen
here. Everything is judged here: the predictions are recomputed from the returned
parameters with NumPy, and the masks are read off the returned copies.

The program ensemble_predict lowers to under jax.jit is run here too
(`run_lowered`), on members' parameters and a batch drawn here that the
learner's process never saw, so the program whose matrix products are counted
is one that computes the predictions.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from course.checks.conftest import RUN_PLUGIN
from course.checks.randomness import departures, keep_rate, line_tests, mask_tests, overlap
from course.engine.checking import assert_close, assert_equal, fail, side_by_side
from course.engine.evidence import run_lowered
from course.engine.programs import ProgramError, matrix_products, parse
from course.engine.words import N_, _

TIMEOUT = 60
# Shapes come from small fixed sets so that compiled programs are reused between runs.
ENSEMBLE_SHAPES = [(3, 5, 8, 4), (4, 9, 16, 2)]  # (n_members, d_in, hidden, batch)
# (shape of x, n_copies): a few thousand elements, so that the statistical tests of the masks
# (course/checks/randomness.py) see a pattern that is not independent.
DROPOUT_SHAPES = [((40, 36), 3), ((24, 48), 4)]
RATES = [0.25, 0.4]  # never 0.5, where a rate taken for the keep probability gives the same masks
LAYERS = ("l1", "l2")
COPIES = N_("copies")
SEEDS = N_("the copies of two different seeds")


def probe_ensemble(module, n, d_in, hidden, seed, x):
    import jax
    import jax.numpy as jnp
    from flax import nnx

    def params(ens):
        if not isinstance(ens, nnx.Module):
            return None
        return nnx.state(ens, nnx.Param)

    ens = module.make_ensemble(n, d_in, hidden, seed)
    if not isinstance(ens, nnx.Module):
        return {"error": "not_module", "type": type(ens).__name__}
    first = params(ens)

    def names(tree):
        # Each leaf's path ("0/l1/kernel"), as jax.jit flattens the arguments.
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

    def lowered(ensemble):
        graphdef, state = nnx.split(ensemble)
        return jax.jit(lambda s, v: module.ensemble_predict(nnx.merge(graphdef, s), v),
                       keep_unused=True).lower(state, jnp.asarray(x))

    # The predictions come from the very program whose size is judged; a one-member
    # ensemble (shapes only) gives the program to compare it with.
    program = lowered(ens)
    pred = program.compile()(nnx.state(ens), jnp.asarray(x))
    single = lowered(nnx.eval_shape(lambda: module.make_ensemble(1, d_in, hidden, seed)))
    state = nnx.state(ens)
    leaves = jax.tree.leaves(state)
    again = module.make_ensemble(n, d_in, hidden, seed)
    other = module.make_ensemble(n, d_in, hidden, seed + 1)
    return {
        "in_names": names((state, x)),
        "in_values": [jax.random.key_data(v) if jnp.issubdtype(v.dtype, jax.dtypes.prng_key) else v
                      for v in leaves] + [x],
        "params": first,
        "pred": pred,
        "programs": [program.as_text(), single.as_text()],
        "again": params(again),
        "other": params(other),
        # The ensembles themselves, called on the batch drawn by the check: evidence that does not
        # go through the readers of the state (nnx.state), against which the state is checked.
        "outputs": [module.ensemble_predict(e, jnp.asarray(x)) for e in (ens, again, other)],
    }


def probe_dropout(module, x, n, rate, seed, more_seeds=()):
    return {
        "copies": module.dropout_copies(x, n, rate, seed),
        "again": module.dropout_copies(x, n, rate, seed),
        "other": module.dropout_copies(x, n, rate, seed + 1),
        "more": [module.dropout_copies(x, n, rate, s) for s in more_seeds],
    }


def _leaves(params, where):
    """{'l1': {'kernel', 'bias'}, 'l2': {...}} as float arrays, or a failure naming what is off."""
    if not isinstance(params, dict):
        fail(_("{where}: the ensemble's parameters are not a model's state (got {type}).").format(
            where=where, type=type(params).__name__))
    out = {}
    for layer in LAYERS:
        for name in ("kernel", "bias"):
            try:
                value = params[layer][name]
            except (KeyError, TypeError):
                fail(_("{where}: the ensemble has no parameter {layer}.{name}. Build it from the given MLP class, "
                       "unchanged.").format(where=where, layer=layer, name=name))
            if not isinstance(value, np.ndarray):
                fail(_("{where}: {layer}.{name} is not an array.").format(where=where, layer=layer, name=name))
            out[f"{layer}.{name}"] = value
    return out


def _seed(request):
    return request.config.pluginmanager.get_plugin(RUN_PLUGIN).seed


@pytest.fixture(scope="module")
def ensemble_run(learner, reference, request):
    """The ensemble's evidence, gathered once per check run (each run is its own pytest session)."""
    seed = _seed(request)
    rng = np.random.default_rng(seed)
    n, d_in, hidden, batch = ENSEMBLE_SHAPES[int(rng.integers(len(ENSEMBLE_SHAPES)))]
    x = rng.standard_normal((batch, d_in)).astype(np.float32)
    got, want = side_by_side(learner, reference).probe(probe_ensemble, n, d_in, hidden, seed, x)
    if "error" in got:
        fail(_("make_ensemble returned {type}, expected the MLP object (an nnx.Module).").format(type=got.get("type")))
    call = f"make_ensemble({n}, {d_in}, {hidden}, seed={seed})"
    return n, d_in, hidden, x, got, want, call, seed


def test_members_are_stacked_and_differ(ensemble_run):
    n, d_in, hidden, x, got, want, call, seed = ensemble_run
    params = _leaves(got["params"], call)
    want = _leaves(want["params"], _("the reference"))
    for key, value in params.items():
        if value.shape != want[key].shape:
            fail(_("{call}: {key} has shape {shape}, expected {expected}: every parameter of the "
                   "MLP with a leading axis of {n} members.").format(
                call=call, key=key, shape=value.shape, expected=want[key].shape, n=n))
        if value.dtype != np.float32:
            fail(_("{call}: {key} has dtype {dtype}, expected float32.").format(call=call, key=key, dtype=value.dtype))
    for key in ("l1.kernel", "l2.kernel"):
        value = params[key]
        for i, j in itertools.combinations(range(n), 2):
            if np.allclose(value[i], value[j]):
                fail(_("{call}: members {i} and {j} have the same {key}. nnx.vmap shares the Rngs by default, so "
                       "every member was initialised with the same keys: split the streams with "
                       "nnx.split_rngs(splits={n}) and map them (in_axes=0).").format(call=call, i=i, j=j, key=key, n=n))
    # The state read in the learner's process (nnx.state) says the members differ; their outputs
    # on the batch drawn here, from the ensemble object itself, must say so too.
    outputs = _outputs(got, 0, n, x, call)
    for i, j in itertools.combinations(range(n), 2):
        if np.allclose(outputs[i], outputs[j]):
            fail(_("{call}: members {i} and {j} give the same outputs on a batch drawn by the check, so they are "
                   "the same model. nnx.vmap shares the Rngs by default: split the streams with "
                   "nnx.split_rngs(splits={n}) and map them (in_axes=0).").format(call=call, i=i, j=j, n=n))
    kernel = params["l1.kernel"]
    scale = kernel.reshape(n, -1).std(axis=1) * np.sqrt(d_in)
    if not np.all((scale > 0.3) & (scale < 3.0)):
        fail(_("{call}: the members' l1 kernels do not look like nnx.Linear's initialisation (their spread times "
               "sqrt(d_in) is {spread}, about 1 expected). Build each member as "
               "MLP(d_in, hidden, rngs=...).").format(call=call, spread=np.round(scale, 3).tolist()))


def _outputs(got, index, n, x, call):
    """ensemble_predict(ensemble, x) on the ensemble object itself (0: the one judged, 1: built
    again with the same seed, 2: with the next seed), as an array of shape (n, B, 1)."""
    outputs = got.get("outputs")
    value = outputs[index] if isinstance(outputs, list) and len(outputs) == 3 else None
    if not isinstance(value, np.ndarray) or value.shape != (n, x.shape[0], 1) or value.dtype != np.float32:
        fail(_("ensemble_predict(ensemble, x {shape}) with ensemble = {call} returned {got}, expected a float32 "
               "array of shape {want}: one (B, 1) output per member.").format(
            shape=x.shape, call=call, got=getattr(value, "shape", type(value).__name__), want=(n, x.shape[0], 1)))
    return value


def test_predictions_follow_from_the_parameters(ensemble_run):
    n, d_in, hidden, x, got, _want, call, seed = ensemble_run
    p = _leaves(got["params"], call)
    pred = got["pred"]
    where = _("ensemble_predict(ensemble, x {shape}) with ensemble = {call}").format(shape=x.shape, call=call)
    if not isinstance(pred, np.ndarray):
        fail(_("{where} returned {type}, expected an array of shape {expected}.").format(
            where=where, type=type(pred).__name__, expected=(n, x.shape[0], 1)))
    if pred.shape != (n, x.shape[0], 1):
        fail(_("{where} has shape {shape}, expected {expected}: one (B, 1) output per member.").format(
            where=where, shape=pred.shape, expected=(n, x.shape[0], 1)))
    if pred.dtype != np.float32:
        fail(_("{where} has dtype {dtype}, expected float32.").format(where=where, dtype=pred.dtype))
    hidden_act = np.maximum(np.einsum("bd,mdh->mbh", x, p["l1.kernel"]) + p["l1.bias"][:, None, :], 0.0)
    expected = np.einsum("mbh,mho->mbo", hidden_act, p["l2.kernel"]) + p["l2.bias"][:, None, :]
    if not np.allclose(pred, expected, rtol=1e-4, atol=1e-5):
        worst = tuple(int(i) for i in np.unravel_index(int(np.argmax(np.abs(pred - expected))), pred.shape))
        fail(_("{where}: the predictions are not what the ensemble's own parameters give. At index {index} "
               "(member {member}) expected {expected:.6f}, got {got:.6f}. Member i must use "
               "kernel[i] and bias[i] of every layer, on the same x.").format(
            where=where, index=worst, member=worst[0], expected=expected[worst], got=pred[worst]))
    # The parameters come from nnx.state in the learner's process: the outputs of the ensemble
    # object itself, on a batch drawn here, must be what those parameters give.
    direct = _outputs(got, 0, n, x, call)
    expected_direct = _numpy_predict(p, x)
    if not np.allclose(direct, expected_direct, rtol=1e-4, atol=1e-5):
        worst = tuple(int(i) for i in np.unravel_index(int(np.argmax(np.abs(direct - expected_direct))), direct.shape))
        fail(_("{where}: the ensemble's outputs are not what the parameters read from it (nnx.state) give. At index "
               "{index} (member {member}) the parameters give {want:.6f}, the ensemble gives {got:.6f}. Keep the "
               "members' parameters in the MLP's own nnx.Param variables, and leave the libraries as they "
               "are.").format(where=where, index=worst, member=worst[0], want=float(expected_direct[worst]),
                              got=float(direct[worst])))


def _numpy_predict(p, x):
    x = np.asarray(x, np.float64)
    p = {k: np.asarray(v, np.float64) for k, v in p.items()}
    hidden_act = np.maximum(np.einsum("bd,mdh->mbh", x, p["l1.kernel"]) + p["l1.bias"][:, None, :], 0.0)
    return np.einsum("mbh,mho->mbo", hidden_act, p["l2.kernel"]) + p["l2.bias"][:, None, :]


def test_the_program_predicts_from_the_parameters(ensemble_run):
    """ensemble_predict's program, run here on members and a batch the learner's process never saw."""
    n, d_in, hidden, x, got, _want, call, seed = ensemble_run
    rng = np.random.default_rng([seed, 1])
    fresh_params = {
        "l1.kernel": rng.standard_normal((n, d_in, hidden)) / np.sqrt(d_in),
        "l1.bias": 0.3 * rng.standard_normal((n, hidden)),
        "l2.kernel": rng.standard_normal((n, hidden, 1)) / np.sqrt(hidden),
        "l2.bias": 0.3 * rng.standard_normal((n, 1)),
    }
    fresh_params = {k: v.astype(np.float32) for k, v in fresh_params.items()}
    x = rng.standard_normal(x.shape).astype(np.float32)
    fresh = {**{"0/" + k.replace(".", "/"): v for k, v in fresh_params.items()}, "1": x}
    what = _("ensemble_predict(ensemble, x {shape}) with ensemble = {call}, as the program it lowers to under "
             "jax.jit").format(shape=x.shape, call=call)
    names, values, texts = got.get("in_names"), got.get("in_values"), got.get("programs")
    if (not isinstance(names, list) or not isinstance(values, list) or len(names) != len(values)
            or not set(fresh) <= set(names) or not isinstance(texts, list) or not texts):
        fail(_("{what} takes the inputs {names}, not the ensemble's state and x.").format(what=what, names=names))
    outs = run_lowered(texts[0], [fresh.get(name, value) for name, value in zip(names, values)], what=what)
    assert_close(outs[0] if len(outs) == 1 else outs, _numpy_predict(fresh_params, x).astype(np.float32),
                 what=_("{what}, run by the check on members' parameters and an x it drew (member i must use "
                        "kernel[i] and bias[i] of every layer, on the same x)").format(what=what),
                 rtol=1e-4, atol=1e-5)


def test_members_are_computed_at_once(ensemble_run):
    n, d_in, hidden, x, got, want, call, seed = ensemble_run
    texts = got.get("programs")
    try:
        full, single = parse(texts[0]), parse(texts[1])
        # The program run above: as many matrix products as the reference's program for the same
        # call (vmap's count does not depend on the number of members), with room for other
        # vectorised routes, but not for a second member's forward pass.
        products, in_loops = matrix_products(full.text)
        allowed = 2 * matrix_products(want["programs"][0])[0] - 1
    except (ProgramError, TypeError, IndexError) as e:
        fail(_("ensemble_predict under jax.jit could not be read as a compiled program: {error}.").format(error=e))
    # "At once" means one vectorised computation over the member axis: no loop in the program
    # (jax.lax.map, lax.scan and fori_loop lower to a while loop that runs one member per step).
    if in_loops:
        fail(_("ensemble_predict(ensemble, x {shape}) compiles, for {n} members, to a loop: {in_loops} of its "
               "{products} matrix products (dot_general) run in the body of a while loop, one member after the "
               "other (jax.lax.map, lax.scan or fori_loop do that). Map the model over its member axis with "
               "nnx.vmap (in_axes=(0, None)) or jax.vmap, so that each matrix product covers all members at "
               "once.").format(shape=x.shape, n=n, in_loops=in_loops, products=products))
    if products > allowed:
        fail(_("ensemble_predict(ensemble, x {shape}) compiles, for {n} members, to {products} matrix products "
               "(dot_general), where computing all members at once needs at most {allowed}: the members are run "
               "one by one in a Python loop. Map the model over its member axis with nnx.vmap (in_axes=(0, None)), "
               "so that all members are computed at once.").format(shape=x.shape, n=n, products=products,
                                                                   allowed=allowed))
    if full.count("dot_general") > single.count("dot_general") or full.size > single.size * 1.5 + 10:
        fail(_("ensemble_predict(ensemble, x {shape}) compiles, for {n} members, to {size} operations and "
               "{products} matrix products, for 1 member to {single_size} and "
               "{single_products}: the members are run one by one in a Python loop. Map the model over "
               "its member axis with nnx.vmap (in_axes=(0, None)), so that all members are computed at once.").format(
            shape=x.shape, n=n, size=full.size, products=full.count("dot_general"), single_size=single.size,
            single_products=single.count("dot_general")))


def test_same_seed_same_ensemble(ensemble_run):
    n, d_in, hidden, x, got, _want, call, seed = ensemble_run
    first = _leaves(got["params"], call)
    again = _leaves(got["again"], _("{call} (called again)").format(call=call))
    other = _leaves(got["other"], call.replace(f"seed={seed}", f"seed={seed + 1}"))
    for key in first:
        assert_equal(again[key], first[key], what=_("{key} of a second {call}: the same seed must give the "
                                                    "same ensemble").format(key=key, call=call))
    if all(np.allclose(first[key], other[key]) for key in first):
        fail(_("{call} and seed={other} gave the same ensemble: build it from nnx.Rngs(seed).").format(
            call=call, other=seed + 1))
    # The same, from the ensembles' outputs on the batch drawn here rather than from their state.
    outputs = [_outputs(got, i, n, x, call) for i in range(3)]
    if not np.array_equal(outputs[1], outputs[0]):
        fail(_("{call}, built twice, gives different outputs on the same batch: the same seed must give the same "
               "ensemble. Build it from nnx.Rngs(seed).").format(call=call))
    if np.allclose(outputs[2], outputs[0]):
        fail(_("{call} and seed={other} give the same outputs on a batch drawn by the check: build the ensemble "
               "from nnx.Rngs(seed).").format(call=call, other=seed + 1))


@pytest.fixture(scope="module")
def dropout_run(learner, request):
    seed = _seed(request)
    rng = np.random.default_rng(seed + 1)
    shape, n = DROPOUT_SHAPES[int(rng.integers(len(DROPOUT_SHAPES)))]
    rate = RATES[int(rng.integers(len(RATES)))]
    # Values away from zero, so a dropped element (0) is never confused with a kept one.
    x = (rng.uniform(0.5, 2.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)).astype(np.float32)
    more_seeds = [int(s) for s in rng.integers(0, 2**31, 2)]
    got = learner.probe(probe_dropout, x, n, rate, seed, more_seeds)
    return x, n, rate, got, f"dropout_copies(x {shape}, n_copies={n}, rate={rate}, seed={seed})", seed


def _masks(copies, x, n, rate, call):
    if not isinstance(copies, np.ndarray):
        fail(_("{where} returned {type}, expected an array of shape {expected}.").format(
            where=call, type=type(copies).__name__, expected=(n, *x.shape)))
    if copies.shape != (n, *x.shape):
        fail(_("{call} has shape {shape}, expected {expected}: n_copies copies of x.").format(
            call=call, shape=copies.shape, expected=(n, *x.shape)))
    if copies.dtype != np.float32:
        fail(_("{where} has dtype {dtype}, expected float32.").format(where=call, dtype=copies.dtype))
    kept_value = np.broadcast_to(x / (1.0 - rate), copies.shape)
    kept = np.isclose(copies, kept_value, rtol=1e-5, atol=1e-6)
    dropped = copies == 0.0
    if not np.all(kept | dropped):
        bad = tuple(int(i) for i in np.unravel_index(int(np.argmax(~(kept | dropped))), copies.shape))
        fail(_("{call}: element {index} is {value:.6f}; a dropped copy holds either 0 or x / (1 - rate) "
               "= {kept:.6f} (x = {x:.6f}).").format(call=call, index=bad, value=copies[bad], kept=kept_value[bad],
                                                    x=x[bad[1:]]))
    return kept


def test_each_copy_has_its_own_mask(dropout_run):
    x, n, rate, got, call, seed = dropout_run
    kept = _masks(got["copies"], x, n, rate, call)
    # Shared masks first: n identical copies also swing the kept count n times as far.
    for i, j in itertools.combinations(range(n), 2):
        if np.array_equal(kept[i], kept[j]):
            fail(_("{call}: copies {i} and {j} have the same mask. nnx.vmap broadcasts the Dropout's Rngs by "
                   "default, so every copy draws the same key: split them with nnx.split_rngs(splits={n}) and "
                   "map the random state with nnx.StateAxes({{nnx.RngState: 0, ...: None}}).").format(
                call=call, i=i, j=j, n=n))
    if departures([keep_rate(kept, 1.0 - rate)]):
        fail(_("{call} kept {kept} of {size} elements; about {expected:.0f} "
               "expected with rate={rate} (each element kept with probability 1 - rate).").format(
            call=call, kept=int(kept.sum()), size=kept.size, expected=kept.size * (1.0 - rate), rate=rate))


def test_the_masks_are_independent(dropout_run):
    """Statistical tests with exact tails (course/checks/randomness.py): a correct solution fails
    them with probability below 1e-10; a fixed pattern with the right keep rate does not pass."""
    x, n, rate, got, call, seed = dropout_run
    kept = _masks(got["copies"], x, n, rate, call)
    others = [_masks(c, x, n, rate, call) for c in [got["other"], *got.get("more", [])]]
    rng = np.random.default_rng([seed, 2])
    # Copies against each other, rows and columns within the copies, and the copies of different seeds.
    tests = (line_tests(kept.reshape(n, -1), rng, COPIES) + mask_tests(kept.reshape(-1, kept.shape[-1]), rng))
    flat = np.stack([m.ravel() for m in (kept, *others)])
    tests += [overlap(flat, [pair], SEEDS) for pair in itertools.combinations(range(len(flat)), 2)]
    found = departures(tests)
    if found:
        t = found[0]
        fail(_("{call}: the kept elements are not drawn independently. Over {test}, {observed} elements are kept "
               "in both, where independent draws keep about {expected:.0f} (a deviation this large happens by "
               "chance with probability {p:.1e}). Draw every element's keep/drop from the random streams "
               "(nnx.Dropout, or jax.random.bernoulli with split keys), not from a fixed pattern.").format(
            call=call, test=t.label(), observed=t.observed, expected=t.expected, p=t.p))


def test_each_element_is_dropped_on_its_own(dropout_run):
    x, n, rate, got, call, seed = dropout_run
    kept = _masks(got["copies"], x, n, rate, call)
    # A mask drawn once per row, or once per feature and shared by every row (nnx.Dropout with
    # broadcast_dims), is constant along an axis in EVERY copy. With independent elements that has
    # probability below 1e-100 at these sizes (24 or more rows and columns, in 3 or 4 copies), so a
    # correct solution is never taken for one.
    rows, features = x.shape
    per_feature = [np.array_equal(k, np.broadcast_to(k[:1], k.shape)) for k in kept]  # every row the same
    per_row = [np.array_equal(k, np.broadcast_to(k[:, :1], k.shape)) for k in kept]  # each row all kept or not
    advice = _("Dropout decides each element on its own: use nnx.Dropout(rate) without broadcast_dims (or "
               "jax.random.bernoulli with the full shape of x).")
    if all(per_feature) and all(per_row):
        fail(_("{call}: within each copy, all of x is kept or dropped as a whole (every element of a copy has the "
               "same keep/drop decision). {advice}").format(call=call, advice=advice))
    if all(per_feature):
        fail(_("{call}: within each copy, every row of x has the same mask (one keep/drop decision per feature, "
               "shared by all {rows} rows). {advice}").format(call=call, rows=rows, advice=advice))
    if all(per_row):
        fail(_("{call}: within each copy, each row of x is kept or dropped as a whole (one keep/drop decision per "
               "row, shared by its {features} features). {advice}").format(call=call, features=features,
                                                                           advice=advice))


def test_dropout_copies_follow_the_seed(dropout_run):
    x, n, rate, got, call, seed = dropout_run
    first = _masks(got["copies"], x, n, rate, call)
    again = _masks(got["again"], x, n, rate, _("{call} (called again)").format(call=call))
    other = _masks(got["other"], x, n, rate, call.replace(f"seed={seed}", f"seed={seed + 1}"))
    if not np.array_equal(first, again):
        fail(_("{call} gave different masks when called twice: use nnx.Rngs(dropout=seed), so the same seed "
               "gives the same copies.").format(call=call))
    if np.array_equal(first, other):
        fail(_("{call} and seed={other} gave the same masks: the masks must come from the seed.").format(
            call=call, other=seed + 1))
