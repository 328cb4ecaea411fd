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

# Base URI of the Debian archive this machine's apt already uses (debian_uri RELEASE: the one
# serving that release, e.g. bookworm-security; bookworm by default).
debian_uri() {
  apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 'Identifier: Packages' 2>/dev/null |
    awk -v r="${1:-bookworm}" '$2 == r {print $1; exit}' | sed 's|/$||'
}

# apt-get/apt-cache options for one Debian suite and arch in a private state directory under
# the cache: the machine's own apt sources are left as they are. apt_suite_init SUITE ARCH
# sets the array apt_suite_opts (usage: apt-get "${apt_suite_opts[@]}" update). ARCH may list
# several, comma-separated, the first the default (a foreign kernel's packages beside the
# host's own linux-kbuild: "amd64,arm64", then name them pkg:arm64). SUITE bookworm also
# reads bookworm-updates and bookworm-security, where Debian 12's current kernel is.
apt_suite_init() {
  local suite=$1 arch=$2 dir=$OKP_CACHE/apt/$1-$2 uri sec opt
  uri=$(debian_uri)
  [ -n "$uri" ] || { log "no bookworm source in this machine's apt lists"; return 1; }
  # A security suite (trixie-security) is served where bookworm-security is.
  case "$suite" in *-security) uri=$(debian_uri bookworm-security); uri=${uri:-http://deb.debian.org/debian-security} ;; esac
  # One run at a time per state directory, until this run exits: a second apt-get update on
  # the same lists fails at apt's own lock instead of waiting for it.
  cache_lock "$(cache_lock_name "$dir")" "the apt state for $suite ($arch)"
  mkdir -p "$dir/lists/partial" "$dir/archives/partial" "$dir/etc"
  touch "$dir/status"
  opt="[arch=$arch signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]"
  echo "deb $opt $uri $suite main" > "$dir/etc/sources.list"
  if [ "$suite" = bookworm ]; then
    echo "deb $opt $uri bookworm-updates main" >> "$dir/etc/sources.list"
    sec=$(debian_uri bookworm-security)
    [ -n "$sec" ] || sec=http://deb.debian.org/debian-security
    echo "deb $opt $sec bookworm-security main" >> "$dir/etc/sources.list"
  fi
  apt_suite_opts=(-o "Dir::State::Lists=$dir/lists" -o "Dir::State::status=$dir/status"
    -o "Dir::Cache::archives=$dir/archives" -o "Dir::Etc::SourceList=$dir/etc/sources.list"
    -o "Dir::Etc::SourceParts=/nonexistent" -o "APT::Architecture=${arch%%,*}" -o "APT::Architectures=$arch"
    -o "APT::Sandbox::User=root" -o "APT::Update::Error-Mode=any")
  # (Error-Mode=any: an index that failed to download fails apt-get update, instead of a
  # warning and an exit status of 0 that leaves no index behind.)
}

# Debian's stock kernels okprobes is tested on, by KERNEL name (and arch):
#   debian          Debian 12's 6.1: amd64 (headers installed on this machine, see scripts/setup),
#                   arm64 (the same ABI number as the amd64 one, see stock_abi)
#   debian-6.12     bookworm-backports' 6.12 (generic flavour), amd64 and arm64
#   debian-6.12-rt  bookworm-backports' 6.12, PREEMPT_RT flavour, amd64 and arm64
#   debian-6.12     riscv64 too: Debian 13's own 6.12 riscv64 kernel (riscv64 is not a Debian 12
#                   architecture), the newest 6.12 ABI that trixie-security, trixie, forky or sid
#                   serve (scripts/fetch-stock-kernel records which in the entry's .okp-suite)
#   debian-7.2      riscv64: the newest riscv64 kernel line the mirror serves (forky's and sid's
#                   7.2 in November 2026), fetched the same way
# All but the amd64 6.1 are unpacked, headers and image, into $OKP_CACHE/stock/<abi>/ by
# scripts/fetch-stock-kernel (the headers package depends on its image, so it is not installed
# on this machine). stock_abi_pattern KERNEL [ARCH] is the glob of that kernel's ABI names.
stock_abi_pattern() {
  case "$1 ${2:-x86_64}" in
    "debian-6.12 x86_64") echo '6.12.*+deb12-amd64' ;;
    "debian-6.12-rt x86_64") echo '6.12.*+deb12-rt-amd64' ;;
    "debian arm64") echo '6.1.0-*-arm64' ;;
    "debian-6.12 arm64") echo '6.12.*+deb12-arm64' ;;
    "debian-6.12-rt arm64") echo '6.12.*+deb12-rt-arm64' ;;
    "debian-6.12 riscv64") echo '6.12.*+deb1[3-9]-riscv64' ;;
    "debian-7.2 riscv64") echo '7.2.*+deb1[4-9]-riscv64' ;;
    *) return 1 ;;
  esac
}
# The newest complete cache entry of such a stock kernel, or nothing.
stock_cached_abi() {
  local pat d
  pat=$(stock_abi_pattern "$1" "${2:-x86_64}") || return 1
  for d in "$OKP_CACHE"/stock/$pat; do
    if [ -f "$d/.okp-complete" ]; then basename "$d"; fi
  done | sort -V | tail -1
}
# The amd64 backports kernels by their former names.
stock_bpo_abi_pattern() { stock_abi_pattern "$1" x86_64; }
stock_bpo_cached_abi() { stock_cached_abi "$1" x86_64; }

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

