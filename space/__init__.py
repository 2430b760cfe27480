"""The leaderboard Space (``hypergvl space serve``): store, test sets, server-side scoring, worker, deployment."""
from hypergvl.cli import delegate

delegate("space", "The leaderboard Space: serve it, run its worker, re-grade its entries, list or rotate its test "
         "sets, deploy it.", {"serve": "hypergvl.space.app", "worker": "hypergvl.space.worker",
                             "rescore": "hypergvl.space.rescore", "testsets": "hypergvl.space.testsets",
                             "deploy": "hypergvl.space.deploy"})
