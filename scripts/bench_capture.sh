#!/usr/bin/env bash
# Whole-command capture benchmark: rttlab's CLI against tcptrace and tshark on the same large
# capture in the same run, timed by hyperfine; plus the Rust core alone and each rttlab
# command's peak memory. Prints tables for BENCHMARKS.md; nothing is written to the repo.
#
#   bash scripts/bench_capture.sh [CAPTURE]
#
# CAPTURE defaults to /tmp/rttlab-big.pcap, built first by scripts/make_big_capture.py (>= 1 GB
# from ../shared/captures) if missing. RUNS (default 5) timed runs per command after one warm-up,
# ROUNDS (default 1) repetitions of the two-core block
# (warm page cache: every tool reads the file from memory); tshark, ~100x slower, runs once.
#
# What each command does, so the comparison is fair about work:
#   rttlab samples   decode, connections, seq/ts/syn samples, summaries; all samples to Parquet
#                    (written by the core's parquet crate, no pyarrow; CSV is formatted in Rust)
#   rttlab flows     the same analysis; connection summaries as JSON (samples streamed and dropped)
#   rttlab evaluate  the same analysis, then every estimator replayed (timer replay, W on real
#                    losses) over each connection's path-RTT series; JSON to /dev/null
#   core             the Rust analysis alone (examples/capture_stats.rs, --threads=N), no Python
#   tcptrace -n -l -r  per-connection long output with RTT statistics, to /dev/null
#   tshark           TCP sequence analysis with ack_rtt fields, to /dev/null
set -euo pipefail
cd "$(dirname "$0")/.."
CAP="${1:-/tmp/rttlab-big.pcap}"
RUNS="${RUNS:-5}"
PY="${PYTHON:-python3}"
RTTLAB="${RTTLAB:-rttlab}"
OUT="${TMPDIR:-/tmp}/rttlab-bench-samples.parquet"
# hyperfine rewrites its markdown export after each command: export to a file, print it once.
MD=$(mktemp)
trap 'rm -f "$MD"' EXIT
if [ ! -f "$CAP" ]; then
    "$PY" scripts/make_big_capture.py --size-gb 1.0 --out "$CAP"
fi
for tool in hyperfine tcptrace; do
    command -v "$tool" >/dev/null || { echo "$tool is missing: make bench-capture installs it (Debian package)"; exit 1; }
done
cargo build --quiet --release --example capture_stats
BIN=target/release/examples/capture_stats
FRAMES=$("$BIN" "$CAP" | sed -n 's/.*frames=\([0-9]*\).*/\1/p')
echo "capture: $CAP, $(stat -c %s "$CAP") bytes, $FRAMES frames; $(nproc) cores ($(lscpu | sed -n 's/^Model name: *//p')); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "## one core each (taskset -c 0)"
ONE="taskset -c 0"
hyperfine --warmup 1 --runs "$RUNS" -N --export-markdown "$MD" --style none \
    -n "rttlab samples -o .parquet" "$ONE $RTTLAB samples $CAP --method all -o $OUT" \
    -n "rttlab flows --json" "$ONE sh -c '$RTTLAB flows $CAP --json > /dev/null'" \
    -n "rttlab evaluate --json" "$ONE sh -c '$RTTLAB evaluate $CAP --json > /dev/null'" \
    -n "rttlab core (Rust only)" "$ONE $BIN $CAP" \
    -n "tcptrace -n -l -r" "$ONE sh -c 'tcptrace -n -l -r $CAP > /dev/null'" > /dev/null 2>&1; cat "$MD"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
# ROUNDS (default 1) repeats this block: this VM's speed drifts by 5-15 % over minutes, and the
# ratio within each round is what compares.
for round in $(seq "${ROUNDS:-1}"); do
echo "## rttlab on both cores (--threads 2: reading and decoding on a second thread), tcptrace on one (same invocation), round $round; load $(cut -d' ' -f1-3 /proc/loadavg)"
hyperfine --warmup 1 --runs "$RUNS" -N --export-markdown "$MD" --style none \
    -n "rttlab samples -o .parquet (2 cores)" "$RTTLAB samples $CAP --method all -o $OUT --threads 2" \
    -n "rttlab samples CSV to /dev/null (2 cores)" "sh -c '$RTTLAB samples $CAP --method all --threads 2 > /dev/null'" \
    -n "rttlab flows --json (2 cores)" "sh -c '$RTTLAB flows $CAP --json --threads 2 > /dev/null'" \
    -n "rttlab evaluate --json (2 cores)" "sh -c '$RTTLAB evaluate $CAP --json > /dev/null'" \
    -n "rttlab core (Rust only, 2 threads)" "$BIN $CAP --threads=2" \
    -n "tcptrace -n -l -r (1 core)" "$ONE sh -c 'tcptrace -n -l -r $CAP > /dev/null'" > /dev/null 2>&1; cat "$MD"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
done
echo
echo "## rttlab --help (start-up)"
hyperfine --warmup 3 --runs 20 -N --export-markdown "$MD" --style none -n "rttlab --help" "$RTTLAB --help" > /dev/null 2>&1; cat "$MD"
echo
echo "## CPU time (user+sys) and peak memory (max RSS), /usr/bin/time, one run each"
echo "(CPU seconds compare even on a loaded machine, where wall-clock ratios do not)"
for cmd in "$RTTLAB samples $CAP --method all -o $OUT --threads 1" "$RTTLAB samples $CAP --method all -o $OUT --threads 2" \
    "$RTTLAB samples $CAP --method all --threads 1" "$RTTLAB flows $CAP --json --threads 1" "$RTTLAB flows $CAP --json --threads 2" \
    "$RTTLAB evaluate $CAP --json" "$BIN $CAP" "$BIN $CAP --threads=2" "tcptrace -n -l -r $CAP"; do
    /usr/bin/time -f "%U user %S sys %e wall %M kB  $cmd" $cmd > /dev/null 2> >(tail -1 >&2)
done 2>&1
if command -v tshark >/dev/null && [ "${TSHARK:-1}" = 1 ]; then
    echo
    echo "## tshark (one run)"
    hyperfine --runs 1 -N --export-markdown "$MD" --style none -n "tshark ack_rtt fields" \
        "sh -c 'tshark -n -r $CAP -Y tcp.analysis.ack_rtt -T fields -e frame.number -e tcp.stream -e tcp.analysis.ack_rtt -e tcp.analysis.acks_frame > /dev/null'" > /dev/null 2>&1; cat "$MD"
fi
rm -f "$OUT"