# ticker_start SECONDS COMMAND...: runs COMMAND (to stderr) every SECONDS in the background
# until ticker_stop, so a long step shows it is alive. Its sleep dies with it: an orphaned
# sleep would keep this run's stdout open (a caller's $(...) would wait for it) and the cache
# lock held, for up to SECONDS after the step ended.
ticker_start() {
  local every=$1; shift
  ( trap 'kill $s 2>/dev/null; exit 0' TERM
    while :; do sleep "$every" & s=$!; wait $s; "$@"; done ) >&2 &
  okp_ticker=$!
}
ticker_stop() {
  [ -z "${okp_ticker:-}" ] || { kill "$okp_ticker" 2>/dev/null; wait "$okp_ticker" 2>/dev/null; okp_ticker=; }
  return 0
}

# --- Cache entries shared by concurrent runs ---
# Two runs may share $OKP_CACHE at once (two clones, a `make run` beside a `make check`, two CI
# jobs on one runner), so every entry is made by one run at a time: the maker holds an
# exclusive flock on $OKP_CACHE/.locks/NAME.lock, and a run that needs the same entry waits
# for it, saying so, then finds it made instead of making it again. Entries are assembled in
# a dot-named scratch directory beside their final name (never matched by the globs that look
# for entries) and renamed into place when whole, so an interrupted run leaves nothing that
# looks complete; the next maker, holding the lock, removes what it left.

# cache_lock NAME WHAT: returns holding the lock NAME (released by cache_unlock NAME or when
# this shell and the children it started while holding it have exited). WHAT says what is
# being made, for the message a waiting run prints.
cache_lock() {
  local name=$1 what=$2 f fd waited=0 holder var
  var=okp_lock_fd_${name//[^A-Za-z0-9_]/_}
  [ -z "${!var:-}" ] || return 0  # already held by this shell
  mkdir -p "$OKP_CACHE/.locks"
  f=$OKP_CACHE/.locks/$name.lock
  # Opened read-write without truncating: the holder's note in it stays for waiters to read.
  exec {fd}<>"$f"
  if ! flock -n "$fd"; then
    holder=$(cat "$f" 2>/dev/null || true)
    log "another okprobes run${holder:+ ($holder)} is making $what; waiting for it (lock: $f)"
    # A message a minute, so a long wait (a kernel build) never looks like a hang.
    until flock -w 60 "$fd"; do
      waited=$((waited + 60)); log "  still waiting for $what: $waited s"
    done
    log "  done waiting for $what"
  fi
  echo "pid $BASHPID, since $(date +%T)" > "$f"
  printf -v "$var" %s "$fd"
}
cache_unlock() { # NAME
  local var=okp_lock_fd_${1//[^A-Za-z0-9_]/_}
  [ -n "${!var:-}" ] || return 0
  flock -u "${!var}"; eval "exec ${!var}>&-"; unset "$var"
}

# The lock name of a cache entry: its path under $OKP_CACHE, '/' spelt '+'.
cache_lock_name() { local rel=${1#"$OKP_CACHE"/}; echo "${rel//\//+}"; }

# cache_entry DEST MARKER WHAT BUILDER [ARGS...]: makes the cache entry DEST unless DEST/MARKER
# exists (MARKER: a path inside the entry that only a whole entry has; "." for an entry that
# was only ever published by rename). Under DEST's lock, BUILDER ARGS... SCRATCH fills SCRATCH,
# a fresh directory beside DEST; SCRATCH is renamed to DEST once BUILDER returned and
# SCRATCH/MARKER exists. Call it where `set -e` holds (not in an if, || or &&): a failing
# BUILDER then ends the script, its scratch left for its logs, and the lock is released.
cache_entry() {
  local dest=$1 marker=$2 what=$3 name scratch; shift 3
  [ -e "$dest/$marker" ] && return 0
  name=$(cache_lock_name "$dest")
  cache_lock "$name" "$what"
  if [ ! -e "$dest/$marker" ]; then
    # What an interrupted maker left: its scratch, or an entry without its marker (okprobes
    # before this lock built test kernels in place). Nobody else makes it: the lock is ours.
    rm -rf "$dest" "$(dirname "$dest")/.$(basename "$dest").tmp."*
    mkdir -p "$(dirname "$dest")"
    scratch=$(mktemp -d "$(dirname "$dest")/.$(basename "$dest").tmp.XXXXXX")
    chmod 755 "$scratch"  # as mkdir would make it, not mktemp's 0700
    "$@" "$scratch"
    [ -e "$scratch/$marker" ] || die "making $what left no $marker in $scratch"
    mv -T "$scratch" "$dest"
  fi
  cache_unlock "$name"
}

# cache_remove DEST: removes a superseded entry, unless another run holds its lock (it is
# making it right now); then it stays, for a later run to remove. (Lock files are never
# removed: a run that opened one just before would lock a file no later run sees.)
cache_remove() {
  local f fd
  mkdir -p "$OKP_CACHE/.locks"
  f=$OKP_CACHE/.locks/$(cache_lock_name "$1").lock
  exec {fd}<>"$f"
  if flock -n "$fd"; then
    rm -rf "$1" "$(dirname "$1")/.$(basename "$1").tmp."*
  fi
  eval "exec $fd>&-"
}
