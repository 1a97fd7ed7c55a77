"""Checks for grad_norm: global norm and clipping over arbitrary pytrees."""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, assert_tree_close, fail, side_by_side
from course.engine.words import _

TIMEOUT = 60


# Leaf shapes and model sizes come from small fixed sets so that repeated checks compile nothing
# new (the workspace's compilation caches serve them); the leaves' values stay fresh. Every layout
# has 0-d, 1-d and 2-d leaves, several blocks, and no two leaves alike in all of them.
TREE_LAYOUTS = (
    {"kernel": (3, 5), "bias": (5,), "blocks": ((2, 4), ()), "head": (4, 1)},
    {"kernel": (4, 2), "bias": (), "blocks": ((3,), (1, 5), (2, 2)), "head": (5,)},
    {"kernel": (5, 3), "bias": (3,), "blocks": ((4,), (3, 3)), "head": ()},
)
# d_in != hidden, and neither is the 16 rows of the batch.
MODEL_SIZES = ((3, 7), (6, 11))


def _random_tree(rng, scale):
    """Nested dicts and lists with leaves of varied shapes (0-d included), one layout of TREE_LAYOUTS."""
    layout = TREE_LAYOUTS[int(rng.integers(len(TREE_LAYOUTS)))]

    def leaf(shape):
        return (scale * rng.standard_normal(shape)).astype(np.float32)

    return {
        "encoder": {"kernel": leaf(layout["kernel"]), "bias": leaf(layout["bias"])},
        "blocks": [leaf(shape) for shape in layout["blocks"]],
        "head": leaf(layout["head"]),
    }


