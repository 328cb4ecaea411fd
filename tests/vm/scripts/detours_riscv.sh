# Guest script (busybox sh, riscv64): jump probes (issue 28) end to end. A probe becomes an
# auipc/jalr pair through a dead register (or a jal) into a detour: on okp_target's
# okp_target_opt (module text: handlers see a0, the function computes the same, post handlers
# run, unregistering restores it), a pre handler's pc change through a detour, and
# mid-function in vfs_read (vmlinux text). Needs /okp/okp_target.ko,
# /okp/okp_detour_redirect.ko, /okp/okp_kk.ko and the samples (not loaded). Appended to stress_riscv.sh in make
# check (the same 4-vCPU boot; it continues the numbering). CHURN_CYCLES: the last part's cycles.
# Prints TAP lines; exits non-zero if any check failed.
. /okp/tap.sh	# n, failed, check, is, gt
d=/sys/kernel/debug/okprobes
t=/sys/kernel/debug/okp_target
hits() { sed -n "s/.* $1+.* hits=\([0-9]*\).*/\1/p" $d/list | head -1; }
if grep -q ' kgdb_handle_exception$' /proc/kallsyms; then kgdb=1; else kgdb=; fi
echo "# kernel $(uname -r) $(uname -v), KGDB: ${kgdb:-no}"
now() { cut -d' ' -f1 /proc/uptime; }
target_loaded=$(now)
insmod /okp/okp_target.ko

# 1. okp_target_opt(x) = (x + 1) * 2 + 3 probed at +0 (no ftrace site in module asm).
echo 1 > $t/call_opt
check "okp_target_opt computes (x + 1) * 2 + 3 unprobed" is "$(cat $t/call_opt)" 45
dmesg -c > /dev/null
# Without KGDB the jump is written at registration, in okprobe_example's init, just after
# okp_target's init memory began to be freed (text_patch.c waits for that free first):
# the time to arm the first probe, for docs/riscv64-detours.md.
registering=$(now)
check "a probe on okp_target_opt+0 registers (no post handler)" \
  insmod /okp/okprobe_example.ko symbol=okp_target_opt offset=0 post=0
echo "# timing: okp_target loaded at ${target_loaded} s, okprobe_example's insmod from ${registering} to $(now) s (uptime)"
sleep 1	# the optimizer's batch (KGDB: the breakpoint first, then the jump)
sed 's/^/# list: /' $d/list
check "list: okp_target_opt+0x0 is [OPTIMIZED]" grep -Eq ' okp_target_opt\+0x0 .*\[OPTIMIZED\]' $d/list
echo 3 > $t/call_opt
check "the probed function computes the same: (22 + 1) * 2 + 3" is "$(cat $t/call_opt)" 49
check "its hits count the calls" is "$(hits okp_target_opt)" 3
dmesg | grep 'okp_target_opt' | sed 's/^/# /'
check "the pre handler saw a0 = x (20, 21, 22)" sh -c "dmesg | grep -q '<okp_target_opt+0x0> pre: .*arg0=14$' && dmesg | grep -q '<okp_target_opt+0x0> pre: .*arg0=16$'"
fn=$(awk '$3 == "okp_target_opt" { print $1 }' /proc/kallsyms | head -1)
lo=$(echo "$fn" | cut -c9-16)	# the low 32 bits: sh arithmetic is signed 64-bit
check "the pre handler saw ip = the probe address ($fn)" sh -c "dmesg | grep '<okp_target_opt+0x0> pre:' | grep -q 'ip=$fn '"
check "no post handler ran" sh -c "! dmesg | grep -q '<okp_target_opt+0x0> post:'"
rmmod okprobe_example
check "list is empty after unregistering" sh -c "[ ! -s $d/list ]"
echo 2 > $t/call_opt
check "unregistered: it still computes (21 + 1) * 2 + 3" is "$(cat $t/call_opt)" 47
dmesg -c > /dev/null
check "a probe with a post handler on okp_target_opt+0 registers (the text was restored)" \
  insmod /okp/okprobe_example.ko symbol=okp_target_opt offset=0 post=1
