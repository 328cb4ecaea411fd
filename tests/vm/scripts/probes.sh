# Guest script (busybox sh, x86-64 and arm64): breakpoint and ftrace probes end to end, through
# the sample and the test modules copied to /okp: debugfs list/enabled/blacklist/refused, a probe
# on a second module's text until it is unloaded ([GONE]), coexistence with the kernel's own
# kprobes and with the function tracer, a return probe on a module that goes away, and
# (STRESS_CYCLES / RETSTRESS_CYCLES set) the stress modules. On arm64 the x86-64-only checks
# (jump optimization, the int3 trap path's names) print "# SKIP" with the reason, and arm64's
# counterparts run instead (the BRK trap path's names, boosted and stepped slots).
# Prints TAP lines; exits non-zero if any check failed.
. /okp/tap.sh	# n, failed, check, is, gt, ge, stress_check
# Numbers the "ok - …"/"not ok - …" lines a loop wrote to a file as checks of this script.
tap_file() {
  while read -r line; do
    n=$((n + 1))
    case "$line" in
      not*) failed=$((failed + 1)); echo "not ok $n ${line#not ok - }" ;;
      *) echo "ok $n ${line#ok - }" ;;
    esac
  done < "$1"
}
d=/sys/kernel/debug/okprobes
call=/sys/kernel/debug/okp_target/call
kk=/sys/module/okp_kk/parameters
hits() { sed -n "s/.* $1+.* hits=\([0-9]*\).*/\1/p" $d/list | head -1; }
busy() { ! insmod "$@" 2>/tmp/err && grep -q 'resource busy' /tmp/err; }
# A check this kernel cannot run, said as such: TAP "ok N - ... # SKIP reason".
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
# Has this kernel kprobes of its own? kernel/kprobes.c creates debugfs kprobes/ only with
# CONFIG_KPROBES. Without them, whatever compares okprobes with the kernel's kprobes or runs
# beside them is skipped, and okprobes must say at load that it is the only kprobes here.
if [ -d /sys/kernel/debug/kprobes ]; then kernel_kprobes=1; else kernel_kprobes=; fi
no_kprobes="no CONFIG_KPROBES in this kernel"
# The architecture: both jump-optimize (x86-64: a jmp over a region of whole instructions,
# arm64: one b over the probed instruction, relocated into the detour), and the trap path has
# each arch's names: x86-64 reaches okprobes from exc_int3 through notify_die, arm64 from
# el1_dbg through the break-hook list (call_break_hook -> okp_brk_hook).
arch=$(uname -m)
# arm64 with the debug-exception rework (6.12.93+, 6.17+) delivers no BRK to a module: there a
# probe is its b at once or refused, optimization cannot be turned off, and the trap path is
# the detour's (okp_detour_entry -> okp_detour_hit -> the core).
nobrk=
case $arch in
  aarch64)
    jump_opt=1 no_jump= trap_via='reached from the trap entry'
    trap_builtin=copy_from_kernel_nofault trap_walk=call_break_hook trap_entry=okp_brk_hook
    if ! grep -q ' register_kernel_break_hook$' /proc/kallsyms; then
      nobrk="no breakpoint reaches okprobes on this kernel (arm64 debug-exception rework)"
      trap_walk=okp_detour_hit trap_entry=okp_detour_entry trap_via='reached from okp_detour_entry'
    fi ;;
  *)
    jump_opt=1 no_jump=
    trap_builtin=exc_int3 trap_walk=notify_die trap_entry=okp_die_notify
    trap_via='reached from the trap entry' ;;
esac
if [ -n "$nobrk" ]; then  # before any dmesg -c
  check "okprobes said at load that it writes no BRK and probes are branches to detours" \
    sh -c "dmesg | grep -q 'okprobes: no breakpoint trap on this kernel.*a probe is a branch to its detour'"
fi
if [ -n "$kernel_kprobes" ]; then
  check "okprobes' load log does not claim the kernel lacks kprobes (it has them)" \
    sh -c "! dmesg | grep -q 'okprobes: the kernel has no kprobes of its own'"
else
  check "okprobes' load log says the kernel has no kprobes of its own" \
    sh -c "dmesg | grep -q 'okprobes: the kernel has no kprobes of its own'"
fi

# 1. The sample on its default, kernel_clone: a function entry, served by ftrace.
check "sample registers on kernel_clone" insmod /okp/okprobe_example.ko
check "list: ADDR  k  kernel_clone+0x0 (+0x4 after ENDBR) [FTRACE] hits=N nmissed=N" \
  grep -Eq '^[0-9a-f]{16}  k  kernel_clone\+0x[04] \[FTRACE\] hits=[0-9]+ nmissed=0' $d/list
sh -c true; sh -c true
check "the sample's probe counts hits" gt "$(hits kernel_clone)" 0
echo 0 > $d/enabled; h0=$(hits kernel_clone); sh -c true; sh -c true; h1=$(hits kernel_clone)
check "enabled=0 disarms: no hits" is "$h0" "$h1"
echo 1 > $d/enabled; sh -c true; h2=$(hits kernel_clone)
check "enabled=1 re-arms: hits again" gt "$h2" "$h1"
check "enabled refuses 2" sh -c "! echo 2 > $d/enabled"
rmmod okprobe_example
check "list is empty after unregistering" sh -c "[ ! -s $d/list ]"

# 2. The blacklist: every source, in the documented format.
check "blacklist lines are 0xSTART-0xEND<TAB>SYMBOL<TAB>[SOURCE]" \
  sh -c "! grep -Ev '^0x[0-9a-f]{16}-0x[0-9a-f]{16}	[^	]+	\[[^]]+\]$' $d/blacklist"
if [ -n "$kernel_kprobes" ]; then
  check "blacklist has NOKPROBE_SYMBOL functions" grep -q '	\[_kprobe_blacklist\]$' $d/blacklist
else  # NOKPROBE_SYMBOL() compiles to nothing without CONFIG_KPROBES
  skip "blacklist has NOKPROBE_SYMBOL functions" "$no_kprobes: NOKPROBE_SYMBOL() compiled to nothing"
  check "blacklist has no NOKPROBE_SYMBOL source it could not have read" \
    sh -c "! grep -q '	\[_kprobe_blacklist\]$' $d/blacklist"
