"""演習: BatchNorm と Dropout を持つ分類器と、副作用のない評価。

PyTorch のモデル:

    class Classifier(torch.nn.Module):
        def __init__(self, in_features, hidden, out_features, dropout_rate=0.5):
            super().__init__()
            self.linear1 = torch.nn.Linear(in_features, hidden)
            self.norm = torch.nn.BatchNorm1d(hidden)          # momentum=0.1
            self.dropout = torch.nn.Dropout(dropout_rate)
            self.linear2 = torch.nn.Linear(hidden, out_features)

        def forward(self, x):
            h = torch.relu(self.norm(self.linear1(x)))
            return self.linear2(self.dropout(h))

    def predict(model, x):
        model.eval()
        with torch.no_grad():
            return model(x)

両方を Flax NNX で書きます:

    Classifier(in_features: int, hidden: int, out_features: int, *,
               dropout_rate: float = 0.5, rngs: nnx.Rngs)

- 同じ層を同じ順に: linear、batch norm、ReLU、dropout、linear。
- ランダムなものはすべて `rngs` から来ます: 初期パラメータと、ドロップアウトの
  マスク (Dropout 層に `rngs` を渡し、トレーニング モードでモデルを呼ぶときに
  追加の引数が要らないようにします)。同じシードなら同じモデルと同じ最初の
  ドロップアウト マスクに、異なるシードなら異なるパラメータになる必要が
  あります。
- batch norm は、PyTorch のデフォルトと同じように移動統計量を更新する必要が
  あります (PyTorch の慣習で `momentum=0.1`。Flax は momentum を逆向きに
  数えます)。
- 新しいモデルはトレーニング モードです: ドロップアウトが有効で、バッチの
  統計量が使われ、移動平均が更新されます。

    predict(model: Classifier, x: jax.Array) -> jax.Array

- 評価モードのロジット `(batch, out_features)` を返します: ドロップアウトなし、
  バッチの統計量の代わりに移動平均を使います (そのため、ある行の予測はバッチ内
  の他の行に依存しません)。
- `model` をまったく元のままにします: 呼んだあともトレーニング モードのまま
  で、移動統計量も変わりません。(PyTorch の `model.eval()` はモデルを変更
  しますが、ここでは変更が残ってはいけません。)

チェックの内容: チェック時に決めたサイズとシードで `Classifier` を作ります。
シード間でパラメータを比較します。トレーニング モードでモデルを 2 回呼びます
(`dropout_rate=0.0` でない限り、出力は異なる必要があります)。最後の層の重みを
設定し、トレーニング モードの出力から、どの隠れユニットが落とされ、残った
ユニットがどうスケールされたかを読み取ります。移動平均の 1
ステップの更新をバッチの平均と照らし合わせます。バッチとその先頭の行に対して
`predict` を呼び、評価モードで評価したモデルと比較します。最後に、モデルが
まだトレーニングできることを確認します。
"""

from __future__ import annotations

import jax
from flax import nnx


class Classifier(nnx.Module):
    def __init__(self, in_features: int, hidden: int, out_features: int, *,
                 dropout_rate: float = 0.5, rngs: nnx.Rngs):
        # TODO: linear1、BatchNorm (momentum は PyTorch の既定値)、Dropout (rngs を渡す)、linear2。
        raise NotImplementedError("TODO: Classifier.__init__ を書いてください")

    def __call__(self, x: jax.Array) -> jax.Array:
        # TODO: linear1 -> バッチ正規化 -> relu -> ドロップアウト -> linear2。
        raise NotImplementedError("TODO: Classifier.__call__ を書いてください")


def predict(model: Classifier, x: jax.Array) -> jax.Array:
    # TODO: 評価モードで評価し、モデルは変わらないままにしておきます。
    raise NotImplementedError("TODO: predict を書いてください")
