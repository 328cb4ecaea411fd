# Guest script (busybox sh), appended to probes.sh in the same boot (it continues its
# numbering; tap.sh's helpers and $d are defined there), last, as it unloads and reloads
# okprobes: a return probe removed while a task sleeps in its function, through okprobes'
# stubs. The frame returns later through the detached stub, in okprobes' text, so okprobes
# holds a reference on itself until it has (src/kernel/return.c); unloading okprobes itself
# (its kprobe events' return probes) waits for such a frame instead.
okp_refs() { awk '$1 == "okprobes" {print $3}' /proc/modules; }
# (return probes removed by the scripts before may have left okprobes holding itself a while)
i=0; until [ "$(okp_refs)" = 0 ] || [ $i -ge 300 ]; do sleep 0.1; i=$((i + 1)); done
check "no module holds okprobes here" is "$(okp_refs)" 0
[ -w /proc/sys/debug/okprobes-return-stubs ] && echo 1 > /proc/sys/debug/okprobes-return-stubs
insmod /okp/okretprobe_example.ko func=do_nanosleep
sleep 4 & sleeper=$!
i=0; until grep -q '  r  do_nanosleep+0x[0-9a-f]* .*in_use=[1-9]' $d/list || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
check "a task sleeps under a return probe through okprobes' stubs" \
  grep -q '  r  do_nanosleep+0x[0-9a-f]* .*in_use=[1-9].*return=stubs' $d/list
rmmod okretprobe_example
check "its probe removed, okprobes holds itself while the frame is out (refcount 1)" is "$(okp_refs)" 1
check "... so rmmod okprobes is refused" sh -c "! rmmod okprobes"
wait $sleeper
check "... and once the frame has returned okprobes lets go and unloads" rmmod_wait okprobes
check "okprobes loads again" insmod /modules/00-okprobes.ko
#       Unloading okprobes itself removes its kprobe events' return probes: the unload waits
#       for such a frame instead (no reference can be taken then), and says so.
[ -w /proc/sys/debug/okprobes-return-stubs ] && echo 1 > /proc/sys/debug/okprobes-return-stubs
echo 'r:unload/ns do_nanosleep' >> $d/kprobe_events && echo 1 > $d/events/unload/ns/enable
sleep 3 & sleeper=$!
i=0; until grep -q '  r  do_nanosleep+0x[0-9a-f]* .*in_use=[1-9]' $d/list || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
dmesg -c > /dev/null
check "rmmod okprobes with a task inside an event's return probe: it waits, then unloads" rmmod okprobes
check "... saying that it waited for the frame" sh -c "dmesg | grep -q 'unloading waits for tasks still inside'"
check "... which had returned by then" sh -c "! kill -0 $sleeper 2>/dev/null"
wait $sleeper
check "okprobes loads again" insmod /modules/00-okprobes.ko

# Through the kernel's kretprobe trampoline (arm64 with CONFIG_KRETPROBES, debugfs
# return_probes): a frame still out when its probe goes returns through kernel text, which
# frees its instance itself, so okprobes holds no reference and unloads at once; the frame
# returns after okprobes is gone, with no splat (run-guest's check).
if grep -q '^kretprobe' $d/return_probes; then
  insmod /okp/okretprobe_example.ko func=do_nanosleep
  sleep 4 & sleeper=$!
  i=0; until grep -q '  r  do_nanosleep+0x[0-9a-f]* .*in_use=[1-9]' $d/list || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
  check "a task sleeps under a return probe through the kernel's kretprobe trampoline" \
    grep -q '  r  do_nanosleep+0x[0-9a-f]* .*in_use=[1-9].*return=kretprobe' $d/list
  rmmod okretprobe_example
  check "its probe removed, okprobes holds no reference (the kernel frees the instance)" is "$(okp_refs)" 0
  check "... and unloads while the frame is still out" rmmod okprobes
  check "... which was still inside do_nanosleep then" sh -c "kill -0 $sleeper 2>/dev/null"
  wait $sleeper
  check "the frame returned through the kernel's trampoline after okprobes was gone" sh -c "! kill -0 $sleeper 2>/dev/null"
  check "okprobes loads again" insmod /modules/00-okprobes.ko
fi

echo "1..$n"
[ $failed = 0 ]
