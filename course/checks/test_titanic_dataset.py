"""Checks for titanic_dataset: a Dataset and a NumPy collate_fn for the DataLoader path,
and seeded batching without PyTorch."""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, assert_equal, fail, side_by_side
from course.engine.words import N_, _, probe_said

TIMEOUT = 60


def _data(rng, n_min=20, n_max=70):
    n = int(rng.integers(n_min, n_max))
    n_features = int(rng.integers(3, 12))
    # float64 features and int labels, as pandas hands them over: the dataset converts.
    x = rng.standard_normal((n, n_features))
    y = rng.integers(0, 2, size=n)
    return x, y


def _batch_size(rng, n):
    """A batch size in 4..16 that leaves a partial last batch, so dropping it shows."""
    sizes = [b for b in range(4, 17) if n % b]
    return int(rng.choice(sizes))

# What the probes report: [key, fields], worded here in the learner's language.
PROBE_ERRORS = {
    "not_tuple": N_("ds[{i}] returned {type}, not a tuple (features, label)."),
    "not_pair": N_("numpy_collate returned {type}, not a pair (x, y)."),
    "not_numpy": N_("a batch from the DataLoader holds {types}, not two NumPy arrays."),
}


def probe_items(module, x, y, indices):
    ds = module.TitanicDataset(x, y)
    items = []
    for i in indices:
        item = ds[i]
        if not isinstance(item, tuple) or len(item) != 2:
            return {"len": len(ds), "error": ["not_tuple", {"i": i, "type": type(item).__name__}]}
        items.append({
            "types": [type(v).__module__.split(".")[0] + "." + type(v).__name__ for v in item],
            "values": [v if type(v).__module__.split(".")[0] == "numpy" else None for v in item],
        })
    return {"len": len(ds), "items": items}


def probe_collate(module, x, y):
    import numpy as np

    samples = [(x[i].astype(np.float32), np.array([y[i]], dtype=np.float32)) for i in range(len(x))]
    out = module.numpy_collate(samples)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        return {"error": ["not_pair", {"type": type(out).__name__}]}
    types = [type(v).__module__.split(".")[0] + "." + type(v).__name__ for v in out]
    return {"types": types, "values": [v if isinstance(v, np.ndarray) else None for v in out]}


def probe_loader(module, x, y, batch_size, seed):
    import numpy as np
    import torch
    from torch.utils.data import DataLoader

    loader = DataLoader(
        module.TitanicDataset(x, y),
        batch_size=batch_size,
        shuffle=True,
        generator=torch.Generator().manual_seed(seed),
        collate_fn=module.numpy_collate,
    )
    batches = []
    for batch in loader:
        types = [type(v).__module__.split(".")[0] + "." + type(v).__name__ for v in batch]
        if types != ["numpy.ndarray", "numpy.ndarray"]:
            return {"error": ["not_numpy", {"types": str(types)}]}
        batches.append(list(batch))
    return {"batches": batches}


def probe_side_effects(module, x, y, batch_size, seed, global_seed):
    """numpy_batches twice with the same seed on the same float32 arrays, after NumPy's
    global generator is seeded with `global_seed` (drawn from by `probe_global_draws` next)."""
    import copy

    import numpy as np

    x = np.ascontiguousarray(x, dtype=np.float32).copy()
    y = np.ascontiguousarray(y, dtype=np.float32).copy()
    np.random.seed(global_seed)
    first = module.numpy_batches(x, y, batch_size, seed)
    first = copy.deepcopy(first)  # batches that are views of x would change with it
    second = module.numpy_batches(x, y, batch_size, seed)
    return {"first": first, "second": second, "x": x, "y": y}


def probe_global_draws(module, n):
    """Numbers drawn from NumPy's global generator, in a request of their own after the calls."""
    import numpy as np

    return np.random.random_sample(n)


def _item_error(result):
    if "error" in result:
        fail(probe_said(result["error"], PROBE_ERRORS) or str(result["error"])[:300])


def test_dataset_length_and_items(learner, reference, rng):
    x, y = _data(rng)
    indices = [0, len(x) - 1] + [int(i) for i in rng.integers(0, len(x), size=3)]
    got, want = side_by_side(learner, reference).probe(probe_items, x, y, indices)
    assert_equal(got["len"], want["len"], what=_("len(TitanicDataset(x, y)) with x of shape {shape}").format(
        shape=x.shape))
    _item_error(got)
    for i, g, w in zip(indices, got["items"], want["items"]):
        what = _("TitanicDataset(x, y)[{i}] with x of shape {shape}").format(i=i, shape=x.shape)
        if g["types"] != w["types"]:
            fail(_("{what}: expected a pair of NumPy arrays, got {types}.").format(what=what, types=g['types']))
        for part, gv, wv in zip(("features", "label"), g["values"], w["values"]):
            if gv.dtype != wv.dtype:
                fail(_("{what}: the {part} have dtype {dtype}, expected {dtype2} (convert in __init__).").format(
                    what=what, part=part, dtype=gv.dtype, dtype2=wv.dtype))
            assert_close(gv, wv, what=f"{what}, the {part}")


