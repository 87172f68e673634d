#!/usr/bin/env bash
# Installs every Debian package Fathom's build, tests, benchmarks and comparisons need.
# Idempotent: installs only what is missing and runs `apt-get update` only when a package is
# unknown to apt or the package lists are older than a day. Works as root, or with sudo.
set -euo pipefail

PACKAGES=(
  # build
  bazel-bootstrap g++ pkg-config git
  # fabric
  libucx-dev ucx-utils libibverbs-dev
  # base, control plane
  libabsl-dev libgrpc++-dev protobuf-compiler-grpc protobuf-compiler libprotobuf-dev
  # membership and configuration
  libzookeeper-mt-dev zookeeper
  # SSD log
  librocksdb-dev
  # tests and benchmarks
  libbenchmark-dev libgtest-dev libgmock-dev
  # checksums; TLS for the control plane (test certificates); logs
  libxxhash-dev libssl-dev libspdlog-dev
  # the shipped binaries' malloc (platform/base:malloc)
  libjemalloc-dev
  # comparison baselines
  memcached redis-server libmemcached-dev libhiredis-dev
  # comparison plots (PNG)
  gnuplot-nox
  # used by tests and scripts (free ports, process control, network namespaces, scraping metrics,
  # cluster.sh --tls certificates)
  procps iproute2 python3 curl openssl
)

log() { echo "bootstrap: $*" >&2; }
die() { echo "bootstrap: error: $*" >&2; exit 1; }

command -v apt-get >/dev/null 2>&1 || die "apt-get not found: Fathom's set-up needs Debian 12 (bookworm)"

missing=()
for pkg in "${PACKAGES[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  log "all ${#PACKAGES[@]} packages already installed"
  exit 0
fi
log "missing packages: ${missing[*]}"

# Root is needed only to install.
if [[ "$(id -u)" -eq 0 ]]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1; then
  SUDO=(sudo)
else
  die "not root and sudo is not installed; run as root or install sudo (missing: ${missing[*]})"
fi

# Update the package lists only when they are stale or do not know a missing package.
lists_stale=1
if compgen -G "/var/lib/apt/lists/*_Packages" >/dev/null; then
  newest="$(stat -c %Y /var/lib/apt/lists/*_Packages | sort -n | tail -1)"
  (( $(date +%s) - newest < 86400 )) && lists_stale=0
fi
if [[ $lists_stale -eq 0 ]]; then
  for pkg in "${missing[@]}"; do
    if ! apt-cache show "$pkg" >/dev/null 2>&1; then lists_stale=1; break; fi
  done
fi
if [[ $lists_stale -eq 1 ]]; then
  log "running apt-get update"
  "${SUDO[@]}" apt-get update -q || die "apt-get update failed (is a Debian mirror reachable?)"
fi

export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" \
  || die "apt-get install failed for: ${missing[*]}"

# Debian's redis-server and memcached packages start system services; benchmarks start their own
# instances on free ports, so the system ones are left as the package configured them.
log "installed ${#missing[@]} packages"