fi
check "blacklist has .entry.text" grep -q '\[\.entry\.text\]' $d/blacklist
check "blacklist has .noinstr.text" grep -q '\[\.noinstr\.text\]' $d/blacklist
check "blacklist has okprobes itself" grep -q '\[okprobes\]' $d/blacklist
check "blacklist has the built-in trap path ($trap_builtin)" grep -q "	$trap_builtin	\[built-in\]" $d/blacklist
insmod /okp/okprobe_example.ko symbol=$trap_builtin 2>/dev/null
check "a blacklisted symbol ($trap_builtin) is refused, and debugfs refused says why" \
  grep -q "$trap_builtin+0x0	-22	.*blacklisted" $d/refused
# The trap path of this kernel, derived from its live text (core/trap_path.h): every function
# the breakpoint trap runs on its way to okprobes is listed with where it was reached from,
# and a probe on any of them is refused (on Debian's PREEMPT_DYNAMIC kernel __rcu_read_lock,
# reached from notify_die, used to recurse until the NMI count overflowed).
check "blacklist derives the trap path: $trap_walk, $trap_via" \
  grep -q "	$trap_walk	\[trap path, $trap_via\]\$" $d/blacklist
check "blacklist derives the trap path: okprobes' own trap entry ($trap_entry)" \
  grep -q "	$trap_entry	\[trap path, reached from the trap entry\]\$" $d/blacklist
# TRAP_PATH_STRIDE=k tries every k-th (tests/check: test-debug, where an insmod under KASAN
# takes half a second and the trap path has hundreds of functions).
grep '	\[trap path, ' $d/blacklist | awk -v k="${TRAP_PATH_STRIDE:-1}" '(NR - 1) % k == 0' |
while IFS='	' read -r range name origin; do
  start=${range%%-*}
  if insmod /okp/okprobe_example.ko addr=$start 2>/dev/null; then
    rmmod okprobe_example; echo "not ok - trap path: $name ($origin) was accepted"
  elif grep -q "^$start+0x0	-22	.*blacklisted" $d/refused; then
    echo "ok - trap path: a probe on $name is refused $origin"
  else
    echo "not ok - trap path: $name refused, but not as blacklisted: $(tail -1 $d/refused)"
  fi
done > /tmp/trap_path.tap
n_tp=$(grep -c '^ok - ' /tmp/trap_path.tap); bad_tp=$(grep -c '^not ok - ' /tmp/trap_path.tap)
tap_file /tmp/trap_path.tap
check "the trap path has functions to refuse ($n_tp refused, $bad_tp not)" gt "$n_tp" 5
if [ -n "$nobrk" ] && grep -q ' __rcu_read_lock$' /proc/kallsyms; then
  skip "__rcu_read_lock+0x5 (the probe that crashed Debian's kernel) is refused: trap path" \
    "$nobrk: the detour's path does not reach __rcu_read_lock"
elif grep -q ' __rcu_read_lock$' /proc/kallsyms; then  # preemptible RCU: the reported crash
  insmod /okp/okprobe_example.ko symbol=__rcu_read_lock offset=5 2>/dev/null
  check "__rcu_read_lock+0x5 (the probe that crashed Debian's kernel) is refused: trap path" \
    grep -q '^__rcu_read_lock+0x5	-22	.*\[trap path, reached from ' $d/refused
fi
if grep -q ' __pfx_kernel_clone$' /proc/kallsyms; then  # 6.2+ function padding (CALL_PADDING)
  insmod /okp/okprobe_example.ko symbol=__pfx_kernel_clone 2>/dev/null
  check "function padding (__pfx_kernel_clone) is refused as blacklisted, with the reason" \
    grep -q '^__pfx_kernel_clone+0x0	-22	.*blacklisted.*function padding' $d/refused
  insmod /okp/okprobe_example.ko symbol=__pfx_kernel_clone offset=7 2>/dev/null
  check "... and so is a NOP inside it (__pfx_kernel_clone+0x7)" \
    grep -q '^__pfx_kernel_clone+0x7	-22	.*function padding' $d/refused
fi
insmod /okp/okprobe_example.ko symbol=no_such_symbol_okp 2>/dev/null
check "an unknown symbol is refused with -ENOENT" grep -q 'no_such_symbol_okp+0x0	-2	' $d/refused

# 3. A probe on a second module's text, until that module goes away.
insmod /okp/okp_target.ko
check "probe on a module's text registers" insmod /okp/okprobe_example.ko symbol=okp_target_body
echo 5 > $call
check "it counts exactly 5 hits for 5 calls" is "$(hits 'okp_target_[a-z]*')" 5
check "the probed module still computes (24 + 1) * 2" is "$(cat $call)" 50
check "list names the module" grep -Eq ' okp_target_[a-z]*\+0x0 \[okp_target\] (\[OPTIMIZED\] )?hits=5 ' $d/list
rmmod okp_target
check "after the module is unloaded the probe shows [GONE]" \
  grep -q 'okp_target_[a-z]*+0x0 \[okp_target\] \[GONE\].*reason="module okp_target was unloaded' $d/list
check "a [GONE] probe unregisters cleanly" rmmod okprobe_example
check "list is empty again" sh -c "[ ! -s $d/list ]"

# 3b. A return probe on a second module's function, until that module goes away.
insmod /okp/okp_target.ko
check "return probe on a module's function registers" insmod /okp/okretprobe_example.ko func=okp_target_fn
echo 5 > $call
check "list shows it as type r with 5 hits" grep -Eq '  r  okp_target_[a-z]*\+0x0 \[okp_target\] (\[OPTIMIZED\] )?hits=5 .*in_use=0 ' $d/list
check "the return-probed module still computes (24 + 1) * 2" is "$(cat $call)" 50
check "its return handler saw the real return value" sh -c "dmesg | grep -q 'okp_target_fn returned 50 and took'"
rmmod okp_target
check "after the module is unloaded the return probe shows [GONE]" \
  grep -q '  r  okp_target_[a-z]*+0x0 \[okp_target\] \[GONE\].*reason="module okp_target was unloaded' $d/list
