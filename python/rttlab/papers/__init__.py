"""One folder per paper rttlab reproduces: its reproductions (TOML, found by
``rttlab reproduce``), the scenario builders and calculators only that paper needs, its figures.

- :mod:`.nunes_experts` — Nunes et al. 2011, Fixed-Share experts RTT prediction (wired and MANET);
- :mod:`.psaras_ca_rto` — Psaras, Tsaoussidis & Mamatas, the contention-adaptive RTO (CA-RTO);
- :mod:`.bai_spectcp` — Bai, Lilja & Atiquzzaman 2009, speculative TCP and RED/ECN dimensioning;
- :mod:`.vieira_smoothtcp` — Vieira & Bauer, SmoothTCP driven by ICMP source quench;
- :mod:`.baddam_regression` — Baddam et al. 2018, the linear-regression RTT predictor: its
  published coefficients against its published predictions and sanity tables (no runs). The
  ``regression`` estimator (``src/rtt/regression.rs``) is inspired by it (``form=paper``: the
  report's own pseudo-code).
"""
