# The README's Quick start and .ci/run use these targets; nothing here is needed by hand otherwise.
PYTHON ?= python3

.PHONY: install lint test test-deps demo bench bench-deps bench-capture

# Editable install of the package (builds the Rust extension in release mode) with the test
# extras and ns-3 (the simulator's peer).
install:
	$(PYTHON) -m pip install --quiet -e '.[test,ns3]'

# Peer tools from Debian: tshark for the capture comparison in tests/test_capture.py, chromium for
# the HTML report test in tests/test_report.py, ns2 (binary ns) for the ns-2 peer in
# tests/test_ns2_peer.py, clang and libbpf-dev for rttlab live's BPF program in
# tests/test_live.py (each skips with its reason where the tool is
# missing, except under CI). Needs root for apt-get; never fails the build.
test-deps:
	@command -v tshark >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tshark >/dev/null; } || echo "make: could not install tshark; the tshark comparison test will be skipped"
	@command -v clang >/dev/null 2>&1 && test -e /usr/include/bpf/bpf_helpers.h || { command -v apt-get >/dev/null 2>&1 && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang llvm libbpf-dev >/dev/null; } || echo "make: could not install clang/libbpf-dev; the rttlab live tests will be skipped"
	@command -v chromium >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || echo "make: could not install chromium; the report test will be skipped"
	@command -v ns >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ns2 >/dev/null; } || echo "make: could not install ns2; the ns-2 peer tests will be skipped"

# Gates, not taste: formatting and lints of both languages (rustfmt.toml, [tool.ruff] in
# pyproject.toml). The bindings are linted too (feature `python`). Fails on the first finding.
PY_SOURCES = python tests benchmarks scripts examples
lint:
	cargo fmt --check
	cargo clippy --quiet --all-targets --features python -- -D warnings
	$(PYTHON) -m ruff format --check $(PY_SOURCES)
	$(PYTHON) -m ruff check $(PY_SOURCES)

# The whole suite: the gates, Rust unit tests, then pytest (CLI, API, real data from ../shared).
test: install test-deps lint
	cargo test --quiet
	$(PYTHON) -m pytest

demo: install
	rttlab evaluate --sample

# Peers the benchmarks time against (Debian packages): hyperfine times whole commands, tcptrace
# and tshark are the capture peers. Needs root for apt-get; never fails the build.
bench-deps:
	@command -v hyperfine >/dev/null 2>&1 && command -v tcptrace >/dev/null 2>&1 && command -v tshark >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq hyperfine tcptrace tshark >/dev/null; } || echo "make: could not install hyperfine/tcptrace/tshark; the capture benchmark needs them"

# Throughput against the plain-Python/NumPy peers; appends nothing, prints tables for BENCHMARKS.md.
bench: install bench-deps
	$(PYTHON) benchmarks/bench_replay.py
	$(PYTHON) benchmarks/bench_series.py

# Capture-reader throughput against tshark and tcptrace on a >= 1 GB capture built in /tmp.
bench-capture: bench-deps
	bash scripts/bench_capture.sh
