"""演習: タイタニック号のデータでの、トレーニング ループ全体。

記事の実験です: MLP 9 -> 64 -> 1 (下に与えてあります)、1 つのロジットに対する
バイナリ交差エントロピー、Adam、32 のミニバッチ、エポックごとのシャッフル。
関数を 2 つ書きます。

1. `evaluate(model, x, y) -> dict`
   - `x`: float32 `(n, 9)`。`y`: 0/1 の float32 `(n,)`。
   - `{"loss": float, "accuracy": float}` を返します: 全 `n` 行にわたる、
     ロジットに対するバイナリ交差エントロピーの平均と、`logit > 0` が
     `y == 1` と一致する行の割合。普通の Python の float です。
   PyTorch で書くと: `model.eval()` モードでの `torch.no_grad()` の順伝播。

2. `train_titanic(x_train, y_train, *, epochs, batch_size=32,
                  learning_rate=1e-3, seed=0) -> (model, history, orders)`
   - `MLP(rngs=nnx.Rngs(seed))` と Adam オプティマイザ
     (`optax.adam(learning_rate)`。SGD でも AdamW でもなく) を作ります。
   - 各エポックで: 行をシャッフルし (`seed` から乱数を作り、エポックごとに
     「新しい」順列)、順列を `batch_size` のバッチに切り分け
     (`order[start:start + batch_size]`。最後のバッチは短くても、捨てても
     構いません)、バッチごとに 1 回トレーニング ステップを実行します。
   - `history`: `epochs` 個の Python の float のリストで、各エポックの平均
     トレーニング損失 (そのエポックのバッチにわたる平均。合計ではなく)。
   - `orders`: `epochs` 個の整数配列のリストで、各エポックが使った行
     インデックスの順列。
   - トレーニングしたモデル、`history`、`orders` を返します。
   PyTorch で書くと: おなじみの `for epoch ...: for xb, yb in loader: ...`。

速度: コンパイルしない NNX のステップは数十ミリ秒かかります。
トレーニング ステップに `nnx.jit` を付けると (レッスン 10 の最後のループ)、
何倍も速くなります (実測値はレッスン 11 の表にあります)。どちらでも合格
します。

チェックの内容: タイタニック号のデータの分割のトレーニング用の行で、
`train_titanic` を 20 エポック呼びます (取り分けた行はコードに一切渡り
ません)。`orders` が順列で、エポックごとに新しいことを確認します。
`MLP(rngs=nnx.Rngs(seed))` から、orders が与えるバッチで Adam を使って
トレーニングを再現し、返されたパラメータと `history` が再現結果と一致すること
を求めます。取り分けた行で返されたモデルの正解率を測り、常に「生存しなかった」
と答えた場合の 62% を十分に上回る下限に届く必要があります。同じ seed で短い
トレーニングを 2 回、次の seed で 1 回実行し、orders が同じ seed では繰り返され、
seed が変わると変わることを求めます。最後に、チェック自身のモデルで
`evaluate` を参照実装と比較します。
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx


class MLP(nnx.Module):
    """記事のタイタニック号のモデル。用意済みなので、変更は不要です。"""

    def __init__(self, d_in: int = 9, hidden: int = 64, *, rngs: nnx.Rngs):
        self.linear1 = nnx.Linear(d_in, hidden, rngs=rngs)
        self.linear2 = nnx.Linear(hidden, 1, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.linear2(jax.nn.relu(self.linear1(x)))


def evaluate(model: nnx.Module, x, y) -> dict:
    # TODO: 全行で 1 回の順伝播。損失と正解率は Python の float で返します。
    raise NotImplementedError("TODO: evaluate を書いてください")


def train_titanic(x_train, y_train, *, epochs: int, batch_size: int = 32,
                  learning_rate: float = 1e-3, seed: int = 0):
    # TODO: モデル、オプティマイザ、(jit した) トレーニング ステップ、エポックとバッチのループ。
    raise NotImplementedError("TODO: train_titanic を書いてください")
