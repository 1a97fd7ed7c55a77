"""Near miss: predict switches BatchNorm to its running averages but leaves dropout on."""
import jax
from flax import nnx
class Classifier(nnx.Module):
    def __init__(self, in_features, hidden, out_features, *, dropout_rate=0.5, rngs):
        self.linear1 = nnx.Linear(in_features, hidden, rngs=rngs)
        self.norm = nnx.BatchNorm(hidden, momentum=0.9, rngs=rngs)
        self.dropout = nnx.Dropout(dropout_rate, rngs=rngs)
        self.linear2 = nnx.Linear(hidden, out_features, rngs=rngs)
    def __call__(self, x):
        return self.linear2(self.dropout(nnx.relu(self.norm(self.linear1(x)))))
def predict(model, x):
    return nnx.view(model, use_running_average=True)(x)
MESSAGE = r"predict\(model, x\).*values differ"