check "a [GONE] return probe unregisters cleanly" rmmod okretprobe_example
check "list is empty again" sh -c "[ ! -s $d/list ]"
insmod /okp/okretprobe_example.ko func=do_exit 2>/dev/null
check "a return probe on do_exit is refused: it never returns" \
  grep -q '^do_exit+0x0	-22	no return probe on do_exit.*never returns' $d/refused
echo 1 > /proc/sys/debug/okprobes-return-stubs	# okprobes' stubs: none reserved at registration
insmod /okp/okretprobe_example.ko maxactive=20000
check "through okprobes' stubs a return probe takes maxactive=20000, more than the stubs" \
  grep -Eq '  r  kernel_clone\+0x[0-9a-f]+ .* maxactive=20000 .*return=stubs' $d/list
rmmod okretprobe_example
insmod /okp/okretprobe_example.ko maxactive=100000 2>/dev/null
check "a return probe refused before its entry is placed is in debugfs refused too" \
  grep -q "^kernel_clone+0x0	-7	maxactive over 65536 instances" $d/refused
echo 0 > /proc/sys/debug/okprobes-return-stubs

# 3b'. A task sleeping under an armed return probe: through the kernel (its rethook, or on
#      arm64 its kretprobe trampoline), its /proc/PID/stack shows the probed function's real
#      caller; with okprobes' stubs the kernel's unwinder stops at the stub (the documented
#      limitation).
check "debugfs return_probes names the return mechanism" grep -Eq '^(rethook|kretprobe|stubs): ' $d/return_probes
kernel_route=$(grep -Eo '^(rethook|kretprobe)' $d/return_probes)
if [ -n "$kernel_route" ]; then
  insmod /okp/okretprobe_example.ko func=do_nanosleep
  sleep 30 & sleeper=$!
  # /proc/PID/stack leaves out scheduler functions: do_nanosleep (__sched) too, so the trace
  # starts at its caller, which the diverted return address hides unless the unwinder
  # recovers it.
  for i in 1 2 3 4 5 6 7 8 9 10; do grep -q nanosleep /proc/$sleeper/stack && break; sleep 0.2; done
  cat /proc/$sleeper/stack
  check "list shows the return probe through $kernel_route" grep -q "  r  do_nanosleep+0x[0-9a-f]* .*return=$kernel_route" $d/list
  check "/proc/PID/stack under a $kernel_route return probe starts at do_nanosleep's real caller" \
    sh -c "head -1 /proc/$sleeper/stack | grep -q hrtimer_nanosleep"
  check "/proc/PID/stack shows no trampoline" sh -c "! grep -q 'rethook_trampoline\|kretprobe_trampoline\|okp_return_stubs' /proc/$sleeper/stack"
  kill $sleeper; wait $sleeper 2>/dev/null
  check "the return probe unregisters" rmmod okretprobe_example
fi

# 3c. Jump optimization: a probe without post_handler becomes a jump to a detour shortly after
#     it registers; the sysctl takes it back to its breakpoint and again, with exact counts
#     while it flips under load; the module unloads under an optimized probe; reasons.
#     arm64's detour is one instruction: no wait (no optimizer_waits), and what a handler
#     sees there is checked as its own (the stack past a leaf, the post ip).
opt=/proc/sys/debug/okprobes-optimization
call_opt=/sys/kernel/debug/okp_target/call_opt
# Up to 20 s for list to match (the optimizer batches after a short delay, then waits for a
# tasks-RCU grace period, slow on an emulator).
wait_list() { i=0; while [ $i -lt 200 ] && ! grep -Eq "$1" $d/list; do sleep 0.1; i=$((i + 1)); done; grep -Eq "$1" $d/list; }
optimized=' okp_target_opt\+0x[0-9a-f]+ \[okp_target\] \[OPTIMIZED\] '
# A check of the optimizer's work, or the reason this arch has none.
opt_check() { # description, extended regex list must come to match
  if [ -n "$jump_opt" ]; then check "$1" wait_list "$2"; else skip "$1" "$no_jump"; fi
}
insmod /okp/okp_target.ko
check "sysctl debug.okprobes-optimization is on by default" is "$(cat $opt)" 1
check "a probe without a post_handler registers" insmod /okp/okprobe_example.ko symbol=okp_target_opt post=0
opt_check "it is jump-optimized shortly after ([OPTIMIZED])" "$optimized"
# Its region (several instructions) needed proof that no task was stopped inside it: where the
# kernel preempts (tasks-RCU), one look at every task's stack in stop_machine(); on PREEMPT_RT a
# tasks-RCU wait; without preemption neither (debugfs optimizer_waits, task_snapshot.c).
if [ "$arch" = aarch64 ]; then
  check "arm64: a one-instruction region waits for nothing (no optimizer_waits)" \
    sh -c "[ ! -e $d/optimizer_waits ]"
elif [ -n "$jump_opt" ]; then
  cat $d/optimizer_waits
  field() { sed -n "s/^$1: //p" $d/optimizer_waits; }
  case "$(field method)" in
    every*) check "the jump's wait was proven from every task's stack (optimizer_waits)" gt "$(field proven_by_stacks)" 0 ;;
    none*) check "no wait needed without preemption (optimizer_waits)" gt "$(field no_wait_needed)" 0 ;;
    *) check "the jump waited for tasks-RCU and says why (optimizer_waits)" gt "$(field waited_for_tasks_rcu)" 0 ;;
  esac
  # Where exiting tasks are out of the look's sight (6.12) it proves nothing once the kernel
  # preempts involuntarily: switched to full preemption, the next jump waits, saying why.
  pre=/sys/kernel/debug/sched/preempt
  if [ -f $pre ] && field exiting_tasks | grep -q '^no involuntary'; then
    mode=$(sed -n 's/.*(\([a-z]*\)).*/\1/p' $pre)
    waited=$(field waited_for_tasks_rcu)
    echo full > $pre
    rmmod okprobe_example
    insmod /okp/okprobe_example.ko symbol=okp_target_opt post=0
    check "full preemption, exiting tasks out of sight: the jump waits for tasks-RCU ([OPTIMIZED])" wait_list "$optimized"
    check "optimizer_waits counts that wait and says why" \
      sh -c "[ $(field waited_for_tasks_rcu) -gt $waited ] && grep -q '^last_reason_to_wait: full preemption' $d/optimizer_waits"
    echo "$mode" > $pre
    rmmod okprobe_example
    insmod /okp/okprobe_example.ko symbol=okp_target_opt post=0
    check "back to $mode preemption: optimized again" wait_list "$optimized"
  fi
