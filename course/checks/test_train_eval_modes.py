"""Checks for train_eval_modes: seeding, dropout and BatchNorm in training mode,
and a predict() that evaluates without leaving the model changed."""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, fail
from course.engine.words import N_, _, probe_said

TIMEOUT = 90

# (d_in, hidden, d_out) and the batch length, one pair per run: a few fixed shapes let repeated
# checks reuse the compiled programs. In each, the three sizes differ (the layers are found by their
# kernels' shapes), the batch differs from them all, and min(hidden, d_out) leaves enough units for
# the dropout rate's binomial test; one batch is odd, the other even.
SIZES = [((6, 16, 5), 11), ((13, 9, 4), 8)]


def _case(rng):
    sizes, batch = SIZES[int(rng.integers(len(SIZES)))]
    x = rng.standard_normal((batch, sizes[0])).astype("float32")
    return sizes, x


def probe_seeding(module, sizes, seed, x):
    import jax
    from flax import nnx

    def build(s):
        return module.Classifier(*sizes, dropout_rate=0.5, rngs=nnx.Rngs(s))

    a, b, c = build(seed), build(seed), build(seed + 1)
    # The same parameters under two seeds: the training outputs then differ only by the
    # dropout masks, which must come from `rngs` too.
    same_a, same_c = build(seed), build(seed + 1)
    nnx.update(same_c, nnx.state(same_a, nnx.Param))
    masks = {"masks_a": [same_a(x), same_a(x)], "masks_c": [same_c(x), same_c(x)]}
    # Without dropout, the training-mode outputs depend on the parameters alone: two seeds must give
    # two models, and each model's outputs must be what its weights (read here off its layers) give.
    def zero_rate(s):
        model = module.Classifier(*sizes, dropout_rate=0.0, rngs=nnx.Rngs(s))
        norms = [m for _, m in nnx.iter_modules(model) if isinstance(m, nnx.BatchNorm)]
        firsts = [m for _, m in nnx.iter_modules(model)
                  if isinstance(m, nnx.Linear) and tuple(m.kernel.shape) == (sizes[0], sizes[1])]
        lasts = [m for _, m in nnx.iter_modules(model)
                 if isinstance(m, nnx.Linear) and tuple(m.kernel.shape) == (sizes[1], sizes[2])]
        if len(norms) != 1 or len(firsts) != 1 or len(lasts) != 1:
            return {"error": ["layers", {"d_in": sizes[0], "hidden": sizes[1], "d_out": sizes[2],
                                         "norms": len(norms), "firsts": len(firsts), "lasts": len(lasts)}]}
        norm, first, last = norms[0], firsts[0], lasts[0]
        if last.bias is None or first.bias is None:
            return {"error": ["no_bias", {}]}
        weights = {"k1": first.kernel[...], "b1": first.bias[...], "scale": norm.scale[...],
                   "bias": norm.bias[...], "k2": last.kernel[...], "b2": last.bias[...]}
        return {"weights": weights, "out": model(x)}

    return {
        **masks,
        "zero_a": zero_rate(seed),
        "zero_c": zero_rate(seed + 1),
        "a": jax.tree.leaves(nnx.state(a, nnx.Param)),
        "b": jax.tree.leaves(nnx.state(b, nnx.Param)),
        "c": jax.tree.leaves(nnx.state(c, nnx.Param)),
        "out_a": a(x),
        "out_b": b(x),
    }

# What the probes report: [key, fields], worded here in the learner's language.
PROBE_ERRORS = {
    "layers": N_("expected one nnx.BatchNorm, one nnx.Linear({d_in}, {hidden}) and one nnx.Linear({hidden}, {d_out}) "
                 "in the Classifier, found {norms}, {firsts} and {lasts}"),
    "no_bias": N_("a Linear layer without bias (PyTorch's Linear has one)"),
}


