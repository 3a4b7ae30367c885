#!/usr/bin/env bash
# Fingerprint every example scenario (with and without SACK, plus variants) for a bit-identity
# check across a simulator refactoring: `scripts/sim_fingerprint.sh OUT.txt`, then diff two outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --quiet --release --example sim_fingerprint
./target/release/examples/sim_fingerprint > "${1:-/dev/stdout}"