else
  skip "the jump's wait (optimizer_waits)" "$no_jump"
fi
echo 7 > $call_opt
check "7 calls (through the detour where optimized) count exactly 7 hits" is "$(hits okp_target_opt)" 7
check "the probed module still computes (26 + 1) * 2 + 3" is "$(cat $call_opt)" 57
if [ -n "$nobrk" ]; then
  check "optimization off is refused (-EPERM) where no breakpoint reaches okprobes" \
    sh -c "! echo 0 > $opt 2>/dev/null"
  check "... saying why, and the probe stays a jump" \
    sh -c "dmesg | grep -q 'debug.okprobes-optimization=0 refused: no breakpoint reaches okprobes' && grep -Eq '$optimized' $d/list"
fi
echo 0 > $opt 2>/dev/null
if [ -n "$nobrk" ]; then
  :
elif [ -n "$jump_opt" ]; then
  check "optimization off: back on the breakpoint, saying why" \
    grep -q 'okp_target_opt+0x[0-9a-f]* \[okp_target\] hits=7 nmissed=0 reason="not optimized: optimization off' $d/list
else
  skip "optimization off: back on the breakpoint, saying why" "$no_jump"
fi
echo 3 > $call_opt
check "the breakpoint (or, without one, the jump) counts on (10 hits)" is "$(hits okp_target_opt)" 10
echo 1 > $opt
opt_check "optimization on again: [OPTIMIZED]" "$optimized"
rm -f /tmp/caller_done
( i=0; while [ $i -lt 40 ]; do echo 500 > $call_opt; i=$((i + 1)); done; touch /tmp/caller_done ) &
flips=0
while [ ! -e /tmp/caller_done ]; do echo $((flips % 2)) > $opt 2>/dev/null; flips=$((flips + 1)); done
wait
echo 1 > $opt
check "exact hits across $flips sysctl flips under load (10 + 40 * 500)" is "$(hits okp_target_opt)" 20010
check "the probed module still computes right after the flips" is "$(cat $call_opt)" 1043
opt_check "optimized again after the flips" "$optimized"
rmmod okprobe_example
dmesg -c > /dev/null
check "a probe that dumps the stack on its first hit registers" \
  insmod /okp/okprobe_example.ko symbol=okp_target_opt post=0 dump=1
opt_check "it is optimized" "$optimized"
echo 1 > $call_opt
dmesg > /tmp/dump
check "a stack trace taken in the handler of the probe shows the probed function" \
  grep -q 'okprobe_example: stack:.* okp_target_opt+0x' /tmp/dump
if [ "$arch" != aarch64 ]; then
  check "... and its callers (okp_target's debugfs write, then the VFS)" \
    grep -q 'okprobe_example: stack:.* okp_target_opt+0x.* call_opt_set+0x.* vfs_write+0x' /tmp/dump
else  # arm64: okp_target_opt is a leaf, its caller only in x30, which no frame record holds
  check "... and its callers past the leaf's (the debugfs write, then the VFS)" \
    grep -q 'okprobe_example: stack:.* okp_target_opt+0x.* debugfs_attr_write+0x.* vfs_write+0x' /tmp/dump
fi
rmmod okp_target
check "the module unloads under the probe (optimized where that exists), which shows [GONE]" \
  grep -q 'okp_target_opt+0x[0-9a-f]* \[okp_target\] \[GONE\]' $d/list
check "the [GONE] probe unregisters cleanly" rmmod okprobe_example
insmod /okp/okp_target.ko
dmesg -c > /dev/null
check "a probe with a post_handler registers" insmod /okp/okprobe_example.ko symbol=okp_target_opt
opt_check "it is jump-optimized too (its post_handler runs from the detour)" "$optimized"
echo 2 > $call_opt
check "2 calls: 2 hits" is "$(hits okp_target_opt)" 2
if [ "$arch" != aarch64 ]; then
  check "its post_handler saw ip after the first instruction (lea, 4 bytes)" \
    sh -c "dmesg | grep -q 'okp_target_opt+0x[0-9a-f]*> post: ip=.*'"
else  # arm64: the probed add (relocated into the detour) is 4 bytes; post sees the next one
  pre_ip=$(dmesg | sed -n 's/.*<okp_target_opt+0x[0-9a-f]*> pre: ip=\([0-9a-f]*\) .*/\1/p' | tail -1)
  post_ip=$(dmesg | sed -n 's/.*<okp_target_opt+0x[0-9a-f]*> post: ip=\([0-9a-f]*\) .*/\1/p' | tail -1)
  check "its post_handler saw ip after the probed instruction (pre ip + 4: $pre_ip, $post_ip)" \
    is "$(printf %x $((0x${pre_ip:-0} + 4)))" "${post_ip:-none}"
fi
check "the probed module still computes (21 + 1) * 2 + 3" is "$(cat $call_opt)" 47
rmmod okprobe_example
check "a return probe on an assembly function (a breakpoint entry) registers" \
  insmod /okp/okretprobe_example.ko func=okp_target_opt
opt_check "its entry probe is jump-optimized too" \
  '  r  okp_target_opt\+0x[0-9a-f]+ \[okp_target\] \[OPTIMIZED\] '
echo 4 > $call_opt
check "4 calls: 4 hits, every instance back (in_use=0)" \
  grep -Eq "  r  okp_target_opt\\+0x[0-9a-f]+ \\[okp_target\\] ${jump_opt:+\\[OPTIMIZED\\] }hits=4 .*in_use=0 " $d/list
check "its return handler saw the real return value ((23 + 1) * 2 + 3)" \
  sh -c "dmesg | grep -q 'okp_target_opt returned 51 and took'"
rmmod okretprobe_example
if [ "$arch" != aarch64 ]; then  # arm64's detour decodes only the probed word
  insmod /okp/okprobe_example.ko symbol=okp_target_body post=0
  check "a probe on an assembly function's inner label is not optimized, with a reason" \
    wait_list 'okp_target_[a-z]*\+0x0 .*reason="not optimized: '
  rmmod okprobe_example
else
  skip "a probe on an assembly function's inner label is not optimized, with a reason" \
    "arm64's region is the probed instruction alone: no neighbour is decoded"