sleep 1
sed 's/^/# list: /' $d/list
check "list: [OPTIMIZED] with a post handler" grep -Eq ' okp_target_opt\+0x0 .*\[OPTIMIZED\]' $d/list
echo 2 > $t/call_opt
check "with post handlers it computes the same" is "$(cat $t/call_opt)" 47
dmesg | grep 'okp_target_opt' | sed 's/^/# /'
check "the post handler ran, after the first instruction (ip = +2 or +4)" \
  sh -c "dmesg | grep '<okp_target_opt+0x0> post:' | grep -Eq 'ip=[0-9a-f]{8}($(printf %08x $((0x$lo + 2)))|$(printf %08x $((0x$lo + 4)))) '"
check "its hits count the calls" is "$(hits okp_target_opt)" 2
rmmod okprobe_example
echo 2 > $t/call_opt
check "unregistered again: (21 + 1) * 2 + 3" is "$(cat $t/call_opt)" 47

# 1b. What handlers see of the registers, through a kprobe event (docs/events.md): a0 the
#    argument, the dead register the jump went through (t0 here: nothing in the function
#    reads it) 0, sp and ra the probed code's (not the detour's push).
echo 'p:okp/opt okp_target:okp_target_opt a0=%a0 t0=%t0 ra=%ra sp=%sp' >> $d/kprobe_events
echo 1 > $d/events/okp/opt/enable
sleep 1
echo 1 > $t/call_opt
grep ' opt: ' $d/trace | sed 's/^/# trace: /'
check "an event on the jump sees a0 = 20" grep -q ' opt: .* a0=0x14 ' $d/trace
check "and the dead register t0 as 0" grep -q ' opt: .* t0=0x0 ' $d/trace
check "and ra in okp_target's call_opt_set (the probed code's, not the detour's)" sh -c \
  "ra=\$(grep ' opt: ' $d/trace | tail -1 | sed 's/.* ra=0x\([0-9a-f]*\) .*/\1/'); \
   awk '\$3 == \"call_opt_set\" { print \$1 }' /proc/kallsyms | grep -q \"^\$(echo \$ra | cut -c1-12)\""
echo 0 > $d/events/okp/opt/enable
echo '-:okp/opt' >> $d/kprobe_events
check "list is empty after the event's removal" sh -c "[ ! -s $d/list ]"

# 1c. Where no jump fits: okp_target_second is an inner label, its symbol 2 bytes (c.slli),
#    so the jump would run past it. With KGDB the probe stays a breakpoint and says why it is
#    not a jump; without, it is refused with both reasons.
echo 1 > $t/call
if [ -n "$kgdb" ]; then
  check "with KGDB a probe where no jump fits registers (the breakpoint)" \
    insmod /okp/okprobe_example.ko symbol=okp_target_second post=0
  sleep 1
  sed 's/^/# list: /' $d/list
  check "it is not [OPTIMIZED]" sh -c "grep ' okp_target_second+0x0 ' $d/list | grep -vq OPTIMIZED"
  echo 3 > $t/call
  check "the breakpoint counts the calls, the function computes the same" \
    sh -c "[ \$(sed -n 's/.* okp_target_second+.* hits=\([0-9]*\).*/\1/p' $d/list) = 3 ] && [ \$(cat $t/call) = 46 ]"
  rmmod okprobe_example
else
  insmod /okp/okprobe_example.ko symbol=okp_target_second post=0 2>/dev/null
  grep '^okp_target_second' $d/refused | sed 's/^/# refused: /'
  check "without KGDB a probe where no jump fits is refused with both reasons" \
    grep -q "^okp_target_second+0x0	-95	no breakpoint on this kernel, and no jump: not optimized: the [48] bytes of the jump" $d/refused
fi

# 1d. A pre handler that changes the pc through a detour (the entry's sret way out):
#    okp_detour_redirect's init probes its own function one instruction in, waits for the jump,
#    and redirects to another function and past the region (tests/vm/modules/
#    detour_redirect_riscv.c: the results prove the new pc ran and the displaced instructions
#    did not).
insmod /okp/okp_detour_redirect.ko
dmesg | grep 'OKP-DREDIR' | sed 's/^/# /'
check "a pre handler's new pc through a detour: another function, past the region, no redirect" \
  sh -c "dmesg | grep -q 'OKP-DREDIR: PASS' && ! dmesg | grep -q 'OKP-DREDIR: FAIL'"
