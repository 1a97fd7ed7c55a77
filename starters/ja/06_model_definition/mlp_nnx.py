"""演習: 記事のタイタニック号の MLP を Flax NNX のモジュールとして書きます。

移植する PyTorch のモデル:

    class MLP(torch.nn.Module):
        def __init__(self, in_features=9, hidden=64, out_features=1):
            super().__init__()
            self.linear1 = torch.nn.Linear(in_features, hidden)
            self.linear2 = torch.nn.Linear(hidden, out_features)

        def forward(self, x):
            return self.linear2(torch.relu(self.linear1(x)))

`MLP` を、ちょうどこのシグネチャの `nnx.Module` として書きます:

    MLP(in_features: int = 9, hidden: int = 64, out_features: int = 1, *, rngs: nnx.Rngs)

- `__init__` は `rngs` から層を早期に作ります (バイアス付きの `nnx.Linear` を
  2 つ)。
- `__call__(x)` は形状 `(batch, in_features)` の float32 配列を受け取り、形状
  `(batch, out_features)` のロジットを返します: linear、ReLU、linear。sigmoid
  は不要です。損失関数 (ロジットを受け取るバイナリ交差エントロピー) がそれを
  適用します。

チェックの内容: チェック時に決めたサイズで `MLP(...)` を作り、その `nnx.Param`
の形状を調べます (kernel `(in, hidden)` と bias `(hidden,)`、kernel
`(hidden, out)` と bias `(out,)` があり、ほかには何もないこと)。それらの
パラメータをチェックが選んだ値に設定し、ランダムな入力での出力を参照モデルの
出力と比較します。また、同じ `rngs` のシードなら同じ初期パラメータになり、
異なるシードなら異なる初期パラメータになることも確認します。
"""

from __future__ import annotations

import jax
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, in_features: int = 9, hidden: int = 64, out_features: int = 1, *, rngs: nnx.Rngs):
        # TODO: nnx.Linear の層を 2 つ作ります (in_features -> hidden -> out_features)。rngs を渡します。
        raise NotImplementedError("TODO: MLP.__init__ を書いてください")

    def __call__(self, x: jax.Array) -> jax.Array:
        # TODO: 線形層、ReLU、線形層の順に通し、ロジットを返します。
        raise NotImplementedError("TODO: MLP.__call__ を書いてください")
