# Guest script (busybox sh, x86-64): the reliability sweep (tests/vm/modules/sweep.c). A probe
# is tried at every byte offset of every SWEEP_STRIDE-th vmlinux function; the kernel's own
# decoder says which offsets are instruction boundaries. Batches of accepted probes stay armed
# while a workload runs, then are unregistered. Prints the module's OKP-SWEEP tables and TAP
# lines; exits non-zero if any check failed.
#
# Settings (the host prepends them, as tests/check does): SWEEP_STRIDE (every k-th function),
# SWEEP_MAX_FUNCS (0: no limit), SWEEP_START (index or name), SWEEP_MIN_FUNCS (the "ran over"
# check), SWEEP_ARGS (more insmod parameters, e.g. max_armed=1000), SWEEP_BG (1: the workload
# also runs in a loop in the background for the whole sweep, registration included).
: "${SWEEP_STRIDE:=150}" "${SWEEP_MAX_FUNCS:=0}" "${SWEEP_START:=}" "${SWEEP_MIN_FUNCS:=100}"
: "${SWEEP_ARGS:=}" "${SWEEP_BG:=0}"
# SWEEP_RETURN (1: return probes on every sampled function, sweep_return.c), SWEEP_DECODE (1:
# Zydis against the kernel's decoder on every instruction of vmlinux text, sweep_decode.c).
: "${SWEEP_RETURN:=1}" "${SWEEP_DECODE:=1}"
# SWEEP_OPTIMIZE (1: in every batch, after the workload ran through the probes as registered,
# wait for okprobes' jump optimizer and run the workload again through the optimized ones,
# sweep_optimize.c).
: "${SWEEP_OPTIMIZE:=1}"
. /okp/tap.sh	# n, failed, check, is, gt, ge
d=/sys/kernel/debug/okprobes
s=/sys/kernel/debug/okp_sweep
field() { sed -n "s/^/ /; s/.* $1=\([0-9-]*\).*/\1/p" "$2" | head -1; } # name file: the value of name=N

# What run-guest counts as a kernel splat (the same patterns).
splat='(Oops|BUG:|WARNING:|Kernel panic|KASAN:|kmemleak: .*new suspected|unreferenced object|possible circular locking|possible recursive locking|inconsistent lock state|INFO: task .* blocked|general protection fault|Unable to handle kernel|UBSAN:|Call Trace:)'

workload() { # [tag]
  ls /proc/self/ > /dev/null &&
  sh -c true &&
  find /sys -maxdepth 2 > /dev/null &&
  echo sweep > /tmp/sweep$1.f && cat /tmp/sweep$1.f > /dev/null && rm /tmp/sweep$1.f &&
  cat /proc/self/status /proc/meminfo /proc/interrupts > /dev/null &&
  dd if=/dev/zero of=/dev/null bs=4k count=64 2> /dev/null &&
  ps > /dev/null && sleep 0
}

# Every refusal is a pr_err line from okprobes: hundreds of thousands of them. The console
# shows only emergencies meanwhile; splats are found in what the ring buffer holds after each
# batch and by the taint flags (W warning, D oops/BUG, B KASAN, L soft lockup...) and lockdep:
# the module checks those after every registration and stops the sweep at once, so the splat
# is still in the ring buffer. It is printed here, for the host's splat check to see.
taint0=$(cat /proc/sys/kernel/tainted)
locks() { sed -n 's/.*debug_locks: *\([0-9]*\).*/\1/p' /proc/lockdep_stats 2>/dev/null; }
locks0=$(locks)
printk0=$(cut -f1 /proc/sys/kernel/printk)
dmesg -c > /dev/null
dmesg -n 1
kmsg_splats=0
scan_kmsg() {
  dmesg -c > /tmp/kmsg
  if grep -Eq "$splat" /tmp/kmsg; then
    kmsg_splats=$((kmsg_splats + 1))
    echo "OKP-SWEEP: kernel log after batch $batch:"; grep -E -B2 -A30 "$splat" /tmp/kmsg | head -80
  fi
}
kmsg_tail() { # the end of the kernel log without okprobes' refusals
  echo "OKP-SWEEP: kernel log (without refusals) after batch $batch:"
  dmesg | grep -v 'okprobes: refused probe at ' | tail -150
}
new_taint() { echo $(( $(cat /proc/sys/kernel/tainted) & ~taint0 )); }

