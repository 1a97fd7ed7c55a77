"""Checks for mlp_nnx: the Titanic MLP in Flax NNX, judged by its parameters and outputs."""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, assert_equal, describe, fail, side_by_side
from course.engine.evidence import mlp_forward
from course.engine.words import _

TIMEOUT = 60


# (d_in, hidden, d_out, batch) from a small fixed set, so that the programs compiled
# for them are reused from one check to the next; the values are drawn fresh. The
# three sizes differ, so that every parameter is identified by its shape alone. The
# forward runs on every set, with 8 rows (so that negative logits are present) and
# with the first row alone.
SIZES = [(6, 11, 3, 8), (9, 4, 2, 8)]


def _sizes(rng):
    return SIZES[int(rng.integers(len(SIZES)))]


def probe_param_shapes(module, sizes, seed, names=None):
    from flax import nnx

    rngs = nnx.Rngs(seed)
    if names:  # by keyword, with the names of the statement's signature
        model = module.MLP(**dict(zip(names, sizes)), rngs=rngs)
    else:
        model = module.MLP(*sizes, rngs=rngs) if sizes else module.MLP(rngs=rngs)
    flat = nnx.to_flat_state(nnx.state(model, nnx.Param))
    return sorted(list(var.shape) for _, var in flat)


def probe_forward(module, cases):
    import jax.numpy as jnp
    from flax import nnx

    results = []
    for sizes, seed, values, x in cases:
        model = module.MLP(*sizes, rngs=nnx.Rngs(seed))
        by_shape = {tuple(v.shape): v for v in values}
        for path, var in nnx.to_flat_state(nnx.state(model, nnx.Param)):
            if tuple(var.shape) not in by_shape:
                return {"error": "unexpected_shape", "sizes": str(tuple(sizes)), "path": ".".join(map(str, path)),
                        "shape": str(tuple(var.shape)), "expected": str(sorted(by_shape))}
            var[...] = jnp.asarray(by_shape[tuple(var.shape)])
        results.append([model(jnp.asarray(x)), model(jnp.asarray(x[:1]))])
    return {"out": results}


def probe_seeds(module, sizes, seed, x):
    import jax.numpy as jnp
    from flax import nnx

    def built(s):
        model = module.MLP(*sizes, rngs=nnx.Rngs(s))
        flat = nnx.to_flat_state(nnx.state(model, nnx.Param))
        return {"params": [[".".join(map(str, path)), var[...]] for path, var in flat], "out": model(jnp.asarray(x))}

    return {"a": built(seed), "b": built(seed), "c": built(seed + 1)}


def _forward_from_reported(params, sizes, x):
    """The forward pass recomputed here in float64 from reported parameters, each identified by its
    shape (the sizes differ); None where they are not two kernels and two biases of these sizes."""
    d_in, hidden, d_out = sizes
    by_shape = {}
    for _path, value in params:
        if not isinstance(value, np.ndarray) or value.dtype.kind != "f" or value.shape in by_shape:
            return None
        by_shape[value.shape] = value
    shapes = [(d_in, hidden), (hidden,), (hidden, d_out), (d_out,)]
    if sorted(by_shape) != sorted(shapes):
        return None
    w1, b1, w2, b2 = (by_shape[s] for s in shapes)
    return mlp_forward({"linear1": {"kernel": w1, "bias": b1}, "linear2": {"kernel": w2, "bias": b2}}, x)


def test_default_sizes_are_the_articles(learner, reference, seed):
    got, want = side_by_side(learner, reference).probe(probe_param_shapes, [], seed)
    assert_equal(got, want, what=_("shapes of the nnx.Param arrays of MLP(rngs=nnx.Rngs(seed)) (sorted)"))


