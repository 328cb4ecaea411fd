# Guest script (busybox sh), arm64: the derived trap path of a kernel-mode BRK (the checks
# probes.sh makes with x86-64's names): rooted where a handled BRK runs, listed with where each
# function was reached from, every one refused, and nothing beyond it (the signal path that
# only an unhandled BRK takes stays probeable). Needs --file okprobe_example.ko.
# Prints TAP lines; exits non-zero if any check failed.
. /okp/tap.sh	# n, failed, check, is, gt, ge
d=/sys/kernel/debug/okprobes
bl=$d/blacklist
# The hook-list walk is call_break_hook, a root; without CONFIG_KPROBES no NOKPROBE_SYMBOL()
# takes its address and it is inlined into brk_handler (test-nokprobes), on the built-in list.
if grep -q ' call_break_hook$' /proc/kallsyms; then
  walk=call_break_hook walk_source="trap path, reached from the trap entry"
else
  walk=brk_handler walk_source="built-in"
fi
check "the break-hook walk ($walk) is blacklisted [$walk_source]" \
  grep -q "	$walk	\[$walk_source\]\$" $bl
check "okprobes' own break hook is on the trap path" \
  grep -q '	okp_brk_hook	\[trap path, reached from the trap entry\]$' $bl
check "the core's breakpoint entry, reached from the hook" \
  grep -q '	okp_core_on_break_hook	\[trap path, reached from okp_brk_hook\]$' $bl
# The step-ending BRK has its own hook and core entry: a root of its own.
check "okprobes' step hook is on the trap path" \
  grep -q '	okp_brk_step_hook	\[trap path, reached from the trap entry\]$' $bl
check "the core's step entry, reached from the step hook" \
  grep -q '	okp_core_on_step_break_hook	\[trap path, reached from okp_brk_step_hook\]$' $bl
# The core tail-calls the glue's not-ours check by name (a root of its own too).
check "the glue's not-ours check, which the core tail-calls, is on the trap path" \
  grep -Eq '	okp_seam_break_not_ours	\[trap path, reached from (the trap entry|okp_core_on_break_hook)\]$' $bl
# okprobes' hook calls copy_from_kernel_nofault(); in a module far from the kernel (Debian's
# randomized module region) through a PLT veneer, which the walk must follow to the kernel.
check "the kernel function okprobes' hook calls is on the trap path (copy_from_kernel_nofault)" \
  grep -Eq '	copy_from_kernel_nofault	\[trap path, reached from okp_[a-z_]+\]$' $bl
check "el1_dbg's entry helper is on the trap path" \
  grep -q '	arm64_enter_el1_dbg	\[trap path, reached from the trap entry\]$' $bl
check "do_debug_exception and brk_handler are blacklisted (the kernel's NOKPROBE)" \
  sh -c "grep -q '	do_debug_exception	' $bl && grep -q '	brk_handler	' $bl"
insmod /okp/okprobe_example.ko symbol=$walk 2>/dev/null && rmmod okprobe_example
check "a probe on $walk is refused, and debugfs refused says why" \
  grep -q "$walk+0x0	-22	.*blacklisted" $d/refused
total=$(grep -c '	\[trap path, ' $bl)
check "the trap path is the handled BRK's ($total functions, fewer than 200)" [ "$total" -lt 200 ]
for fn in force_sig_fault arm64_notify_die queue_work_on get_page_from_freelist; do
  check "$fn (only an unhandled BRK's path) is not blacklisted" sh -c "! grep -q '	$fn	' $bl"
done
grep '	\[trap path, ' $bl | while IFS='	' read -r range name origin; do
  start=${range%%-*}
  if insmod /okp/okprobe_example.ko addr=$start 2>/dev/null; then
    rmmod okprobe_example; echo "BAD $name ($origin) was accepted"
  elif ! grep -q "^$start+0x0	-22	.*blacklisted" $d/refused; then
    echo "BAD $name refused, but not as blacklisted: $(tail -1 $d/refused)"
  fi
done > /tmp/trap_path_bad
cat /tmp/trap_path_bad
check "every trap-path function is refused as blacklisted ($total tried)" sh -c "[ ! -s /tmp/trap_path_bad ]"
echo "1..$n"
[ $failed = 0 ]
