#!/usr/bin/env bash
# Installs what is missing, builds, runs every test and ends with CTest's summary.
# Usage: scripts/test.sh [BUILD_DIR [extra cmake args...]]
#   scripts/test.sh                                   Debug build in build-test/
#   scripts/test.sh build-asan -DVNIC_SANITIZE=address
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh test
dir=${1:-build-test}
shift || true
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)"
ctest --test-dir "$dir" --output-on-failure -j"$(nproc)"
