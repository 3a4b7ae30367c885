"""Bai, Lilja & Atiquzzaman 2009 (SpecTCP): the lossy-link comparison (``spectcp.toml``),
Table 3 (``spectcp-table3.toml``) and §5's RED/ECN gateway dimensioning
(:mod:`.red_dimension`, ``rttlab red-dimension``)."""
