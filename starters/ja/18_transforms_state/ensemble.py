"""nnx.vmap によるアンサンブルと、コピーごとに異なるドロップアウト。

PyTorch で書くと:
    members = [MLP(d_in, hidden) for _ in range(n_members)]         # それぞれ別々に初期化
    params, buffers = torch.func.stack_module_state(members)
    preds = torch.vmap(lambda p, b, x: functional_call(members[0], (p, b), (x,)),
                       in_dims=(0, 0, None))(params, buffers, x)
    copies = torch.vmap(lambda _: F.dropout(x, rate, training=True),
                        randomness="different")(torch.arange(n_copies))

課題: 次を書きます

    make_ensemble(n_members, d_in, hidden, seed) -> MLP
    ensemble_predict(ensemble, x) -> array
    dropout_copies(x, n_copies, rate, seed) -> array

- `make_ensemble`: 「1 つの」`MLP` オブジェクト (下のクラス。変更しないで
  ください) で、そのすべての `nnx.Param` の先頭にサイズ `n_members` の軸が
  加わったもの: メンバー `i` は `kernel[i]`、`bias[i]` です。`n_members` 個の
  別々の `MLP(d_in, hidden, rngs=...)` と同じように、各メンバーは「異なる」
  初期化 (それぞれ専用のキー) を受ける必要があり、同じ `seed` なら同じ
  アンサンブルになる必要があります。`nnx.Rngs(seed)` を使います。
- `ensemble_predict`: 同じバッチ `x` (B, d_in) に対する全メンバーの出力。
  形状 (n_members, B, 1) の float32 で、全メンバーについて一度に計算します:
  メンバーの軸についてベクトル化した 1 つの計算 (`nnx.vmap`、`jax.vmap`、
  またはその軸についてバッチ化した演算) にして、`jax.jit` でコンパイルされる
  プログラムの各行列積がすべてのメンバーを覆うようにします。メンバーを回す
  ループは使いません: Python のループも、`jax.lax.map`、`lax.scan`、
  `lax.fori_loop` (メンバーを 1 つずつ順に実行します) も使いません。
- `dropout_copies`: `x` (任意の形状) を独立にドロップアウトした `n_copies` 個の
  コピー。形状 (n_copies, *x.shape) の float32。`nnx.Dropout(rate)` と同じく、
  各要素は確率 1 - rate で残って 1 / (1 - rate) 倍され、そうでなければ 0 に
  なります。各コピーは「それぞれ専用の」マスクを持つ必要があります。同じ
  `seed` なら同じコピーになります。

`nnx.vmap` は、デフォルトではモジュールの乱数ストリームを共有 (ブロード
キャスト) するので、どのメンバーやコピーも同じキーを引いてしまいます:
レッスンの `nnx.split_rngs` と `nnx.StateAxes` を見てみましょう。

チェックされること: アンサンブルのパラメータの形状。どの 2 つのメンバーも、
パラメータでも、チェックが引いたバッチに対する出力でも等しくないこと。予測が、
アンサンブルのパラメータから得られるものであること (チェックがパラメータから
計算し直し、`ensemble_predict` のプログラムを自分で用意したメンバーで実行
します)。このプログラムにループがなく、ベクトル化した 1 回の計算より多くの
行列積を含まないこと。同じシードなら同じ結果、別のシードなら異なる結果に
なること。ドロップアウトした各コピーが要素を残すかゼロにする (そしてスケール
し直す) だけで、約 1 - rate の割合を残し、どの 2 つのコピーもマスクを共有せず、
残る要素が独立であること (コピー、行、列、シードをまたぐ正確な裾確率の統計的
検定で、正しい解がこれに落ちる確率は 1e-10 未満です)。
"""

import jax
import jax.numpy as jnp
from flax import nnx


class MLP(nnx.Module):
    """ReLU を使う d_in -> hidden -> 1。変更しないでください。"""

    def __init__(self, d_in: int, hidden: int, *, rngs: nnx.Rngs):
        self.l1 = nnx.Linear(d_in, hidden, rngs=rngs)
        self.l2 = nnx.Linear(hidden, 1, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.l2(jax.nn.relu(self.l1(x)))


def make_ensemble(n_members: int, d_in: int, hidden: int, seed: int) -> MLP:
    # TODO: コンストラクタを nnx.vmap でマップし、各メンバーにそれぞれのキーを与えます。
    raise NotImplementedError("TODO: make_ensemble を nnx.split_rngs + nnx.vmap で書いてください")


def ensemble_predict(ensemble: MLP, x: jax.Array) -> jax.Array:
    # TODO: メンバー (各パラメータの軸 0) についてマップし、x は共有します。
    raise NotImplementedError("TODO: ensemble_predict を nnx.vmap で書いてください")


def dropout_copies(x: jax.Array, n_copies: int, rate: float, seed: int) -> jax.Array:
    # TODO: nnx.Dropout(rate, rngs=nnx.Rngs(dropout=seed)) を 1 つ作り、nnx.vmap の中で適用します
    # (その乱数の状態は n_copies 本のストリームに分割します)。
    raise NotImplementedError("TODO: dropout_copies をコピーごとのマスクで書いてください")
