"""Near miss: the constructor's arguments are renamed (din, dmid, dout), so MLP(hidden=...) fails."""
import jax
from flax import nnx
class MLP(nnx.Module):
    def __init__(self, din=9, dmid=64, dout=1, *, rngs):
        self.linear1 = nnx.Linear(din, dmid, rngs=rngs)
        self.linear2 = nnx.Linear(dmid, dout, rngs=rngs)
    def __call__(self, x):
        return self.linear2(nnx.relu(self.linear1(x)))
MESSAGE = r"unexpected keyword argument 'in_features'"
