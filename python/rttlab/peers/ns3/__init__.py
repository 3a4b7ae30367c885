"""ns-3 3.44 (the ``ns3`` extra) as a peer: :mod:`.dumbbell` runs an rttlab scenario in ns-3 (the
simulator ``ns3`` of a sweep); :mod:`.rtt` puts rttlab's estimators inside ns-3's TCP (C++ in
``rtt_estimator.cc``, compiled by cppyy on first use)."""
