#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite (ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh
ctest --test-dir build --output-on-failure --timeout 900 "$@"
