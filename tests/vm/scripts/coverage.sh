# Guest script (busybox sh, x86-64): jump-optimization coverage, okprobes against the kernel's
# own kprobes (okp_sweep.ko coverage=1, tests/vm/modules/sweep_coverage.c). Every instruction
# boundary of every COV_STRIDE-th vmlinux function is registered with okprobes, then with the
# kernel, in batches of boundaries at least 32 bytes apart per function; the module counts
# what each framework optimized. Prints the module's OKP-COVERAGE report and TAP lines; exits
# non-zero if a check failed.
#
# Settings (the host prepends them): COV_STRIDE (every k-th function), COV_MAX_FUNCS (0: no
# limit), COV_START (index or name), COV_MIN_FUNCS (the "ran over" check), COV_ARGS (more
# insmod parameters: gap=, batch_max=, kwait_ms=), COV_WORKLOAD (1: a workload runs through
# okprobes' optimized probes in every batch).
: "${COV_STRIDE:=80}" "${COV_MAX_FUNCS:=0}" "${COV_START:=}" "${COV_MIN_FUNCS:=500}"
: "${COV_ARGS:=}" "${COV_WORKLOAD:=1}"
. /okp/tap.sh	# n, failed, check, is, gt, ge
s=/sys/kernel/debug/okp_sweep
kopt=/proc/sys/debug/kprobes-optimization
klist=/sys/kernel/debug/kprobes/list
field() { sed -n "s/^/ /; s/.* $1=\([0-9-]*\).*/\1/p" "$2" | head -1; } # name file: the value of name=N

splat='(Oops|BUG:|WARNING:|Kernel panic|KASAN:|kmemleak: .*new suspected|unreferenced object|possible circular locking|possible recursive locking|inconsistent lock state|INFO: task .* blocked|general protection fault|Unable to handle kernel|UBSAN:|Call Trace:)'

workload() {
  ls /proc/self/ > /dev/null &&
  sh -c true &&
  find /sys -maxdepth 2 > /dev/null &&
  echo cov > /tmp/cov.f && cat /tmp/cov.f > /dev/null && rm /tmp/cov.f &&
  cat /proc/self/status /proc/meminfo /proc/interrupts > /dev/null &&
  dd if=/dev/zero of=/dev/null bs=4k count=64 2> /dev/null &&
  ps > /dev/null && sleep 0
}

check "the kernel has jump-optimized kprobes ($kopt is $(cat $kopt 2>/dev/null))" is "$(cat $kopt 2>/dev/null)" 1
taint0=$(cat /proc/sys/kernel/tainted)
printk0=$(cut -f1 /proc/sys/kernel/printk)
dmesg -c > /dev/null
dmesg -n 1	# okprobes logs every refusal; the kernel each sysctl write
kmsg_splats=0
scan_kmsg() {
  dmesg -c > /tmp/kmsg
  if grep -Eq "$splat" /tmp/kmsg; then
    kmsg_splats=$((kmsg_splats + 1))
    echo "OKP-COVERAGE: kernel log after batch $batch:"; grep -E -B2 -A30 "$splat" /tmp/kmsg | head -80
  fi
}
new_taint() { echo $(( $(cat /proc/sys/kernel/tainted) & ~taint0 )); }

t_start=$(date +%s)
insmod /okp/okp_sweep.ko coverage=1 stride="$COV_STRIDE" max_funcs="$COV_MAX_FUNCS" \
  ${COV_START:+start=$COV_START} $COV_ARGS
check "okp_sweep loads in coverage mode" test -e $s/kregister
stext=$(awk '$3 == "_stext" { print $1 }' /proc/kallsyms)
etext=$(awk '$3 == "_etext" { print $1 }' /proc/kallsyms)
awk -v s="$stext" -v e="$etext" 'NF == 3 && ($2 == "t" || $2 == "T") && ($1 "") >= s && ($1 "") < e' \
  /proc/kallsyms > $s/funcs
funcs=$(field funcs $s/state)
echo "OKP-COVERAGE: $funcs functions ($stext-$etext, stride $COV_STRIDE)"