def test_parameter_shapes(learner, reference, rng, seed):
    sizes = _sizes(rng)[:3]
    got, want = side_by_side(learner, reference).probe(probe_param_shapes, list(sizes), seed)
    assert_equal(got, want, what=_("shapes of the nnx.Param arrays of MLP{sizes} (sorted): "
                                   "two kernels (in, out) and two biases").format(sizes=sizes))
    # Later code builds the model by keyword, with the signature's names.
    names = ["in_features", "hidden", "out_features"]
    call = "MLP(" + ", ".join(f"{k}={v}" for k, v in zip(names, sizes)) + ", rngs=rngs)"
    got, want = side_by_side(learner, reference).probe(probe_param_shapes, list(sizes), seed, names)
    assert_equal(got, want, what=_("shapes of the nnx.Param arrays of {call} (sorted)").format(call=call))


def _draw_forward_case(rng, d_in, hidden, d_out, batch):
    """Parameter values and inputs, redrawn until some logits are clearly negative."""
    while True:
        values = [
            rng.standard_normal((d_in, hidden)).astype("float32"),
            rng.standard_normal((hidden,)).astype("float32"),
            rng.standard_normal((hidden, d_out)).astype("float32"),
            rng.standard_normal((d_out,)).astype("float32"),
        ]
        x = rng.standard_normal((batch, d_in)).astype("float32")
        params = {"linear1": {"kernel": values[0], "bias": values[1]},
                  "linear2": {"kernel": values[2], "bias": values[3]}}
        # The expected logits are computed here, in float64, from the values the check chose.
        want = mlp_forward(params, x)
        if want.min() < -0.1:
            return values, x, want


def test_forward_with_parameters_set_by_the_check(learner, rng, seed):
    cases, wants = [], []
    for d_in, hidden, d_out, batch in SIZES:
        values, x, want = _draw_forward_case(rng, d_in, hidden, d_out, batch)
        cases.append([[d_in, hidden, d_out], seed, values, x])
        wants.append(want)
    got = learner.probe(probe_forward, cases)
    if "error" in got:
        fail(_("MLP{sizes}: parameter {path} has shape {shape}, which is none of the expected {expected}.").format(
            sizes=got.get("sizes"), path=got.get("path"), shape=got.get("shape"), expected=got.get("expected")))
    outs = got["out"]
    if not isinstance(outs, list) or len(outs) != len(cases):
        fail(_("MLP(...)(x): expected {n} results from the check's probe, got something else.").format(n=len(cases)))
    for (sizes, __, __, x), want, pair in zip(cases, wants, outs):
        sizes = tuple(sizes)
        for out, want_rows, rows in zip(pair, (want, want[:1]), (x, x[:1])):
            what = _("MLP{sizes}(x) for x of shape {shape}, with the check's parameter values "
                     "(linear, ReLU, linear; no sigmoid)").format(sizes=sizes, shape=rows.shape)
            if isinstance(out, np.ndarray) and out.shape == want_rows.shape and np.all((out > 0) & (out < 1)) \
                    and np.allclose(out, 1 / (1 + np.exp(-want_rows)), rtol=1e-4, atol=1e-5):
                fail(_("{what}: the outputs are sigmoid(logits). Return the logits: the loss applies the "
                       "sigmoid.").format(what=what))
            if isinstance(out, np.ndarray) and out.shape == want_rows.shape and (want_rows < -1e-3).any() \
                    and np.allclose(out, np.maximum(want_rows, 0), rtol=1e-4, atol=1e-4):
                fail(_("{what}: every negative logit came back as 0, as if a ReLU followed the last layer. "
                       "Apply the ReLU only between the two linear layers: the logits must keep their sign.").format(
                    what=what))
            assert_close(out, want_rows.astype(np.float32), what=what, rtol=1e-4, atol=1e-4, dtype=np.float32)


def _distinct_keys(params, sizes):
    """Two kernels drawn with one key (one key taken from `rngs` and handed to both layers) come from
    the same random numbers: the smaller one is a rescaled start of the larger one. Kernels drawn
    with two keys are independent: their correlation over 8 or more entries is never near 1."""
    kernels = sorted((v.ravel().astype(np.float64) for _p, v in params if v.ndim == 2), key=np.size)
    if len(kernels) != 2 or kernels[0].size < 8:
        return
    small, big = kernels[0], kernels[1][:kernels[0].size]
    if small.std() > 0 and big.std() > 0 and abs(np.corrcoef(small, big)[0, 1]) > 0.999:
        fail(_("MLP{sizes}: the second kernel is a rescaled copy of the first one's random numbers: both layers "
               "were initialised with the same key. Pass `rngs` itself to each nnx.Linear; it hands out a new "
               "key every time.").format(sizes=sizes))


