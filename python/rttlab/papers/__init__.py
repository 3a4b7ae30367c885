"""One folder per paper rttlab reproduces: its reproductions (TOML, found by
``rttlab reproduce``), the scenario builders and calculators only that paper needs, its figures.

- :mod:`.nunes_experts` — Nunes et al. 2011, Fixed-Share experts RTT prediction (wired and MANET);
- :mod:`.psaras_ca_rto` — Psaras, Tsaoussidis & Mamatas, the contention-adaptive RTO (CA-RTO);
- :mod:`.bai_spectcp` — Bai, Lilja & Atiquzzaman 2009, speculative TCP and RED/ECN dimensioning;
- :mod:`.vieira_smoothtcp` — Vieira & Bauer, SmoothTCP driven by ICMP source quench.

The fifth paper, Baddam et al.'s linear-regression RTT predictor, is the ``regression``
estimator (``src/rtt/regression.rs``) and has no reproduction of its own yet.
"""
