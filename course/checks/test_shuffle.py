"""Checks for shuffle: per-epoch permutations that depend only on (seed, epoch),
x and y shuffled together, no key reused (jax_debug_key_reuse on).

"The same whatever was computed before" is asked of two processes: epochs in
one order in the first, in another order in a new one that never saw the first.
"""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, assert_equal, fail
from course.engine.words import _

# Key-reuse checking traces every random call afresh: compiles need headroom on a busy CPU.
TIMEOUT = 60
FRESH_LEARNERS = 1

# Numbers of rows (and features) come from a small fixed set so that repeated checks compile nothing
# new (the workspace's compilation caches serve them); seeds, epochs and data stay fresh. Every n is
# at least 30 (see test_shuffle_keeps_pairs) and differs from every f.
SIZES = ((37, 3), (48, 5), (53, 2))


def _pick(rng):
    return SIZES[int(rng.integers(len(SIZES)))]


def probe_permutations(module, seed, epochs, n):
    import jax

    with jax.debug_key_reuse(True):
        return [module.epoch_permutation(seed, int(e), n) for e in epochs]


def probe_pairs(module, pairs, n):
    import jax

    with jax.debug_key_reuse(True):  # as in probe_permutations: the same compiled programs
        return [module.epoch_permutation(int(s), int(e), n) for s, e in pairs]


def probe_shuffle(module, seed, epoch, x, y):
    import jax
    import jax.numpy as jnp

    with jax.debug_key_reuse(True):
        out = module.shuffle_epoch(seed, epoch, jnp.asarray(x), jnp.asarray(y))
        perm = module.epoch_permutation(seed, epoch, x.shape[0])
    return {"out": list(out) if isinstance(out, tuple) else out, "perm": perm}


def test_each_epoch_is_a_permutation(learner, seed, rng):
    n, _features = _pick(rng)
    epochs = [0, 1, int(rng.integers(2, 50))]
    got = learner.probe(probe_permutations, seed, epochs, n)
    for e, g in zip(epochs, got):
        g = np.asarray(g)
        if g.shape != (n,) or g.dtype.kind not in "iu":
            fail(_("epoch_permutation({seed}, {e}, {n}) returned {dtype} of shape {shape}; expected integers of "
                   "shape ({n},).").format(seed=seed, e=e, n=n, dtype=g.dtype, shape=g.shape))
        assert_equal(sorted(g.tolist()), list(range(n)),
                     what=_("the sorted values of epoch_permutation({seed}, {e}, {n}) (every index 0..{last} "
                            "once)").format(
                         seed=seed, e=e, n=n, last=n - 1))
        if g.tolist() == list(range(n)):
            fail(_("epoch_permutation({seed}, {e}, {n}) is the identity order: draw a permutation from the "
                   "key.").format(
                seed=seed, e=e, n=n))


def test_epochs_are_reproducible_in_any_order(learner, seed, rng):
    n, _features = _pick(rng)
    epochs = [int(e) for e in rng.permutation(6)]
    forward = learner.probe(probe_permutations, seed, sorted(epochs), n)
    # The other order in a new process: one that remembered each (seed, epoch) it was
    # asked for would otherwise hand back what the first order drew.
    learner.restart()
    shuffled_order = learner.probe(probe_permutations, seed, epochs, n)
    by_epoch = dict(zip(epochs, shuffled_order))
    for e, perm in zip(sorted(epochs), forward):
        if not np.array_equal(np.asarray(perm), np.asarray(by_epoch[e])):
            fail(_("epoch_permutation({seed}, {e}, {n}) changed when other epochs were computed before it (orders "
                   "{sorted_epochs} and {epochs}): derive the key from (seed, epoch) alone.").format(
                       seed=seed, e=e, n=n, sorted_epochs=sorted(epochs), epochs=epochs))