fi
rmmod okp_target
check "list is empty again" sh -c "[ ! -s $d/list ]"
sct=$(awk '$3 ~ /^__SCT__/ {print $3; exit}' /proc/kallsyms)
if [ -n "$sct" ]; then
  insmod /okp/okprobe_example.ko symbol=$sct 2>/dev/null
  check "a static call's trampoline ($sct) is refused: static_call_update() rewrites it" \
    grep -q "$sct.*static call trampoline" $d/refused
else  # arm64 6.1 has no HAVE_STATIC_CALL: static calls are plain indirect calls
  skip "a static call's trampoline is refused: static_call_update() rewrites it" \
    "no static call trampolines (__SCT__*) in this kernel"
fi

# 3d. arm64, optimization off (the breakpoint path, the fallback where no branch reaches): an
#     instruction run from a slot (okp_target_second: add x0, x0, x0, a shifted register) is
#     boosted (the slot's copy branches back: one BRK per hit) when its probes have no
#     post_handler, and stepped (a second BRK after the copy) when one has, which the probe's
#     reason says; both count exactly and keep the function's result.
if [ "$arch" = aarch64 ] && [ -n "$nobrk" ]; then
  for what in "a probe with a post_handler on a slot-stepped add registers" \
      "stepped: 5 calls, 5 hits, the reason says why it is not boosted" \
      "stepped: the function still computes (24 + 1) * 2" \
      "the same probe without a post_handler registers" \
      "boosted: 5 calls, 5 hits, and no reason but the optimization's" \
      "boosted: the function still computes (24 + 1) * 2"; do
    skip "$what" "$nobrk"
  done
elif [ "$arch" = aarch64 ]; then
  echo 0 > $opt
  second=' okp_target_[a-z]+\+0x[0-9a-f]+ \[okp_target\] hits=5 nmissed=0'
  insmod /okp/okp_target.ko
  check "a probe with a post_handler on a slot-stepped add registers" \
    insmod /okp/okprobe_example.ko symbol=okp_target_second
  echo 5 > $call
  check "stepped: 5 calls, 5 hits, the reason says why it is not boosted" \
    grep -Eq "$second reason=\"not optimized: optimization off[^;\"]*; not boosted: a post_handler needs the trap after the instruction\"\$" $d/list
  check "stepped: the function still computes (24 + 1) * 2" is "$(cat $call)" 50
  rmmod okprobe_example
  check "the same probe without a post_handler registers" \
    insmod /okp/okprobe_example.ko symbol=okp_target_second post=0
  echo 5 > $call
  check "boosted: 5 calls, 5 hits, and no reason but the optimization's" \
    grep -Eq "$second reason=\"not optimized: optimization off[^;\"]*\"\$" $d/list
  check "boosted: the function still computes (24 + 1) * 2" is "$(cat $call)" 50
  rmmod okprobe_example
  rmmod okp_target
  echo 1 > $opt
fi

# 3e. Symbols as users name them (symbol_lookup.c): okp_target's functions GCC cloned
# (target_clones.c) by their source names, two clones of one name refused with both named, and
# an unknown name refused with the nearest ("did you mean").
insmod /okp/okp_target.ko
reason_of() { sed -n "s/^$1	-*[0-9]*	//p" $d/refused | tail -1; }
if grep -q ' okp_target_scaled\.constprop\.0	\[okp_target\]' /proc/kallsyms; then
  check "a .constprop clone registers by its source name (okp_target_scaled)" \
    insmod /okp/okprobe_example.ko symbol=okp_target_scaled
  check "list names the clone: okp_target_scaled.constprop.0" \
    grep -q ' okp_target_scaled\.constprop\.0+0x[0-9a-f]* \[okp_target\]' $d/list
  rmmod okprobe_example
  insmod /okp/okprobe_example.ko symbol=okp_target:okp_target_scaled.isra.0 2>/dev/null
  check "a wrong clone suffix: refused, did you mean the clone there is" \
    grep -q "^okp_target:okp_target_scaled.isra.0+0x0	-2	.*did you mean 'okp_target:okp_target_scaled\.constprop\.0'" $d/refused
else
  skip "a .constprop clone registers by its source name" "the compiler made no okp_target_scaled.constprop.0 here"
fi
if grep -q ' okp_target_first\.isra\.0	\[okp_target\]' /proc/kallsyms; then
  check "an .isra clone registers by its source name (okp_target_first)" \
    insmod /okp/okprobe_example.ko symbol=okp_target_first
  check "list names the clone: okp_target_first.isra.0" \
    grep -q ' okp_target_first\.isra\.0+0x[0-9a-f]* \[okp_target\]' $d/list
  rmmod okprobe_example
else
  skip "an .isra clone registers by its source name" "the compiler made no okp_target_first.isra.0 here"
fi
if [ "$(grep -c ' okp_target_twin\.[a-z]*\.0	\[okp_target\]' /proc/kallsyms)" = 2 ]; then
  insmod /okp/okprobe_example.ko symbol=okp_target_twin 2>/dev/null
  check "two clones of one name: refused with -EADDRNOTAVAIL, both named" sh -c \
    "grep '^okp_target_twin+0x0	-99	.*ambiguous.*compiler clones' $d/refused | grep 'okp_target:okp_target_twin.isra.0@' | grep -q 'okp_target:okp_target_twin.constprop.0@'"
else
  skip "two clones of one name are refused" "the compiler did not clone both okp_target_twin here"
fi
insmod /okp/okprobe_example.ko symbol=kernel_clnoe 2>/dev/null
check "a typo: refused with -ENOENT, did you mean 'kernel_clone'" \
  grep -q "^kernel_clnoe+0x0	-2	no text symbol 'kernel_clnoe'; did you mean 'kernel_clone'?" $d/refused
check "... and the log line says so too" sh -c "dmesg | grep -q \"okprobes: refused probe at kernel_clnoe+0x0: .*did you mean 'kernel_clone'\""

# 3f. debugfs explain: a registration's verdict without registering (registry_explain.cpp),
# compared with real registrations on the same sites.
explain() { echo "$1" > $d/explain 2>/dev/null; cat $d/explain; }
matches() { echo "$1" | grep -Eq "$2"; }
list_before=$(cat $d/list)
for q in kernel_clone okp_target:okp_target_opt okp_target_opt+1 $trap_builtin; do
  echo "# explain $q: $(explain $q)"  # what a reader of the log sees the file answer
