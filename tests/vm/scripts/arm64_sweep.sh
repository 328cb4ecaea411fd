# Guest script (busybox sh), arm64: a probe at every 4-byte offset of hot VFS/process
# functions, one at a time, alternately with a pre and a post handler (a slot instruction
# stepped) and with a pre handler only (boosted), while both CPUs run a workload through them.
# Each offset must be accepted or refused with a reason in the log; no splat (run-guest).
# An accepted probe is given time to become a jump to its detour ([OPTIMIZED] in list) or to
# say why not before the workload runs through it; each function's line counts both, and the
# reasons are tallied at the end (# not optimized: ...).
# Needs --file okprobe_example.ko. Prints TAP lines; exits non-zero if any check failed.
# ARM64_SWEEP_STEP (default 4: every instruction; 12: every third, still alternating the two
# modes) bounds the time where each insmod is slow (Debian's stock kernel: 662 s at 4).
n=0 failed=0 list=/sys/kernel/debug/okprobes/list
: > /tmp/reasons
step=${ARM64_SWEEP_STEP:-4}
ko=/okp/okprobe_example.ko
load() { cat /proc/version >/dev/null; head -c 64 /proc/version >/dev/null; ls / >/dev/null; }
work() { while [ ! -e /tmp/stop ]; do load; done; }
work & w1=$!
work & w2=$!
for spec in "vfs_read 0x1c0" "do_sys_openat2 0x114" "kernel_clone 0xc0" "path_openat 0x80" \
	    "ksys_write 0x80" "filp_close 0x60" "dput 0x80"; do
  set -- $spec; fn=$1; size=$(($2))
  off=0 accepted=0 refused=0 unexplained=0 hits=0 optimized=0
  while [ $off -lt $size ]; do
    for post in $(( (off / 4) % 2 )); do
      dmesg -c >/dev/null
      if insmod $ko symbol=$fn offset=$off post=$post 2>/dev/null; then
        i=0
        while [ $i -lt 40 ] && ! grep -Eq '\[OPTIMIZED\]|reason="not optimized' $list; do
          sleep 0.05; i=$((i + 1))
        done
        if grep -q '\[OPTIMIZED\]' $list; then
          optimized=$((optimized + 1))
        else
          sed -n 's/.*reason="\(not optimized: [^;"]*\).*/\1/p' $list | sed 's/+0x[0-9a-f.+x]*/+N/g' >> /tmp/reasons
        fi
        load
        rmmod okprobe_example
        h=$(dmesg | sed -n 's/.*unregistered after \([0-9]*\) hits.*/\1/p' | tail -1)
        accepted=$((accepted + 1)); hits=$((hits + ${h:-0}))
      elif dmesg | grep -q "okprobes: refused probe"; then
        refused=$((refused + 1))
      else
        unexplained=$((unexplained + 1))
        echo "# $fn+$off post=$post: insmod failed without a reason"
      fi
    done
    off=$((off + step))
  done
  n=$((n + 1))
  if [ $unexplained = 0 ] && [ $accepted -gt 0 ] && [ $hits -gt 0 ]; then
    echo "ok $n - $fn: $accepted probes ($hits hits, $optimized optimized), $refused refused with a reason"
  else
    echo "not ok $n - $fn: $accepted probed ($hits hits), $refused refused, $unexplained unexplained"
    failed=$((failed + 1))
  fi
done
touch /tmp/stop; wait $w1 $w2 2>/dev/null
sort /tmp/reasons | uniq -c | sort -rn | sed 's/^/# /'
echo "1..$n"
[ $failed = 0 ]
