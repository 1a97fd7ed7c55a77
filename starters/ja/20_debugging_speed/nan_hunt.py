"""どこでも有限の勾配を持つ正規化と、jit の中で入力をチェックするエントロピー。

PyTorch で書くと:
    def safe_normalize(x):       # torch.linalg.norm の 0 での勾配は 0。F.normalize は
        return x / x.norm(dim=-1, keepdim=True).clamp_min(1e-12)  # ノルムを 1e-12 でクランプする

    def checked_entropy(p):
        assert (p >= 0).all(), f"checked_entropy: negative probability {p.min()}"
        return -torch.special.xlogy(p, p).sum(-1)                # 0 * log(0) は 0 と数える

移植の落とし穴: PyTorch は、ゼロ ベクトルでの `torch.linalg.norm` の勾配を
0 と定義しています。`jnp.linalg.norm` (と `jnp.sqrt(jnp.sum(x * x))`) は
そこで NaN になります。レッスンの二重の `where` はノルムを直しました。
ここでは、それで割り算を守ります。

課題: 次を書きます

    safe_normalize(x) -> array
    checked_entropy(p) -> array

- `safe_normalize(x)`: x (float32。軸が 1 つ以上ある任意の形状) を、その
  「最後の」軸に沿ったユークリッド ノルムで割ったもの。x と同じ形状の
  float32 です。ノルムが 0 でない行は、イプシロンもクランプもなしに正確に
  割ります (ノルムが 1e-13 ほどの行も出てきます。PyTorch の 1e-12 での
  クランプはそれを変えてしまいます)。ゼロだけの行はゼロを返します。勾配は
  どこでも有限で、ゼロだけの行では 0 である必要があります。ゼロと非ゼロが
  混じった行でも同じです。
- `checked_entropy(p)`: 最後の軸に沿ったエントロピー
  -sum(p * log(p), axis=-1)。形状 p.shape[:-1] の float32 で、p == 0 の
  要素の寄与は 0 です (浮動小数点では 0 * log(0) は NaN です)。すべての要素が
  >= 0 であること (0 は正しい確率です) を確かめる `checkify.check` を付け、
  そのメッセージには "negative probability" という語を含めます。
  `jax.jit(checkify.checkify(fn))(p)` として動く必要があります。`fn` が
  その中で計算した値に対して checked_entropy を呼ぶ場合もです。

チェックされること: 2 つの関数は、あなたのプロセスの中で形状だけを使って
jax.jit で lower されます。そのプログラムを、チェックがあとから引いた入力
(ゼロだけの行、ゼロと非ゼロが混じった行、とても小さい行と大きい行。正確な
ゼロを含む確率と、負の要素を含む確率) で実行します。正規化とその勾配
(sum(w * safe_normalize(x)) の勾配) を正確な値と比較します。エントロピーの
エラーは、負の要素を含む入力に対してだけちょうど報告される必要があり、
その値を正確なエントロピーと比較します。
"""

import jax
import jax.numpy as jnp
from jax.experimental import checkify


def safe_normalize(x: jax.Array) -> jax.Array:
    # TODO: x を最後の軸に沿ったノルムで割ります。使わない側の割り算を安全にする where と、
    # 結果を選ぶ where を使います。
    raise NotImplementedError("TODO: safe_normalize を二重の where で書いてください")


def checked_entropy(p: jax.Array) -> jax.Array:
    # TODO: p について checkify.check(...) を呼び、次にエントロピーを計算します。0 * log(0) は 0 とします。
    raise NotImplementedError("TODO: checked_entropy を checkify.check で書いてください")
