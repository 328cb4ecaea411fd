# Guest script (busybox sh, arm64), run on 4 vCPUs: okprobes' degraded mode on an arm64 kernel
# with the debug-exception rework (Debian's 6.12.95: no break-hook list, a kernel BRK of any
# immediate but the kernel's own goes to die()). okprobes says so at load and refuses
# every breakpoint probe (mid-function, or the entry of a function without an ftrace site) with
# -EOPNOTSUPP and that reason; function-entry probes (ftrace, WITH_ARGS: partial pt_regs) and
# return probes (entry through ftrace, trap-free return through okprobes' stubs) work, with
# exact counts, handlers' writes to x0-x8/pc take effect, and the churn stress (entry=1) and
# the return-probe stress pass.
# Sizes: STRESS_CYCLES/STRESS_CALLS, RETSTRESS_CYCLES/RETSTRESS_CALLS.
# Prints TAP lines; exits non-zero if any check failed.
. /okp/tap.sh	# n, failed, check, is, gt, ge
d=/sys/kernel/debug/okprobes
call=/sys/kernel/debug/okp_target/call
hits() { sed -n "s/.* $1+.* hits=\([0-9]*\).*/\1/p" $d/list | head -1; }
reason='no breakpoint probes: this kernel dispatches kernel BRKs only to its own handlers (arm64 debug-exception rework, no break-hook list); entries use ftrace'
check "this guest runs on 4 CPUs" is "$(grep -c '^processor' /proc/cpuinfo)" 4

# 0. The kernel is the reworked one: no break-hook list, the fixed-switch dispatcher instead.
check "the kernel has no break-hook list (no register_kernel_break_hook in kallsyms)" \
  sh -c "! grep -q ' register_kernel_break_hook$' /proc/kallsyms"
check "and has the reworked EL1 BRK entry (do_el1_brk64)" grep -q ' do_el1_brk64$' /proc/kallsyms
check "okprobes said at load that breakpoint probes are off, and why" \
  sh -c "dmesg | grep -q 'okprobes: $reason'"

# 1. A function entry on vmlinux, served by ftrace.
check "sample registers on kernel_clone" insmod /okp/okprobe_example.ko
sed 's/^/# list: /' $d/list
# (The ftrace call is the second patchable NOP, after ftrace's mov x9, x30: +0x4.)
check "list: kernel_clone+0x4 [FTRACE] hits=N nmissed=0" \
  grep -Eq '^[0-9a-f]{16}  k  kernel_clone\+0x4 \[FTRACE\] hits=[0-9]+ nmissed=0' $d/list
sh -c true; sh -c true
check "the ftrace probe counts hits" gt "$(hits kernel_clone)" 0
check "its pre handler saw the entry pc and the first argument (partial pt_regs)" \
  sh -c "dmesg | grep -Eq '<kernel_clone\+0x0> pre: ip=[0-9a-f]+ .*arg0=[0-9a-f]*[1-9a-f]'"
echo 0 > $d/enabled; h0=$(hits kernel_clone); sh -c true; sh -c true; h1=$(hits kernel_clone)
check "enabled=0 disarms: no hits" is "$h0" "$h1"
echo 1 > $d/enabled; sh -c true; h2=$(hits kernel_clone)
check "enabled=1 re-arms: hits again" gt "$h2" "$h1"
rmmod okprobe_example

# 2. Breakpoint probes: refused, with the errno and the reason, in dmesg and debugfs refused.
dmesg -c > /dev/null
insmod /okp/okprobe_example.ko symbol=vfs_read offset=0x10 2>/dev/null
check "a mid-function probe (vfs_read+0x10) is refused with -EOPNOTSUPP and the reason" \
  grep -q "^vfs_read+0x10	-95	$reason" $d/refused