def test_collate_stacks_into_numpy_batches(learner, reference, rng):
    x, y = _data(rng, 3, 12)
    got, want = side_by_side(learner, reference).probe(probe_collate, x, y)
    what = _("numpy_collate on a list of {n} samples of {n_features} features").format(
        n=len(x), n_features=x.shape[1])
    _item_error(got)
    if got["types"] != want["types"]:
        fail(_("{what}: expected two NumPy arrays (x, y), got {got_types}. The default collate makes torch "
               "tensors; stack with NumPy instead.").format(what=what, got_types=got['types']))
    for part, gv, wv in zip(("x", "y"), got["values"], want["values"]):
        if gv.dtype != wv.dtype:
            fail(_("{what}: {part} has dtype {dtype}, expected {dtype2}.").format(
                what=what, part=part, dtype=gv.dtype, dtype2=wv.dtype))
        assert_close(gv, wv, what=f"{what}, {part}")


def test_dataloader_batches_are_seeded_numpy(learner, reference, rng, seed):
    x, y = _data(rng)
    batch_size = _batch_size(rng, len(x))
    got, want = side_by_side(learner, reference).probe(probe_loader, x, y, batch_size, seed)
    _item_error(got)
    what = (_("DataLoader(TitanicDataset(x, y), batch_size={batch_size}, shuffle=True, "
              "generator=torch.Generator().manual_seed(seed), collate_fn=numpy_collate) with x of shape "
              "{shape}").format(
                  
                  batch_size=batch_size, shape=x.shape))
    if len(got["batches"]) != len(want["batches"]):
        fail(_("{what}: expected {n_want_batches} batches, got {n_got_batches}.").format(
            what=what, n_want_batches=len(want['batches']), n_got_batches=len(got['batches'])))
    for k, (g, w) in enumerate(zip(got["batches"], want["batches"])):
        for part, gv, wv in zip(("x", "y"), g, w):
            if gv.dtype != wv.dtype:
                fail(_("{what}: batch {k}, {part} has dtype {dtype}, expected {dtype2}.").format(
                    what=what, k=k, part=part, dtype=gv.dtype, dtype2=wv.dtype))
            assert_close(gv, wv, what=f"{what}: batch {k}, {part}")


def _row_index(x32):
    return {row.tobytes(): i for i, row in enumerate(x32)}


def _order_of(batches, index, what):
    order = []
    for k, batch in enumerate(batches):
        if not isinstance(batch, (tuple, list)) or len(batch) != 2:
            fail(_("{what}: batch {k} is not a pair (x, y).").format(what=what, k=k))
        xb, __ = batch
        if not isinstance(xb, np.ndarray) or xb.ndim != 2:
            fail(_("{what}: batch {k} x is not a 2-D array.").format(what=what, k=k))
        for row in xb.astype(np.float32, copy=False):
            if row.tobytes() not in index:
                fail(_("{what}: batch {k} holds a row that is not a row of the input features.").format(what=what, k=k))
            order.append(index[row.tobytes()])
    return order


