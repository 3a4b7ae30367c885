"""Nunes et al. 2011 (Fixed-Share experts RTT prediction): Table II and §IV-C in rttlab's
simulator (``nunes-wired.toml``), the MANET runs in ns-3 with rttlab's estimators inside
(:mod:`.manet`, ``nunes-manet.toml``)."""
