#!/usr/bin/env bash
# Compile dumbbell.cc against the ns-3 that the PyPI wheel `ns3` ships (headers + shared
# libraries), into ${1:-build/ns3-dumbbell}. Needs g++ and `pip install ns3` (rttlab[ns3]).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-"$here/../../build/ns3-dumbbell"}
root=$(python3 -c 'import importlib.util, os; s = importlib.util.find_spec("ns3") or importlib.util.find_spec("ns"); print(os.path.dirname(s.origin) if s.origin else list(s.submodule_search_locations)[0])')
[ -d "$root/include" ] || root=$(dirname "$root")
[ -d "$root/include" ] || { echo "build.sh: ns-3 headers not found under the ns3 wheel ($root); pip install ns3" >&2; exit 1; }
libs=(core network internet point-to-point point-to-point-layout applications traffic-control stats mobility bridge)
mkdir -p "$(dirname "$out")"
g++ -std=c++20 -O2 -DNS3_LOG_ENABLE=0 -I"$root/include" "$here/dumbbell.cc" -o "$out" \
    -L"$root/lib64" $(printf -- '-lns3.44-%s ' "${libs[@]}") -Wl,-rpath,"$root/lib64"
echo "$out"
