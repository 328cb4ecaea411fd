# Guest script (busybox sh): okprobes unloaded (rmmod) while its kprobe events are enabled,
# their per-CPU rings full, writers hitting them on every vCPU and a trace_pipe reader reading
# (issue 26), then loaded again; EVENTS_RACE_CYCLES times (3). The events: an entry event
# (ftrace on x86-64) and a return event on okp_target_read, a breakpoint event on
# okp_target_fn (tests/vm/modules/target.c, target_text.S). The reader's open trace_pipe holds
# okprobes (the files' owner), so rmmod is tried until it lands between two reads: a refused
# try must be for that reference (EWOULDBLOCK), nothing else. No splat (run-guest), no leak
# (kmemleak, where the kernel has it: test-debug; the guest's init scans again at the end).
# Appended after events.sh in the x86-64 probes guest (it continues the numbering; okprobes
# is /modules/00-okprobes.ko, loaded by the guest's init), or standalone.
# Prints TAP lines; exits non-zero if any check failed.
n=${n:-0} failed=${failed:-0}
check() { # description, then a command
  desc=$1; shift; n=$((n + 1))
  if "$@" >/dev/null 2>&1; then echo "ok $n - $desc"; else echo "not ok $n - $desc"; failed=$((failed + 1)); fi
}
d=/sys/kernel/debug/okprobes
okp_ko=/modules/00-okprobes.ko
[ -f $okp_ko ] || okp_ko=/okp/okprobes.ko
grep -q '^okp_target ' /proc/modules || insmod /okp/okp_target.ko
call=/sys/kernel/debug/okp_target/call
call_read=/sys/kernel/debug/okp_target/call_read
cpus=$(grep -c ^processor /proc/cpuinfo)
stop=/tmp/okp-race-stop
dropped() { head -n 12 $d/trace 2>/dev/null | sed -n 's/^# okprobes: \([0-9]*\) dropped.*/\1/p'; }
full() { [ "$(dropped)" -gt 0 ] 2>/dev/null; }

cycle=1
while [ $cycle -le ${EVENTS_RACE_CYCLES:-3} ]; do
  # okprobes as events.sh left it in the first cycle, freshly loaded after.
  grep -q '^okprobes ' /proc/modules || insmod $okp_ko
  echo 0 > $d/events/enable 2>/dev/null
  echo > $d/kprobe_events; echo > $d/trace
  echo "p:race/rd okp_target_read magic=+0(%di):x64 name=+16(%di):string cm=\$comm" >> $d/kprobe_events
  echo "r:race/rdret okp_target_read ret=\$retval:s64" >> $d/kprobe_events
  echo "p:race/fn okp_target_fn x=%di:u64" >> $d/kprobe_events
  echo 1 > $d/events/race/enable
  check "cycle $cycle: three events defined and enabled" \
    sh -c "[ \$(cat $d/events/race/enable) = 1 ] && [ \$(grep -c '^[pr]:race/' $d/kprobe_events) = 3 ]"
  rm -f $stop
  writers=
  i=0
  while [ $i -lt $cpus ]; do
    ( while [ ! -f $stop ]; do echo 200 > $call_read; echo 200 > $call; done ) &
    writers="$writers $!"; i=$((i + 1))
  done
  j=0; until full || [ $j -ge 200 ]; do usleep 100000; j=$((j + 1)); done
  check "cycle $cycle: $cpus writers filled the rings (records dropped: $(dropped))" full
  ( while [ ! -f $stop ]; do head -c 65536 $d/trace_pipe > /dev/null 2>&1 || usleep 20000; done ) &
  reader=$!
  usleep 300000
  # rmmod until it lands between two of the reader's opens.
  tries=0 other=
  until rmmod okprobes 2>/tmp/okp-rmmod.err; do
    tries=$((tries + 1))
    # busybox: "Resource temporarily unavailable" (EWOULDBLOCK: a reference is held)
    grep -Eq 'temporarily unavailable|in use' /tmp/okp-rmmod.err || other=$(cat /tmp/okp-rmmod.err)
    [ -z "$other" ] && [ $tries -lt 2000 ] || break
  done
  [ -n "$other" ] && echo "# rmmod: $other"
  check "cycle $cycle: okprobes unloads with the events enabled, rings full, writers and a reader running ($tries tries refused: a reference held)" \
    sh -c "! grep -q '^okprobes ' /proc/modules && [ -z '$other' ]"
  check "cycle $cycle: its files are gone" sh -c "[ ! -e $d/trace_pipe ] && [ ! -e $d/kprobe_events ]"
  usleep 300000  # the writers go on calling the functions okprobes no longer probes
  touch $stop
  for p in $writers $reader; do wait $p; done
  check "cycle $cycle: the probed functions compute right after it" \
    sh -c "echo 1 > $call && [ \$(cat $call) = 42 ] && echo 1 > $call_read && [ \$(cat $call_read) = 2 ]"
  check "cycle $cycle: okprobes loads again" insmod $okp_ko
  cycle=$((cycle + 1))
