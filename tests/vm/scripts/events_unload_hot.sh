# Guest script (busybox sh), the last of its guest (kprobe events, issue 26): okprobes left
# with an enabled event on okp_target_fn and one on vfs_read that a reader of /proc/version
# hits until okprobes' directory goes, for the guest's unload of okprobes (run-guest's
# rmmod): every probe is unregistered before the tracefs instance is destroyed, so no hit
# writes to it then. No splat is the check. Last, because the reader keeps a vCPU busy
# hitting a breakpoint or a jump: every stop_machine after it (a breakpoint armed on arm64,
# say) waits for that vCPU. Appended after events.sh (and whatever follows it) with
# okp_target.ko loaded; continues the numbering.
n=${n:-0} failed=${failed:-0}
check() { # description, then a command
  desc=$1; shift; n=$((n + 1))
  if "$@" >/dev/null 2>&1; then echo "ok $n - $desc"; else echo "not ok $n - $desc"; failed=$((failed + 1)); fi
}
d=/sys/kernel/debug/okprobes
ke=$d/kprobe_events
# riscv64 without KGDB: no breakpoint reaches okprobes (okp_target_fn has no ftrace site), as
# events.sh skips there.
if [ "$(uname -m)" = riscv64 ] && ! grep -q ' kgdb_handle_exception$' /proc/kallsyms; then
  n=$((n + 1)); echo "ok $n - events left enabled for the unload # SKIP no KGDB in this kernel"
  echo "1..$n"; exit 0
fi
grep -q '^okp_target ' /proc/modules || insmod /okp/okp_target.ko
echo 'p:okp/stay okp_target_fn x=%di:u64' >> $ke
echo 1 > $d/events/okp/stay/enable
echo 2 > /sys/kernel/debug/okp_target/call
check "an enabled event is left enabled for okprobes' unload (no splat is the check)" grep -q ' stay: .* x=21$' $d/trace
echo 'p:okp/hot vfs_read' >> $ke
echo 1 > $d/events/okp/hot/enable
(while [ -e $d ]; do read -r l < /proc/version; done) &
check "... and one on vfs_read, hit by a reader until okprobes goes" sh -c "sleep 1; awk '\$1 == \"hot\" {exit !(\$2 > 0)}' $d/kprobe_profile"
echo "1..$n"
[ $failed = 0 ]
