"""引数によって出力の形状が決まる関数を jit します: 静的引数 (static argument)。

`jax.jit` の中では、すべての引数は値を持たないトレーサになりますが、関数を
トレースするとき、形状は Python の int でなければなりません。「jit コンパイル
された」関数を 2 つ定義します (モジュール レベルの名前は `jax.jit` の結果で
ある必要があります。たとえばデコレータを使います)。どちらの呼び方でも動く
ようにします:

    one_hot(labels, 5)          one_hot(labels, num_classes=5)
    pad_batch(x, 32)            pad_batch(x, batch_size=32)

1. `one_hot(labels, num_classes) -> jax.Array`
   `labels`: 形状 `(n,)` の int32 配列で、値は `[0, num_classes)` の範囲。
   `num_classes`: Python の int。形状 `(n, num_classes)` の float32 配列で、
   `[i, labels[i]]` が 1.0、それ以外が 0.0。
                            PyTorch: `F.one_hot(labels, num_classes).float()`

2. `pad_batch(x, batch_size) -> (padded, mask)`
   `x`: 形状 `(n, f)` の float32 配列で、`1 <= n <= batch_size` (端数の出る
   最後のバッチ)。`batch_size`: Python の int。`padded` の形状は
   `(batch_size, f)` で、`x` の行のあとにゼロの行が続きます。`mask` は形状
   `(batch_size,)` の bool 配列で、`x` から来た行が True。
   (すべてのバッチを 1 つの形状にパディングすれば、トレーニング ステップの
   コンパイルは 1 回で済みます。)

チェックされること: 両方の名前が jit コンパイルされた関数で、そのコンパイル済み
プログラムが配列だけを受け取ること (`one_hot.lower(labels, 5)` が動き、静的
引数が焼き込まれる)。また、いくつかの `num_classes` / `batch_size` の値と入力
の形状で、位置引数とキーワード引数で渡したときの結果。
"""

from functools import partial

import jax
import jax.numpy as jnp


@jax.jit
def one_hot(labels: jax.Array, num_classes: int) -> jax.Array:
    # TODO: num_classes が出力の形状を決めるので、jit には静的な Python の int として渡す必要があります。
    return (labels[:, None] == jnp.arange(num_classes)).astype(jnp.float32)


def pad_batch(x: jax.Array, batch_size: int):
    # TODO: この関数を batch_size を静的にして jit し、(padded, mask) を返します。
    raise NotImplementedError("TODO: x を batch_size 行にパディングし、マスクを作ってください")