done
rm -f $stop
check "after the cycles: no event left, an event works" \
  sh -c "[ -z \"\$(cat $d/kprobe_events)\" ] && echo 'p:race/again okp_target_fn x=%di:u64' >> $d/kprobe_events && echo 1 > $d/events/race/again/enable && echo 1 > $call && grep -q ' again: .* x=20\$' $d/trace && echo 0 > $d/events/race/again/enable && echo > $d/kprobe_events"
# The tracefs instance held open at okprobes' unload (a reader of its trace): okprobes cannot
# destroy it and leaves it; the kernel removes okprobes/record after okprobes' exit and clears
# the buffers that held its entries, so nothing left in the instance names okprobes' printer
# or formats (KASAN would see a read of okprobes' freed memory).
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null  # standalone: events.sh mounts it
inst=/sys/kernel/tracing/instances/okprobes
if [ -d $inst ]; then
  echo 'p:race/held okp_target_fn x=%di:u64' >> $d/kprobe_events
  echo 1 > $d/tracefs_instance  # the copy is off by default
  echo 1 > $d/events/race/held/enable; echo 3 > $call
  check "instance held: okprobes' copies are in the instance" sh -c "[ \$(grep -c ' held: ' $inst/trace) = 3 ]"
  exec 3< $inst/trace
  rmmod okprobes
  check "instance held: okprobes unloads, the instance is left (a reader has it open), without okprobes/record" \
    sh -c "! grep -q '^okprobes ' /proc/modules && [ -d $inst ] && [ ! -e $inst/events/okprobes ]"
  check "... and without okprobes' entries (the kernel cleared its buffer)" \
    sh -c "[ -z \"\$(grep -v '^#' $inst/trace)\" ]"
  exec 3<&-
  check "... rmdir removes it once the reader is gone" rmdir $inst
  check "instance held: okprobes loads again" insmod $okp_ko
else
  n=$((n + 1)); echo "ok $n - the tracefs instance held at unload # SKIP no tracefs instances here"
fi
if [ -e /sys/kernel/debug/kmemleak ]; then
  # kmemleak reports objects older than 5 s only; wait, then scan twice as it advises.
  sleep 6
  echo scan > /sys/kernel/debug/kmemleak; echo scan > /sys/kernel/debug/kmemleak
  head -n 20 /sys/kernel/debug/kmemleak | sed 's/^/# /'
  check "kmemleak reports nothing after the unloads" sh -c "[ ! -s /sys/kernel/debug/kmemleak ]"
else
  n=$((n + 1)); echo "ok $n - kmemleak reports nothing after the unloads # SKIP no kmemleak in this kernel (test-debug has it)"
fi
echo "1..$n"
[ $failed = 0 ]