done
check "explain: a function entry is accepted, through ftrace" matches "$(explain kernel_clone)" \
  '^accepted kernel_clone\+0x[04] at 0x[0-9a-f]+: function entry through ftrace'
check "... as registered ([FTRACE])" insmod /okp/okprobe_example.ko symbol=kernel_clone
check "... (list: kernel_clone [FTRACE])" grep -Eq ' kernel_clone\+0x[04] \[FTRACE\] ' $d/list
rmmod okprobe_example
check "explain registers nothing (list unchanged)" is "$(cat $d/list)" "$list_before"
check "explain finds a clone by its source name" matches "$(explain okp_target:okp_target_scaled)" \
  '^accepted okp_target_scaled(\.constprop\.0)?\+0x[0-9a-f]+ \[okp_target\] at '
check "explain gives the ambiguity's refusal" matches "$(explain okp_target_twin)" \
  '^refused okp_target_twin\+0x0 \(-99\): .*ambiguous' 
e=$(explain $trap_builtin); insmod /okp/okprobe_example.ko symbol=$trap_builtin 2>/dev/null
check "explain: a blacklisted function refused with the registration's errno and reason" \
  is "$e" "refused $trap_builtin+0x0 (-22): $(reason_of "$trap_builtin+0x0")"
if [ -n "$jump_opt" ]; then
  check "explain: okp_target_opt would be jump-optimized" matches "$(explain okp_target:okp_target_opt)" \
    '^accepted okp_target_opt\+0x[04] \[okp_target\] at 0x[0-9a-f]+: (breakpoint on [^,]+, .*; )?optimized: a jump over \+0x[04]'
  insmod /okp/okprobe_example.ko symbol=okp_target_opt post=0
  check "... and registered, it is ([OPTIMIZED])" wait_list "$optimized"
  rmmod okprobe_example
fi
# A sample of sites, every byte of two functions: explain's verdict (accepted, or refused with
# an errno and reason) equals the registration's.
for sym in okp_target_opt kernel_clone; do
  off=0
  while [ $off -lt 12 ]; do
    e=$(explain "$sym+$off")
    if insmod /okp/okprobe_example.ko symbol=$sym offset=$off post=0 2>/dev/null; then
      rmmod okprobe_example
      case "$e" in accepted*) echo "ok - explain $sym+$off: accepted, as registered" ;;
        *) echo "not ok - explain $sym+$off said '$e', but it registered" ;; esac
    else
      r=$(grep "^$sym+0x$(printf %x $off)	" $d/refused | tail -1 | tr '\t' '|')
      want="refused $sym+0x$(printf %x $off) ($(echo "$r" | cut -d'|' -f2)): $(echo "$r" | cut -d'|' -f3-)"
      if [ "$e" = "$want" ]; then echo "ok - explain $sym+$off: refused as registered"
      else echo "not ok - explain $sym+$off said '$e', the registration '$want'"; fi
    fi
    off=$((off + 1))
  done
done > /tmp/explain_sweep.tap
tap_file /tmp/explain_sweep.tap
check "the sample had refusals to compare ($(grep -c 'refused as registered' /tmp/explain_sweep.tap))" \
  gt "$(grep -c 'refused as registered' /tmp/explain_sweep.tap)" 3
# Bad requests: an error line and a failed write, never an oops (run-guest fails on one).
check "explain: garbage is an error line" sh -c \
  "! echo 'foo bar!' > $d/explain && grep -q '^error (-22): ' $d/explain"
head -c 5000 /dev/zero | tr '\0' a > /tmp/huge
check "explain: a 5000-byte line is an error line" sh -c \
  "! cat /tmp/huge > $d/explain && grep -q '^error (-22): a request is at most' $d/explain"
check "explain: a bad address is an error line" sh -c \
  "! echo 0xzz > $d/explain && grep -q '^error (-22): the address is not' $d/explain"
check "explain: an unknown module is refused as a registration would" sh -c \
  "echo no_such_mod:foo > $d/explain && grep -q \"^refused no_such_mod:foo+0x0 (-2): no text symbol 'no_such_mod:foo'\" $d/explain"
addr_opt=$(sed -n 's/^\([0-9a-f]*\) [tT] okp_target_opt[[:space:]].*/\1/p' /proc/kallsyms)
check "explain: an address as /proc/kallsyms prints it (okp_target_opt's)" \
  matches "$(explain "$addr_opt")" '^accepted okp_target_opt\+0x[04] \[okp_target\] at '
check "explain: an address that is not text is refused" sh -c \
  "echo 0x10+4 > $d/explain && grep -q '^refused 0x10+0x4 (-22): 0*14 is not kernel or module text' $d/explain"
rmmod okp_target

# 4. The kernel's own kprobes beside okprobes.
if [ -n "$kernel_kprobes" ]; then
insmod /okp/okp_target.ko
insmod /okp/okp_kk.ko symbol=okp_target_second
insmod /okp/okprobe_example.ko symbol=okp_target_body
echo 5 > $call
check "kernel kprobe registers one instruction after an okprobe" is "$(cat $kk/result)" 0
check "the kernel kprobe fires 5 times" is "$(cat $kk/hits)" 5
check "the okprobe fires 5 times" is "$(hits 'okp_target_[a-z]*')" 5
check "and the function's result is unchanged" is "$(cat $call)" 50
rmmod okprobe_example; rmmod okp_kk
insmod /okp/okp_kk.ko symbol=okp_target_body
check "okprobe on a kernel kprobe's address: -EBUSY" busy /okp/okprobe_example.ko symbol=okp_target_body
rmmod okp_kk
insmod /okp/okprobe_example.ko symbol=okp_target_body
insmod /okp/okp_kk.ko symbol=okp_target_body
check "kernel kprobe on an okprobe's address is refused by the kernel" sh -c "[ $(cat $kk/result) -lt 0 ]"
rmmod okp_kk; rmmod okprobe_example; rmmod okp_target
# A kernel kprobe on the instruction after an okprobe's, inside what would be its detour
# region: the okprobe stays a breakpoint, and its reason says where the kernel's probe is.
insmod /okp/okp_target.ko
insmod /okp/okprobe_example.ko symbol=okp_target_opt post=0
at=$(sed -n 's/.* okp_target_opt+\(0x[0-9a-f]*\) .*/\1/p' $d/list | head -1)
rmmod okprobe_example
insmod /okp/okp_kk.ko symbol=okp_target_opt offset=$((at + 4))  # after lea 1(%rdi),%rax / add x0, x0, #1
insmod /okp/okprobe_example.ko symbol=okp_target_opt post=0
if [ "$arch" = aarch64 ]; then  # the region is the probed word: the next one is outside
  opt_check "a kernel kprobe on the next instruction: outside the one-word region, optimized" \
    "okp_target_opt\\+$at \\[okp_target\\] \\[OPTIMIZED\\] "
