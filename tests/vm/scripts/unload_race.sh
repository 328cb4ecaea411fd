# Guest script (busybox sh): module unload races (issue 15), with okp_unload_race.ko and
# okp_unload_target.ko in /okp (tests/vm/modules/unload_race.c, unload_target.c).
# okp_unload_race arms probes on okp_unload_target whenever it is loaded (an int3 probe, an
# ftrace probe, a return probe), churns more probes on it all the time; each cycle here loads
# the target, waits for the probes, lets its threads call the probed functions on every CPU,
# and unloads it while they do. Checked per cycle: the probes end [GONE] in debugfs list,
# their hit counts equal the calls the target made (nothing lost or doubled, no miss), the
# return probe saw both sleepers enter and the returning one return. At the end: every
# return-probe instance came back (stubs in use as before), no splat (run-guest).
# Odd cycles run with okprobes-optimization 0 (the okp_ut_fn probe is an int3), even ones
# with 1 (it becomes a jump, [OPTIMIZED], before the calls start).
# UNLOAD_CYCLES (default 5), UNLOAD_HOLD (seconds of calls before each rmmod, default 1).
# Prints TAP lines; exits non-zero if any check failed.
cycles=${UNLOAD_CYCLES:-5} hold=${UNLOAD_HOLD:-1}
. /okp/tap.sh	# n, failed, check, is, gt, ge
d=/sys/kernel/debug/okprobes
armed=/sys/module/okp_unload_race/parameters/armed
field() { echo "$2" | sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
# wait_for SECONDS COMMAND...: polls every 0.1 s until the command succeeds.
wait_for() {
  t=$(($1 * 10)); shift
  while [ $t -gt 0 ]; do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; t=$((t - 1)); done
  return 1
}

check "the prober loads" insmod /okp/okp_unload_race.ko
c=1
while [ $c -le $cycles ]; do
  opt=$(( (c + 1) % 2 ))
  echo $opt > /proc/sys/debug/okprobes-optimization
  # The return probe through the kernel's rethook in cycles 1-2 and 5 where okprobes uses it
  # (debugfs return_probes), through okprobes' stubs in cycles 3-4 and everywhere else.
  stubs=$(( (c - 1) / 2 % 2 ))
  [ -w /proc/sys/debug/okprobes-return-stubs ] && echo 0 > /proc/sys/debug/okprobes-return-stubs
  grep -q '^rethook' $d/return_probes 2>/dev/null || stubs=1	# "stubs: forced" while 1
  [ -w /proc/sys/debug/okprobes-return-stubs ] && echo $stubs > /proc/sys/debug/okprobes-return-stubs
  check "cycle $c: the target loads" insmod /okp/okp_unload_target.ko
  check "cycle $c: its probes are armed (generation $c)" wait_for 30 sh -c "[ \$(cat $armed) -ge $c ]"
  if [ $opt = 1 ]; then
    check "cycle $c: the int3 probe became a jump ([OPTIMIZED])" \
      wait_for 30 grep -q 'okp_ut_fn+0x[0-9a-f]* \[okp_unload_target\] \[OPTIMIZED\]' $d/list
  else
    check "cycle $c: the probe stays an int3 (optimization 0)" \
      sh -c "sleep 0.1; ! grep -q 'okp_ut_fn.*OPTIMIZED' $d/list"
  fi
  echo 1 > /sys/kernel/debug/okp_unload_target/go
  sleep "$hold"
  check "cycle $c: the target unloads while its probes are hit on every CPU" rmmod okp_unload_target
  check "cycle $c: the prober saw the probes go" \
    wait_for 30 sh -c "dmesg | grep -q 'OKP-UNLOAD-RACE gen=$c '"
  t=$(dmesg | grep 'OKP-UNLOAD-TARGET fn_calls=' | tail -1)
  r=$(dmesg | grep "OKP-UNLOAD-RACE gen=$c " | tail -1)
  echo "# $t"; echo "# $r"
  check "cycle $c: debugfs list shows the int3 probe [GONE]" \
    grep -q 'okp_ut_fn+0x[0-9a-f]* \[okp_unload_target\] \[GONE\]' $d/list
  check "cycle $c: debugfs list shows the ftrace probe [GONE]" \
    grep -q 'okp_ut_other+0x[0-9a-f]* \[okp_unload_target\] \[GONE\]' $d/list
  check "cycle $c: debugfs list shows the return probe [GONE]" \
    grep -q '  r  okp_ut_sleep+0x[0-9a-f]* \[okp_unload_target\] \[GONE\]' $d/list
  check "cycle $c: the target made calls ($(field fn_calls "$t"))" gt "$(field fn_calls "$t")" 0
  check "cycle $c: int3 probe hits = calls made ($(field int3_hits "$r") = $(field fn_calls "$t")), no miss" \
    sh -c "[ '$(field int3_hits "$r")' = '$(field fn_calls "$t")' ] && [ '$(field int3_missed "$r")' = 0 ]"
  check "cycle $c: ftrace probe hits = calls made ($(field ftrace_hits "$r") = $(field other_calls "$t")), no miss" \
    sh -c "[ '$(field ftrace_hits "$r")' = '$(field other_calls "$t")' ] && [ '$(field ftrace_missed "$r")' = 0 ]"
  # Through the stubs okprobes reclaims the exited task's frame when the task is freed. Through
  # rethook the kernel takes its node back then (rethook_flush_task()), and okprobes counts
  # it only when it hands that node out again, which this probe may not live to do.
  reclaimed=1; [ $stubs = 0 ] && case "$(field ret_reclaimed "$r")" in 0|1) reclaimed=$(field ret_reclaimed "$r") ;; esac
  check "cycle $c: return probe ($([ $stubs = 1 ] && echo stubs || echo rethook)): 2 entries, 1 return, the exited task's frame reclaimed, none missed" \
    sh -c "[ '$(field ret_entries "$r")' = 2 ] && [ '$(field ret_returns "$r")' = 1 ] && [ '$(field sleep_returns "$t")' = 1 ] && [ '$(field ret_reclaimed "$r")' = $reclaimed ] && [ '$(field ret_missed "$r")' = 0 ]"
  c=$((c + 1))
done
echo 1 > /proc/sys/debug/okprobes-optimization
check "the prober unloads (every probe unregistered)" rmmod okp_unload_race
e=$(dmesg | grep 'OKP-UNLOAD-RACE-END' | tail -1); echo "# $e"
check "every return-probe instance came back (stubs in use as before)" \
  is "$(field stubs_after "$e")" "$(field stubs_before "$e")"
check "the churned probes were registered while the target came and went" gt "$(field churn_ok "$e")" 0
check "debugfs list is empty at the end" sh -c "[ ! -s $d/list ]"
[ $failed = 0 ]
