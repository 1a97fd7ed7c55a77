"""状態を持つ純粋でない処理を純粋関数にします: 状態を受け取り、状態を返します。

この PyTorch 風のクラスは、属性を書き換えることで、これまでに見たすべての値の
累積平均を保持します:

    class RunningMean:
        def __init__(self):
            self.count = 0
            self.total = 0.0

        def update(self, batch):            # batch: 1 次元の float のテンソル
            self.count += batch.numel()
            self.total += batch.sum().item()
            return self.total / self.count  # これまでに見たすべての値の平均

純粋なバージョンを書きます:

1. `init_state()` は初期状態を返します。JAX の配列からなる好きな pytree で
   構いません (dict、タプル、NamedTuple...)。

2. `update(state, batch) -> (new_state, mean)`
   `batch` は 1 次元の float32 配列 (長さは呼び出しごとに変わり、0 には
   ならない)。`new_state` は `state` と同じ構造。`mean` は float32 の
   スカラー (形状 `()`) 配列で、この状態の連鎖でこれまでに渡された
   すべてのバッチの全値の平均。

`update` は純粋である必要があります: グローバル変数、属性、`.item()` は使え
ません。渡された状態を変更してはいけません (新しい状態を作って返し、渡された
dict に代入しない)。こうすれば古い状態は有効なまま残ります (もう一度 `update`
を呼ぶと同じ結果になる)。また、`jax.jit` の中で動く必要があります。

チェックされること: ランダムなバッチ列に対する `jax.jit(update)` と累積平均との
比較。古い状態からの再実行。jit なしで呼んだ `update` が、渡された状態を変更
しないこと。`init_state()` からの 2 回の実行が同じ結果になること。
"""

import jax
import jax.numpy as jnp

# PyTorch の習慣で書いた、純粋でない版です。書き換えてください。
_count = 0
_total = 0.0


def init_state():
    # TODO: 状態を配列の pytree (たとえば dict) として返します。
    return None


def update(state, batch: jax.Array):
    # TODO: `state` と `batch` だけから計算し、(new_state, mean) を返します。
    global _count, _total
    _count += batch.shape[0]
    _total += float(batch.sum())
    return state, jnp.asarray(_total / _count, dtype=jnp.float32)