def probe_modes(module, sizes, rate, seed, x, head):
    """Outputs and state, read as arrays; every expectation is computed by the check."""
    import numpy as np
    from flax import nnx

    model = module.Classifier(*sizes, dropout_rate=rate, rngs=nnx.Rngs(seed))
    norms = [m for _, m in nnx.iter_modules(model) if isinstance(m, nnx.BatchNorm)]
    firsts = [m for _, m in nnx.iter_modules(model)
              if isinstance(m, nnx.Linear) and tuple(m.kernel.shape) == (sizes[0], sizes[1])]
    lasts = [m for _, m in nnx.iter_modules(model)
             if isinstance(m, nnx.Linear) and tuple(m.kernel.shape) == (sizes[1], sizes[2])]
    if len(norms) != 1 or len(firsts) != 1 or len(lasts) != 1:
        return {"error": ["layers", {"d_in": sizes[0], "hidden": sizes[1], "d_out": sizes[2], "norms": len(norms),
                                     "firsts": len(firsts), "lasts": len(lasts)}]}
    norm, first, last = norms[0], firsts[0], lasts[0]

    def arr(v):
        return np.array(v[...]) if v is not None else None

    def stats():
        return [arr(norm.mean), arr(norm.var)]

    weights = {"k1": arr(first.kernel), "b1": arr(first.bias), "scale": arr(norm.scale), "bias": arr(norm.bias),
               "k2": arr(last.kernel), "b2": arr(last.bias)}
    train_1 = model(x)
    mean_after_one_step = arr(norm.mean)
    train_2 = model(x)
    stats_before = stats()
    predicted = module.predict(model, x)
    predicted_head = module.predict(model, x[:head])
    stats_after = stats()
    train_3 = model(x)
    train_4 = model(x)
    return {
        "weights": weights,
        "mean_after_one_step": mean_after_one_step,
        "train": [train_1, train_2, train_3, train_4],
        "predicted": predicted,
        "predicted_head": predicted_head,
        "stats_before": stats_before,
        "stats_after": stats_after,
        "stats_after_training_again": stats(),
    }


def probe_dropout_place(module, sizes, rate, seed, x, d, b, calls):
    """A Classifier whose last Linear is set to a diagonal (kernel[j, j] = d[j] for the first units,
    zero elsewhere) and bias b: its training-mode outputs then show, unit by unit, what reached that
    layer (dropped or kept, and how scaled). The same batch is sent `calls` times (fresh masks, the
    same batch statistics, shapes compiled already). The weights are read back; every expectation
    is computed by the check."""
    import numpy as np
    from flax import nnx

    d_in, hidden, d_out = sizes
    model = module.Classifier(d_in, hidden, d_out, dropout_rate=rate, rngs=nnx.Rngs(seed))
    norms = [m for _, m in nnx.iter_modules(model) if isinstance(m, nnx.BatchNorm)]
    firsts = [m for _, m in nnx.iter_modules(model)
              if isinstance(m, nnx.Linear) and tuple(m.kernel.shape) == (d_in, hidden)]
    lasts = [m for _, m in nnx.iter_modules(model)
             if isinstance(m, nnx.Linear) and tuple(m.kernel.shape) == (hidden, d_out)]
    if len(norms) != 1 or len(firsts) != 1 or len(lasts) != 1:
        return {"error": ["layers", {"d_in": d_in, "hidden": hidden, "d_out": d_out, "norms": len(norms),
                                     "firsts": len(firsts), "lasts": len(lasts)}]}
    norm, first, last = norms[0], firsts[0], lasts[0]
    if last.bias is None or first.bias is None:
        return {"error": ["no_bias", {}]}
    kernel = np.zeros((hidden, d_out), np.float32)
    kernel[np.arange(len(d)), np.arange(len(d))] = d
    last.kernel[...] = kernel
    last.bias[...] = np.asarray(b, np.float32)

    def arr(v):
        return np.array(v[...]) if v is not None else None

    weights = {"k1": arr(first.kernel), "b1": arr(first.bias), "scale": arr(norm.scale), "bias": arr(norm.bias),
               "k2": arr(last.kernel), "b2": arr(last.bias)}
    return {"weights": weights, "train": [model(x) for _ in range(calls)]}


