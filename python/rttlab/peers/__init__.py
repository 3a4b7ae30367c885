"""The tools rttlab is checked against, driven from Python: ns-3 (:mod:`.ns3`)."""
