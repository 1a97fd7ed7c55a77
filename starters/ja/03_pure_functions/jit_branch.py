"""データに依存する分岐を持つ関数を、`jax.jit` の中で動くようにします。

これらの PyTorch の関数は、Python の `if` で値に応じて分岐します:

    def clip_by_norm(g, max_norm):
        norm = torch.linalg.norm(g)          # 全要素にわたるノルム
        if norm > max_norm:
            g = g * (max_norm / norm)
        return g

    def huber_loss(pred, target, delta):     # = F.huber_loss(pred, target, delta=delta)
        r = (pred - target).abs()
        loss = torch.empty_like(r)
        for i in range(r.numel()):
            if r.flatten()[i] <= delta:
                loss.view(-1)[i] = 0.5 * r.flatten()[i] ** 2
            else:
                loss.view(-1)[i] = delta * (r.flatten()[i] - 0.5 * delta)
        return loss.mean()

これらを JAX で、`jax.jit` でコンパイルできるように書きます。トレース時には
`g`、`pred`、`target`、`max_norm`、`delta` の値はすべて未知です:

1. `clip_by_norm(g, max_norm) -> jax.Array`
   `g`: 任意の形状の float32 配列。`max_norm`: 正の float。`g` 全体の L2 ノルム
   が `max_norm` を超えるなら、ノルムが `max_norm` になるようにスケールした
   `g`、そうでなければ `g` そのまま。形状と dtype は `g` と同じ。
   勾配はどこでも有限であること。`g` = 0 でも (レッスン 3 の二重の `where`)。

2. `huber_loss(pred, target, delta) -> jax.Array`
   `pred`、`target`: 同じ形状の float32 配列。`delta`: 正の float。
   r = |pred - target| <= delta の要素では 0.5*r**2、それ以外では
   delta*(r - 0.5*delta) とした値の全要素にわたる平均。float32 のスカラー
   (形状 `()`)。

チェックされること: いくつかの形状のランダムな入力 (各分岐の両側) に対して
`jax.jit` の中で (すべての引数をトレースして) 呼び出した両関数の結果と、参照
結果 (`huber_loss` は PyTorch の `F.huber_loss` も) との比較。さらに、`jax.jit` の中で
求めた `clip_by_norm` の勾配を、`g` = 0 としきい値の両側で調べます。
"""

import jax
import jax.numpy as jnp


def clip_by_norm(g: jax.Array, max_norm: float) -> jax.Array:
    norm = jnp.linalg.norm(g)
    # TODO: jax.jit の中では、トレースされた値への Python の `if` は失敗します。代わりに選択を使います。
    if norm > max_norm:
        g = g * (max_norm / norm)
    return g


def huber_loss(pred: jax.Array, target: jax.Array, delta: float) -> jax.Array:
    # TODO: `if` を使わずに、2 次の分岐と 1 次の分岐を要素ごとに選びます。
    raise NotImplementedError("TODO: huber_loss を Python の分岐なしで書いてください")
