"""Alternative: predict switches the model with .eval(), evaluates, and switches it back with .train(); explicit dropout stream."""
import jax
from flax import nnx
class Classifier(nnx.Module):
    def __init__(self, in_features, hidden, out_features, *, dropout_rate=0.5, rngs):
        self.linear1 = nnx.Linear(in_features, hidden, rngs=rngs)
        self.norm = nnx.BatchNorm(num_features=hidden, momentum=0.9, epsilon=1e-5, rngs=rngs)
        self.dropout = nnx.Dropout(rate=dropout_rate, rng_collection="dropout", rngs=rngs)
        self.linear2 = nnx.Linear(hidden, out_features, rngs=rngs)
    def __call__(self, x):
        x = self.linear1(x)
        x = self.norm(x)
        x = jax.nn.relu(x)
        x = self.dropout(x)
        return self.linear2(x)
def predict(model, x):
    model.eval()
    try:
        return model(x)
    finally:
        model.train()
