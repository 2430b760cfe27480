"""The hypergraph neural network library (DHG-Bench's models, tasks, trainer and studies).

torch_geometric 2.8 decorates a few of its pooling helpers with ``torch.jit.script`` at import, which torch 2.14
reports as a ``FutureWarning`` on every command: a warning about a library's internals that no user can act on, so
it is silenced here, for that message only."""
import warnings

warnings.filterwarnings("ignore", message=r"`torch\.jit\.script` is deprecated", category=FutureWarning)

from pathlib import Path  # noqa: E402

from hypergvl.cli import delegate  # noqa: E402  (the core's command registry; importing it loads no torch)

#: one ``<MODEL>.yaml`` per registered model (the trainer's configs; ``hypergvl train`` checks names against them)
CONFIG_DIR = Path(__file__).resolve().parent / "configs"

delegate("train", "Train a hypergraph neural network: any model, dataset and task, over seeds.", "hypergvl.models.train")
delegate("study", "DHG-Bench studies (robustness, fairness, efficiency) and their report.",
         "hypergvl.models.study.__main__")
delegate("datasets", "DHG-Bench datasets: list them, or build one as a Hub dataset repository.",
         "hypergvl.models.datasets_command")
