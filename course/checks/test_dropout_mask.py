"""Checks for dropout_mask: masks from explicit keys, inverted dropout under jax.jit,
one independent mask per layer, with jax_debug_key_reuse on."""

from __future__ import annotations

import itertools

import numpy as np

from course.checks.randomness import departures, keep_rate, line_tests, mask_tests, overlap
from course.engine.checking import assert_close, fail
from course.engine.words import N_, _

# Key-reuse checking traces every random call afresh: compiles need headroom on a busy CPU.
TIMEOUT = 60

TWO_KEYS = N_("the masks of two different keys")
LAYERS = N_("layers")

# Shapes, and the rates that jax.jit takes as static arguments, come from small fixed sets so that
# repeated checks compile nothing new (the workspace's compilation caches serve them); the keys and
# inputs stay fresh. Masks: 150+ rows and 80+ columns, never square. Dropout: rows != columns, no
# rate of 0.5 (where x / rate and x / (1 - rate) agree). Layers: 3 to 5 layers (chains of three
# keys fit), rows != 8 columns.
MASK_SHAPES = ((211, 97), (173, 113), (157, 83))
DROPOUT_SHAPES = ((3, 7), (6, 4), (7, 9))
DROPOUT_RATES = (0.25, 0.4, 0.55)
LAYER_SIZES = ((3, 52), (4, 41), (5, 47))
LAYER_RATES = (0.35, 0.45, 0.55)


def _pick(rng, choices):
    return choices[int(rng.integers(len(choices)))]


def probe_masks(module, seed, other_seed, shape, rate, more_seeds=()):
    import jax

    with jax.debug_key_reuse(True):
        a = module.dropout_mask(jax.random.key(seed), tuple(shape), rate)
        b = module.dropout_mask(jax.random.key(seed), tuple(shape), rate)
        c = module.dropout_mask(jax.random.key(other_seed), tuple(shape), rate)
        more = [module.dropout_mask(jax.random.key(s), tuple(shape), rate) for s in more_seeds]
    return {"dtype": str(a.dtype), "shape": list(a.shape), "a": a, "b": b, "c": c, "more": more}


def probe_dropout(module, seed, x, rate):
    import jax

    x = jax.numpy.asarray(x)
    with jax.debug_key_reuse(True):
        # `rate` is a Python float: static, so that a Python `if` on it works under jit.
        out = jax.jit(module.dropout, static_argnums=2)(jax.random.key(seed), x, rate)
        mask = module.dropout_mask(jax.random.key(seed), x.shape, rate)
    return {"out": out, "mask": mask}


def probe_layers(module, seeds, xs, rate, key_data=()):
    import jax

    layers = jax.jit(module.dropout_layers, static_argnums=2)
    with jax.debug_key_reuse(True):
        outs = [layers(jax.random.key(s), jax.numpy.asarray(xs), rate) for s in seeds]
    if not key_data:
        return outs
    # dropout_mask on keys the check derived itself (given as their key data), one layer's shape.
    shape = tuple(xs.shape[1:])
    masks = [module.dropout_mask(jax.random.wrap_key_data(jax.numpy.asarray(d)), shape, rate) for d in key_data]
    return {"outs": outs, "masks": masks}


def test_mask_shape_determinism_and_rate(learner, reference, seed, rng):
    shape = list(_pick(rng, MASK_SHAPES))
    # Rates away from 0.5, so that a mask with keep and drop swapped shows in the kept fraction.
    rate = float(np.round(rng.choice([rng.uniform(0.1, 0.35), rng.uniform(0.65, 0.8)]), 3))
    more_seeds = [int(s) for s in rng.integers(0, 2**31, 2)]
    got = learner.probe(probe_masks, seed % 2**31, (seed + 1) % 2**31, shape, rate, more_seeds)
    call = f"dropout_mask(key, {tuple(shape)}, rate={rate})"
    if got["dtype"] != "bool" or got["shape"] != shape:
        fail(_("{call} returned dtype {dtype} and shape {shape}; expected bool and {expected}.").format(
            call=call, dtype=got["dtype"], shape=tuple(got["shape"]), expected=tuple(shape)))
    a, b, c = (np.asarray(got[k]) for k in "abc")
    if not np.array_equal(a, b):
        fail(_("{call} called twice with equal keys gave different masks: the mask must come from the key alone.")
             .format(call=call))
    if np.array_equal(a, c):
        fail(_("{call} gave the same mask for two different keys: draw it from the key you are given.").format(
            call=call))
    # Independent entries: two rows (80+ entries) or two columns (150+) drawn alike by chance
    # is out of the question; a mask drawn for one row or column and broadcast repeats them.
    for axis, name, one in ((0, N_("rows"), N_("row")), (1, N_("columns"), N_("column"))):
        lines = a if axis == 0 else a.T
        _unique, first, counts = np.unique(lines, axis=0, return_index=True, return_counts=True)
        if counts.max() > 1:
            fail(_("{call}: several {name} of the mask are identical (e.g. {one} {index}), "
                   "so the entries are not drawn independently: draw the mask for the full `shape` at once, "
                   "not for one row or column that is then broadcast.").format(
                call=call, name=_(name), one=_(one), index=int(first[counts.argmax()])))
    rate_test = keep_rate(a, 1 - rate)
    if departures([rate_test]):
        # The reference's keep rate, for the message only: its masks are drawn (and compiled) only here.
        want = float(np.asarray(reference.probe(probe_masks, seed % 2**31, (seed + 1) % 2**31, shape,
                                                rate)["a"]).mean())
        fail(_("{call} kept {kept:.3f} of the entries; expected about {expected:.3f} (the reference kept "
               "{want:.3f}). True means keep, with probability 1 - rate.").format(
            call=call, kept=a.mean(), expected=1 - rate, want=want))
    # The keep rate can be right and the entries still not independent (a fixed arithmetic pattern):
    # rows, columns and the masks of different keys must overlap as independent draws do. A
    # pattern shifted by a number drawn from the key overlaps its other shifts by how far apart
    # they are, not as independent masks do: four keys, six pairs.
    masks = [a, c, *(np.asarray(m) for m in got.get("more", []))]
    if any(m.shape != a.shape or m.dtype != a.dtype for m in masks):
        fail(_("{call}: the masks of other keys have other shapes or dtypes than the first.").format(call=call))
    flat = np.stack([m.ravel() for m in masks])
    tests = mask_tests(a, rng) + [overlap(flat, [pair], TWO_KEYS) for pair in itertools.combinations(range(len(masks)), 2)]
    _not_independent(call, departures(tests))