else
  opt_check "a kernel kprobe inside the region: not optimized, the reason says where" \
    "okp_target_opt\\+$at .*reason=\"not optimized: kernel kprobe at \\+0x$(printf %x $((at + 4))) (inside|.*where) the region"
fi
echo 3 > $call_opt
check "both fire, and the function computes the same" is "$(cat $kk/hits) $(hits okp_target_opt) $(cat $call_opt)" "3 3 49"
rmmod okprobe_example; rmmod okp_kk; rmmod okp_target
else
  for what in "kernel kprobe registers one instruction after an okprobe" \
      "the kernel kprobe fires 5 times" "the okprobe fires 5 times" \
      "and the function's result is unchanged" "okprobe on a kernel kprobe's address: -EBUSY" \
      "kernel kprobe on an okprobe's address is refused by the kernel" \
      "a kernel kprobe inside the region: not optimized, the reason says where" \
      "both fire, and the function computes the same"; do
    skip "$what" "$no_kprobes: nothing to coexist with"
  done
  # The kernel-kprobe client still loads: register_kprobe() is a stub saying -EOPNOTSUPP.
  insmod /okp/okp_kk.ko symbol=okp_target_second 2>/dev/null
  check "register_kprobe() here is the stub: -EOPNOTSUPP (-95)" is "$(cat $kk/result 2>/dev/null)" -95
  rmmod okp_kk 2>/dev/null
fi

# 4b. The kernel's kprobes at every byte after okprobes' int3 or jump (okp_kk_drift.ko): the
#     kernel's can_probe() decodes okprobes' bytes as if they were the original ones, so its
#     walk could land inside an instruction; okprobes must keep it from accepting any byte
#     there or okprobes' own site, and both kinds of probe must work and come off in either
#     order (docs/architecture.md, "The kernel's kprobes beside okprobes").
if [ "$(uname -m)" = x86_64 ]; then  # the drift is x86 decoding's: variable lengths
  kkd=/sys/module/okp_kk_drift/parameters opt=/proc/sys/debug/okprobes-optimization
  for mode in "site=0 optimized=0" "site=2 optimized=0" "site=0 optimized=1"; do
    if [ -z "$kernel_kprobes" ]; then
      skip "okp_kk_drift $mode: no kernel kprobe inside an instruction or on okprobes' site" "$no_kprobes"
      continue
    fi
    case $mode in *optimized=0) echo 0 > $opt ;; *) echo 1 > $opt ;; esac
    insmod /okp/okp_kk_drift.ko $mode
    echo "# okp_kk_drift $mode: the kernel accepted $(cat $kkd/accepted)"
    check "okp_kk_drift $mode: the kernel accepts no kprobe inside an instruction" \
      is "$(cat $kkd/nonboundary)" 0
    check "okp_kk_drift $mode: nor one on okprobes' own site" is "$(cat $kkd/on_site)" N
    check "okp_kk_drift $mode: every probe counts, results right, removed in either order" \
      is "$(cat $kkd/verdict)" PASS
    rmmod okp_kk_drift
  done
  if [ -n "$kernel_kprobes" ]; then
    # okprobes' int3 on a jnz hides it from the kernel's can_optimize(): a kernel kprobe 4
    # bytes before its target must not become a jump over that target.
    echo 0 > $opt
    insmod /okp/okp_kk_drift.ko branch=1
    echo "# okp_kk_drift branch=1: register_kprobe() before the jnz's target: $(cat $kkd/branch_result)"
    check "a kernel kprobe just before a branch target okprobes hides is not optimized over it" \
      is "$(cat $kkd/branch_optimized) $(cat $kkd/verdict)" "N PASS"
    rmmod okp_kk_drift
    # The mirror: okprobes' own decoder through the kernel's optimized jump.
    insmod /okp/okp_kk_drift.ko mirror=1
    echo "# okp_kk_drift mirror=1: okprobes accepted $(cat $kkd/accepted) beside the kernel's jump"
    check "okprobes accepts no probe inside an instruction after a kernel optprobe's jump" \
      is "$(cat $kkd/mirror_optimized) $(cat $kkd/mirror_nonboundary) $(cat $kkd/verdict)" "Y 0 PASS"
    rmmod okp_kk_drift
    # okprobes' int3 on a tail call through a retpoline thunk hides an indirect jump from the
    # kernel's can_optimize(): the whole function is fenced (the kernel refuses its start).
    insmod /okp/okp_kk_drift.ko thunk=1
    echo "# okp_kk_drift thunk=1: byte at the jump $(cat $kkd/thunk_form), register_kprobe() at the start: $(cat $kkd/thunk_before) before, $(cat $kkd/thunk_result) with okprobes' int3 on the jump"
    check "a jump to a retpoline thunk under okprobes' int3 fences the whole function" \
      is "$(cat $kkd/thunk_form) $(cat $kkd/thunk_before) $(cat $kkd/thunk_result) $(cat $kkd/verdict)" "233 0 -22 PASS"
    rmmod okp_kk_drift
  else
    skip "a kernel kprobe just before a branch target okprobes hides is not optimized over it" "$no_kprobes"
    skip "okprobes accepts no probe inside an instruction after a kernel optprobe's jump" "$no_kprobes"
    skip "a jump to a retpoline thunk under okprobes' int3 fences the whole function" "$no_kprobes"
  fi
  echo 1 > $opt
  if [ -n "$kernel_kprobes" ]; then
    # The fence is an entry of the kernel's own blacklist: its debugfs lists it, then drops it.
    insmod /okp/okp_target.ko; insmod /okp/okprobe_example.ko symbol=okp_target_opt post=0
    check "the kernel's kprobes/blacklist lists the bytes okprobes fenced off" \
      grep -q 'okp_target_opt' /sys/kernel/debug/kprobes/blacklist
    rmmod okprobe_example
    check "and no longer once the okprobe is gone" \
      sh -c "! grep -q okp_target_opt /sys/kernel/debug/kprobes/blacklist"
    rmmod okp_target
  fi
