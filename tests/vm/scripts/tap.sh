# Sourced by the guest scripts (". /okp/tap.sh"; tests/vm/run-guest ships it to every guest):
# TAP output and the small tests they share. Each check prints "ok N - DESCRIPTION" or
# "not ok N - DESCRIPTION"; failed counts the latter, for the script's exit status.
n=0 failed=0
check() { # description, then a command
  desc=$1; shift; n=$((n + 1))
  if "$@" >/dev/null 2>&1; then echo "ok $n - $desc"; else echo "not ok $n - $desc"; failed=$((failed + 1)); fi
}
is() { [ "$1" = "$2" ]; }
gt() { [ "${1:-0}" -gt "$2" ]; }
ge() { [ "${1:-0}" -ge "$2" ]; }
