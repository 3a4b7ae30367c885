"""Psaras, Tsaoussidis & Mamatas (CA-RTO, the contention-adaptive RTO): §V–VI in rttlab's
simulator (``ca-rto.toml``)."""
