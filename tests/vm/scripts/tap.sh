# Sourced by the guest scripts (". /okp/tap.sh"; tests/vm/run-guest ships it to every guest):
# TAP output and the small tests they share. Each check prints "ok N - DESCRIPTION" or
# "not ok N - DESCRIPTION"; failed counts the latter, for the script's exit status.
n=${n:-0} failed=${failed:-0}  # sourced again by an appended script: numbering and failures go on
check() { # description, then a command
  desc=$1; shift; n=$((n + 1))
  if "$@" >/dev/null 2>&1; then echo "ok $n - $desc"; else echo "not ok $n - $desc"; failed=$((failed + 1)); fi
}
is() { [ "$1" = "$2" ]; }
# rmmod, waiting while the module says it is in use: okprobes holds itself while a frame may
# still return through a return stub of a removed return probe (docs/api.md), a second or two
# after the last one has; a client's reference is not waited for long either.
rmmod_wait() {
  _i=0
  until rmmod "$1" 2>/tmp/okp-rmmod.err; do
    _i=$((_i + 1))
    if ! grep -Eq 'temporarily unavailable|in use' /tmp/okp-rmmod.err || [ $_i -ge 150 ]; then
      cat /tmp/okp-rmmod.err >&2; return 1
    fi
    sleep 0.2
  done
}
gt() { [ "${1:-0}" -gt "$2" ]; }
ge() { [ "${1:-0}" -ge "$2" ]; }
# One stress module's run as one check (tests/vm/modules/stress.c, retstress.c; probes.sh and
# stress_riscv.sh): loads /okp/MODULE.ko with ARGS, prints the verdict line it logged (TAG:
# PASS or TAG: FAIL and why), checks it passed and unloads the module.
stress_check() { # description module tag insmod-args...
  stress_desc=$1 stress_mod=$2 stress_tag=$3; shift 3
  insmod /okp/$stress_mod.ko "$@"
  line=$(dmesg | grep $stress_tag | tail -1); echo "$line"
  check "$stress_desc" sh -c "echo '$line' | grep -q '$stress_tag: PASS'"
  rmmod $stress_mod
}
