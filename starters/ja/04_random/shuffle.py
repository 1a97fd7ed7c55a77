"""明示的なキーによる、再現可能なエポックごとのシャッフル。

PyTorch の `DataLoader(shuffle=True)` は、前のエポックから状態が進んだ生成器
から各エポックの順序を引きます。エポック 7 の順序は、それより前に引かれた
すべてに依存します。ここでは、各エポックの順序が `(seed, epoch)` に「だけ」
依存する必要があります。そうすれば、再開した実行も、それまでに何が計算されて
いても、中断しなかった実行とまったく同じようにシャッフルします。

1. `epoch_permutation(seed, epoch, n) -> jax.Array`
   `seed`、`epoch`、`n`: Python の int (`n >= 1`)。`0 .. n-1` のランダムな
   順列を持つ、形状 `(n,)` の整数配列。同じ `(seed, epoch)` なら常に同じ
   順列になり、異なるエポック (またはシード) なら異なる順列になります。
   エポックのキーは `seed` と `epoch` から導きます (`jax.random.fold_in`、
   または `jax.random.split`)。

2. `shuffle_epoch(seed, epoch, x, y) -> (x_shuffled, y_shuffled)`
   `x`: 形状 `(n, f)` の配列、`y`: 形状 `(n,)` の配列。どちらも
   `epoch_permutation(seed, epoch, n)` で並べ替え、`x` の i 行目が `y[i]` と
   組のままになるようにします。
                           PyTorch: one pass of `DataLoader(..., shuffle=True)`

各キーは 1 回までしか使えません。チェックでは `jax_debug_key_reuse` が有効です。

チェックされること: 結果が順列であること。それまでに何を呼んだかにかかわらず、
同じ `(seed, epoch)` なら同じ結果になること。エポックやシードが違えば異なる
こと。`x` と `y` が組のままで、自分の `epoch_permutation` に従っていること。
キーが再利用されないこと。
"""

import jax
import jax.numpy as jnp

# PyTorch の習慣: 呼ぶたびに進む 1 つのジェネレータ。書き換えてください。
_key = jax.random.key(0)


def epoch_permutation(seed: int, epoch: int, n: int) -> jax.Array:
    # TODO: キーは (seed, epoch) だけから作ります。変化するグローバル変数からは作りません。
    global _key
    _key, sub = jax.random.split(_key)
    return jax.random.permutation(sub, n)


def shuffle_epoch(seed: int, epoch: int, x: jax.Array, y: jax.Array):
    # TODO: x と y を同じ順列で並べ替えます。
    raise NotImplementedError("TODO: x と y を組のままシャッフルしてください")
