"""grad_norm with Optax's own building blocks: optax.global_norm and the
clip_by_global_norm gradient transformation (stateless, so an empty state)."""

from __future__ import annotations

import optax


def global_norm(tree):
    return optax.global_norm(tree)


def clip_by_global_norm(tree, max_norm):
    clip = optax.clip_by_global_norm(max_norm)
    clipped, _ = clip.update(tree, clip.init(tree))
    return clipped
