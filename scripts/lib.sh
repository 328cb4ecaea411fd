# Shared helpers for okprobes' scripts (sourced).
OKP_CACHE=${OKP_CACHE:-$HOME/.cache/okprobes}
OKP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export OKP_CACHE OKP_ROOT

log() { printf '[okprobes] %s\n' "$*" >&2; }
die() { printf '[okprobes] error: %s\n' "$*" >&2; exit 1; }

# Runs a download step up to 3 times with a growing pause: the mirror may be mid-sync
# ("File has unexpected size ... Mirror sync in progress?") or briefly unreachable.
retry() {
  local try
  for try in 1 2 3; do
    "$@" && return 0
    [ $try = 3 ] || { log "retrying in $((try * 15)) s (attempt $((try + 1)) of 3): $*"; sleep $((try * 15)); }
  done
  return 1
}

# ABI name of Debian 12's current stock amd64 kernel, e.g. 6.1.0-56-amd64.
stock_abi() {
  local dep
  dep=$(apt-cache depends linux-headers-amd64 2>/dev/null | sed -n 's/.*Depends: linux-headers-\(6\.1\.0-[0-9]*-amd64\)$/\1/p' | head -1)
  [ -n "$dep" ] || dep=$(ls -d /usr/src/linux-headers-6.1.0-*-amd64 2>/dev/null | sort -V | tail -1 | sed 's|.*/linux-headers-||')
  [ -n "$dep" ] || die "cannot find Debian's stock kernel ABI (run scripts/setup)"
  echo "$dep"
}

# Base URI of the Debian archive this machine's apt already uses.
debian_uri() {
  apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 'Identifier: Packages' 2>/dev/null |
    awk '$2 ~ /^bookworm$/ {print $1; exit}' | sed 's|/$||'
}

# Canonical arch name (x86_64, arm64, riscv64) from any common spelling.
okp_arch() {
  case "${1:-x86_64}" in
    x86|x86_64|amd64) echo x86_64 ;;
    arm64|aarch64) echo arm64 ;;
    riscv|riscv64) echo riscv64 ;;
    *) die "unknown arch '$1' (x86_64, arm64, riscv64)" ;;
  esac
}
# The kernel's ARCH= and CROSS_COMPILE= for a canonical arch.
kbuild_arch() { case "$1" in x86_64) echo x86_64 ;; arm64) echo arm64 ;; riscv64) echo riscv ;; esac; }
cross_compile() { case "$1" in x86_64) echo "" ;; arm64) echo aarch64-linux-gnu- ;; riscv64) echo riscv64-linux-gnu- ;; esac; }
