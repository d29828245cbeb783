#!/usr/bin/env bash
# The main job: install what is missing, build (Release), run the benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh build
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
if [ -x build/src/app/vnic ]; then
	build/src/app/vnic bench rr --duration 3
	build/src/app/vnic bench stream --duration 3
else
	# Until the vNIC exists, the main job is the packet-library benchmark.
	build/bench/bench_csum
	build/bench/bench_gso
	build/bench/bench_gro
fi
