"""ファインチューニングのオプティマイザ: 本体の凍結、ウォームアップ付き AdamW、累積。

PyTorch で書くと:
    model.body.requires_grad_(False)
    opt = torch.optim.AdamW(model.head.parameters(), lr=lr)          # weight_decay=0.01
    warmup = LambdaLR(opt, lambda n: min(n + 1, warmup_steps) / warmup_steps)
    for i, (x, y) in enumerate(batches):
        loss = F.binary_cross_entropy_with_logits(model(x).squeeze(-1), y)
        (loss / accumulate).backward()
        if (i + 1) % accumulate == 0:
            clip_grad_norm_(model.head.parameters(), 1.0)
            opt.step(); warmup.step(); opt.zero_grad()

課題: 下の `Classifier` (変更しないでください) に対して、次を書きます

    make_optimizer(model, lr, warmup_steps, accumulate) -> nnx.Optimizer
    train_step(model, optimizer, x, y) -> loss

- トレーニングするのは `model.head` のパラメータだけです。`model.body` は
  凍結されていて、決して変わってはいけません。重み減衰 (weight decay) に
  よっても変わってはいけません。
- ヘッドの勾配はグローバル ノルム 1.0 にクリップされ (ノルムはヘッドの勾配
  だけで計算します)、そのあと PyTorch のデフォルトの重み減衰 0.01 (Optax の
  デフォルトは 1e-4) と、それ以外は Optax のデフォルトの AdamW を通ります。
- 学習率は上の `LambdaLR` と同じく線形にウォームアップします: n 回目の
  本当の更新 (n = 0, 1, ...) は lr * min(n + 1, warmup_steps) /
  warmup_steps を使います。つまり最初の更新から lr / warmup_steps でヘッドが
  動き、学習率は warmup_steps - 1 回目の更新で lr に達します。(レッスン 19 の
  `optax.linear_schedule(0.0, lr, warmup_steps)` は 0 から始まるので、最初の
  更新では何も変わりません。)
- 勾配は `train_step` の `accumulate` 回の呼び出しにわたって累積されます:
  パラメータが変わるのは `accumulate` 回ごとの呼び出しだけで、累積した勾配の
  「平均」に対する更新で変わります (`optax.MultiSteps`)。ウォームアップが
  数えるのは呼び出しではなく、本当の更新です。
- `train_step` は 1 つのバッチを扱います: x は float32 (B, d)、y は 0/1 の
  ラベルの float32 (B,)。損失は、y に対する `model(x).squeeze(-1)` の、
  ロジットに対するバイナリ交差エントロピーの平均です。オプティマイザを通して
  更新し、損失 (スカラー) を返します。

チェックされること: 自分のオプティマイザと train_step、そして参照実装のもの
で、同じ開始点から同じバッチで 2 つのモデルをトレーニングします。ステップ
ごとに、すべてのパラメータとすべての損失を比較します。ヘッドは `accumulate`
回ごとの呼び出しのたびに変わり、それ以外では変わってはいけません。
トレーニングしたモデルの順伝播は jax.jit で lower され、チェックが新しい入力で
実行します。
"""

import jax
import jax.numpy as jnp
import optax
from flax import nnx


class Classifier(nnx.Module):
    """本体 (事前学習済みネットワークだと考えてください) と新しいヘッド。変更しないでください。"""

    def __init__(self, d: int, h: int, *, rngs: nnx.Rngs):
        self.body = nnx.Linear(d, h, rngs=rngs)
        self.head = nnx.Linear(h, 1, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.head(jax.nn.relu(self.body(x)))


def loss_fn(model: Classifier, x: jax.Array, y: jax.Array) -> jax.Array:
    return optax.sigmoid_binary_cross_entropy(model(x).squeeze(-1), y).mean()


def make_optimizer(model: Classifier, lr: float, warmup_steps: int, accumulate: int) -> nnx.Optimizer:
    # TODO: ヘッドのパラメータのフィルタ (wrt=)、スケジュール、クリッピングと
    # AdamW のチェーン、それを包む optax.MultiSteps。
    raise NotImplementedError("TODO: make_optimizer を書いてください")


def train_step(model: Classifier, optimizer: nnx.Optimizer, x: jax.Array, y: jax.Array) -> jax.Array:
    # TODO: 損失と (トレーニングするパラメータについての) 勾配を求め、optimizer.update を呼びます。
    raise NotImplementedError("TODO: train_step を書いてください")
