# Guest script for `make run`: okprobes' own steps as an admin sees them (load, probes planted,
# hits, a refusal with its reason, debugfs, unload). Every line meant for the terminal starts
# with "OKP-SHOW: ": tests/vm/make-run shows only those (and, after this script, the unload),
# and leaves the rest of the console, the boot log among it, to its log file.
d=/sys/kernel/debug/okprobes
say() { echo "OKP-SHOW: $*"; }
step() { say "== $*"; }
indent() { while IFS= read -r l; do say "   $l"; done; }
# cmd COMMAND...: runs it, shown as typed, its output (stderr too) below it.
cmd() { say "   \$ $*"; "$@" 2>&1 | indent; }
# klog [HITS] [uniq]: what okprobes and its samples said in the kernel log since the last klog,
# without timestamps: every line but the samples' per-hit lines, of which each module's first
# HITS (2; the rest counted); with "uniq" each line once. The module loader's taint notes are left out:
# they are the kernel's, said of every out-of-tree module.
shown=0
klog() {
  dmesg | grep -E '^\[ *[0-9.]+\] ok(ret)?probe' | sed -E 's/^\[ *[0-9.]+\] //' > /tmp/klog
  tail -n +$((shown + 1)) /tmp/klog | grep -vE 'taints kernel|module verification failed' |
    if [ "${2:-}" = uniq ]; then awk '!seen[$0]++'; else cat; fi |
    awk -v max="${1:-2}" '/ (pre|post): ip=| returned .* ns to execute$/ { if (++hits[$1] > max) { more++; next } }
      { print } END { if (more) print "... and " more " more lines of hits like these" }' | indent
  shown=$(wc -l < /tmp/klog)
}
# The sample's hooks print a line per hit; three forks (kernel_clone) or opens are enough.
forks() { for i in 1 2 3; do sh -c true; done; }
opens() { for i in 1 2 3; do cat /proc/version > /dev/null; done; }

step "okprobes loaded on $(uname -r) ($(uname -m), $(grep -c ^processor /proc/cpuinfo) vCPUs)"
klog

if [ -f /okp/okprobe_example.ko ]; then
  step "a probe on kernel_clone and a return probe on it (samples/), hit by three forks"
  cmd insmod /okp/okprobe_example.ko
  cmd insmod /okp/okretprobe_example.ko
  forks
  klog
  cmd cat $d/list
  cmd rmmod okprobe_example okretprobe_example
  klog

  # The boundaries of do_sys_openat2 differ between kernels: +0x9 falls inside an instruction
  # on Debian's and the test kernel, whose nearest boundary is +0xa or +0x7.
  # busybox's insmod tries finit_module(), then init_module(): the module is refused twice.
  step "a probe inside an instruction (do_sys_openat2+0x9): refused, with the reason"
  cmd insmod /okp/okprobe_example.ko symbol=do_sys_openat2 offset=0x9
  klog 0 uniq
  say "   \$ uniq $d/refused"
  uniq $d/refused | indent

  step "one at an instruction boundary, without a post handler: a jump to a detour once optimized"
  off=0xa
  insmod /okp/okprobe_example.ko symbol=do_sys_openat2 offset=$off post=0 2>/dev/null || {
    off=0x7; insmod /okp/okprobe_example.ko symbol=do_sys_openat2 offset=$off post=0; }
  say "   \$ insmod /okp/okprobe_example.ko symbol=do_sys_openat2 offset=$off post=0"
  sleep 1  # the optimizer turns the int3 into a jump shortly after registration
  opens
  klog
  cmd cat $d/list
  cmd rmmod okprobe_example
  klog
fi

step "the rest of debugfs ($d) and the sysctl"
say "   blacklist: $(wc -l < $d/blacklist) entries; enabled: $(cat $d/enabled); debug.okprobes-optimization: $(cat /proc/sys/debug/okprobes-optimization)"
step "unload: the guest's init removes the modules (rmmod okprobes_hello okprobes)"