def _not_independent(call, found):
    """Fail naming the first test a mask of independent entries would pass."""
    if found:
        t = found[0]
        fail(_("{call}: the mask's entries are not drawn independently. Over {test}, {observed} positions are "
               "kept in both, where independent draws keep about {expected:.0f} (a deviation this large happens "
               "by chance with probability {p:.1e}). Draw every entry from the key with jax.random (e.g. "
               "jax.random.bernoulli(key, 1 - rate, shape)), not from a fixed pattern.").format(
            call=call, test=t.label(), observed=t.observed, expected=t.expected, p=t.p))


def test_dropout_under_jit_uses_the_mask(learner, seed, rng):
    x = (rng.standard_normal(_pick(rng, DROPOUT_SHAPES)) + 3).astype(np.float32)
    rate = _pick(rng, DROPOUT_RATES)
    got = learner.probe(probe_dropout, seed % 2**31, x, rate)
    mask = np.asarray(got["mask"]).astype(bool)
    expected = np.where(mask, x / np.float32(1 - rate), np.float32(0))
    assert_close(got["out"], expected, what=_("jax.jit(dropout)(key, x, {rate}) for x of shape {shape}, against "
                                              "x / (1 - rate) where your dropout_mask(key, x.shape, rate) keeps").format(
                     rate=rate, shape=x.shape),
                 rtol=1e-6)
    assert_close(np.asarray(got["out"]).shape, x.shape, what=_("the shape of dropout's result"))


def test_each_layer_gets_its_own_mask(learner, reference, seed, rng):
    layers, rows = _pick(rng, LAYER_SIZES)
    xs = np.ones((layers, rows, 8), np.float32)
    rate = _pick(rng, LAYER_RATES)
    seeds = [seed % 2**31, (seed + 7919) % 2**31]
    chains = _split_chains(seeds[0], 4)
    derived_data, derived = _derived_keys(seeds[0], layers)
    result = learner.probe(probe_layers, seeds, xs, rate, [d for chain in chains for d in chain] + derived_data)
    got, got_other = (np.asarray(v) for v in result["outs"])
    want = np.asarray(reference.probe(probe_layers, seeds[:1], xs, rate)[0])
    call = _("jax.jit(dropout_layers)(key, xs of shape {shape}, {rate})").format(shape=xs.shape, rate=rate)
    if got.shape != want.shape:
        fail(_("{call} returned shape {shape}, expected {expected}.").format(call=call, shape=got.shape,
                                                                              expected=want.shape))
    scaled = np.float32(1 / (1 - rate))
    if not np.all(np.isclose(got, 0) | np.isclose(got, scaled)):
        fail(_("{call}: on inputs of ones every entry should be 0 or 1/(1-rate) = {scaled:.4g}.").format(
            call=call, scaled=scaled))
    masks = got != 0
    chain_masks = [np.asarray(m) for m in result["masks"]]
    for i in range(layers):
        for j in range(i + 1, layers):
            if np.array_equal(masks[i], masks[j]):
                fail(_("{call}: layers {i} and {j} got the same dropout mask. Give every layer its own key "
                       "(jax.random.split or fold_in), derived from the one key.").format(call=call, i=i, j=j))
    if got_other.shape == got.shape:
        same = [i for i in range(layers) if np.array_equal(masks[i], got_other[i] != 0)]
        if same:
            fail(_("{call}: layer {layer} got the same mask for the keys jax.random.key({seed}) and "
                   "jax.random.key({other}): derive every layer's key from the `key` argument "
                   "(jax.random.split(key, n) or jax.random.fold_in(key, i)), not from a fixed key.").format(
                call=call, layer=same[0], seed=seeds[0], other=seeds[1]))
    _reuse_after_split(call, seeds[0], masks, chains, chain_masks[:len(chains) * len(chains[0])])
    _root_key_and_split(call, seeds[0], masks, chain_masks[len(chains) * len(chains[0]):], derived)
    if departures([keep_rate(masks, 1 - rate)]):
        fail(_("{call}: the layers kept {kept:.3f} of their entries, expected about {expected:.3f}.").format(
            call=call, kept=masks.mean(), expected=1 - rate))
    # Layers drawn from keys of their own are independent: their masks overlap as independent draws do.
    tests = (line_tests(masks.reshape(layers, -1), rng, LAYERS)
             + mask_tests(masks.reshape(-1, masks.shape[-1]), rng))
    _not_independent(call, departures(tests))