def _eval_forward(weights, stats, x, eps=1e-5):
    """The classifier in evaluation mode, in float64: running averages, no dropout."""
    f = {k: np.asarray(v, np.float64) for k, v in weights.items()}
    mean, var = (np.asarray(v, np.float64) for v in stats)
    h = np.asarray(x, np.float64) @ f["k1"] + f["b1"]
    h = (h - mean) / np.sqrt(var + eps) * f["scale"] + f["bias"]
    return np.maximum(h, 0) @ f["k2"] + f["b2"]


def _train_forward(weights, x, call, eps=1e-5):
    """The classifier in training mode without dropout, in float64: batch norm on the batch's own mean
    and (biased) variance."""
    need = {"k1", "b1", "scale", "bias", "k2", "b2"}
    if not isinstance(weights, dict) or set(weights) != need or not all(
            isinstance(v, np.ndarray) and v.dtype.kind == "f" for v in weights.values()):
        fail(_("{call}: the check could not read the weights of its layers as arrays.").format(call=call))
    f = {k: np.asarray(v, np.float64) for k, v in weights.items()}
    try:
        h = np.asarray(x, np.float64) @ f["k1"] + f["b1"]
        h = (h - h.mean(axis=0)) / np.sqrt(h.var(axis=0) + eps) * f["scale"] + f["bias"]
        return np.maximum(h, 0) @ f["k2"] + f["b2"]
    except ValueError:
        fail(_("{call}: the weights of its layers do not have the shapes of Linear, BatchNorm, Linear.").format(
            call=call))


def _same(a, b):
    return len(a) == len(b) and all(x.shape == y.shape and np.array_equal(x, y) for x, y in zip(a, b))


def _modes(learner, rng, seed, rate=None):
    # Sizes first: every test of a run then builds the same shapes, which JAX compiles once.
    sizes, x = _case(rng)
    rate = float(rng.uniform(0.3, 0.6)) if rate is None else rate
    head = int(rng.integers(1, len(x) - 1))
    got = learner.probe(probe_modes, list(sizes), rate, seed, x, head)
    if "error" in got:
        fail(_("Classifier{sizes}: {error}.").format(
            sizes=sizes, error=probe_said(got["error"], PROBE_ERRORS) or str(got["error"])[:300]))
    got["rate"] = rate
    return sizes, x, head, got


