"""演習: Linen の TrainState と、jit されたトレーニング ステップ。

PyTorch はパラメータとオプティマイザの状態をオブジェクトの中に持ち、書き換え
ます:
    optimizer.zero_grad(); loss = loss_fn(model(x).squeeze(-1), y)
    loss.backward(); optimizer.step()
Linen はそれらをイミュータブルな `flax.training.train_state.TrainState` に
持ち、ステップは新しい状態を返します。モデルは与えられています (Linen、
Dense(hidden) -> ReLU -> Dense(1))。関数を 2 つ書きます。

1. `create_train_state(seed: int, d_in: int, learning_rate: float) -> TrainState`
   形状 `(1, d_in)` の入力例で、`jax.random.key(seed)` を使って `MLP()` を
   初期化し、`TrainState.create(apply_fn=..., params=...,
   tx=optax.adam(learning_rate))` を返します。

2. `train_step(state, x, y) -> (new_state, loss)`。`jax.jit` でコンパイル
   します:
   - `x`: float32 `(batch, d_in)`。`y`: 0/1 の float32 `(batch,)`。
   - `state.apply_fn({"params": params}, x)` でロジットを計算し (グローバルな
     モデルではなく、状態の `apply_fn` を使います)、ロジットに対するバイナリ
     交差エントロピーの平均と、パラメータに関するその勾配を求め、
     `state.apply_gradients(grads=grads)` と (更新前の) 損失を返します。

チェックの内容: ランダムな入力サイズで状態を作り、チェックが与えるパラメータ
(一度も活性化しない隠れユニットを 1 つ含み、その重みは動いてはいけません)
からステップを実行し、新しいパラメータと損失を参照実装と比較します。数十
ステップ実行して、損失が下がることを求めます。ステップがコンパイルされている
こと (1 回トレースされ、その後は再利用されること) を確認します。
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training.train_state import TrainState


class MLP(nn.Module):
    """記事のモデルの Linen 版。用意済みなので、変更は不要です。"""

    hidden: int = 64

    @nn.compact
    def __call__(self, x):
        return nn.Dense(1)(nn.relu(nn.Dense(self.hidden)(x)))


def create_train_state(seed: int, d_in: int, learning_rate: float) -> TrainState:
    # TODO: MLP().init(key, example_x)["params"] でパラメータを作り、TrainState.create(...) に渡します。
    raise NotImplementedError("TODO: create_train_state を書いてください")


def train_step(state: TrainState, x, y):
    # TODO: @jax.jit で修飾し、state.params について jax.value_and_grad、apply_gradients。
    raise NotImplementedError("TODO: train_step を書いてください")
