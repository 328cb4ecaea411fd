# Guest script (busybox sh), arm64 kernel without CONFIG_KPROBES (KERNEL=test-nokprobes): what
# the kernel's kprobes would have given okprobes and no longer do. Their NOKPROBE_SYMBOL() and
# __kprobes compile to nothing there and their arch_populate_kprobe_blacklist() does not run, so
# okprobes alone must keep the BRK path (do_debug_exception, brk_handler) and MMU-off text
# (.idmap.text) unprobeable, and must still work when its probe sits in the kernel's text
# patching, which __kprobes kept unprobeable on a kernel with kprobes.
# Needs --file okprobe_example.ko --file okretprobe_example.ko. Prints TAP lines; exits non-zero
# if any check failed.
n=0 failed=0
check() { # description, then a command
  desc=$1; shift; n=$((n + 1))
  if "$@" >/dev/null 2>&1; then echo "ok $n - $desc"; else echo "not ok $n - $desc"; failed=$((failed + 1)); fi
}
d=/sys/kernel/debug/okprobes
bl=$d/blacklist
check "the kernel has no kprobes of its own (no debugfs kprobes/, no register_kprobe)" \
  sh -c "[ ! -d /sys/kernel/debug/kprobes ] && ! grep -q ' register_kprobe$' /proc/kallsyms"
check "okprobes' load log says the kernel has no kprobes of its own" \
  sh -c "dmesg | grep -q 'okprobes: the kernel has no kprobes of its own'"
check "the blacklist names no source it could not have read (_kprobe_blacklist, .kprobes.text)" \
  sh -c "! grep -Eq '	\[(_kprobe_blacklist|\.kprobes\.text)\]$' $bl"

# The BRK path the derived trap path passes through without walking (probe_arch.h): a probe
# on either would trap inside its own trap, recursing until the stack overflows.
for fn in do_debug_exception brk_handler; do
  check "$fn is on the built-in blacklist" grep -q "	$fn	\[built-in\]$" $bl
  insmod /okp/okprobe_example.ko symbol=$fn 2>/dev/null && rmmod okprobe_example
  check "a probe on $fn is refused as blacklisted" grep -q "^$fn+0x0	-22	.*blacklisted" $d/refused
done

# Text run with the MMU off (CPU bring-up, resume): a BRK there cannot be taken at all.
check ".idmap.text is blacklisted (__cpu_setup's section)" grep -q '	\.idmap\.text	\[\.idmap\.text\]$' $bl
insmod /okp/okprobe_example.ko symbol=__cpu_setup 2>/dev/null && rmmod okprobe_example
check "a probe on __cpu_setup is refused as blacklisted" grep -q '^__cpu_setup+0x0	-22	.*blacklisted' $d/refused

# The kernel's text patching is __kprobes only with CONFIG_KPROBES: here it is probeable, and
# okprobes writes through it. A BRK past its entry (offset 12: the stp after the two
# patchable-entry NOPs and paciasp, stepped in a slot) is then hit while ftrace patches a function entry (a return probe on kernel_clone) and while
# okprobes itself restores the word at unregistration, inside its own stop_machine.
dmesg -c >/dev/null
if insmod /okp/okprobe_example.ko symbol=aarch64_insn_patch_text_nosync offset=12; then
  check "a return probe registers and unregisters through the probed patching" \
    sh -c "insmod /okp/okretprobe_example.ko func=kernel_clone && sh -c true && rmmod okretprobe_example"
  rmmod okprobe_example
  h=$(dmesg | sed -n 's/.*unregistered after \([0-9]*\) hits.*/\1/p' | tail -1)
  check "the probe in aarch64_insn_patch_text_nosync was hit (${h:-no} hits)" [ "${h:-0}" -gt 0 ]
else
  check "a probe in aarch64_insn_patch_text_nosync registers: $(dmesg | grep 'refused probe' | tail -1)" false
fi
echo "1..$n"
[ $failed = 0 ]
