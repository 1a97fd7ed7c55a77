"""演習: bfloat16 の混合精度の学習ステップ。

PyTorch なら順伝播を `torch.autocast(device_type, dtype=torch.bfloat16)` で包むところです。
JAX に autocast はありません。dtype はプログラムの中にあり、ポリシーはモデルに書き込みます。
bfloat16 で計算し、パラメータは float32 で保存し (Optax が更新するマスターウェイトで、
そのモーメントも float32 です)、損失は float32 で計算します。

1. `MLP(d_in, hidden, d_out, *, rngs)`: `hidden` (`nnx.Linear(d_in, hidden)`) と
   `out` (`nnx.Linear(hidden, d_out)`) という名前の 2 つの層と、その間の ReLU を持つ
   `nnx.Module`。どちらの層も bfloat16 で計算し、パラメータは float32 で持ちます。
   各層の行列積は bfloat16 のオペランドをとります (手で書いた積なら
   `preferred_element_type=jnp.float32` で float32 の結果を返してもかまいません)。
   `model(x)` は float32 の `(batch, d_in)` を受け取り、ロジット `(batch, d_out)` を
   返します (bfloat16 でかまいません)。

2. `loss_fn(model, x, y) -> jax.Array`: ロジットと整数ラベル `y` (int32 の `(batch,)`)
   のソフトマックス交差エントロピーの平均を float32 で計算したもの。float32 のスカラーです。

3. `train_step(model, optimizer, x, y) -> jax.Array`: `@nnx.jit` でデコレートし、
   `loss_fn` の勾配、`optimizer.update(model, grads)` を 1 回、そして (更新前の) 損失を
   返します。オプティマイザーはチェックが作る `nnx.Optimizer(model, optax.adam(lr),
   wrt=nnx.Param)` です。

チェックの内容: `train_step` を 1 つのバッチ形状で lower し、プログラムの dtype を読みます
(順伝播の行列積は bfloat16 のオペランド。逆伝播の行列積は float32 で計算されてもよく、float32 の
`preferred_element_type` のあとではそうなります。パラメータと Adam の状態は入口でも出口でも
float32。損失と、それを計算する縮約は float32)。次に、そのプログラムをこちら側で、こちらで
引いたパラメータ、オプティマイザーの状態、バッチに対して数ステップ実行し、損失とパラメータを
NumPy で計算した float32 の参照と、bfloat16 の精度から導いた許容誤差の範囲で比較します。
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, d_in: int, hidden: int, d_out: int, *, rngs: nnx.Rngs):
        # TODO: nnx.Linear の層 `hidden` と `out` の 2 つ。パラメータは float32、計算は bfloat16 です。
        raise NotImplementedError("TODO: MLP を書いてください")

    def __call__(self, x: jax.Array) -> jax.Array:
        # TODO: out(relu(hidden(x)))
        raise NotImplementedError("TODO: MLP.__call__ を書いてください")


def loss_fn(model: MLP, x: jax.Array, y: jax.Array) -> jax.Array:
    # TODO: ロジットを float32 にキャストしてから、整数ラベルでのsoftmax 交差エントロピーの平均を求めます。
    raise NotImplementedError("TODO: loss_fn を書いてください")


def train_step(model: MLP, optimizer: nnx.Optimizer, x: jax.Array, y: jax.Array) -> jax.Array:
    # TODO: @nnx.jit で修飾し、loss_fn の value_and_grad、optimizer.update、損失を返します。
    raise NotImplementedError("TODO: train_step を書いてください")
