#!/usr/bin/env bash
# Installs the Debian 12 packages rowprobe needs to build and test. Idempotent: packages that
# are already installed are skipped, and apt-get runs only when something is missing.
# Usage: scripts/setup.sh [--no-test-tools]
set -euo pipefail

build_pkgs=(build-essential cmake ninja-build pkg-config python3
            libpcap-dev libxxhash-dev libboost-program-options-dev libgtest-dev
            libdpdk-dev libndpi-dev libssl-dev zlib1g-dev librdkafka-dev ccache)
test_pkgs=(tshark libfixbuf-tools nfdump gnuplot-nox clang-format clang-tidy gzip iproute2 procps
           kcat mandoc rpm rpmlint
           man-db prometheus)  # packaging tests: man -l; promtool checks the --metrics text
# The fuzz stage of scripts/test.sh: clang with libFuzzer and the sanitizer runtimes.
test_pkgs+=(clang-14 libclang-rt-14-dev)
# The real-broker Kafka test (scripts/kafka-broker.sh): Java 17 runs Kafka 4, mvn fetches it.
test_pkgs+=(openjdk-17-jre-headless maven)
# Benchmarks (issue 11): rowprobe-bench-read's io_uring method (optional), scripts/profile.sh.
test_pkgs+=(liburing-dev linux-perf)
# Collector interop (issue 25): pmacct's nfacctd.
test_pkgs+=(pmacct)
# The ndpi plugin's references (issue 23): ndpiReader 4.2 re-makes the .out files it is compared
# with (../shared/testdata/ndpi-4.2/reproduce.sh) and those of further captures.
test_pkgs+=(libndpi-bin)
# flowstats against NFStream (issue 24): a venv for NFStream from PyPI (install_nfstream below).
test_pkgs+=(python3-venv)

want=("${build_pkgs[@]}")
if [[ "${1:-}" != "--no-test-tools" ]]; then
    want+=("${test_pkgs[@]}")
fi

# GoFlow2 (collector interop tests, issue 25) is a Go program: built from the Go module proxy
# where Go is present; without it those tests skip and say why.
if [[ "${1:-}" != "--no-test-tools" ]] && command -v go >/dev/null && ! command -v goflow2 >/dev/null \
    && [[ $(id -u) -eq 0 ]]; then
    echo "setup: go install goflow2 v2.2.6"
    GOBIN=/usr/local/bin go install github.com/netsampler/goflow2/v2/cmd/goflow2@v2.2.6 \
        || echo "setup: goflow2 not installed (its interop tests will skip)"
fi

# NFStream 6.6.0 (PyPI wheel) in ~/.cache/rowprobe-venv, not in the system Python (Debian 12's is
# externally managed): Groundtruth.FlowstatsEqualsNfstream and scripts/bench-nfstream.sh find it
# there (or through ROWPROBE_NFSTREAM_PYTHON) and skip without it.
install_nfstream() {
    [[ "${1:-}" == "--no-test-tools" ]] && return 0
    local venv=${ROWPROBE_VENV:-$HOME/.cache/rowprobe-venv}
    if "$venv/bin/python" -c 'import nfstream' 2>/dev/null; then return 0; fi
    echo "setup: pip install nfstream==6.6.0 into $venv"
    { /usr/bin/python3 -m venv "$venv" && "$venv/bin/pip" install -q nfstream==6.6.0; } \
        || echo "setup: NFStream not installed (its comparison test will skip)"
}

missing=()
for p in "${want[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
    echo "setup: all ${#want[@]} packages present"
    install_nfstream "${1:-}"
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
install_nfstream "${1:-}"
