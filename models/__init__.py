"""The hypergraph neural network library (DHG-Bench's models, tasks, trainer and studies).

torch_geometric 2.8 decorates a few of its pooling helpers with ``torch.jit.script`` at import, which torch 2.14
reports as a ``FutureWarning`` on every command: a warning about a library's internals that no user can act on, so
it is silenced here, for that message only."""
import warnings

warnings.filterwarnings("ignore", message=r"`torch\.jit\.script` is deprecated", category=FutureWarning)