t_start=$(date +%s)
insmod /okp/okp_sweep.ko stride="$SWEEP_STRIDE" max_funcs="$SWEEP_MAX_FUNCS" \
  ${SWEEP_START:+start=$SWEEP_START} $SWEEP_ARGS
check "okp_sweep loads" test -d $s
# vmlinux text symbols, _stext up to _etext (__init text is gone after boot): the addresses
# are 16 hex digits, so comparing them as strings compares them as numbers.
stext=$(awk '$3 == "_stext" { print $1 }' /proc/kallsyms)
etext=$(awk '$3 == "_etext" { print $1 }' /proc/kallsyms)
awk -v s="$stext" -v e="$etext" 'NF == 3 && ($2 == "t" || $2 == "T") && ($1 "") >= s && ($1 "") < e' \
  /proc/kallsyms > $s/funcs
funcs=$(field funcs $s/state)
echo "OKP-SWEEP: sweeping $funcs functions ($stext-$etext, stride $SWEEP_STRIDE)"

if [ "$SWEEP_BG" = 1 ]; then
  rm -f /tmp/sweep.stop /tmp/sweep.bg
  (while [ ! -e /tmp/sweep.stop ]; do
     if workload bg > /dev/null 2>&1; then echo ok; else echo failed; fi
   done > /tmp/sweep.bg) &
  bgpid=$!
fi
batch=0 runs=0 run_fail=0 wl_runs=0 wl_fail=0 taint_bad=0 lockdep_bad=0 hits_armed=0
opt_fail=0 opt_runs=0 opt_wl_fail=0 hits_opt=0
while :; do
  batch=$((batch + 1))
  if ! echo 1 > $s/run; then
    run_fail=$((run_fail + 1))
    echo "OKP-SWEEP: batch $batch stopped: $(grep 'note FAILURE' $s/report | tail -1)"
    echo 1 > $s/release
    kmsg_tail
    break
  fi
  runs=$((runs + 1))
  cat $s/state > /tmp/state
  if [ "$(field armed /tmp/state)" -gt 0 ]; then
    h0=$(field hits /tmp/state)
    if workload; then wl_runs=$((wl_runs + 1)); else wl_fail=$((wl_fail + 1)); fi
    cat $s/state > /tmp/state
    hits_armed=$((hits_armed + $(field hits /tmp/state) - h0))
    if [ "$SWEEP_OPTIMIZE" = 1 ]; then
      if echo 1 > $s/optimize; then
        h0=$(field hits /tmp/state)
        if workload; then opt_runs=$((opt_runs + 1)); else opt_wl_fail=$((opt_wl_fail + 1)); fi
        cat $s/state > /tmp/state
        hits_opt=$((hits_opt + $(field hits /tmp/state) - h0))
      else
        opt_fail=$((opt_fail + 1))
      fi
    fi
  fi
  echo 1 > $s/release
  scan_kmsg
  tb=$(new_taint)
  if [ "$tb" != 0 ]; then
    taint_bad=$((taint_bad + 1)); echo "OKP-SWEEP: batch $batch: new taint flags $tb"
    kmsg_tail
  fi
  [ "$(locks)" = "$locks0" ] || { lockdep_bad=1; echo "OKP-SWEEP: batch $batch: lockdep turned off"; }
  [ $((batch % 20)) = 0 ] && echo "OKP-SWEEP: batch $batch, $(cat $s/state), $(($(date +%s) - t_start)) s"
  [ "$(field done /tmp/state)" -lt "$funcs" ] || break
  [ "$taint_bad" = 0 ] || break