def _derived_keys(seed, layers):
    """Key data of jax.random.key(seed) itself, then of every jax.random.split(key, m)[j] for the
    numbers of keys a dropout_layers could split it into, with their descriptions."""
    import jax

    key = jax.random.key(seed)
    data, names = [np.asarray(jax.random.key_data(key))], ["key"]
    for m in sorted({2, layers - 1, layers, layers + 1} - {0, 1}):
        for j, k in enumerate(jax.random.split(key, m)):
            data.append(np.asarray(jax.random.key_data(k)))
            names.append(f"jax.random.split(key, {m})[{j}]")
    return data, names


def _root_key_and_split(call, seed, masks, masks_of_keys, derived):
    """A layer whose mask is dropout_mask(key) drew from `key` itself; if another layer's mask is
    that of a key split from it, `key` was consumed twice (the reuse jax_debug_key_reuse reports)."""
    if not masks_of_keys or any(m.shape != masks.shape[1:] for m in masks_of_keys):
        return
    layer_of = [next((i for i in range(len(masks)) if np.array_equal(masks[i], m)), None) for m in masks_of_keys]
    split = next(((layer, name) for layer, name in zip(layer_of[1:], derived[1:]) if layer is not None), None)
    if layer_of[0] is not None and split is not None:
        fail(_("{call} with key = jax.random.key({seed}): layer {root} got the mask of the key itself, and layer "
               "{other} the mask of {name}: `key` was used for a mask and also split for the other layers (a "
               "reused key, which jax_debug_key_reuse reports). Split first and use only the new keys: keys = "
               "jax.random.split(key, len(xs)), one per layer.").format(
            call=call, seed=seed, root=layer_of[0], other=split[0], name=split[1]))


def _split_chains(seed, length):
    """Key data of key, split(key)[j], split(split(key)[j])[j], ... for j = 0 and j = 1
    (jax.random.key(seed)), computed here: the keys a loop `key, _ = split(key)` (or
    `_, key = split(key)`) walks through."""
    import jax

    chains = []
    for j in (0, 1):
        key, chain = jax.random.key(seed), []
        for _ in range(length):
            chain.append(np.asarray(jax.random.key_data(key)))
            key = jax.random.split(key)[j]
        chains.append(chain)
    return chains


def _reuse_after_split(call, seed, masks, chains, chain_masks):
    """Layers whose masks come from three keys in a row of one chain: the middle key was
    drawn from and split for the next layer, so it was consumed twice (the reuse
    jax_debug_key_reuse reports). Two in a row are not enough here: fold_in(key, i) is
    split(key, n)[i], so keys fold_in(key, i) for i = 0, 1, ... look like a chain's first
    steps; a layer drawn from `key` itself is judged by _root_key_and_split."""
    per_chain = len(chain_masks) // 2
    for j in (0, 1):
        found = {}  # step t of the chain -> the layer whose mask is dropout_mask(chain[t])
        for t in range(per_chain):
            m = chain_masks[j * per_chain + t]
            if m.shape != masks.shape[1:]:
                return
            layer = next((i for i in range(len(masks)) if np.array_equal(masks[i], m)), None)
            if layer is not None:
                found[t] = layer
        for t in sorted(found):
            if t + 1 in found and t + 2 in found:
                fail(_("{call} with key = jax.random.key({seed}): layers {first}, {second} and "
                       "{third} got the masks of a key, of jax.random.split(that key)[{j}], and of "
                       "jax.random.split(that one)[{j}]: each key was used for a mask and then split again for the "
                       "next layer (a reused key, which jax_debug_key_reuse reports). Split first and use only the "
                       "new keys: keys = jax.random.split(key, len(xs)), one per layer.").format(
                    call=call, seed=seed, first=found[t], second=found[t + 1], third=found[t + 2], j=j))
