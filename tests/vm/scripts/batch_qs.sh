# Guest script (busybox sh, x86-64): a large okp_register_kprobes() batch does not hold the jump
# optimizer back (issue 15), with okp_batch_qs.ko in /okp (tests/vm/modules/batch_qs.c). With
# optimization on, the module registers one probe whose jump waits for a tasks-RCU grace period,
# then BATCH_QS_N probes in one call, and checks that the jump was in place before that call
# returned. Where the kernel has the hung-task detector, its timeout is cut to 5 s meanwhile, so
# an optimizer held back for the whole loop also shows as "blocked for more than".
# Standalone, or appended to another script in the same boot (it then continues its numbering).
# Prints TAP lines; exits non-zero if any check failed.
n=${n:-0} failed=${failed:-0}
check() { # description, then a command
  desc=$1; shift; n=$((n + 1))
  if "$@" >/dev/null 2>&1; then echo "ok $n - $desc"; else echo "not ok $n - $desc"; failed=$((failed + 1)); fi
}
opt=/proc/sys/debug/okprobes-optimization
hung=/proc/sys/kernel/hung_task_timeout_secs
opt_before=$(cat $opt)
echo 1 > $opt
[ -f $hung ] && { hung_before=$(cat $hung); echo 5 > $hung; }
dmesg -c > /dev/null
insmod /okp/okp_batch_qs.ko n=${BATCH_QS_N:-5000}
check "batch_qs: okp_batch_qs loads and runs to the end" sh -c "dmesg | grep -q OKP-BATCH-QS-END"
dmesg | grep OKP-BATCH-QS-TIMES | sed 's/.*OKP-BATCH-QS-TIMES/# batch_qs times:/'
dmesg | sed -n 's/.*OKP-BATCH-QS: //p' > /tmp/batch_qs.tap
check "batch_qs: the module reported checks ($(grep -c . /tmp/batch_qs.tap))" \
  [ "$(grep -c . /tmp/batch_qs.tap)" -ge 8 ]
while read -r line; do
  n=$((n + 1))
  case "$line" in
    not*) failed=$((failed + 1)); echo "not ok $n - batch_qs: ${line#not ok - }" ;;
    *) echo "ok $n - batch_qs: ${line#ok - }" ;;
  esac
done < /tmp/batch_qs.tap
check "batch_qs: no hung task, soft lockup or RCU stall reported during the batch" \
  sh -c "! dmesg | grep -Eq 'blocked for more than|soft lockup|detected stalls|self-detected stall'"
dmesg | grep -E 'blocked for more than|soft lockup|detected stall' | sed 's/^/# /'
rmmod okp_batch_qs
[ -f $hung ] && echo "$hung_before" > $hung
echo "$opt_before" > $opt
echo "1..$n"
[ $failed = 0 ]
