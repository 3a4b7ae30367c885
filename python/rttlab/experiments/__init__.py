"""Experiments: sweeps of runs on Dask (:mod:`.sweep`, with the engines of :mod:`.simulators` and
the evaluate jobs of :mod:`.evaluate_job`), every run kept in a DuckDB store (:mod:`.store`),
summaries with Student-t intervals (:mod:`.stats`), HTML reports (:mod:`.report`), and
reproductions beside the published numbers (:mod:`.reproduce`; the generic ones in
``reproductions/``, each paper's in ``rttlab.papers``).
"""