def _shapes(tree):
    if isinstance(tree, dict):
        return {k: _shapes(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_shapes(v) for v in tree]
    return tuple(np.shape(tree))


def test_global_norm(learner, reference, rng):
    for scale in (0.1, 3.0):
        tree = _random_tree(rng, scale)
        got, want = side_by_side(learner, reference).call("global_norm", tree)
        assert_close(got, want, what=_("global_norm(tree) for a tree with leaf shapes {shapes}").format(shapes=_shapes(tree)),
                     rtol=1e-5, atol=1e-6, dtype=np.float32)


def probe_clip(module, tree, max_norm):
    """The clipped tree, and the tree that was passed in as it is afterwards."""
    out = module.clip_by_global_norm(tree, max_norm)
    return {"out": out, "input_after": tree}


def _tree_of_norm(rng, norm):
    """A random tree rescaled to global norm `norm`."""
    tree = _random_tree(rng, 1.0)
    factor = norm / _norm(tree)
    return {"encoder": {k: (v * factor).astype(np.float32) for k, v in tree["encoder"].items()},
            "blocks": [(v * factor).astype(np.float32) for v in tree["blocks"]],
            "head": (tree["head"] * factor).astype(np.float32)}


# Each clipping test draws its norms on both sides of 1, and its max_norm between the norm and its
# square, so that a decision taken on the sum of squares (the root forgotten) goes the wrong way:
# above max_norm at a norm of 0.2 to 0.6 (the square is under max_norm), below it at a norm of 4 to
# 8 (the square is over max_norm); and beyond both, a norm far above max_norm (the scale's value).
def test_clip_above_max_norm_rescales(learner, reference, rng):
    tree = _random_tree(rng, 5.0)
    norm = _norm(tree)  # computed here: max_norm is the check's own choice
    _judge_clip_above(learner, reference, tree, norm, float(rng.uniform(0.1, 0.5)) * norm)
    small = float(rng.uniform(0.2, 0.6))
    tree = _tree_of_norm(rng, small)
    _judge_clip_above(learner, reference, tree, _norm(tree), small * float(rng.uniform(0.65, 0.9)))


def _judge_clip_above(learner, reference, tree, norm, max_norm):
    got, want = side_by_side(learner, reference).probe(probe_clip, tree, max_norm)
    call = f"clip_by_global_norm(tree, max_norm={max_norm:.4g})"
    after = got["input_after"]
    if _shapes(after) != _shapes(tree) or not all(
            np.array_equal(a, b) for a, b in zip(_leaves(after), _leaves(tree))):
        fail(_("{call} changed the tree it was given (clip_grad_norm_ works in place; here the input must stay "
               "as it was): build a new tree, e.g. with jax.tree.map.").format(call=call))
    got, want = got["out"], want["out"]
    assert_tree_close(got, want, what=_("clip_by_global_norm(tree, max_norm={max_norm:.4g}) for a tree of global "
                                        "norm {norm:.4g} (every leaf scaled by max_norm / norm)").format(
                          max_norm=max_norm, norm=norm),
                      rtol=1e-5, atol=1e-6)


def test_clip_below_max_norm_is_identity(learner, reference, rng):
    for case in ("small", "large"):
        tree = _random_tree(rng, 0.2) if case == "small" else _tree_of_norm(rng, float(rng.uniform(4.0, 8.0)))
        norm = _norm(tree)  # computed here: max_norm is the check's own choice
        max_norm = norm * float(rng.uniform(1.5, 4.0))
        got, want = side_by_side(learner, reference).call("clip_by_global_norm", tree, max_norm)
        assert_tree_close(got, want, what=_("clip_by_global_norm(tree, max_norm={max_norm:.4g}) for a tree of global "
                                            "norm {norm:.4g}: below max_norm, the tree comes back unchanged").format(
                              max_norm=max_norm, norm=norm),
                          rtol=1e-6, atol=1e-7)


def probe_on_model_gradients(module, d_in, hidden, seed, max_norm):
    import jax
    import jax.numpy as jnp
    from flax import nnx

    class Model(nnx.Module):
        def __init__(self, rngs):
            self.hidden = nnx.Linear(d_in, hidden, rngs=rngs)
            self.out = nnx.Linear(hidden, 1, rngs=rngs)

        def __call__(self, x):
            return self.out(jax.nn.relu(self.hidden(x)))

    model = Model(nnx.Rngs(seed))
    x = jax.random.normal(jax.random.key(seed), (16, d_in))
    grads = nnx.grad(lambda m: jnp.sum(m(x) ** 2))(model)
    pure = nnx.to_pure_dict(grads)  # read before the learner's code sees the gradients
    clipped = module.clip_by_global_norm(grads, max_norm)
    if isinstance(clipped, nnx.State):
        clipped = nnx.to_pure_dict(clipped)
    return {"grads": pure, "norm": module.global_norm(grads), "clipped": clipped}


def _leaves(tree):
    if isinstance(tree, dict):
        return [leaf for k in sorted(tree) for leaf in _leaves(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [leaf for v in tree for leaf in _leaves(v)]
    return [np.asarray(tree, np.float64)]


def _norm(tree) -> float:
    return float(np.sqrt(sum(np.sum(leaf ** 2) for leaf in _leaves(tree))))


def _scaled(tree, factor):
    if isinstance(tree, dict):
        return {k: _scaled(v, factor) for k, v in tree.items()}
    return (np.asarray(tree, np.float64) * factor).astype(np.float32)


def test_works_on_an_nnx_state(learner, rng, seed):
    d_in, hidden = MODEL_SIZES[int(rng.integers(len(MODEL_SIZES)))]
    got = learner.probe(probe_on_model_gradients, d_in, hidden, seed, 0.5)
    # The gradients are evidence; their norm and the clipped tree are computed here.
    norm = _norm(got["grads"])
    assert_close(got["norm"], np.float32(norm), rtol=1e-5, atol=1e-6,
                 what=_("global_norm on the nnx.State of gradients of a {d_in}->{hidden}->1 model").format(
                     d_in=d_in, hidden=hidden))
    want = _scaled(got["grads"], min(1.0, 0.5 / norm) if norm > 0 else 1.0)
    assert_tree_close(got["clipped"], want, rtol=1e-5, atol=1e-6,
                      what=_("clip_by_global_norm(grads, 0.5) on the nnx.State of gradients of a {d_in}->{hidden}->1 "
                             "model").format(d_in=d_in, hidden=hidden))