fi

# 5. A function-entry probe beside the function tracer.
t=/sys/kernel/tracing
mount -t tracefs nodev $t 2>/dev/null
if [ -w $t/current_tracer ] && grep -qw function $t/available_tracers; then
  echo kernel_clone > $t/set_ftrace_filter
  echo function > $t/current_tracer
  insmod /okp/okprobe_example.ko
  sh -c true; sh -c true
  check "the function tracer records kernel_clone beside the okprobe" grep -q kernel_clone $t/trace
  check "the okprobe on kernel_clone fires under the function tracer" gt "$(hits kernel_clone)" 0
  rmmod okprobe_example
  echo nop > $t/current_tracer
  echo > $t/set_ftrace_filter
else
  check "function tracer available" false
fi

# 5b. okprobes' own hit path is off-limits to the kernel's kprobes (core/hit_path.h): every
#     okprobes function the derived trap path reaches is refused by register_kprobe() itself
#     (okp_kk: a kernel kprobe client that reports the errno), with -EINVAL from the kernel's
#     kprobe blacklist; a function off the hit path is accepted, so the check can fail.
#     (kprobe_events cannot tell: it refuses any function without an fentry call as
#     "notrace" before it looks at the blacklist, and the hit path is built without one.)
if [ -n "$kernel_kprobes" ]; then
grep '\[okprobes\]$' /proc/kallsyms | cut -d' ' -f1 | sort > /tmp/okp_text
grep '	\[trap path, ' $d/blacklist | cut -f1,2 | while IFS='	' read -r range name; do
  start=${range%%-*}
  grep -qx "${start#0x}" /tmp/okp_text || continue
  insmod /okp/okp_kk.ko addr=$start 2>/dev/null  # by address: long C++ names are cut
  r=$(cat $kk/result); rmmod okp_kk
  if [ "$r" = -22 ]; then
    echo "ok - register_kprobe refuses okprobes' hit path: $name (-EINVAL)"
  else
    echo "not ok - register_kprobe on okprobes' hit path $name returned $r"
  fi
done > /tmp/hit_path.tap
tap_file /tmp/hit_path.tap
check "okprobes functions on the trap path were tried ($(grep -c '^ok' /tmp/hit_path.tap))" \
  gt "$(grep -c '^ok' /tmp/hit_path.tap)" 3
insmod /okp/okp_kk.ko symbol=okp_core_register_kprobe
check "register_kprobe off the hit path (okp_core_register_kprobe) is accepted" is "$(cat $kk/result)" 0
rmmod okp_kk
else
  skip "register_kprobe refuses okprobes' hit path" "$no_kprobes: no register_kprobe to refuse it"
  skip "register_kprobe off the hit path (okp_core_register_kprobe) is accepted" "$no_kprobes"
fi

# 5c. arm64 without a breakpoint trap: the kernel is the reworked one (no break-hook list, the
#     fixed-switch BRK dispatcher), okprobes said at load that its probes are branches there,
#     and handlers' writes into the pt_regs of a function-entry probe (filled from ftrace_regs:
#     WITH_ARGS) take effect (tests/vm/modules/ftrace_regs.c).
if [ -n "$nobrk" ]; then
  check "the kernel has no break-hook list and the reworked EL1 BRK entry (do_el1_brk64)" \
    sh -c "! grep -q ' register_kernel_break_hook$' /proc/kallsyms && grep -q ' do_el1_brk64$' /proc/kallsyms"
  if [ -f /okp/okp_ftrace_regs.ko ]; then
    insmod /okp/okp_ftrace_regs.ko
    line=$(dmesg | grep OKP-FTREGS | tail -1); echo "# $line"
    check "entry handlers: argument change, entry pc, redirect with and without IPMODIFY" \
      sh -c "echo '$line' | grep -q 'OKP-FTREGS: PASS'"
    rmmod okp_ftrace_regs
  fi
fi

# 6. Stress: callers vs. registrars (see tests/vm/modules/stress.c).
if [ -n "${STRESS_CYCLES:-}" ]; then
  stress_check "stress: exact count, real results, no failed registration" okp_stress OKP-STRESS \
    min_cycles=$STRESS_CYCLES calls=${STRESS_CALLS:-1000000}
fi

# 7. Return-probe stress (see tests/vm/modules/retstress.c), through each return mechanism the
#    kernel offers: the kernel's rethook or (arm64) kretprobe trampoline where okprobes uses it
#    (debugfs return_probes), and okprobes' own stubs (forced by debug.okprobes-return-stubs=1
#    there). RETURN_STUBS_TOO=0: the kernel's route only, where there is one (tests/check:
#    make check's time, on kernels whose stubs another kernel of the arch runs).
if [ -n "${RETSTRESS_CYCLES:-}" ]; then
  kernel_route=$(grep -Eo '^(rethook|kretprobe)' $d/return_probes)
  if [ -n "$kernel_route" ]; then
    stress_check "return-probe stress ($kernel_route): exact pairs, real results, exited tasks reclaimed, nothing leaked" \
      okp_retstress OKP-RETSTRESS min_cycles=$RETSTRESS_CYCLES calls=${RETSTRESS_CALLS:-200000}
    echo 1 > /proc/sys/debug/okprobes-return-stubs
  fi
  if [ -z "$kernel_route" ] || [ "${RETURN_STUBS_TOO:-1}" != 0 ]; then
    stress_check "return-probe stress (stubs): exact pairs, real results, exited tasks reclaimed, no stub leaked" \
      okp_retstress OKP-RETSTRESS min_cycles=$RETSTRESS_CYCLES calls=${RETSTRESS_CALLS:-200000}
  fi
  echo 0 > /proc/sys/debug/okprobes-return-stubs
fi

echo "1..$n"
[ $failed = 0 ]
