#!/usr/bin/env bash
# Installs what is missing (Debian 12, apt-get; python3-torch and python3-torchvision for the
# PyTorch DDP support and its tests against real DDP) and builds autotune into build/.
# Usage: tools/setup.sh            (idempotent; a second run only rebuilds what changed)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake pkg-config libopenmpi-dev openmpi-bin libsqlite3-dev sqlite3
          nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libgtest-dev libgmock-dev
          libbenchmark-dev libeigen3-dev libnlopt-cxx-dev libnlopt-dev libboost-dev iproute2
          util-linux procps chromium python3-torch python3-torchvision python3-yaml ccache)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# npm (with node) when missing: its nodejs may come from elsewhere than Debian.
if ! command -v npm >/dev/null; then
  echo "setup: installing npm"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    npm >/dev/null
fi

# The report's plotting scripts (tools/report/web, pinned by its package-lock.json) into
# build/report-web/node_modules, where the build embeds them into the binary.
web=build/report-web
mkdir -p "$web"
if ! cmp -s tools/report/web/package-lock.json "$web/package-lock.json" || \
   [ ! -f "$web/node_modules/vega-embed/build/vega-embed.min.js" ]; then
  cp tools/report/web/package.json tools/report/web/package-lock.json "$web/"
  (cd "$web" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
fi

# ccache (Debian's) under every compiler: a rebuild, another worktree's build or the
# sanitizer builds of tools/sanitize.sh reuse what was compiled before with the same flags.
export CCACHE_BASEDIR="$PWD"
started=$SECONDS
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo $(tools/ccache_flags.sh) >/dev/null
cmake --build build -j"$(nproc)"
echo "setup: built build/autotune ($((SECONDS - started)) s; installing took $((started)) s)"
