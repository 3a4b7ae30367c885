#!/usr/bin/env bash
# Capture-reader throughput: rttlab (Rust core, and through Python) vs tshark and tcptrace, on
# the same large capture in the same run. Prints one line per tool; nothing is written to the repo.
#
#   bash scripts/bench_capture.sh [CAPTURE]
#
# CAPTURE defaults to /tmp/rttlab-big.pcap, built first by scripts/make_big_capture.py (>= 1 GB
# from ../shared/captures) if missing. Each tool runs REPEAT times (default 3); the best wall
# time counts (the machine is shared, the best run is the least disturbed one). Caches are warm:
# every tool reads the file from the page cache.
#
# What each tool does, so the comparison is fair about work:
#   rttlab      full job: decode, connections, seq/ts/syn samples, summaries (capture_stats example)
#   rttlab-py   the same through rttlab.read_capture (adds Python start-up, imports, DataFrames)
#   tshark      TCP sequence analysis with ack_rtt, fields written to /dev/null (-2 not used)
#   tcptrace    -n -l -r: long output with RTT statistics per connection, to /dev/null
set -euo pipefail
cd "$(dirname "$0")/.."
CAP="${1:-/tmp/rttlab-big.pcap}"
REPEAT="${REPEAT:-3}"
PY="${PYTHON:-python3}"
if [ ! -f "$CAP" ]; then
    "$PY" scripts/make_big_capture.py --size-gb 1.0 --out "$CAP"
fi
cargo build --quiet --release --example capture_stats
BIN=target/release/examples/capture_stats
FRAMES=$("$BIN" "$CAP" | sed -n 's/.*frames=\([0-9]*\).*/\1/p')
SIZE=$(stat -c %s "$CAP")
echo "capture: $CAP, $SIZE bytes, $FRAMES frames; best of $REPEAT runs; $(nproc) cores"

best() { # best wall time (s) of REPEAT runs of "$@"
    local b=""
    for _ in $(seq "$REPEAT"); do
        local t0 t1 s
        t0=$(date +%s.%N)
        "$@" >/dev/null 2>&1
        t1=$(date +%s.%N)
        s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
        if [ -z "$b" ] || awk -v s="$s" -v b="$b" 'BEGIN { exit !(s < b) }'; then b=$s; fi
    done
    echo "$b"
}

report() { # name seconds
    awk -v n="$1" -v s="$2" -v f="$FRAMES" -v z="$SIZE" 'BEGIN { printf "%-10s %8.3f s  %6.2f M packets/s  %7.1f MB/s\n", n, s, f / s / 1e6, z / s / 1e6 }'
}

report rttlab "$(best "$BIN" "$CAP")"
if "$PY" -c "import rttlab.capture" 2>/dev/null; then
    report rttlab-py "$(best "$PY" -c "import sys, rttlab; rttlab.read_capture(sys.argv[1])" "$CAP")"
    printf '%-10s %8.3f s  (interpreter start and imports, included in rttlab-py)\n' py-import "$(best "$PY" -c "import rttlab")"
else
    echo "rttlab-py  skipped: the Python package is not installed (make install)"
fi
if command -v tshark >/dev/null; then
    report tshark "$(REPEAT=1 best tshark -n -r "$CAP" -Y tcp.analysis.ack_rtt -T fields -e frame.number -e tcp.stream -e tcp.analysis.ack_rtt -e tcp.analysis.acks_frame)"
else
    echo "tshark     skipped: not installed (apt-get install tshark)"
fi
if command -v tcptrace >/dev/null; then
    report tcptrace "$(REPEAT=1 best tcptrace -n -l -r "$CAP")"
else
    echo "tcptrace   skipped: not installed (apt-get install tcptrace)"
fi
