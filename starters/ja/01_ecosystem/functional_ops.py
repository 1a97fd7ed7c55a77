"""`torch.nn.functional` の 3 つの演算を `jax.numpy` に移植します。

各関数を `jax.numpy` (`jnp` としてインポート済み) で書きます。どれも dtype
float32 の `jax.Array` を受け取って返し、`jax.jit` の中でも動く必要があります
(配列の値に対する Python の `if` や、NumPy への変換は使えません)。

1. `relu(x) -> jax.Array`
   要素ごとの max(x, 0)。形状は任意。                  PyTorch: `F.relu(x)`

2. `softmax(x, axis=-1) -> jax.Array`
   `axis` (int。負の値もありうる) に沿った softmax。形状は `x` と同じ。
   大きな入力 (±1000 前後の値) でも有限の値を保つ必要があります。
                                                       PyTorch: `F.softmax(x, dim=axis)`

3. `binary_cross_entropy_with_logits(logits, targets) -> jax.Array`
   要素ごとの損失の全要素にわたる平均。スカラー (形状 `()`) の float32 配列。
   `logits` と `targets` は同じ形状で、targets は [0, 1] の範囲にあります。
   ±100 前後のロジットでも有限かつ正確である必要があります。
                                 PyTorch: `F.binary_cross_entropy_with_logits(z, y)`

チェックされること: いくつかの形状のランダムな入力 (教科書どおりの式が破綻する
大きな値を含む) での、各関数と PyTorch の結果との比較。また、`jax.jit` の中での
各関数の呼び出し。
"""

import jax
import jax.numpy as jnp


def relu(x: jax.Array) -> jax.Array:
    # TODO: x と 0 の要素ごとの最大値。
    raise NotImplementedError("TODO: relu を jax.numpy で書いてください")


def softmax(x: jax.Array, axis: int = -1) -> jax.Array:
    # TODO: `axis` に沿った exp(x) / sum(exp(x))。x が大きくてもオーバーフローさせないこと。
    raise NotImplementedError("TODO: 数値的に安定な softmax を書いてください")


def binary_cross_entropy_with_logits(logits: jax.Array, targets: jax.Array) -> jax.Array:
    # TODO: 2 値交差エントロピーの平均。sigmoid() を使わずにロジットから計算します。
    raise NotImplementedError("TODO: ロジットからの 2 値交差エントロピーを書いてください")
