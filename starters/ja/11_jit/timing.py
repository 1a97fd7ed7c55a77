"""演習: ディスパッチではなく計算を測る、時間計測のヘルパー。

JAX は、処理がキューに入るとすぐに呼び出しから戻ります (非同期ディスパッチ)。
また、jit された関数の最初の呼び出しでは、トレースとコンパイルも行われます。
そのため、呼び出しをそのままタイマーで囲むと、間違ったものを測ってしまいます。
(CUDA 上の PyTorch にも同じ罠があります: 時計を読む前に
`torch.cuda.synchronize()` が必要です。)

`time_fn(fn, *args, repeats: int = 5) -> dict` を書きます:
- `fn(*args)` を 1 回呼び、結果の準備ができるのを待つ時間も含めて計測します:
  これが `"first_s"` です (jit された関数ではコンパイル + 実行)。
- 次に `repeats` 回さらに呼び、それぞれ結果を待つ時間も含めて計測します:
  これが `"times"` です (`repeats` 個の float のリスト、呼び出し順)。
- `"median_s"`: `"times"` の中央値。
- 結果は `jax.block_until_ready(out)` で待ちます。これは配列のどんな pytree
  (タプル、dict...) も扱えます。`fn` が配列を 1 つだけ返すと決めつけては
  いけません。
- `time.perf_counter()` を使います。値はすべて秒単位の Python の float です。
- `fn` を呼ぶのは合計でちょうど `1 + repeats` 回です。

チェックの内容: 結果の準備ができるまでの時間をチェックだけが知っていて、最初の
呼び出しが (コンパイルのように) 遅い代役の関数を、単一の値、タプル、dict を
返すものについて計測します。呼び出し回数、すべての結果を計測区間の中で待った
こと (各計測値がその呼び出しの待ち時間以上であること)、すべての計測値の合計が
実行全体にかかった時間に収まること、最初の呼び出しが `"times"` に含まれず別に
報告されること、`"median_s"` が `"times"` の中央値であることを確認します。
最後に、本物の jit された関数を計測します。
"""

from __future__ import annotations

import time

import jax
import numpy as np


def time_fn(fn, *args, repeats: int = 5) -> dict:
    # TODO: 最初の呼び出しは別に計り、次に `repeats` 回を計ります。結果はすべて block_until_ready で待ちます。
    raise NotImplementedError("TODO: time_fn を書いてください")
