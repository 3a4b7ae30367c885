"""Baddam, Tallamraju & Polireddy 2018 (a CSE534 course project): the linear-regression RTT
predictor. The estimator is ``regression`` (``src/rtt/regression.rs``: ``form=rttlab``, rttlab's
redesign inspired by the paper, and ``form=paper``, the report's pseudo-code); this folder holds
``regression-sanity.toml`` (``rttlab reproduce regression-sanity``: the published coefficients
against the project's published predictions and sanity table, no runs) and :data:`COEFFICIENTS`,
the published fits, for ``rttlab train regression``'s check."""

from __future__ import annotations

#: The published coefficients [intercept, hops, min_rtt, max_rtt, ttl] (ms) and MAPE (%) per
#: kernel variant, as printed in the report's §Solution.
COEFFICIENTS: dict[str, tuple[list[float], float]] = {
    "cubic": ([-0.52218434, 0.01509783, 0.58899585, 0.41376639, 0.00157301], 3.71825),
    "reno": ([0.12877645, -0.01079089, 0.9933091, 0.04338126, -0.00311428], 4.6725),
    "vegas": ([-0.34314743, 0.00493765, 0.6949473, 0.3145146, 0.00192231], 2.8785),
}

#: The reproduction whose first table is the check `rttlab train regression` prints.
SANITY = "regression-sanity"
