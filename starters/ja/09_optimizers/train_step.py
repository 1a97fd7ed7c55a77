"""演習: Adam オプティマイザと 1 回のトレーニング ステップを、NNX のやり方で。

PyTorch:
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)

    def train_step(model, optimizer, x, y):
        optimizer.zero_grad()
        loss = nn.BCEWithLogitsLoss()(model(x).squeeze(-1), y)
        loss.backward()
        optimizer.step()
        return loss

同じ 2 つのものを Flax NNX と Optax で書きます。

1. `make_optimizer(model, learning_rate: float) -> nnx.Optimizer`
   与えられた学習率の Adam (b1、b2、eps は Optax のデフォルト) で、モデルの
   `nnx.Param` 変数をトレーニングします。

2. `train_step(model, optimizer, x, y) -> jax.Array`
   - `model`: 形状 `(batch, d_in)` の `x` を形状 `(batch, 1)` のロジットに写す
     任意の NNX モジュール (チェックでは、さまざまなサイズのコースの MLP を
     使います)。
   - `x`: float32 `(batch, d_in)`。`y`: 0/1 の float32 `(batch,)`。
   - ロジットに対するバイナリ交差エントロピーの平均とその勾配を計算し、
     オプティマイザの更新を「1 回」モデルに (インプレースで) 適用します。
     損失は float32 のスカラーで返します。PyTorch の `loss` と同じく、更新
     「前」の損失です。

チェックの内容: ランダムなサイズとシードで MLP を作り、`make_optimizer` を
呼び、ランダムなバッチで `train_step` を何回か実行します。返されたすべての
損失と最終的なパラメータを、ステップごとに参照実装と比較します (そのため、
オプティマイザはその学習率の Adam で、各ステップはちょうど 1 回の更新を適用
する必要があります)。
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
from flax import nnx


def make_optimizer(model: nnx.Module, learning_rate: float) -> nnx.Optimizer:
    # TODO: optax.adam を使う nnx.Optimizer。`wrt` を忘れずに。
    raise NotImplementedError("TODO: make_optimizer を書いてください")


def train_step(model: nnx.Module, optimizer: nnx.Optimizer, x: jax.Array, y: jax.Array) -> jax.Array:
    # TODO: nnx.value_and_grad で損失と勾配を求め、optimizer.update(model, grads) を呼びます。
    raise NotImplementedError("TODO: train_step を書いてください")