def test_same_seed_same_model(learner, rng, seed):
    sizes, x = _case(rng)
    got = learner.probe(probe_seeding, list(sizes), seed, x)
    if not _same(got["a"], got["b"]):
        fail(_("Classifier{sizes} built twice with rngs=nnx.Rngs({seed}) has different parameters: take every key "
               "from `rngs`.").format(sizes=sizes, seed=seed))
    if _same(got["a"], got["c"]):
        fail(_("Classifier{sizes} has the same parameters for nnx.Rngs({seed}) and nnx.Rngs({seed_1}): pass `rngs` "
               "to the layers instead of a fixed key.").format(sizes=sizes, seed=seed, seed_1=seed + 1))
    assert_close(got["out_b"], got["out_a"], what=_("the first training-mode output of two Classifier{sizes} built "
                                                    "with nnx.Rngs({seed}) (dropout masks come from `rngs`)").format(
                                                        sizes=sizes, seed=seed))
    if _same(got["masks_a"], got["masks_c"]):
        fail(_("Classifier{sizes} built with nnx.Rngs({seed}) and with nnx.Rngs({seed_1}), given the same "
               "parameters, drops the same units in training mode (two calls each): the dropout masks do not come "
               "from `rngs`. Give the Dropout layer the `rngs` passed to the Classifier.").format(
                   sizes=sizes, seed=seed, seed_1=seed + 1))
    # The parameters above are read with nnx.state, which the learner's process can patch. Without
    # dropout the models' own outputs must be what their weights give, recomputed here, and must differ.
    outs = []
    for key, s in (("zero_a", seed), ("zero_c", seed + 1)):
        zero = got[key]
        if "error" in zero:
            fail(_("Classifier{sizes}: {error}.").format(
                sizes=sizes, error=probe_said(zero["error"], PROBE_ERRORS) or str(zero["error"])[:300]))
        call = _("Classifier{sizes}(x) built with dropout_rate=0.0 and nnx.Rngs({seed}), in training mode, for x of "
                 "shape {shape}").format(sizes=sizes, seed=s, shape=x.shape)
        want = _train_forward(zero["weights"], x, call)
        assert_close(zero["out"], want.astype(np.float32), rtol=1e-4, atol=1e-4,
                     what=_("{call}, against linear, batch norm on the batch's statistics, ReLU, linear, computed by "
                            "the check from the model's own weights").format(call=call))
        outs.append(zero["out"])
    if np.allclose(outs[0], outs[1], rtol=1e-6, atol=1e-6):
        fail(_("Classifier{sizes} built with dropout_rate=0.0 gives the same training-mode outputs for "
               "nnx.Rngs({seed}) and nnx.Rngs({seed_1}) on an x drawn by the check: its parameters do not come from "
               "`rngs`. Pass `rngs` to the layers instead of a fixed key.").format(sizes=sizes, seed=seed, seed_1=seed + 1))


def test_dropout_is_active_in_training(learner, rng, seed):
    sizes, x, __, got = _modes(learner, rng, seed)
    train_1, train_2 = got["train"][:2]
    if np.allclose(train_1, train_2):
        fail(_("Classifier{sizes}(x) with dropout_rate={got_rate:.2f} gave the same output twice in training mode: "
               "dropout should draw a new mask on every call (give the Dropout layer `rngs`).").format(
                   sizes=sizes, got_rate=got['rate']))


def test_dropout_rate_is_used(learner, rng, seed):
    sizes, x, __, got = _modes(learner, rng, seed, 0.0)
    train_1, train_2 = got["train"][:2]
    assert_close(train_2, train_1, what=_("two training-mode calls of Classifier{sizes}(x) with dropout_rate=0.0 "
                                          "(nothing is dropped, so they must agree)").format(
                                              sizes=sizes), rtol=1e-5, atol=1e-5)


def test_batchnorm_momentum_matches_pytorch(learner, rng, seed):
    sizes, x, __, got = _modes(learner, rng, seed)
    # PyTorch's momentum 0.1: the running mean moves 10% of the way to the batch mean (from 0).
    w = got["weights"]
    batch_mean = (x.astype(np.float64) @ w["k1"].astype(np.float64) + w["b1"]).mean(axis=0)
    after_relu = np.maximum(x.astype(np.float64) @ w["k1"].astype(np.float64) + w["b1"], 0).mean(axis=0)
    if not np.allclose(batch_mean, after_relu, rtol=1e-3, atol=1e-4) and any(
            np.allclose(got["mean_after_one_step"], m * after_relu, rtol=1e-4, atol=1e-5) for m in (0.1, 0.9)):
        fail(_("the BatchNorm of Classifier{sizes} normalises the ReLU's output (its running mean follows the mean "
               "after ReLU): the order is linear, batch norm, ReLU, dropout, linear.").format(sizes=sizes))
    assert_close(got["mean_after_one_step"], (0.1 * batch_mean).astype(np.float32), rtol=1e-4, atol=1e-5,
                 what=_("the BatchNorm running mean after one training call of Classifier{sizes} on x of shape "
                        "{shape} (PyTorch's momentum=0.1; Flax counts momentum the other way)").format(
                            sizes=sizes, shape=x.shape))


