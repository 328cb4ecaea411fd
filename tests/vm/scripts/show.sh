# Guest script for `make run`: what an admin sees once okprobes and the sample are loaded.
echo "===== okprobes is loaded ====="
lsmod | grep -E '^okprobes'
for f in list enabled blacklist; do
  echo "===== /sys/kernel/debug/okprobes/$f ($(stat -c %A /sys/kernel/debug/okprobes/$f)) ====="
  cat /sys/kernel/debug/okprobes/$f
done
echo "===== sysctl debug.okprobes-optimization ====="
cat /proc/sys/debug/okprobes-optimization
echo "===== kernel log of okprobes and its sample ====="
dmesg | grep -E 'okprobes'
