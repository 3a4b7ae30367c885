# The README's Quick start and .ci/run use these targets; nothing here is needed by hand otherwise.
PYTHON ?= python3

.PHONY: install test demo bench

# Editable install of the package (builds the Rust extension in release mode) with test extras.
install:
	$(PYTHON) -m pip install --quiet -e '.[test]'

# The whole suite: Rust unit tests, then pytest (CLI, API, real data from ../shared).
test: install
	cargo test --quiet
	$(PYTHON) -m pytest

demo: install
	rttlab evaluate --sample

# Throughput against the plain-Python/NumPy peers; appends nothing, prints a table for BENCHMARKS.md.
bench: install
	$(PYTHON) benchmarks/bench_replay.py
