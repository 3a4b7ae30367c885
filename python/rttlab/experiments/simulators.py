"""The engines a sweep can run a scenario on, each registered by the module that provides it.

A provider declares one :class:`Simulator` and names it under the entry-point group
``rttlab.simulators`` (``pyproject.toml``), as rttlab's own simulator (:mod:`rttlab.sim.run`),
ns-3 (:mod:`rttlab.peers.ns3.dumbbell`) and the MANET runs of Nunes et al. 2011
(:mod:`rttlab.papers.nunes_experts.manet`) do; another package can add an engine the same way.
The sweep layer names none of them: it looks the simulator up here by the name a sweep gives.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

GROUP = "rttlab.simulators"
#: The engine a sweep runs when it names none.
DEFAULT = "rttlab"


@dataclass(frozen=True)
class Simulator:
    """An engine: how to read its scenarios, run one and say which version ran it."""

    name: str
    #: ``run(canonical_toml, traces)`` → a result with ``tables`` (``flows``, ``channels``, traces),
    #: ``metrics`` and the scalars of :func:`rttlab.experiments.sweep.result_scalars`.
    run: Callable[[str, Sequence[str]], Any]
    #: The version stored with each run (``rttlab 0.1.0``, ``ns3 3.44.post0``).
    version: Callable[[], str]
    #: The scenario type its sweeps are made of: built as ``scenario(table, source=...)`` or
    #: ``scenario.from_toml(text, source=...)``; ``None``: rttlab's :class:`~rttlab.Scenario`.
    scenario: type | None = None
    #: A run's key is the scenario's hash alone (rttlab's own engine: the stores of every
    #: earlier version are keyed so); any other engine's key also hashes its name, so the same
    #: scenario run on two engines is two runs.
    keyed_by_scenario_alone: bool = False
    #: An engine that takes options: ``variant(options)`` is the engine ``NAME:OPTIONS`` (e.g.
    #: ``testbed:net.ipv4.tcp_sack=0``, the testbed with a kernel setting), named so in the
    #: store and keyed by that name, so each variant's runs are runs of their own. It raises
    #: :class:`ValueError` naming what it cannot read.
    variant: Callable[[str], Simulator] | None = None
    #: ``missing()`` → None when the engine can run on this machine, else one line saying what to
    #: install (a sweep refuses up front instead of storing every run as failed).
    missing: Callable[[], str | None] | None = None

    @property
    def own_scenarios(self) -> bool:
        """Its scenarios are not rttlab's: a sweep of it sets the engine once, for every run."""
        return self.scenario is not None

    def run_hash(self, scenario: Any) -> str:
        """The run's key in a store."""
        return self.key(scenario.hash)

    def key(self, scenario_hash: str) -> str:
        """The key of a run of the scenario hashed ``scenario_hash`` on this engine."""
        if self.keyed_by_scenario_alone:
            return scenario_hash
        return hashlib.sha256(f"{scenario_hash}:{self.name}".encode()).hexdigest()[:40]


@cache
def registry() -> dict[str, Simulator]:
    """Every registered simulator by name (read once per process from the installed entry points)."""
    from importlib.metadata import entry_points

    found: dict[str, Simulator] = {}
    for ep in entry_points(group=GROUP):
        sim = ep.load()
        if not isinstance(sim, Simulator) or sim.name != ep.name:
            raise TypeError(
                f"entry point {GROUP}:{ep.name} = {ep.value} is not a Simulator named {ep.name!r}"
            )
        found[ep.name] = sim
    return dict(sorted(found.items()))


def names() -> list[str]:
    return list(registry())


def get(name: str) -> Simulator:
    """The simulator called ``name``, or ``NAME:OPTIONS`` for a variant of an engine that takes
    options (:attr:`Simulator.variant`); :class:`KeyError` naming the known ones if there is none."""
    try:
        return registry()[name]
    except KeyError:
        pass
    base, sep, options = name.partition(":")
    engine = registry().get(base)
    if sep and engine is not None:
        if engine.variant is None:
            raise KeyError(f"{base} takes no options ({name!r})")
        try:
            return engine.variant(options)
        except ValueError as e:
            raise KeyError(f"{name!r}: {e}") from None
    raise KeyError(f"expected one of {', '.join(registry())}, got {name!r}")


def _run_rttlab(scenario_toml: str, traces: Sequence[str]) -> Any:
    from rttlab.sim.run import simulate

    # Only the traces the sweep keeps: recording the others costs ~15 % of a run.
    return simulate(scenario_toml, traces=list(traces) or "none")


def _rttlab_version() -> str:
    from rttlab import __version__

    return __version__


#: rttlab's own simulator (:mod:`rttlab.sim`), the default engine.
RTTLAB = Simulator("rttlab", run=_run_rttlab, version=_rttlab_version, keyed_by_scenario_alone=True)
