"""Near miss: the Dropout layer gets its own nnx.Rngs(0), so its masks are the same whatever seed the model is built with."""
import jax
from flax import nnx
class Classifier(nnx.Module):
    def __init__(self, in_features, hidden, out_features, *, dropout_rate=0.5, rngs):
        self.linear1 = nnx.Linear(in_features, hidden, rngs=rngs)
        self.norm = nnx.BatchNorm(hidden, momentum=0.9, rngs=rngs)
        self.dropout = nnx.Dropout(dropout_rate, rngs=nnx.Rngs(0))
        self.linear2 = nnx.Linear(hidden, out_features, rngs=rngs)
    def __call__(self, x):
        return self.linear2(self.dropout(nnx.relu(self.norm(self.linear1(x)))))
def predict(model, x):
    return nnx.view(model, deterministic=True, use_running_average=True)(x)
MESSAGE = r"dropout masks do not come from `rngs`"
