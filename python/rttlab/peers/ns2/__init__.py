"""ns-2.35 (Debian's ``ns2`` package, binary ``ns``) as a peer engine: :mod:`.engine` turns an rttlab
scenario into an ns-2 Tcl script (its data, then ``topology.tcl``), runs ``ns`` and returns rttlab's
own result tables (the simulator ``ns2`` of a sweep). docs/ns2-comparison.md maps every key."""
