"""演習: 勾配の pytree のグローバル ノルムと、それによるクリッピング。

PyTorch では `torch.nn.utils.clip_grad_norm_(model.parameters(),
max_norm)` でクリップします。これはパラメータをループして、各 `.grad` を
インプレースでスケールします。JAX では勾配は pytree (入れ子の dict/list/tuple
や `nnx.State` で、リーフが配列) であり、`jax.tree` のユーティリティで変換して
新しいツリーを作ります。

float 配列の「どんな」pytree (入れ子の深さもリーフの形状も任意。0 次元の
スカラーも含む) でも動く関数を 2 つ書きます:

1. `global_norm(tree) -> jax.Array`
   すべてのリーフのすべての要素の 2 乗の和の平方根を、float32 のスカラーで。
   PyTorch で書くと:
       torch.sqrt(sum((g ** 2).sum() for g in grads))

2. `clip_by_global_norm(tree, max_norm: float) -> tree`
   同じ構造のツリーで、すべてのリーフに `min(1, max_norm / global_norm(tree))`
   を掛けたもの。ノルムが `max_norm` 以下なら変わらず、そうでなければ
   グローバル ノルムが `max_norm` になるようにスケールされます。入力は変更
   しません。
   PyTorch で書くと: `clip_grad_norm_(params, max_norm)` (ただし
   インプレースで変更します)。

チェックの内容: さまざまな構造と形状のランダムなツリー (普通の dict と list、
そしてモデルの勾配の `nnx.State`) で、ノルムが `max_norm` より大きい場合と
小さい場合に両関数を呼び、参照解答と比較します。
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def global_norm(tree) -> jax.Array:
    # TODO: jax.tree.leaves ですべての配列を取り出し、2 乗の和を求めて、平方根をとります。
    raise NotImplementedError("TODO: global_norm を書いてください")


def clip_by_global_norm(tree, max_norm: float):
    # TODO: ツリー全体で 1 つの倍率を、jax.tree.map で掛けます。
    raise NotImplementedError("TODO: clip_by_global_norm を書いてください")
