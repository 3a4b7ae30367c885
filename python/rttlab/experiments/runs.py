"""One run of a sweep, as the sweep layer plans it before anything runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep: its parameters (the swept values), scenario, simulator and key; an
    evaluate job's run has no scenario but a ``job`` (:mod:`rttlab.experiments.evaluate_job`)."""

    params: dict[str, Any]
    scenario: Any  # rttlab.Scenario, or the scenario type of an engine with its own; None for a job
    simulator: str
    hash: str
    job: dict[str, Any] | None = None
