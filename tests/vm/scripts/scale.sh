# Guest script (busybox sh): return probes and step slots at production scale (issue 29), with
# okp_retscale.ko, okp_retblock.ko and okp_stepscale.ko in /okp (tests/vm/modules/retscale.c,
# retblock.c, stepscale.c). Appended to probes.sh (x86-64, arm64) and stress_riscv.sh
# (riscv64, make check-long), both on 4 vCPUs, in the same boot (it continues their
# numbering), before return_unload.sh.
#   1. 50 return probes with maxactive 128 on 50 functions 4 kthreads call, nested and
#      sleeping inside: exact entry/return pairs per probe, no miss, real results, no stub left
#   2. one return probe (maxactive 2048) on a function 2000 tasks block in at once: debugfs
#      list shows them all in use, each return handler runs once after release, all come back
# Both through every return mechanism the kernel offers: the kernel's rethook (x86-64) or
# kretprobe trampoline (arm64) where okprobes uses it (debugfs return_probes) and okprobes' own
# stubs (debug.okprobes-return-stubs=1).
#   3. STEPSCALE_N (10000) breakpoint probes, one on each instruction of generated text that
#      the arch runs from an out-of-line slot, registered at once with jump optimization off:
#      each hit once by one run, the same result, all unregistered, and registered once more
#      (every slot came back). Where okprobes serves no breakpoint (arm64 without BRK
#      delivery, riscv64 without KGDB) it prints "# SKIP" with debugfs explain's answer.
# Prints TAP lines; exits non-zero if any check failed.
. /okp/tap.sh	# n, failed, check, is, gt, ge
d=/sys/kernel/debug/okprobes
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
stubs_ctl=/proc/sys/debug/okprobes-return-stubs
opt_ctl=/proc/sys/debug/okprobes-optimization
# Numbers the "TAG: ok - ..."/"TAG: not ok - ..." lines a module logged as checks, with a
# label; its "TAG-WORD: ..." lines (times, summaries) become comments.
module_checks() { # tag label
  dmesg | sed -n "s/.*$1: //p" > /tmp/scale.tap
  check "$2: the module reported its checks ($(grep -c . /tmp/scale.tap))" test -s /tmp/scale.tap
  while read -r line; do
    n=$((n + 1))
    case "$line" in
      not*) failed=$((failed + 1)); echo "not ok $n - $2: ${line#not ok - }" ;;
      *) echo "ok $n - $2: ${line#ok - }" ;;
    esac
  done < /tmp/scale.tap
  dmesg | sed -n "s/.*\($1-[A-Z]*:\)/# \1/p"
}

# The modules check that no return stub stays in use: first let frames an earlier script's
# return probes left out (the stubs' stress: exited tasks) come back, while okprobes holds itself.
scale_okp_refs() { awk '$1 == "okprobes" {print $3}' /proc/modules; }
i=0; until [ "$(scale_okp_refs)" = 0 ] || [ $i -ge 300 ]; do sleep 0.1; i=$((i + 1)); done

# 1 and 2, through each return mechanism.
mechanisms=stubs
kernel_route=$(grep -Eo '^(rethook|kretprobe)' $d/return_probes)
[ -z "$kernel_route" ] || mechanisms="$kernel_route stubs"
# RETURN_STUBS_TOO=0 (tests/check): the kernel's route only, where there is one.
[ -z "$kernel_route" ] || [ "${RETURN_STUBS_TOO:-1}" != 0 ] || mechanisms=$kernel_route
stubs_before=$(cat $stubs_ctl 2>/dev/null)
for m in $mechanisms; do
  if [ -w $stubs_ctl ]; then
    if [ $m = stubs ]; then echo 1 > $stubs_ctl; else echo 0 > $stubs_ctl; fi
  fi
  dmesg -c > /dev/null
  insmod /okp/okp_retscale.ko
  module_checks OKP-RETSCALE "50 return probes x maxactive 128 ($m)"
  check "50 return probes ($m): they went through $m" sh -c "dmesg | grep -q 'OKP-RETSCALE-END: return=$m '"
  rmmod okp_retscale

  dmesg -c > /dev/null
  insmod /okp/okp_retblock.ko tasks=2000 maxactive=2048
  line=$(grep ' r  okp_rblk_wait+0x[0-9a-f]* \[okp_retblock\]' $d/list); echo "# list: $line"
  check "2000 tasks blocked under one return probe ($m): debugfs list shows all 2000 in use at once, none missed" \
    sh -c "echo '$line' | grep -q 'hits=2000 nmissed=0 maxactive=2048 in_use=2000 peak=2000 missed_pool_empty=0 missed_reentry=0 missed_disabled=0 missed_no_stub=0 .*return=$m'"
  echo 1 > /sys/module/okp_retblock/parameters/release
  check "2000 tasks blocked under one return probe ($m): after release the probe is gone from debugfs list" \
    sh -c "! grep -q okp_rblk_wait $d/list"
  module_checks OKP-RETBLOCK "2000 tasks blocked under one return probe ($m)"
  rmmod okp_retblock
done
[ -w $stubs_ctl ] && echo "$stubs_before" > $stubs_ctl

# 3. Breakpoint probes that each hold a step slot, jump optimization off.
steps=${STEPSCALE_N:-10000}
opt_before=$(cat $opt_ctl 2>/dev/null)
[ -w $opt_ctl ] && echo 0 > $opt_ctl
dmesg -c > /dev/null
insmod /okp/okp_stepscale.ko n=$steps
explain() { echo "$1" > $d/explain 2>/dev/null; cat $d/explain; }
# "okp_steps_fn_0+0x4/0x34 [okp_stepscale]" -> "okp_stepscale:okp_steps_fn_0+0x4"
site() { dmesg | sed -n "s/.*OKP-STEPSCALE-SITES: .*$1=\([^/ ]*\).*/okp_stepscale:\1/p" | tail -1; }
first_says=$(explain "$(site first)"); last_says=$(explain "$(site last)")
echo "# explain: $first_says"; echo "# explain: $last_says"
if echo "$first_says" | grep -q 'from a slot' ||
   { [ -z "${nobrk:-}" ] && [ -n "${kgdb-1}" ]; }; then
  check "$steps step slots: debugfs explain says the first and last sites run from a slot" \
    sh -c "echo '$first_says' | grep -q '^accepted .*from a slot' && echo '$last_says' | grep -q '^accepted .*from a slot'"
  echo 1 > /sys/module/okp_stepscale/parameters/arm
  echo "# list: $(grep -m1 okp_stepscale $d/list)"
  check "$steps step slots: debugfs list shows each probe once, hit once, none optimized" \
    is "$(grep -Ec ' k  okp_steps_fn_[0-9]+\+0x[0-9a-f]+ \[okp_stepscale\] hits=1 nmissed=0( reason=.*)?$' $d/list)" "$steps"
  echo 1 > /sys/module/okp_stepscale/parameters/finish
  check "$steps step slots: unregistered, debugfs list has none left" sh -c "! grep -q okp_stepscale $d/list"
  module_checks OKP-STEPSCALE "$steps step slots"
else
  skip "$steps breakpoint probes each holding a step slot" "$first_says"
fi
rmmod okp_stepscale
[ -w $opt_ctl ] && echo "$opt_before" > $opt_ctl

echo "1..$n"
[ $failed = 0 ]
