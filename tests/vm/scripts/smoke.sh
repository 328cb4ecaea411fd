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
check "optimization accepts 0" sh -c "echo 0 > $sysctl"
check "optimization reads 0" reads $sysctl 0
check "optimization refuses 2 (EINVAL)" refused $sysctl 2
check "optimization refuses -1" refused $sysctl -1
check "optimization unchanged by refused writes" reads $sysctl 0
check "optimization accepts 1" sh -c "echo 1 > $sysctl"
check "okprobes logged its load" sh -c "dmesg | grep -q 'okprobes: loaded'"
if lsmod | grep -q '^okprobes_hello'; then
  check "sample client linked against okprobes" sh -c "dmesg | grep -q 'okprobes_hello: linked against okprobes API'"
fi
echo "1..$n"
[ $failed = 0 ]
