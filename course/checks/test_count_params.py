"""Checks for count_params: parameters counted and listed from the state of varied models."""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_equal, fail, side_by_side
from course.engine.words import N_, _

TIMEOUT = 60


def _sizes(rng):
    return {
        "d_in": int(rng.integers(2, 12)),
        "hidden": int(rng.integers(3, 20)),
        "d_out": int(rng.integers(1, 6)),
        "depth": int(rng.integers(2, 4)),
        "vocab": int(rng.integers(5, 30)),
    }


def probe_models(module, sizes, seed, fn_name):
    from flax import nnx

    d_in, hidden, d_out = sizes["d_in"], sizes["hidden"], sizes["d_out"]
    rngs = nnx.Rngs(seed)
    # A count depends on shapes alone. Random initialisers would compile a few
    # programs for every new shape, and the sizes are fresh for every run;
    # zeros compile one each. Layer shapes repeat across the models for the same reason.
    zeros = nnx.initializers.zeros_init()

    class WithNormAndDropout(nnx.Module):
        def __init__(self):
            self.linear1 = nnx.Linear(d_in, hidden, kernel_init=zeros, rngs=rngs)
            self.norm = nnx.BatchNorm(hidden, rngs=rngs)
            self.dropout = nnx.Dropout(0.3, rngs=rngs)
            self.linear2 = nnx.Linear(hidden, d_out, kernel_init=zeros, rngs=rngs)

    class Stack(nnx.Module):
        def __init__(self):
            self.blocks = nnx.List([nnx.Linear(hidden, hidden, use_bias=False, kernel_init=zeros, rngs=rngs)
                                    for _ in range(sizes["depth"])])
            self.norm = nnx.LayerNorm(hidden, rngs=rngs)

    class Embedding(nnx.Module):
        def __init__(self):
            self.embed = nnx.Embed(sizes["vocab"], hidden, embedding_init=zeros, rngs=rngs)
            self.head = nnx.Linear(hidden, d_out, kernel_init=zeros, rngs=rngs)

    class Tied(nnx.Module):
        # One layer reachable under two names counts once, as in PyTorch.
        def __init__(self):
            self.encoder = nnx.Linear(hidden, hidden, kernel_init=zeros, rngs=rngs)
            self.decoder = self.encoder

    models = {
        "an MLP with BatchNorm and Dropout": WithNormAndDropout(),
        "a stack of bias-free Linear layers and a LayerNorm": Stack(),
        "a Sequential": nnx.Sequential(
            nnx.Linear(d_in, hidden, kernel_init=zeros, rngs=rngs), nnx.relu,
            nnx.Linear(hidden, d_out, use_bias=False, kernel_init=zeros, rngs=rngs),
        ),
        "an Embed and a Linear head": Embedding(),
        "a model with one layer under two names": Tied(),
    }
    return {name: getattr(module, fn_name)(model) for name, model in models.items()}


# The names the probe gives its models (it runs in the learner's process, in English), shown here translated.
MODEL_NAMES = frozenset({
    N_("an MLP with BatchNorm and Dropout"),
    N_("a stack of bias-free Linear layers and a LayerNorm"),
    N_("a Sequential"),
    N_("an Embed and a Linear head"),
    N_("a model with one layer under two names"),
})


def _model(name):
    return _(name) if name in MODEL_NAMES else name


def _as_int(value):
    # A NumPy integer (np.prod, np.sum) is a count too, whether it crossed as a scalar or a 0-d array.
    if isinstance(value, (np.ndarray, np.integer)) and np.shape(value) == () and value.dtype.kind in "iu":
        return int(value)
    return value


def test_count_params(learner, reference, rng, seed):
    sizes = _sizes(rng)
    got, want = side_by_side(learner, reference).probe(probe_models, sizes, seed, "count_params")
    for name, expected in want.items():
        count = _as_int(got[name])
        if not isinstance(count, int) or isinstance(count, bool):
            fail(_("count_params({name}) returned {type}; expected an int.").format(
                name=_model(name), type=type(count).__name__))
        if count > expected:
            fail(_("count_params({name}, sizes {sizes}): expected {expected}, got {count}. That is more than the "
                   "nnx.Param scalars: BatchStat and RNG state are not parameters, and a layer shared under two "
                   "names counts once.").format(name=_model(name), sizes=sizes, expected=expected, count=count))
        if count != expected:
            fail(_("count_params({name}, sizes {sizes}): expected {expected}, got {count}.").format(
                name=_model(name), sizes=sizes, expected=expected, count=count))


def test_param_shapes(learner, reference, rng, seed):
    sizes = _sizes(rng)
    got, want = side_by_side(learner, reference).probe(probe_models, sizes, seed, "param_shapes")
    for name, expected in want.items():
        shapes = got[name]
        if not isinstance(shapes, dict):
            fail(_("param_shapes({name}) returned {type}; expected a dict of path -> shape.").format(
                name=_model(name), type=type(shapes).__name__))
        normalised = {
            k: tuple(int(d) for d in v) if isinstance(v, (tuple, list)) else v for k, v in shapes.items()
        }
        if name in SHARED:
            normalised = _one_name_per_shared_param(normalised, SHARED[name], name, sizes)
        assert_equal(normalised, expected, what=f"param_shapes({_model(name)}, sizes {sizes})")


# A layer reachable under several names (the check's own models): its Params are one entry each,
# under any of the paths they are reachable by (nnx.state gives one, PyTorch's named_parameters()
# the first attribute). The paths are written under the name the reference uses.
SHARED = {"a model with one layer under two names": {"encoder.": "decoder."}}


def _one_name_per_shared_param(shapes, aliases, name, sizes):
    renamed = {}
    for key, shape in shapes.items():
        canonical = key
        for alias, prefix in aliases.items():
            if isinstance(key, str) and key.startswith(alias):
                canonical = prefix + key[len(alias):]
        if canonical in renamed:
            fail(_("param_shapes({name}, sizes {sizes}) lists one shared nnx.Param twice, as "
                   "{first!r} and {second!r}: a layer reachable under two names holds the same "
                   "Params. List each nnx.Param once (nnx.state(model, nnx.Param) does).").format(
                name=_model(name), sizes=sizes, first=renamed[canonical][0], second=key))
        renamed[canonical] = (key, shape)
    return {k: shape for k, (_, shape) in renamed.items()}