done
t_sweep=$(($(date +%s) - t_start))
if [ "$SWEEP_BG" = 1 ]; then
  touch /tmp/sweep.stop; wait $bgpid
  check "the background workload ran throughout ($(grep -c ok /tmp/sweep.bg) runs, $(grep -c failed /tmp/sweep.bg) failed)" \
    sh -c "grep -q ok /tmp/sweep.bg && ! grep -q failed /tmp/sweep.bg"
fi
dmesg -n "$printk0"
cat $s/report > /tmp/report
cat /tmp/report
cat $s/state > /tmp/state
echo "OKP-SWEEP: time ${t_sweep} s, $batch batches, workload ran $wl_runs times ($hits_armed hits while armed)"

check "sweep ran over >= $SWEEP_MIN_FUNCS functions ($(field funcs /tmp/report) swept)" \
  ge "$(field funcs /tmp/report)" "$SWEEP_MIN_FUNCS"
check "every selected function was swept" is "$(field done /tmp/state)" "$funcs"
check "every batch ran ($runs, $run_fail failed writes)" is "$run_fail" 0
check "every non-boundary refused with -EILSEQ (or blacklisted, or hidden by an int3): $(field nonboundary_accepted /tmp/report) accepted, $(field nonboundary_wrong_errno /tmp/report) other errno" \
  is "$(field nonboundary_accepted /tmp/report)$(field nonboundary_wrong_errno /tmp/report)" 00
check "every boundary accepted or refused with another errno: $(field boundary_ilseq /tmp/report) refused -EILSEQ" \
  is "$(field boundary_ilseq /tmp/report)" 0
check "every refusal of a boundary has a reason" is "$(field boundary_no_reason /tmp/report)" 0
check "probes were accepted ($(field accepted /tmp/report))" ge "$(field accepted /tmp/report)" 1
check "workload ran with the probes armed ($wl_runs runs, $wl_fail failed, $hits_armed hits)" \
  sh -c "[ $wl_runs -gt 0 ] && [ $wl_fail = 0 ]"
# A few asm functions may never run; a real sample always has probes that fire.
[ "$funcs" -lt 50 ] ||
  check "armed probes fired ($(field hits /tmp/report) hits in all)" ge "$(field hits /tmp/report)" 1
check "no splat in the kernel log during the sweep" is "$kmsg_splats" 0
check "no new taint flag (warning, oops, KASAN, soft lockup) during the sweep" is "$taint_bad" 0
[ -n "$locks0" ] && check "lockdep still on after the sweep" is "$lockdep_bad" 0
check "after unregister: every probed function's text is as it was ($(field text_mismatch /tmp/report) differ)" \
  is "$(field text_mismatch /tmp/report)" 0
check "after unregister: no probe left in $d/list" sh -c "[ ! -s $d/list ]"
check "the kernel is whole: a second run of the workload after unregister still works" workload
check "the module's verdict is PASS" grep -q '^OKP-SWEEP: PASS ' /tmp/report

if [ "$SWEEP_OPTIMIZE" = 1 ]; then
  cat $s/optimize > /tmp/optimize
  cat /tmp/optimize
  check "optimization on: debug.okprobes-optimization is 1" is "$(cat /proc/sys/debug/okprobes-optimization)" 1
  check "optimization on: probes were jump-optimized ($(field optimized /tmp/optimize) of $(field armed /tmp/optimize) armed, $(field ftrace /tmp/optimize) through ftrace, $(field not_optimized /tmp/optimize) not optimized with a reason)" \
    ge "$(field optimized /tmp/optimize)" 1
  check "optimization on: every armed probe optimized, through ftrace or refused with a reason after the optimizer ran ($(field pending /tmp/optimize) neither)" \
    is "$(field pending /tmp/optimize)$opt_fail" 00
  check "optimization on: the workload ran through the optimized probes ($opt_runs runs, $opt_wl_fail failed, $hits_opt hits)" \
    sh -c "[ $opt_runs -gt 0 ] && [ $opt_wl_fail = 0 ]"
fi

