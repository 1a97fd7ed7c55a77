"""演習: ウォームアップ + コサインの学習率スケジュールと、Optax のチェーン。

PyTorch では、追加のオブジェクトが 2 つと、ステップごとに追加の呼び出しが
2 つ必要です:
    clip_grad_norm_(model.parameters(), max_norm)     # backward と step の間で呼ぶ
    scheduler = LambdaLR(optimizer, warmup_cosine)    # ステップごとに scheduler.step() も呼ぶ

Optax では、どちらもオプティマイザの一部です: スケジュールは関数
`step -> learning rate` で、クリッピングは Adam の前にチェーンでつなぐ勾配の
変換です。関数を 2 つ書きます。

1. `make_schedule(peak_lr: float, warmup_steps: int, total_steps: int)`
   関数 `schedule(step) -> learning rate` を返します。その値は
   - `0 <= step < warmup_steps` では `peak_lr * step / warmup_steps`
     (0 からの線形ウォームアップ)。
   - `warmup_steps <= step <= total_steps` では
     `0.5 * peak_lr * (1 + cos(pi * (step - warmup_steps) / (total_steps - warmup_steps)))`
     (`peak_lr` から 0 へ下がるコサインの半周期)。
   - `step > total_steps` では 0。
   `step` は Python の int か JAX の整数配列 (`jax.jit` の中ではトレース
   されたもの) かもしれないので、それに対する Python の `if` は使えません。
   `0 < warmup_steps < total_steps`。

2. `make_tx(peak_lr, warmup_steps, total_steps, max_norm) -> optax.GradientTransformation`
   勾配はまずグローバル ノルムで `max_norm` にクリップされ、次に Adam (b1、
   b2、eps は Optax のデフォルト) に渡されます。Adam の学習率は自分の
   スケジュールに従い、最初の更新がステップ 0 です。

チェックの内容: ランダムな設定で、0 から `total_steps` を過ぎるまでの各
ステップでスケジュールを (`jax.jit` の中で) 評価し、参照実装と比較します。
次に、ランダムな勾配のツリー (ノルムが `max_norm` をはるかに超えるものを含む)
で変換を数十ステップ実行し、すべての更新を参照実装のものと比較します。
"""

from __future__ import annotations

import jax.numpy as jnp
import optax


def make_schedule(peak_lr: float, warmup_steps: int, total_steps: int):
    # TODO: このスケジュールは optax に用意されています。その `decay_steps` の意味に注意してください。
    raise NotImplementedError("TODO: make_schedule を書いてください")


def make_tx(peak_lr: float, warmup_steps: int, total_steps: int, max_norm: float) -> optax.GradientTransformation:
    # TODO: optax.chain(先にこれ, 次にあれ)。順番が大事です。
    raise NotImplementedError("TODO: make_tx を書いてください")