def test_initialisation_comes_from_rngs(learner, rng, seed):
    *sizes, batch = _sizes(rng)
    sizes = tuple(sizes)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    got = learner.probe(probe_seeds, list(sizes), seed, x)
    a, b, c = ([(str(p), np.asarray(v)) for p, v in got[k]["params"]] for k in "abc")
    same = len(a) == len(b) and all(
        pa == pb and va.shape == vb.shape and (va == vb).all() for (pa, va), (pb, vb) in zip(a, b))
    if not same:
        fail(_("MLP{sizes} built twice with rngs=nnx.Rngs({seed}) has different parameters: "
               "take every random key from `rngs`.").format(sizes=sizes, seed=seed))
    differ = len(a) != len(c) or any(
        pa != pc or va.shape != vc.shape or not (va == vc).all() for (pa, va), (pc, vc) in zip(a, c))
    if not differ:
        fail(_("MLP{sizes} built with nnx.Rngs({seed}) and nnx.Rngs({other}) has the same parameters: "
               "pass `rngs` to the layers instead of a fixed key.").format(sizes=sizes, seed=seed, other=seed + 1))
    # Biases may start at zero whatever the seed; every kernel (2-D weight) must not.
    if len(a) == len(c):
        for (pa, va), (pc, vc) in zip(a, c):
            if pa == pc and va.ndim >= 2 and va.shape == vc.shape and (va == vc).all():
                fail(_("MLP{sizes} built with nnx.Rngs({seed}) and nnx.Rngs({other}) has the same initial "
                       "`{path}` (shape {shape}): that layer ignores `rngs`. Build every layer with the `rngs` "
                       "passed to MLP, not with a fixed nnx.Rngs(...) or key.").format(
                    sizes=sizes, seed=seed, other=seed + 1, path=pa, shape=va.shape))
    _distinct_keys(a, sizes)
    # The parameters above are read with nnx.state, which the learner's process can patch: the same
    # judgments from the models themselves, on an x drawn here, and their outputs must be what the
    # reported parameters give, recomputed here.
    outs = [got[k]["out"] for k in "abc"]
    call = _("MLP{sizes}(x) for x of shape {shape}").format(sizes=sizes, shape=x.shape)
    for out in outs:
        if not isinstance(out, np.ndarray) or out.shape != (batch, sizes[2]) or out.dtype != np.float32:
            fail(_("{call}: expected a float32 array of shape {expected}, got {got}.").format(
                call=call, expected=(batch, sizes[2]), got=describe(out)))
    if not np.array_equal(outs[0], outs[1]):
        fail(_("MLP{sizes} built twice with rngs=nnx.Rngs({seed}) gives different outputs on the same x: "
               "take every random key from `rngs`.").format(sizes=sizes, seed=seed))
    if np.allclose(outs[0], outs[2], rtol=1e-6, atol=1e-6):
        fail(_("MLP{sizes} built with nnx.Rngs({seed}) and nnx.Rngs({other}) gives the same outputs on an x "
               "drawn by the check: pass `rngs` to the layers instead of a fixed key.").format(
            sizes=sizes, seed=seed, other=seed + 1))
    for k, s, out in zip("abc", (seed, seed, seed + 1), outs):
        want = _forward_from_reported([(p, np.asarray(v)) for p, v in got[k]["params"]], sizes, x)
        if want is None or not np.allclose(out, want, rtol=1e-4, atol=1e-4):
            fail(_("MLP{sizes} built with nnx.Rngs({seed}): its outputs on an x drawn by the check are not "
                   "linear, ReLU, linear with the parameters nnx.state(model, nnx.Param) reports. The model "
                   "must compute with its nnx.Param arrays and nothing else.").format(sizes=sizes, seed=s))
