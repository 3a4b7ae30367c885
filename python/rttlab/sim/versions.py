"""The versions that key every stored run: of the scenario's canonical form and hash recipe, and
of the result layout. Bumped when a key or column changes meaning (a stored run then no longer
matches its rerun, which is the point)."""

#: Version of the hash recipe and of the canonical form's meaning: 2 writes every key by one rule
#: (docs/experiments.md, "Canonical form"); runs stored under 1 are still found
#: (:attr:`rttlab.Scenario.form1_hash`).
SCENARIO_SCHEMA = 2
#: Version of the result layout (``rttlab simulate --json``, the result tables). 2:
#: ``aggregate_goodput_bps`` is bytes over the common window, no longer a sum of flows' rates.
SCHEMA = "rttlab.simulate/2"