def test_numpy_batches_cover_every_row_once_in_seeded_order(learner, rng, seed):
    x, y = _data(rng)
    batch_size = _batch_size(rng, len(x))
    n = len(x)
    what = _("numpy_batches(x, y, batch_size={batch_size}, seed={seed}) with x of shape {shape}").format(
        batch_size=batch_size, seed=seed, shape=x.shape)
    batches = learner.call("numpy_batches", x, y, batch_size, seed)
    if not isinstance(batches, (list, tuple)):
        fail(_("{what}: expected a list of (x, y) batches, got {type}.").format(
            what=what, type=type(batches).__name__))
    n_batches = -(-n // batch_size)
    if len(batches) != n_batches:
        fail(_("{what}: expected {n_batches} batches ({n} rows), got {n_batches2}.").format(
            what=what, n_batches=n_batches, n=n, n_batches2=len(batches)))
    x32, y32 = x.astype(np.float32), y.astype(np.float32)
    order = _order_of(batches, _row_index(x32), what)
    if sorted(order) != list(range(n)):
        fail(_("{what}: every row must appear exactly once; got {n_order} rows, {n_set_order} distinct.").format(
            what=what, n_order=len(order), n_set_order=len(set(order))))
    if order == list(range(n)):
        fail(_("{what}: the rows come in their original order; shuffle them with np.random.default_rng(seed).").format(
            what=what))
    # A whole shuffle scatters every block of consecutive rows over the batches: that each
    # batch holds one such block (in any order) is out of the question by chance.
    blocks = {tuple(range(s, min(s + batch_size, n))) for s in range(0, n, batch_size)}
    sizes = [len(b[0]) for b in batches]
    starts = np.cumsum([0, *sizes])[:-1]
    if all(tuple(sorted(order[s:s + k])) in blocks for s, k in zip(starts, sizes)):
        fail(_("{what}: every batch holds {batch_size} consecutive rows of the input (only the rows within a "
               "batch, or only the batches, were shuffled). Shuffle the order of all the rows first, then cut it "
               "into batches.").format(what=what, batch_size=batch_size))
    for k, (xb, yb) in enumerate(batches):
        rows = len(xb)
        expected_rows = batch_size if k < n_batches - 1 else n - batch_size * (n_batches - 1)
        if rows != expected_rows:
            fail(_("{what}: batch {k} has {rows} rows, expected {expected_rows}.").format(
                what=what, k=k, rows=rows, expected_rows=expected_rows))
        if xb.dtype != np.float32 or not isinstance(yb, np.ndarray) or yb.dtype != np.float32:
            fail(_("{what}: batch {k} has dtypes {x_dtype}/{y_dtype}, expected float32/float32.").format(
                what=what, k=k, x_dtype=xb.dtype, y_dtype=getattr(yb, 'dtype', type(yb).__name__)))
        if yb.shape != (rows, 1):
            fail(_("{what}: batch {k} labels have shape {shape}, expected {expected}.").format(
                what=what, k=k, shape=yb.shape, expected=(rows, 1)))
        start = sum(len(b[0]) for b in batches[:k])
        want_y = y32[order[start:start + rows]].reshape(-1, 1)
        assert_close(yb, want_y, what=_("{what}: batch {k} labels (each label must stay with its row)").format(
            what=what, k=k))

    again = learner.call("numpy_batches", x, y, batch_size, seed)
    if _order_of(again, _row_index(x32), what) != order:
        fail(_("{what}: a second call with the same seed gave a different order; the order must come from `seed` "
               "only.").format(what=what))
    other = learner.call("numpy_batches", x, y, batch_size, seed + 1)
    if _order_of(other, _row_index(x32), what) == order:
        fail(_("{what}: seed {seed_1} gave the same order as seed {seed}; use the seed argument.").format(
            what=what, seed_1=seed + 1, seed=seed))


def _same_batches(a, b):
    if not isinstance(a, (list, tuple)) or not isinstance(b, (list, tuple)) or len(a) != len(b):
        return False
    for p, q in zip(a, b):
        if not isinstance(p, (list, tuple)) or not isinstance(q, (list, tuple)) or len(p) != len(q):
            return False
        for u, v in zip(p, q):
            u, v = np.asarray(u), np.asarray(v)
            if u.shape != v.shape or u.dtype != v.dtype or not np.array_equal(u, v):
                return False
    return True


# Numbers drawn from NumPy's global generator after the calls: 8 equal draws of a generator the
# calls reseeded or drew from have a chance of 2**-424 (53 bits each).
GLOBAL_DRAWS = 8


def test_numpy_batches_leaves_the_caller_state_alone(learner, rng, seed):
    x, y = _data(rng)
    batch_size = _batch_size(rng, len(x))
    x32, y32 = x.astype(np.float32), y.astype(np.float32)
    global_seed = int(rng.integers(2**31))
    while global_seed == seed:
        global_seed = int(rng.integers(2**31))
    got = learner.probe(probe_side_effects, x32, y32, batch_size, seed, global_seed)
    # The global generator is judged by what it gives after the calls, against a generator seeded
    # here the same way: a state read in the child (np.random.get_state) is the child's word.
    draws = learner.probe(probe_global_draws, GLOBAL_DRAWS)
    untouched = np.random.RandomState(global_seed).random_sample(GLOBAL_DRAWS)
    what = (_("numpy_batches(x, y, batch_size={batch_size}, seed={seed}) with x float32 of shape {shape} and y "
              "float32 of shape {shape2}").format(batch_size=batch_size, seed=seed, shape=x.shape, shape2=y.shape))
    changed = [name for name, arr, want in (("x", got["x"], x32), ("y", got["y"], y32))
               if not (isinstance(arr, np.ndarray) and arr.shape == want.shape and np.array_equal(arr, want))]
    if changed:
        fail(_("{what}, called twice on the same arrays, changed the caller's {arrays} in place (the "
               "rows were shuffled in the caller's arrays). Leave the inputs alone: draw a permutation of the row "
               "indices, order = np.random.default_rng(seed).permutation(len(x)), and index with it.").format(
                   what=what, arrays=' and '.join(changed)))
    if not _same_batches(got["first"], got["second"]):
        fail(_("{what}, called twice with the same seed on the same arrays, gave different batches. The order must "
               "come from `seed` only: draw it with np.random.default_rng(seed) on every call.").format(what=what))
    if not (isinstance(draws, np.ndarray) and draws.shape == untouched.shape and np.array_equal(draws, untouched)):
        fail(_("{what} changed NumPy's global random state (np.random.seed / np.random.permutation reseed or draw "
               "from the generator every other user of np.random shares). Draw the order from a generator of your "
               "own: np.random.default_rng(seed).permutation(len(x)).").format(what=what))
