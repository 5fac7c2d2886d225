#!/usr/bin/env bash
# Installs the Debian 12 packages rowprobe needs to build and test. Idempotent: packages that
# are already installed are skipped, and apt-get runs only when something is missing.
# Usage: scripts/setup.sh [--no-test-tools]
set -euo pipefail

build_pkgs=(build-essential cmake ninja-build pkg-config python3
            libpcap-dev libxxhash-dev libboost-program-options-dev libgtest-dev
            libdpdk-dev libndpi-dev libssl-dev zlib1g-dev librdkafka-dev ccache)
test_pkgs=(tshark libfixbuf-tools nfdump gnuplot-nox clang-format clang-tidy gzip iproute2 procps
           kcat mandoc rpm rpmlint)
test_pkgs+=(clang-14 libclang-rt-14-dev)  # libFuzzer targets in tests/fuzz (l7parsers)

want=("${build_pkgs[@]}")
if [[ "${1:-}" != "--no-test-tools" ]]; then
    want+=("${test_pkgs[@]}")
fi

missing=()
for p in "${want[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
    echo "setup: all ${#want[@]} packages present"
    exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then
    sudo="sudo"
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer once, non-interactively.
echo "wireshark-common wireshark-common/install-setuid boolean false" | $sudo debconf-set-selections
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