def test_predict_is_evaluation_mode(learner, rng, seed):
    sizes, x, head, got = _modes(learner, rng, seed)
    expected_eval = _eval_forward(got["weights"], got["stats_before"], x).astype(np.float32)
    assert_close(got["predicted"], expected_eval, rtol=1e-4, atol=1e-5,
                 what=_("predict(model, x) for Classifier{sizes} and x of shape {shape}, against the model with "
                        "dropout off and BatchNorm on its running averages (computed by the check)").format(
                            sizes=sizes, shape=x.shape))
    assert_close(got["predicted_head"], expected_eval[:head], rtol=1e-4, atol=1e-5,
                 what=_("predict(model, x[:{head}]) against predict(model, x)[:{head}] (in evaluation mode a row's "
                        "prediction does not depend on the rest of the batch)").format(head=head))


def test_predict_leaves_the_model_training(learner, rng, seed):
    sizes, x, __, got = _modes(learner, rng, seed)
    for name, before, after in zip(("mean", "var"), got["stats_before"], got["stats_after"]):
        assert_close(after, before, what=_("BatchNorm running {name} after predict(model, x) (evaluating must not "
                                           "update the statistics)").format(name=name))
    train_3, train_4 = got["train"][2:]
    if np.allclose(train_3, train_4):
        fail(_("after predict(model, x), Classifier{sizes}(x) gives the same output twice: the model was left in "
               "evaluation mode. Use nnx.view, or switch back to training mode before returning.").format(sizes=sizes))
    if np.allclose(got["stats_after_training_again"][0], got["stats_after"][0]):
        fail(_("after predict(model, x), a training call of Classifier{sizes} no longer updates the BatchNorm "
               "running averages: the model was left in evaluation mode.").format(sizes=sizes))


# Training-mode calls on one batch: each draws a fresh mask over the same batch statistics,
# so that the dropped fraction of the hidden units is pinned down (a few hundred to a few
# thousand clearly active units) with the shapes the other tests compiled already.
DROPOUT_CALLS = 48


def _binomial_tails(n, k, p):
    """P(X <= k) and P(X >= k) for X ~ Binomial(n, p), exactly (log-space sums)."""
    from math import lgamma, log

    ks = np.arange(n + 1)
    logpmf = (np.array([lgamma(n + 1) - lgamma(i + 1) - lgamma(n - i + 1) for i in ks])
              + ks * log(p) + (n - ks) * log(1 - p))
    pmf = np.exp(logpmf - logpmf.max())
    pmf /= pmf.sum()
    return float(pmf[:k + 1].sum()), float(pmf[k:].sum())


