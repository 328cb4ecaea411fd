# Guest script (busybox sh, x86-64 kernels with CONFIG_LIVEPATCH: Debian's): the kernel's
# livepatch sample (/okp/livepatch-sample.ko, tests/livepatch) applied while tasks sleep under an
# okprobes return probe (/okp/okretprobe_example.ko on do_nanosleep).
#  - Through the kernel's rethook (debugfs return_probes): the reliable unwinder sees the
#    sleepers' real callers, so the transition completes while they still sleep.
#  - Through okprobes' stubs (debug.okprobes-return-stubs=1): the reliable unwinder refuses a
#    stack that returns into a stub, so the transition waits for the sleepers (not lied to),
#    and completes once they have returned.
# Prints TAP lines; exits non-zero if any check failed.
. /okp/tap.sh
d=/sys/kernel/debug/okprobes
lp=/sys/kernel/livepatch/livepatch_sample
# Waits up to $1 tenths of a second for the transition to finish; true if it did.
transition_done() {
  i=0
  while [ $i -lt "$1" ]; do
    [ "$(cat $lp/transition 2>/dev/null)" = 0 ] && return 0
    sleep 0.1; i=$((i + 1))
  done
  return 1
}
# Starts 3 sleepers (60 s) and waits until all sleep in do_nanosleep under the return probe
# (this script's own short sleeps may be inside too: at least 3).
start_sleepers() {
  sleepers=
  for k in 1 2 3; do sleep 60 & sleepers="$sleepers $!"; done
  for i in 1 2 3 4 5 6 7 8 9 10; do
    grep -q 'in_use=[3-9] ' $d/list && break; sleep 0.2
  done
}
stop_sleepers() { kill $sleepers; wait $sleepers 2>/dev/null; }
# Disables and unloads the patch (the reverse transition), so the next part starts clean.
unpatch() {
  echo 0 > $lp/enabled
  transition_done 300
  rmmod livepatch_sample
}

if [ ! -d /sys/kernel/livepatch ] || [ ! -f /okp/livepatch-sample.ko ]; then
  check "livepatch beside return probes # SKIP no CONFIG_LIVEPATCH or no sample" true
else

if grep -q '^rethook' $d/return_probes; then
  check "return probe on do_nanosleep registers" insmod /okp/okretprobe_example.ko func=do_nanosleep
  start_sleepers
  set -- $sleepers; cat /proc/$1/stack
  check "/proc/PID/stack starts at do_nanosleep's real caller (rethook)" sh -c "head -1 /proc/$1/stack | grep -q hrtimer_nanosleep"
  check "three tasks sleep under the return probe (rethook)" grep -q 'do_nanosleep+0x0 .*in_use=[3-9] .*return=rethook' $d/list
  check "the livepatch loads" insmod /okp/livepatch-sample.ko
  check "the livepatch transition completes while they sleep (rethook: reliable stacks)" transition_done 150
  check "the patched function runs" grep -q 'this has been live patched' /proc/cmdline
  check "the sleepers are still inside" grep -q 'in_use=[3-9] ' $d/list
  unpatch
  stop_sleepers
  check "the return probe unregisters" rmmod okretprobe_example
fi

echo 1 > /proc/sys/debug/okprobes-return-stubs
check "return probe on do_nanosleep registers (stubs)" insmod /okp/okretprobe_example.ko func=do_nanosleep
start_sleepers
set -- $sleepers; cat /proc/$1/stack
# The stub is okprobes' text (kallsyms names it after the okprobes symbol before the stubs).
check "/proc/PID/stack stops at okprobes' stub (stubs: the documented limitation)" \
  sh -c "head -1 /proc/$1/stack | grep -q '\[okprobes\]' && [ \$(wc -l < /proc/$1/stack) = 1 ]"
check "three tasks sleep under the return probe (stubs)" grep -q 'do_nanosleep+0x0 .*in_use=[3-9] .*return=stubs' $d/list
check "the livepatch loads" insmod /okp/livepatch-sample.ko
sleep 3	# three of the transition's one-second retries (its fake signals start after 15)
check "the transition waits while tasks sleep under a stub (the reliable unwinder refuses them)" \
  sh -c "! grep -q 0 $lp/transition"
stop_sleepers
check "the transition completes once they have returned" transition_done 300
check "the patched function runs" grep -q 'this has been live patched' /proc/cmdline
unpatch
check "the return probe unregisters (stubs)" rmmod okretprobe_example
echo 0 > /proc/sys/debug/okprobes-return-stubs
fi

echo "1..$n"
[ $failed = 0 ]
