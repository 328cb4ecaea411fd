# Guest script (busybox sh, x86-64): recursion, NMIs and faults in handlers (issue 15), with
# okp_recursion.ko in /okp (tests/vm/modules/recursion.c). The module runs every check at load
# and prints "OKP-RECURSION: ok - ..." lines, numbered here as TAP: a handler that calls its
# own probed function, one that takes a spinlock under a probe on _raw_spin_lock, one that
# calls printk under a probe on vprintk (nested hits are re-entry misses, outer hits exact),
# hits from NMI context and NMIs inside handlers, nofault reads that fault in a handler, the
# NMI entry refused, return probes whose handlers call their function and return probes in
# NMIs. Run twice: jump optimization off (breakpoints), then on (jumps).
# Standalone, or appended to probes.sh in the same boot (it then continues its numbering).
# Prints TAP lines; exits non-zero if any check failed.
n=${n:-0} failed=${failed:-0}
check() { # description, then a command
  desc=$1; shift; n=$((n + 1))
  if "$@" >/dev/null 2>&1; then echo "ok $n - $desc"; else echo "not ok $n - $desc"; failed=$((failed + 1)); fi
}
d=/sys/kernel/debug/okprobes
opt=/proc/sys/debug/okprobes-optimization
opt_before=$(cat $opt)
for o in 0 1; do
  echo $o > $opt
  dmesg -c > /dev/null
  insmod /okp/okp_recursion.ko optimized=$o
  check "recursion (optimization $o): okp_recursion loads and runs to the end" \
    sh -c "dmesg | grep -q OKP-RECURSION-END"
  dmesg | sed -n 's/.*OKP-RECURSION: //p' > /tmp/recursion.tap
  check "recursion (optimization $o): the module reported checks ($(grep -c . /tmp/recursion.tap))" \
    [ "$(grep -c . /tmp/recursion.tap)" -gt 30 ]
  while read -r line; do
    n=$((n + 1))
    case "$line" in
      not*) failed=$((failed + 1)); echo "not ok $n - (optimization $o) ${line#not ok - }" ;;
      *) echo "ok $n - (optimization $o) ${line#ok - }" ;;
    esac
  done < /tmp/recursion.tap
  # The probe left registered: debugfs `list` shows the struct's counts, misses by cause too.
  set -- $(dmesg | sed -n 's/.*OKP-RECURSION-LIST \([^ ]*\) hits=\([0-9]*\) nmissed=\([0-9]*\) reentry=\([0-9]*\).*/\1 \2 \3 \4/p')
  grep okp_recursion $d/list | sed 's/^/# list: /'
  check "recursion (optimization $o): debugfs list shows $1 [okp_recursion] hits=$2 nmissed=$3 missed_reentry=$4" \
    sh -c "grep -F '  k  ${1:-none} [okp_recursion]' $d/list | grep -Eq ' hits=${2:-x} nmissed=${3:-x} missed_reentry=${4:-x} missed_disabled=0 missed_fault=0( |\$)'"
  rmmod okp_recursion
  check "recursion (optimization $o): nothing of okp_recursion left in list" \
    sh -c "! grep -q okp_recursion $d/list"
done
echo "$opt_before" > $opt
echo "1..$n"
[ $failed = 0 ]
