"""演習: NNX の MLP を Flax Linen に移植します。

レッスン 6 の NNX のモデル:
    class MLP(nnx.Module):
        def __init__(self, d_in=9, hidden=64, *, rngs):
            self.linear1 = nnx.Linear(d_in, hidden, rngs=rngs)
            self.linear2 = nnx.Linear(hidden, 1, rngs=rngs)
        def __call__(self, x):
            return self.linear2(jax.nn.relu(self.linear1(x)))
(PyTorch: nn.Linear(d_in, hidden) -> ReLU -> nn.Linear(hidden, 1).)

2 つのものを書きます。

1. Linen の `class MLP(nn.Module)`。フィールドは `hidden: int = 64` の 1 つ
   だけで、`@nn.compact __call__(self, x)` がバイアス付きの Dense(hidden) ->
   ReLU -> Dense(1) を計算します。入力サイズはフィールドではありません:
   Linen は `init` のときに `x` から推論します。形状 `(batch, d_in)` の `x`
   に対してロジット `(batch, 1)` を返し、
   `MLP(hidden=h).init(key, x)["params"]` は NNX の `MLP(d_in, h)` とちょうど
   同じ個数の数値を持ちます: `d_in*h + h + h + 1` (記事の 9 -> 64 -> 1 なら
   705)。

2. `count_params(params) -> int`: (入れ子の) パラメータの dict のすべての配列
   にわたる要素の総数を、Python の int で。
   PyTorch: `sum(p.numel() for p in model.parameters())`.

チェックの内容: ランダムな入力サイズと隠れ層のサイズで MLP を `init` し、
パラメータ数を NNX のモデルと比較します。自身のパラメータ (形状で見つけます)
から出力を NumPy で計算し直し、`apply` と比較します。デフォルトの幅を確認
します。ランダムなツリーで `count_params` を参照実装と比較します。
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp


class MLP(nn.Module):
    hidden: int = 64

    @nn.compact
    def __call__(self, x):
        # TODO: Dense(hidden)、ReLU、Dense(1)。
        raise NotImplementedError("TODO: MLP.__call__ を書いてください")


def count_params(params) -> int:
    # TODO: jax.tree.leaves と、各リーフのサイズ。
    raise NotImplementedError("TODO: count_params を書いてください")
