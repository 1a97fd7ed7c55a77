"""PyTorch のインプレースな処理を、JAX の純粋関数として書き直します。

この PyTorch のコードは、テンソルをインプレースで更新します:

    def accumulate_(x, mask, index, src):
        x.masked_fill_(mask, 0.0)        # 1. マスクされた要素をゼロにする
        x.index_add_(0, index, src)      # 2. src[i] を index[i] 行目に足す
        return x

JAX の配列はインプレースで変更できません。2 つのステップを、「新しい」配列を
返して入力には手を付けない関数として書きます:

1. `masked_fill(x, mask, value) -> jax.Array`
   `x`: 任意の形状の float32 配列。`mask`: 同じ形状の bool 配列。
   `value`: float。`mask` が True の要素は `value` になり、それ以外は元の値の
   まま。形状と dtype は `x` と同じ。                 PyTorch: `x.masked_fill(mask, value)`

2. `scatter_add_rows(x, index, src) -> jax.Array`
   `x`: 形状 `(n, ...)` の float32 配列。`index`: 形状 `(k,)` の int32 配列で、
   値は `[0, n)` の範囲 (重複もありうる)。`src`: 形状 `(k, ...)` の float32
   配列 (後ろの形状は `x` と同じ)。結果の行 `index[i]` は、`x[index[i]]` に、
   その行を指すすべての `src[i]` を足したもの。重複したインデックスは
   足し合わされます。                                 PyTorch: `x.index_add(0, index, src)`

どちらも `jax.jit` の中で動く必要があります。jit の中では、ブール値のマスクで
可変個の要素を選び出すことはできません。

チェックされること: いくつかの形状 (1 次元と 2 次元、重複したインデックスあり)
のランダムな入力に対して `jax.jit` の中で呼び出した両関数の結果と、参照結果
との比較。
"""

import jax
import jax.numpy as jnp


def masked_fill(x: jax.Array, mask: jax.Array, value: float) -> jax.Array:
    # TODO: mask が True の要素を value にします。インプレースの代入は使えません。
    raise NotImplementedError("TODO: masked_fill をインプレースの代入なしで書いてください")


def scatter_add_rows(x: jax.Array, index: jax.Array, src: jax.Array) -> jax.Array:
    # TODO: src[i] を index[i] 行目に足します。同じインデックスが何度出てきても、すべて足すこと。
    raise NotImplementedError("TODO: scatter_add_rows を .at[] の更新で書いてください")
