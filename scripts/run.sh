#!/usr/bin/env bash
# The main job: install what is missing, build (Release), run the benchmark:
# `vnic bench rr` and `vnic bench stream` across two vNICs on an in-process
# cable, a few seconds each. No root needed past the package install.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh build
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
build/src/app/vnic bench rr --sessions 150 --duration 3
echo
build/src/app/vnic bench stream --duration 3