rmmod okp_detour_redirect

# 1e. The kernel's own kprobes beside a jump (okp_kk: register_kprobe() at symbol+offset, its
#    result in /sys/module/okp_kk/parameters; kprobe events refuse asm functions without an
#    ftrace site): they would accept okprobes' auipc, jalr or jal (they simulate them) and
#    write an ebreak over it, so okprobes keeps them off the jump's bytes
#    (arch/riscv/kernel_walk.cpp) while it stands; and a kernel kprobe already inside a region
#    keeps okprobes from jumping over it.
kk=/sys/module/okp_kk/parameters
if [ -f /okp/okp_kk.ko ] && grep -q ' register_kprobe$' /proc/kallsyms; then
  insmod /okp/okprobe_example.ko symbol=okp_target_opt offset=0 post=0
  sleep 1
  check "kernel kprobes: okprobes' probe on okp_target_opt+0 is a jump" \
    grep -Eq ' okp_target_opt\+0x0 .*\[OPTIMIZED\]' $d/list
  insmod /okp/okp_kk.ko symbol=okp_target_opt offset=0
  check "the kernel's register_kprobe() refuses okprobes' jump at okp_target_opt+0 (-EINVAL)" \
    is "$(cat $kk/result)" -22
  rmmod okp_kk
  rmmod okprobe_example
  insmod /okp/okp_kk.ko symbol=okp_target_opt offset=0
  check "unregistered: the kernel's kprobe on okp_target_opt+0 registers (the fence is gone)" \
    is "$(cat $kk/result)" 0
  rmmod okp_kk
  # The reverse: the kernel's kprobe at +2 (c.slli, inside any region from +0) first.
  insmod /okp/okp_kk.ko symbol=okp_target_opt offset=2
  insmod /okp/okprobe_example.ko symbol=okp_target_opt offset=0 post=0 2>/dev/null
  sleep 1
  { grep ' okp_target_opt+' $d/list; grep '^okp_target_opt+' $d/refused; } | sed 's/^/# /'
  check "a kernel kprobe inside the region keeps okprobes' probe from becoming a jump" \
    sh -c "[ \$(cat $kk/result) = 0 ] && ! grep -q ' okp_target_opt+0x0 .*OPTIMIZED' $d/list && \
           { grep ' okp_target_opt+0x0 ' $d/list; grep '^okp_target_opt+0x0' $d/refused; } | grep -q 'kernel kprobe'"
  echo 2 > $t/call_opt
  check "the function computes the same beside it, the kernel's kprobe hit: (21 + 1) * 2 + 3" \
    sh -c "[ \$(cat $t/call_opt) = 47 ] && [ \$(cat $kk/hits) -ge 2 ]"
  rmmod okprobe_example 2>/dev/null
  rmmod okp_kk
fi

# 2. Mid-function in vmlinux: the first boundary of vfs_read from +0x20 that becomes a jump.
off=
for try in $(seq 32 2 96); do
  o=$(printf '0x%x' $try)
  if insmod /okp/okprobe_example.ko symbol=vfs_read offset=$o 2>/dev/null; then
    sleep 1
    if grep -Eq " vfs_read\+$o .*\[OPTIMIZED\]" $d/list; then off=$o; break; fi
    rmmod okprobe_example
  fi
done
grep '^vfs_read+' $d/refused | tail -8 | sed 's/^/# refused: /'
check "a mid-function probe in vfs_read becomes a jump (+${off:-none})" [ -n "$off" ]
if [ -n "$off" ]; then
  sed 's/^/# list: /' $d/list
  cat /proc/version > /dev/null; cat /proc/version > /dev/null
  check "it counts hits" gt "$(hits vfs_read)" 0
  check "the kernel still reads files under it" grep -q Linux /proc/version
  rmmod okprobe_example
  check "unregistered: list is empty, files still read" sh -c "[ ! -s $d/list ] && grep -q Linux /proc/version"
