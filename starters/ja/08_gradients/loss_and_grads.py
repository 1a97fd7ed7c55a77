"""演習: タイタニック号の MLP の損失と、その勾配。

PyTorch は勾配を副作用として計算します (`loss.backward()` が `p.grad` を
埋めます)。JAX では損失の「関数」を変換し、勾配を値として受け取ります。

モデルは与えられています: `MLP(d_in, hidden, rngs=...)`。Linear -> ReLU ->
Linear で、行ごとに 1 つのロジット (形状 `(batch, 1)`) を返します。関数を 2 つ
書きます。

1. `loss_fn(model, x, y) -> (loss, accuracy)`
   - `x`: float32 配列 `(batch, d_in)`。`y`: 0/1 の float32 配列 `(batch,)`。
   - `loss`: `y` に対するロジットのバイナリ交差エントロピーの平均。float32 の
     スカラー (PyTorch: `nn.BCEWithLogitsLoss()(model(x).squeeze(-1), y)`)。
   - `accuracy`: `logit > 0` が `y == 1` と一致する行の割合。float32 の
     スカラー。
   形状に注意: モデルは `(batch, 1)` を返し、ラベルは `(batch,)` です。

2. `loss_and_grads(model, x, y) -> (loss, accuracy, grads)`
   - 同じ `loss` と `accuracy` に加えて、モデルのパラメータ (`nnx.Param`) に
     関する `loss` の勾配。モデルと同じ構造で、たとえば
     `grads["linear1"]["kernel"]` は `model.linear1.kernel` の形状を持ちます。
   - 損失、正解率、勾配は 1 回の順伝播で計算します (正解率は補助出力として
     一緒に運びます)。モデルのパラメータは変更しません。
   PyTorch で書くと:
       model.zero_grad(); loss = ...; loss.backward()
       grads = {name: p.grad for name, p in model.named_parameters()}

チェックの内容: チェック時に決めたパラメータで MLP を作り、ランダムなデータで
関数を呼びます。損失、正解率 (どちらも float32 のスカラー)、すべての勾配を、
チェック自身が float64 で計算した値と比較します (ごく小さなモデルでも)。
また、モデルが変更されていないことを確認します。
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
from flax import nnx


class MLP(nnx.Module):
    """コースのタイタニック号のモデル (レッスン 6)。用意済みなので、変更は不要です。"""

    def __init__(self, d_in: int = 9, hidden: int = 64, *, rngs: nnx.Rngs):
        self.linear1 = nnx.Linear(d_in, hidden, rngs=rngs)
        self.linear2 = nnx.Linear(hidden, 1, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.linear2(jax.nn.relu(self.linear1(x)))


def loss_fn(model: MLP, x: jax.Array, y: jax.Array) -> tuple[jax.Array, jax.Array]:
    # TODO: 形状 (batch,) のロジット、ロジットからの 2 値交差エントロピーの平均
    # (optax にあります)、ラベルに対する `logits > 0` の正解率。
    raise NotImplementedError("TODO: loss_fn を書いてください")


def loss_and_grads(model: MLP, x: jax.Array, y: jax.Array):
    # TODO: nnx.value_and_grad(loss_fn, has_aux=True) を 1 回呼びます。
    raise NotImplementedError("TODO: loss_and_grads を書いてください")