def test_epochs_and_seeds_differ(learner, seed, rng):
    n, _features = _pick(rng)
    perms = [np.asarray(p) for p in learner.probe(probe_permutations, seed, list(range(5)), n)]
    for i in range(5):
        for j in range(i + 1, 5):
            if np.array_equal(perms[i], perms[j]):
                fail(_("epoch_permutation({seed}, {i}, {n}) and epoch {j} gave the same order: each epoch needs "
                       "its own key (fold in the epoch number).").format(seed=seed, i=i, n=n, j=j))
    # (seed, epoch) pairs that collide when seed and epoch are mixed into one number:
    # seed + epoch, seed * K + epoch (K = 10, 100, 1000, 2**16), (seed << 16) | epoch (for an odd
    # seed, epoch 2**16 is epoch 0), seed + 1000 * epoch, and seed ^ epoch (for an even seed,
    # seed ^ 1 is seed + 1; for an odd one only its own partner shows it).
    pairs = [(seed + 1, 0), (seed, 10), (seed + 10, 0), (seed, 100), (seed, 1000), (seed + 1000, 0),
             (seed ^ 1, 0), (seed, 2**16)]
    got = dict(zip(pairs, (np.asarray(p) for p in learner.probe(probe_pairs, pairs, n))))
    got.update({(seed, i): p for i, p in enumerate(perms)})
    if np.array_equal(perms[0], got[(seed + 1, 0)]):
        fail(_("epoch_permutation gave the same order for seeds {seed} and {seed_1}: build the key from the "
               "seed.").format(
            seed=seed, seed_1=seed + 1))
    collisions = [((seed, 1), (seed + 1, 0)), ((seed, 10), (seed + 10, 0)), ((seed, 10), (seed + 1, 0)),
                  ((seed, 100), (seed + 1, 0)), ((seed, 1000), (seed + 1, 0)), ((seed, 1), (seed + 1000, 0)),
                  ((seed, 1), (seed ^ 1, 0)), ((seed, 2**16), (seed + 1, 0)), ((seed, 2**16), (seed, 0))]
    for a, b in collisions:
        if np.array_equal(got[a], got[b]):
            fail(_("epoch_permutation({a_0}, {a_1}, {n}) equals epoch_permutation({b_0}, {b_1}, {n}): seed and "
                   "epoch were mixed into one number (such as seed + epoch or seed * 1000 + epoch), so different "
                   "(seed, epoch) pairs share a key. Make the seed's key, then fold the epoch into it.").format(
                       a_0=a[0], a_1=a[1], n=n, b_0=b[0], b_1=b[1]))


def test_shuffle_epoch_keeps_pairs(learner, seed, rng):
    # y holds n distinct values: y reordered any other way than x cannot match by chance (0/1
    # labels could: y[argsort(p)] equalled y[p] about once in a thousand runs). With n >= 30 a
    # permutation that is its own inverse, which would hide that mistake, is out of reach too.
    n, f = _pick(rng)
    x = rng.standard_normal((n, f)).astype(np.float32)
    y = rng.permutation(n).astype(np.float32)
    epoch = int(rng.integers(0, 20))
    got = learner.probe(probe_shuffle, seed, epoch, x, y)
    call = _("shuffle_epoch({seed}, {epoch}, x of shape {shape}, y of shape {shape2})").format(
        seed=seed, epoch=epoch, shape=x.shape, shape2=y.shape)
    out = got["out"]
    if not isinstance(out, list) or len(out) != 2:
        fail(_("{call} must return a pair (x_shuffled, y_shuffled).").format(call=call))
    perm = np.asarray(got["perm"])
    assert_close(out[0], x[perm], what=_("{call}: x_shuffled, against x[epoch_permutation(...)]").format(call=call))
    assert_close(out[1], y[perm], what=_("{call}: y_shuffled, against y[epoch_permutation(...)]").format(call=call))
    if sorted(perm.tolist()) != list(range(n)):
        fail(_("{call}: epoch_permutation({seed}, {epoch}, {n}) is not a permutation of 0..{last}.").format(
            call=call, seed=seed, epoch=epoch, n=n, last=n - 1))