# Return probes on every sampled function (sweep_return.c): all armed at once, a workload, the
# counts checked with every CPU stopped, unregistered, checked again after another workload.
if [ "$SWEEP_RETURN" = 1 ]; then
  r=$s/return t_ret=$(date +%s)
  dmesg -n 1
  echo run > $r; ret_run=$?
  ret_wl=0
  workload && ret_wl=$((ret_wl + 1))
  echo check > $r
  workload && ret_wl=$((ret_wl + 1))
  echo check > $r; ret_check=$?
  echo release > $r; ret_release=$?
  ret_list=$(wc -l < $d/list)
  workload && ret_wl=$((ret_wl + 1)); sleep 1
  echo verify > $r; ret_verify=$?
  dmesg -n "$printk0"
  cat $r > /tmp/return
  cat /tmp/return
  echo "OKP-RETURN: time $(($(date +%s) - t_ret)) s"
  check "return probes: every step worked (run $ret_run, check $ret_check, release $ret_release, verify $ret_verify)" \
    is "$ret_run$ret_check$ret_release$ret_verify" 0000
  check "return probes: $(field accepted /tmp/return) of $(field funcs /tmp/return) accepted, every refusal with an errno and a reason ($(field no_reason /tmp/return) without)" \
    sh -c "[ $(field accepted /tmp/return) -ge 1 ] && [ $(field no_reason /tmp/return)$(field wrong_errno /tmp/return) = 00 ]"
  check "return probes: the workload ran 3 times around them ($ret_wl)" is "$ret_wl" 3
  check "return probes fired: $(field fired /tmp/return) functions returned through them ($(field returns /tmp/return) returns, $(field entries /tmp/return) entries)" \
    ge "$(field fired /tmp/return)" 1
  check "return probes: returns <= entries on every probe, entries - returns - reclaimed never negative" \
    is "$(field check_order_bad /tmp/return)$(field negative_flight /tmp/return)" 00
  check "return probes: with all CPUs stopped, instances in flight ($(field in_flight_armed /tmp/return)) == return stubs in use ($(field stubs_armed /tmp/return))" \
    is "$(field check_sum_bad /tmp/return)" 0
  check "return probes: every return handler found its entry's data, in the same task" \
    is "$(field cookie_bad /tmp/return)$(field task_bad /tmp/return)" 00
  check "return probes: no handler ran after unregister" is "$(field frozen_bad /tmp/return)" 0
  check "return probes: stubs still in use after unregister ($(field stubs_verify /tmp/return)) <= frames in flight at unregister ($(field in_flight_release /tmp/return))" \
    is "$(field stubs_left_bad /tmp/return)" 0
  check "return probes: every function's entry restored, no probe left in $d/list ($ret_list lines)" \
    is "$(field text_bad /tmp/return)$ret_list" 00
  check "return probes: the module's verdict is PASS" grep -q '^OKP-RETURN: PASS ' /tmp/return
fi

# Differential decoding (sweep_decode.c): every instruction of every vmlinux text function,
# okprobes' Zydis against the kernel's decoder.
if [ "$SWEEP_DECODE" = 1 ]; then
  t_dec=$(date +%s)
  echo "$stext $etext" > $s/decode; dec_ret=$?
  cat $s/decode > /tmp/decode
  cat /tmp/decode
  echo "OKP-DECODE: time $(($(date +%s) - t_dec)) s"
  check "differential decoding ran over vmlinux text: $(field funcs /tmp/decode) functions, $(field insns /tmp/decode) instructions (write $dec_ret)" \
    sh -c "[ $dec_ret = 0 ] && [ $(field insns /tmp/decode) -ge 10000 ]"
  check "Zydis and the kernel's decoder agree on every reachable instruction: $(field disagree /tmp/decode) disagreements, $(field unexplained /tmp/decode) unexplained" \
    is "$(field unexplained /tmp/decode)" 0
fi
check "okp_sweep unloads" rmmod okp_sweep
check "still no new taint flag" is "$(new_taint)" 0

echo "OKP-SWEEP: $n checks, $failed failed"
[ "$failed" = 0 ]
