"""明示的な PRNG キーを使ったドロップアウト。

PyTorch の `F.dropout(x, p=rate, training=True)` は、グローバルな生成器から
乱数を引きます。JAX では、乱数は渡された乱数キーから来ます。以下の `key` は
常に `jax.random.key(...)` で作られた型付きのキーです。

1. `dropout_mask(key, shape, rate) -> jax.Array`
   形状 `shape` (int のタプル) の bool 配列。各要素は独立に、確率 `1 - rate`
   で True (残す) になります。`0 <= rate < 1`。

2. `dropout(key, x, rate) -> jax.Array`
   float32 配列 `x` の inverted dropout。`dropout_mask(key, x.shape, rate)`
   が True の要素は `x / (1 - rate)` に、それ以外は 0 になります。形状と
   dtype は `x` と同じ。                       PyTorch: `F.dropout(x, rate, training=True)`

3. `dropout_layers(key, xs, rate) -> jax.Array`
   `xs` の形状は `(num_layers, ...)` で、いくつかの層の活性化の値です。
   どの 2 つの層もマスクを共有しないよう、各 `xs[i]` に「それぞれ専用の」
   キーで `dropout` を適用します。キーはすべて 1 つの `key` から導きます。
   形状は `xs` と同じ。

各キーは 1 回までしか使えません。チェックでは `jax_debug_key_reuse` が有効に
なっていて、キーを 2 回消費すると `KeyReuseError` が発生します。マスクを引いた
キーは使い切ったものです: それを他の層のためにさらに分割 (または fold) しては
いけません。

チェックされること: マスクの dtype と形状。同じキーなら同じマスク、異なる
キーなら異なるマスクになること。残る割合が `1 - rate` に近いこと。要素が
独立であること (正確な裾確率を持つ統計的検定で、行、列、層、異なるキーの
マスクを独立な抽選と比べます。正しいマスクがこれに落ちる確率は 1e-10 未満で、
割合だけ正しい固定のパターンは通りません)。`dropout`
が自分の `dropout_mask` と一致すること。`jax.jit` の中での `dropout` と
`dropout_layers`。層ごとのマスクが互いに異なり、`key` によって変わること。
キーが再利用されないこと。
"""

import jax
import jax.numpy as jnp


def dropout_mask(key: jax.Array, shape: tuple[int, ...], rate: float) -> jax.Array:
    # TODO: 確率 1 - rate で True。`key` から引きます。
    raise NotImplementedError("TODO: キーから、残す要素のマスクを引いてください")


def dropout(key: jax.Array, x: jax.Array, rate: float) -> jax.Array:
    # TODO: マスクが True の要素を残し、1 / (1 - rate) 倍します。
    raise NotImplementedError("TODO: dropout_mask を使って inverted dropout を適用してください")


def dropout_layers(key: jax.Array, xs: jax.Array, rate: float) -> jax.Array:
    # TODO: 層ごとに独立したキーを 1 つずつ。すべて `key` から導きます。
    return jnp.stack([dropout(key, x, rate) for x in xs])
