# Guest script (busybox sh): the skeleton's admin interfaces behave as documented.
# Prints TAP lines; exits non-zero if any check failed.
. /okp/tap.sh	# n, failed, check, is, gt, ge
d=/sys/kernel/debug/okprobes
sysctl=/proc/sys/debug/okprobes-optimization
mode() { [ "$(stat -c %a "$1")" = "$2" ]; }
reads() { [ "$(cat "$1")" = "$2" ]; } # FILE VALUE: FILE holds VALUE
refused() { ! sh -c "echo $2 > $1"; }

check "debugfs list exists, root-only" mode $d/list 400
check "debugfs enabled exists, root-only" mode $d/enabled 600
check "debugfs blacklist exists, root-only" mode $d/blacklist 400
check "list is readable" cat $d/list
check "blacklist is readable" cat $d/blacklist
check "enabled reads 1 at load" reads $d/enabled 1
check "enabled accepts 0" sh -c "echo 0 > $d/enabled"
check "enabled now reads 0" reads $d/enabled 0
check "enabled refuses 2 (EINVAL)" refused $d/enabled 2
check "enabled refuses text" refused $d/enabled yes
check "enabled unchanged by refused writes" reads $d/enabled 0
check "enabled accepts 1" sh -c "echo 1 > $d/enabled"
check "enabled back to 1" reads $d/enabled 1
check "sysctl okprobes-optimization exists" test -f $sysctl
check "optimization reads 1 at load" reads $sysctl 1
# arm64 without a breakpoint trap (no break-hook list) and riscv64 without KGDB (its
# do_trap_break passes no ebreak to a module): a probe is a branch or nothing, so 0 is refused
# (EPERM) with the reason; elsewhere 0 puts every probe back on its breakpoint.
no_breakpoint_trap=
case "$(uname -m)" in
  aarch64) grep -q ' register_kernel_break_hook$' /proc/kallsyms || no_breakpoint_trap=1 ;;
  riscv64) grep -q ' kgdb_handle_exception$' /proc/kallsyms || no_breakpoint_trap=1 ;;
esac
if [ -n "$no_breakpoint_trap" ]; then
  check "optimization refuses 0 where no breakpoint reaches okprobes" refused $sysctl 0
  check "optimization still reads 1" reads $sysctl 1
  off=1
else
  check "optimization accepts 0" sh -c "echo 0 > $sysctl"
  check "optimization reads 0" reads $sysctl 0
  off=0
fi
check "optimization refuses 2 (EINVAL)" refused $sysctl 2
check "optimization refuses -1" refused $sysctl -1
check "optimization unchanged by refused writes" reads $sysctl $off
check "optimization accepts 1" sh -c "echo 1 > $sysctl"
check "okprobes logged its load" sh -c "dmesg | grep -q 'okprobes: loaded'"
if lsmod | grep -q '^okprobes_hello'; then
  check "sample client linked against okprobes" sh -c "dmesg | grep -q 'okprobes_hello: linked against okprobes API'"
fi
# The kernel's samples/kprobes, unmodified, built against okprobes with kprobes_compat.h
# (tests/compat): loaded at boot, each probes kernel_clone; a fork here must run their handlers.
# blacklisted SYMBOL MODULE SOURCE: the symbol's address lies in a debugfs blacklist range of
# that source ("0xSTART-0xEND<TAB>NAME<TAB>[SOURCE]").
blacklisted() {
  a=$(grep " $1	\[$2\]\$" /proc/kallsyms | head -1 | cut -d' ' -f1)
  [ -n "$a" ] || return 1
  grep -F "	[$3]" $d/blacklist | while IFS=- read -r lo rest; do
    hi=${rest%%	*}
    [ $((0x$a)) -ge $((lo)) ] && [ $((0x$a)) -lt $((hi)) ] && echo in
  done | grep -q in
}
not_blacklisted() { grep -q " $1	\[$2\]\$" /proc/kallsyms && ! blacklisted "$@"; }
if lsmod | grep -q '^kprobe_example'; then
  sh -c 'exit 0'  # a fork: kernel_clone from a task with an mm (kretprobe_example skips kthreads)
  check "kprobe_example (kprobes_compat.h) registered on kernel_clone" \
    sh -c "dmesg | grep -q 'kprobe_init: Planted kprobe at'"
  check "kprobe_example's pre handler ran" sh -c "dmesg | grep -q 'handler_pre: <kernel_clone> p->addr = '"
  check "kprobe_example's post handler ran" sh -c "dmesg | grep -q 'handler_post: <kernel_clone> p->addr = '"
  check "its __kprobes handler_pre is in okprobes' blacklist (.kprobes.text)" \
    blacklisted handler_pre kprobe_example ".kprobes.text (__kprobes, __okp_kprobes)"
fi
if lsmod | grep -q '^kretprobe_example'; then
  check "kretprobe_example (kprobes_compat.h) registered on kernel_clone" \
    sh -c "dmesg | grep -q 'Planted return probe at kernel_clone'"
  check "kretprobe_example's return handler ran" \
    sh -c "dmesg | grep -Eq 'kernel_clone returned [0-9]+ and took [0-9]+ ns to execute'"
  check "its NOKPROBE_SYMBOL(entry_handler) is in okprobes' blacklist" \
    blacklisted entry_handler kretprobe_example OKP_NOKPROBE_SYMBOL
  check "its unannotated kretprobe_exit is not" not_blacklisted kretprobe_exit kretprobe_example OKP_NOKPROBE_SYMBOL
fi
echo "1..$n"
[ $failed = 0 ]
