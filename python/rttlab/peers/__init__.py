"""The tools rttlab is checked against, driven from Python: ns-3 (:mod:`.ns3`) and ns-2.35
(:mod:`.ns2`)."""