fi
# 3. Churn under callers on every CPU: one caller per CPU calls okp_target_opt(20) over and
#    over (each checks the result), while the probe is registered and unregistered, with and
#    without a post handler: each switch is made with every hart stopped (text_patch.c).
cpus=$(grep -c '^processor' /proc/cpuinfo)
rm -f /tmp/stop /tmp/bad /tmp/calls.*
for c in $(seq 1 $cpus); do
  (k=0; while [ ! -f /tmp/stop ]; do
     echo 1 > $t/call_opt; r=$(cat $t/call_opt); k=$((k + 1))
     [ "$r" = 45 ] || echo "caller $c: $r" >> /tmp/bad
   done; echo $k > /tmp/calls.$c) &
done
cycles=0 failed_reg=0
for i in $(seq 1 ${CHURN_CYCLES:-4}); do
  if insmod /okp/okprobe_example.ko symbol=okp_target_opt offset=0 post=$((i % 2)); then
    # Without KGDB the jump is there at once; with it, after the optimizer's batch.
    w=0
    while ! grep -Eq ' okp_target_opt\+0x0 .*\[OPTIMIZED\]' $d/list && [ $w -lt 10 ]; do
      sleep 1; w=$((w + 1))
    done
    grep -Eq ' okp_target_opt\+0x0 .*\[OPTIMIZED\]' $d/list || failed_reg=$((failed_reg + 1))
    rmmod okprobe_example
    cycles=$((cycles + 1))
  else
    failed_reg=$((failed_reg + 1))
  fi
done
touch /tmp/stop; wait
calls=$(cat /tmp/calls.* | awk '{ s += $1 } END { print s }')
echo "# churn: $cycles cycles on $cpus CPUs, $calls calls, $(cat /tmp/bad 2>/dev/null | wc -l) wrong results"
head -3 /tmp/bad 2>/dev/null | sed 's/^/# /'
check "churn: every registration is a jump ($cycles cycles, $failed_reg not)" is "$failed_reg" 0
check "churn: every call under it computed (20 + 1) * 2 + 3 ($calls calls on $cpus CPUs)" \
  sh -c "[ ! -s /tmp/bad ] && [ ${calls:-0} -gt 0 ]"
check "churn: list is empty after it" sh -c "[ ! -s $d/list ]"

# 4. On a kernel that preempts kernel code every stopped switch above first read every task's
#    stack (src/kernel/arch/riscv/task_look.c, debugfs switch_look): the look must have run and
#    proven them, none left unproven for good.
if grep -q "^method: every task's stack" $d/switch_look 2>/dev/null; then
  sed 's/^/# switch_look: /' $d/switch_look
  check "the switches' task look ran and proved them (a preemptible kernel)" \
    sh -c "[ \$(sed -n 's/^proven: //p' $d/switch_look) -gt 0 ]"
  # 5. Switches while kernel threads spin through the region and are preempted inside it
  #    (tests/vm/modules/preempt_spin_riscv.c): every result right.
  if [ -f /okp/okp_preempt_spin.ko ]; then
    inside0=$(sed -n 's/^refused_task_inside: //p' $d/switch_look)
    dmesg -c > /dev/null
    insmod /okp/okp_preempt_spin.ko cycles=${PSPIN_CYCLES:-6}
    dmesg | grep 'OKP-PSPIN' | sed 's/^/# /'
    sed 's/^/# switch_look: /' $d/switch_look
    check "switches while threads are preempted in the region: every result right (okp_preempt_spin)" \
      sh -c "dmesg | grep -q 'OKP-PSPIN: PASS'"
    # Whether a stop caught a thread at +4 is chance (under TCG an interrupt lands only where a
    # translation block starts): said, not checked.
    echo "# the look kept $(( $(sed -n 's/^refused_task_inside: //p' $d/switch_look) - ${inside0:-0} )) of these switches off a thread inside"
    rmmod okp_preempt_spin
    check "list is empty after it" sh -c "[ ! -s $d/list ]"
  fi
fi

rmmod okp_target
echo "1..$n"
[ "$failed" = 0 ]
