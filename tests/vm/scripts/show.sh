# Guest script for `make run`: what an admin sees once okprobes and the samples are loaded.
d=/sys/kernel/debug/okprobes
echo "===== okprobes is loaded ====="
lsmod | grep -E '^okprobes'
if [ -f /okp/okprobe_example.ko ]; then
  echo "===== insmod okprobe_example.ko (a probe on kernel_clone; then one mid-function) ====="
  insmod /okp/okprobe_example.ko
  for i in 1 2 3; do sh -c true; done
fi
for f in list enabled blacklist refused; do
  echo "===== $d/$f ($(stat -c %A $d/$f)) ====="
  if [ $f = blacklist ]; then head -12 $d/$f; echo "... $(wc -l < $d/$f) entries"; else cat $d/$f; fi
done
if [ -f /okp/okprobe_example.ko ]; then
  rmmod okprobe_example
  echo "===== a breakpoint probe inside do_sys_openat2, and a refused one ====="
  insmod /okp/okprobe_example.ko symbol=do_sys_openat2 offset=0x9 2>&1
  insmod /okp/okprobe_example.ko symbol=do_sys_openat2 offset=0xa 2>&1 || \
    insmod /okp/okprobe_example.ko symbol=do_sys_openat2 offset=0x7
  cat /proc/version > /dev/null
  cat $d/list
  rmmod okprobe_example
  echo "===== the same probe without a post_handler: a jump to a detour shortly after (x86-64) ====="
  insmod /okp/okprobe_example.ko symbol=do_sys_openat2 offset=0xa post=0 2>/dev/null || \
    insmod /okp/okprobe_example.ko symbol=do_sys_openat2 offset=0x7 post=0
  sleep 1
  cat /proc/version > /dev/null
  cat $d/list
  rmmod okprobe_example
fi
if [ -f /okp/okretprobe_example.ko ]; then
  echo "===== insmod okretprobe_example.ko (a return probe on kernel_clone: latency) ====="
  insmod /okp/okretprobe_example.ko
  for i in 1 2 3; do sh -c true; done
  grep '  r  ' $d/list
  rmmod okretprobe_example
fi
echo "===== sysctl debug.okprobes-optimization ====="
cat /proc/sys/debug/okprobes-optimization
echo "===== kernel log of okprobes and its samples ====="
dmesg | grep -E 'okprobe'