check "the refusal is logged too" sh -c "dmesg | grep -q 'no breakpoint probes: this kernel dispatches kernel BRKs'"
check "nothing was registered" sh -c "[ ! -s $d/list ]"
insmod /okp/okp_target.ko
insmod /okp/okprobe_example.ko symbol=okp_target_fn 2>/dev/null
check "the entry of an asm function (no ftrace site) is refused the same way" \
  grep -q "^okp_target_fn+0x0	-95	$reason" $d/refused
check "the module's code is untouched: (24 + 1) * 2" sh -c "echo 5 > $call && [ \$(cat $call) = 50 ]"

# 3. Exact counts through ftrace on a module's C function, and a return probe on it.
check "an entry probe on a module's C function registers (ftrace)" insmod /okp/okprobe_example.ko symbol=call_set
echo 3 > $call; echo 4 > $call; echo 5 > $call
check "it counts exactly 3 hits for 3 calls" is "$(hits call_set)" 3
rmmod okprobe_example
check "a return probe on it registers" insmod /okp/okretprobe_example.ko func=call_set
echo 3 > $call; echo 4 > $call
sed 's/^/# list: /' $d/list
check "list shows it as type r with exactly 2 hits, no instance left" \
  grep -Eq '  r  call_set\+0x4 \[okp_target\] \[FTRACE\] hits=2 nmissed=0 .*in_use=0 ' $d/list
check "its return handler saw the real return value (0)" sh -c "dmesg | grep -q 'call_set returned 0 and took'"
check "the function still computes through the return stub: (23 + 1) * 2" is "$(cat $call)" 48
rmmod okretprobe_example
check "a return probe on kernel_clone registers" insmod /okp/okretprobe_example.ko
sh -c true; sh -c true
check "and its return handler runs with the child's pid" \
  sh -c "dmesg | grep -Eq 'kernel_clone returned [1-9][0-9]* and took'"
rmmod okretprobe_example
rmmod okp_target
check "list is empty again" sh -c "[ ! -s $d/list ]"
# What handlers write into the pt_regs okprobes filled from ftrace_regs goes back: an argument,
# an IPMODIFY probe's pc (tests/vm/modules/ftrace_regs.c).
insmod /okp/okp_ftrace_regs.ko
line=$(dmesg | grep OKP-FTREGS | tail -1); echo "$line"
check "entry handlers: argument change, entry pc, redirect with and without IPMODIFY" \
  sh -c "echo '$line' | grep -q 'OKP-FTREGS: PASS'"
rmmod okp_ftrace_regs

# 4. Stress on 4 vCPUs: its steady breakpoint is refused; the same churn on a function entry
#    (entry=1, ftrace) with exact counts; the return-probe stress (entries through ftrace).
insmod /okp/okp_stress.ko min_cycles=1 calls=1 2>/dev/null
check "stress: its steady breakpoint probe is refused with -EOPNOTSUPP and the reason" \
  sh -c "dmesg | grep -q 'OKP-STRESS: FAIL cannot register the steady probe: -95 no breakpoint probes: this kernel dispatches'"
insmod /okp/okp_stress.ko entry=1 min_cycles=${STRESS_CYCLES:-150} calls=${STRESS_CALLS:-100000}
line=$(dmesg | grep OKP-STRESS | tail -1); echo "$line"
check "stress on a function entry (ftrace): exact count, real results, no failed registration" \
  sh -c "echo '$line' | grep -q 'OKP-STRESS: PASS'"
rmmod okp_stress
insmod /okp/okp_retstress.ko min_cycles=${RETSTRESS_CYCLES:-50} calls=${RETSTRESS_CALLS:-30000}
line=$(dmesg | grep OKP-RETSTRESS | tail -1); echo "$line"
check "return-probe stress: exact pairs, real results, exited tasks reclaimed, no stub leaked" \
  sh -c "echo '$line' | grep -q 'OKP-RETSTRESS: PASS'"
rmmod okp_retstress
check "list is empty at the end" sh -c "[ ! -s $d/list ]"

echo "1..$n"
[ $failed = 0 ]
