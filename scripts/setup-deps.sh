#!/usr/bin/env bash
# Installs every Debian 12 package the build, the tests and the server need.
# Idempotent: skips apt entirely when everything is already present.
set -euo pipefail
PKGS=(
  g++ cmake ninja-build ccache pkg-config git python3 curl
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev
  libboost-dev prometheus-cpp-dev catch2 nlohmann-json3-dev libpcre2-dev
  clang libclang-rt-14-dev clang-19 libamdhip64-dev
  prometheus python3-yaml systemd
)
# The SDK client tests run the official npm packages; take Debian's Node.js only when the machine
# has none (a Node.js installed another way already brings npm, and Debian's npm would conflict).
if ! command -v npm >/dev/null 2>&1; then PKGS+=(nodejs npm); fi
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-deps: all ${#PKGS[@]} packages present"
  exit 0
fi
echo "setup-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
