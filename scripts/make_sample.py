"""Regenerate python/rttlab/data/sample_rtt.csv, the bundled synthetic RTT series (seeded).

A 5,000-sample path: 80 ms base with gamma jitter, a route change to 140 ms at sample 2,000, a
congestion episode (queue build-up to +250 ms) around sample 3,500, and rare isolated spikes —
the situations where estimators differ. One RTT in milliseconds per line.

    python scripts/make_sample.py > python/rttlab/data/sample_rtt.csv
"""

import numpy as np

rng = np.random.default_rng(20261122)
n = 5000
base = np.where(np.arange(n) < 2000, 80.0, 140.0)
jitter = rng.gamma(shape=2.0, scale=3.0, size=n)
queue = 250.0 * np.exp(-(((np.arange(n) - 3500) / 120.0) ** 2))
spikes = np.where(rng.random(n) < 0.004, rng.uniform(200, 900, n), 0.0)
rtt = base + jitter + queue + spikes
print("# rttlab synthetic RTT series, ms; made by scripts/make_sample.py (seed 20261122)")
for v in rtt:
    print(f"{v:.3f}")