def test_dropout_between_the_layers_at_the_rate(learner, rng, seed):
    sizes, x = _case(rng)
    d_in, hidden, d_out = sizes
    # Rates away from 0.5, so that a rate read as a keep probability shows (in the scale and the fraction).
    rate = float(np.round(rng.uniform(0.2, 0.35), 3))
    seen = min(hidden, d_out)  # hidden units 0..seen-1 each reach one output
    d = rng.uniform(0.5, 2.0, seen).astype(np.float32)
    b = (rng.uniform(0.5, 1.5, d_out) * rng.choice([-1.0, 1.0], d_out)).astype(np.float32)
    got = learner.probe(probe_dropout_place, list(sizes), rate, seed, x, d, b, DROPOUT_CALLS)
    if "error" in got:
        fail(_("Classifier{sizes}: {error}.").format(
            sizes=sizes, error=probe_said(got["error"], PROBE_ERRORS) or str(got["error"])[:300]))
    where = (_("Classifier{sizes}, dropout_rate={rate}, with linear2's kernel set to a diagonal diag(d) and its "
               "bias to b, called {DROPOUT_CALLS} times in training mode on x of shape {shape}").format(
                   sizes=sizes, rate=rate, DROPOUT_CALLS=DROPOUT_CALLS, shape=x.shape))
    w = {k: np.asarray(v, np.float64) for k, v in got["weights"].items()}
    kernel = np.zeros((hidden, d_out))
    kernel[np.arange(seen), np.arange(seen)] = d
    if not (np.array_equal(w["k2"], kernel) and np.array_equal(w["b2"], b.astype(np.float64))):
        fail(_("{where}: the kernel and bias read back from that Linear are not the values set: keep the layers' "
               "parameters as nnx.Param in nnx.Linear layers.").format(where=where))
    outs = [np.asarray(o, np.float64) for o in got["train"]]
    if len(outs) != DROPOUT_CALLS or any(o.shape != (len(x), d_out) for o in outs):
        fail(_("{where}: the outputs have shapes {shapes}...; expected {expected}.").format(
            where=where, shapes=[o.shape for o in outs][:3], expected=(len(x), d_out)))
    h = np.asarray(x, np.float64) @ w["k1"] + w["b1"]
    h = (h - h.mean(axis=0)) / np.sqrt(h.var(axis=0) + 1e-5) * w["scale"] + w["bias"]
    a = np.maximum(h[:, :seen], 0)
    active = np.broadcast_to(a > 0.2, (DROPOUT_CALLS, *a.shape))  # clearly active: dropped and kept far apart
    out = np.stack([o[:, :seen] for o in outs])[active]
    a = np.broadcast_to(a, active.shape)[active]
    dd, bb = (np.broadcast_to(v[:seen], active.shape)[active] for v in (d, b))

    def one_of(*candidates):
        close = [np.abs(out - c) <= 1e-3 + 1e-3 * np.abs(c) for c in candidates]
        return np.logical_or.reduce(close), close[0]

    ok, dropped = one_of(bb, a * dd / (1 - rate) + bb)
    if not ok.all():
        if one_of(bb, a * dd / rate + bb)[0].all():
            fail(_("{where}: the kept hidden units are scaled by 1/{rate} instead of 1/(1 - {rate}): the rate was "
                   "taken as the probability of keeping a unit. nnx.Dropout(rate) takes the probability of "
                   "dropping one: pass dropout_rate itself.").format(where=where, rate=rate))
        if one_of(np.zeros_like(bb), (a * dd + bb) / (1 - rate))[0].all():
            fail(_("{where}: whole outputs are zeroed or scaled by 1/(1 - rate), bias included: the dropout is "
                   "applied to the logits. Apply it to the hidden units, before the last Linear: "
                   "linear2(dropout(h)).").format(where=where))
        if one_of(bb, a * dd + bb)[0].all():
            fail(_("{where}: the kept hidden units are not scaled by 1/(1 - rate): use nnx.Dropout(dropout_rate), "
                   "which scales them (inverted dropout), as PyTorch's Dropout does.").format(where=where))
        i = int(np.argmin(ok))
        fail(_("{where}: an output at a clearly active hidden unit (ReLU output {a_i:.4f}, d {dd_i:.4f}, b "
               "{bb_i:.4f}) is {out_i:.4f}; expected b (unit dropped) or a * d / (1 - rate) + b = "
               "{kept:.4f} (unit kept). The order is linear, batch norm, ReLU, dropout, linear, "
               "with nnx.Dropout(dropout_rate).").format(
                   where=where, a_i=a[i], dd_i=dd[i], bb_i=bb[i], out_i=out[i],
                   kept=a[i] * dd[i] / (1 - rate) + bb[i]))
    n, k = int(active.sum()), int(dropped.sum())
    below, above = _binomial_tails(n, k, rate)
    if min(below, above) < 1e-10:
        fail(_("{where}: {k} of {n} clearly active hidden units were dropped ({k_n:.3f}); expected about {rate} of "
               "them. Each unit must be dropped with probability dropout_rate: nnx.Dropout(dropout_rate).").format(
                   where=where, k=k, n=n, k_n=k / n, rate=rate))
