"""Trace-driven evaluation: RTT series and captures in, every estimator replayed over the same
samples and scored (prediction error; Allman & Paxson's bad timeouts and wait on a loss).

- :mod:`.series` reads RTT series, :mod:`.capture` reads pcap/pcapng captures (the Rust reader);
- :mod:`.estimators` names the estimators and their parameters (the public ``rttlab.estimators``);
- :mod:`.replay` replays estimators over samples, :mod:`.evaluate` scores them per input or
  connection with the Pareto front, :mod:`.plot` draws a replay;
- :mod:`.discriminators` classifies losses (congestion or corruption) on arrival traces.
"""