batch=0 step_fail=0 wl_runs=0 wl_fail=0 list_bad=0 taint_bad=0
step() { # file: one step of the batch
  echo 1 > $s/$1 && return 0
  step_fail=$((step_fail + 1))
  echo "OKP-COVERAGE: batch $batch: writing $1 failed: $(grep 'note FAILURE' $s/report | tail -1)"
  return 1
}
while :; do
  batch=$((batch + 1))
  step run || { echo 1 > $s/release; break; }
  if [ "$COV_WORKLOAD" = 1 ]; then
    if workload; then wl_runs=$((wl_runs + 1)); else wl_fail=$((wl_fail + 1)); fi
  fi
  step release || break
  # The kernel queues what it can optimize when the sysctl goes back to 1: one optimizer pass.
  echo 0 > $kopt
  step kregister || { echo 1 > $kopt; break; }
  echo 1 > $kopt
  step kwait || break
  # The module's count against the kernel's own list: [OPTIMIZED] is the aggregate's flag.
  cat $s/state > /tmp/state
  listed=$(grep -c 'OPTIMIZED' $klist)
  if [ "$listed" != "$(field kernel_flagged /tmp/state)" ]; then
    list_bad=$((list_bad + 1))
    echo "OKP-COVERAGE: batch $batch: $klist has $listed [OPTIMIZED], the module counted $(field kernel_flagged /tmp/state)"
  fi
  step krelease || break
  scan_kmsg
  tb=$(new_taint)
  if [ "$tb" != 0 ]; then
    taint_bad=$((taint_bad + 1)); echo "OKP-COVERAGE: batch $batch: new taint flags $tb"
    dmesg | grep -v 'okprobes: refused probe at ' | tail -100
    break
  fi
  cat $s/state > /tmp/state
  [ $((batch % 10)) = 0 ] && echo "OKP-COVERAGE: batch $batch, $(cat /tmp/state), $(($(date +%s) - t_start)) s"
  [ "$(field done /tmp/state)" -lt "$funcs" ] || break
done
t_all=$(($(date +%s) - t_start))
dmesg -n "$printk0"
cat $s/report > /tmp/report
cat /tmp/report
cat $s/state > /tmp/state
echo "OKP-COVERAGE: time ${t_all} s, $batch batches, workload ran $wl_runs times"

check "coverage ran over >= $COV_MIN_FUNCS functions ($(field funcs /tmp/report) done)" \
  ge "$(field funcs /tmp/report)" "$COV_MIN_FUNCS"
check "every selected function was measured" is "$(field done /tmp/state)" "$funcs"
check "every step of every batch worked ($step_fail failed)" is "$step_fail" 0
check "the kernel's [OPTIMIZED] list agreed with the module's count in every batch ($list_bad did not)" \
  is "$list_bad" 0
[ "$COV_WORKLOAD" = 1 ] &&
  check "the workload ran through okprobes' optimized probes ($wl_runs runs, $wl_fail failed)" \
    sh -c "[ $wl_runs -gt 0 ] && [ $wl_fail = 0 ]"
check "okprobes optimized probes ($(field okp_optimized /tmp/report))" ge "$(field okp_optimized /tmp/report)" 1
check "no splat in the kernel log" is "$kmsg_splats" 0
check "no new taint flag" is "$taint_bad" 0
check "no probe left in /sys/kernel/debug/okprobes/list" sh -c "[ ! -s /sys/kernel/debug/okprobes/list ]"
check "no kernel kprobe left in $klist" sh -c "[ ! -s $klist ]"
check "the module's verdict is PASS (no failed check inside: $(field failures /tmp/report) failures)" \
  grep -q '^OKP-COVERAGE: PASS ' /tmp/report
check "okp_sweep unloads" rmmod okp_sweep
check "the kernel is whole: the workload runs after everything was unregistered" workload
check "still no new taint flag" is "$(new_taint)" 0

echo "OKP-COVERAGE: $n checks, $failed failed"
[ "$failed" = 0 ]
