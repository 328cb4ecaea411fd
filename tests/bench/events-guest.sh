# Guest script (busybox sh) of the kprobe-events benchmark (tests/bench/events): the same event,
# three arguments (a register, a memory dereference, $comm), on the same instruction
# (okp_bench_events.c's site), defined through okprobes' kprobe_events and the kernel's, one
# framework's at a time (okprobes refuses an address the kernel has a kprobe on), as a user
# writes it. tests/bench/events puts EVB_CALLS, EVB_ROUNDS, EVB_RUNS and EVB_MODES in front.
#
# Per mode (int3: both jump-optimization sysctls 0; opt: both 1, each run starting once its
# framework's jump is in the text), EVB_ROUNDS rounds of: EVB_RUNS runs with no event (none),
# then EVB_RUNS with the kernel's event, EVB_RUNS with okprobes' (its records in its own buffer
# only: tracefs_instance 0), EVB_RUNS with okprobes' copying them to the tracefs instance
# okprobes too (mirror: tracefs_instance 1; 0 is okprobes' default) and EVB_RUNS with the
# kernel's event enabled in a tracefs instance of its own as well (kernel2: two rings written
# per hit, as the mirror writes two); the order of the four is reversed every other round. A run is EVB_CALLS calls of the site from the driver's timed loop, the
# trace cleared before it (so okprobes' per-CPU ring never fills: a full ring drops records,
# which is cheaper than writing them). Prints
#   EVB-INFO key=value...
#   EVB mode=M round=R state=none|kernel|okprobes|mirror|kernel2 run=K ns=NS calls=N
#   EVB-LINE mode=M framework=F TEXT   (a record, from "ev: " on; F instance: the tracefs
#                                       instance's copy, in the mirror state)
#   EVB-ERROR what went wrong          (any: the benchmark failed)
#   EVB-DONE errors=E
# Checked on every run: every result right; for an event, kprobe_profile counted one hit per
# call and no miss, the trace holds one record per call and okprobes dropped none (mirror,
# kernel2: the instance holds one per call too); the site is a jump in the opt mode and not in the int3
# mode, before and after the run. Once per mode: both frameworks' records of the same call are
# the same text, and so is the instance's copy.
calls=${EVB_CALLS:-500} rounds=${EVB_ROUNDS:-9} runs=${EVB_RUNS:-5} modes=${EVB_MODES:-int3 opt}
b=/sys/kernel/debug/okp_bench_events d=/sys/kernel/debug/okprobes t=/sys/kernel/tracing
mount -t tracefs nodev $t 2>/dev/null
errors=0
err() { errors=$((errors + 1)); echo "EVB-ERROR $*"; }
[ -w $t/kprobe_events ] || { echo "EVB-ERROR no kprobe events in this kernel ($t/kprobe_events)"; echo "EVB-DONE errors=1"; exit 1; }
insmod /okp/okprobes_bench_events.ko || { echo "EVB-ERROR insmod okprobes_bench_events"; echo "EVB-DONE errors=1"; exit 1; }
site=$(cat $b/site)
def="p:okpbench/ev $site ptr=%di:x64 magic=+0(%di):x64 cm=\$comm"
echo "EVB-INFO kernel=$(uname -r) cpus=$(grep -c ^processor /proc/cpuinfo) calls=$calls rounds=$rounds runs=$runs site=$site"
echo "EVB-INFO event=$def"

is_kernel() { [ "$1" = kernel ] || [ "$1" = kernel2 ]; }
dir_of() { if is_kernel "$1"; then echo $t; else echo $d; fi; }
inst=$t/instances/okprobes
# kernel2's second buffer: a tracefs instance of the kernel's, where its event is enabled too.
kinst=$t/instances/okpbench_kernel2
mkdir -p $kinst
# The instance a state's second copy goes to, if it has one.
second_of() { case "$1" in mirror) echo $inst ;; kernel2) echo $kinst ;; esac; }
# okprobes' copy to the tracefs instance: on in the mirror state only.
set_mirror() { if [ "$1" = mirror ]; then echo 1; else echo 0; fi > $d/tracefs_instance; }
list_of() { if is_kernel "$1"; then echo /sys/kernel/debug/kprobes/list; else echo $d/list; fi; }
hits_of() { awk '$1 == "ev" {print $2 + 0, $3 + 0}' "$1/kprobe_profile"; }
# "kept/written" from the trace's header (head: the records are not formatted for it).
entries_of() { head -n 12 "$1/trace" | sed -n 's/^# entries-in-buffer\/entries-written: \([0-9]*\/[0-9]*\).*/\1/p'; }
dropped_of() { head -n 12 "$1/trace" | sed -n 's/^# okprobes: \([0-9]*\) dropped.*/\1/p'; }
# poll SECONDS COMMAND...: until the command succeeds, every 0.05 s.
poll() {
  local i=0 max=$(($1 * 20)); shift
  until "$@"; do
    i=$((i + 1)); [ $i -lt $max ] || return 1
    usleep 50000
  done
}
listed_optimized() { grep -F "$site" "$(list_of $1)" 2>/dev/null | grep -q OPTIMIZED; }
listed() { grep -qF "$site" "$(list_of $1)" 2>/dev/null; }
is_jump() { [ "$(cat $b/jump)" = 1 ]; }
optimized() { is_jump && listed_optimized $1; }
not_jump() { [ "$(cat $b/jump)" = 0 ]; }
intact() { [ "$(cat $b/intact)" = 1 ]; }
gone() { intact && ! listed kernel && ! listed okprobes; }
try_define() { echo "$def" >> "$(dir_of $1)/kprobe_events" 2>/dev/null; }

# define MODE FRAMEWORK: define and enable the event; in the opt mode wait for its jump.
define() {
  local dir; dir=$(dir_of $2)
  poll 30 try_define $2 || { err "$2: the event was refused: $(tail -n 3 $dir/error_log | head -n 1)"; return 1; }
  echo 1 > $dir/events/okpbench/ev/enable || { err "$2: cannot enable the event"; return 1; }
  [ $2 != kernel2 ] || echo 1 > $kinst/events/okpbench/ev/enable ||
    { err "kernel2: cannot enable the event in $kinst"; return 1; }
  if [ $1 = opt ]; then
    poll 60 optimized $2 || { err "$2: the site did not become a jump in 60 s"; return 1; }
  else
    not_jump || { err "$2: the site is a jump with optimization off"; return 1; }
  fi
}
# remove FRAMEWORK: disable and remove the event, wait until the text and both lists are clear.
remove() {
  local dir; dir=$(dir_of $1)
  [ $1 != kernel2 ] || echo 0 > $kinst/events/okpbench/ev/enable
  echo 0 > $dir/events/okpbench/ev/enable
  echo "-:okpbench/ev" >> $dir/kprobe_events || err "$1: cannot remove the event"
  poll 60 gone || err "$1: the site was not restored and unlisted within 60 s after removal"
}
# one_run MODE ROUND STATE K: one timed run, checked.
one_run() {
  local dir h0 m0 h1 m1 ns n wrong e dr jump second
  if [ $3 != none ]; then
    dir=$(dir_of $3) second=$(second_of $3)
    echo > $dir/trace
    [ -z "$second" ] || echo > $second/trace
    set -- "$@" $(hits_of $dir); h0=$5 m0=$6
  fi
  echo $calls > $b/run
  read -r ns n wrong < $b/run
  jump=$(cat $b/jump)
  [ $2 = 0 ] || echo "EVB mode=$1 round=$2 state=$3 run=$4 ns=$ns calls=$n"
  [ "$wrong" = 0 ] && [ "$n" = $calls ] || err "mode=$1 round=$2 state=$3: $wrong wrong results of $n"
  [ $3 != none ] || return 0
  if [ $1 = opt ]; then [ $jump = 1 ] || err "mode=opt state=$3: the site is no jump after the run"
  else [ $jump = 0 ] || err "mode=int3 state=$3: the site is a jump after the run"; fi
  set -- "$@" $(hits_of $dir); h1=$7 m1=$8
  [ $((h1 - h0)) = $calls ] && [ "$m1" = "$m0" ] ||
    err "mode=$1 round=$2 state=$3: kprobe_profile counted $((h1 - h0)) hits and $((m1 - m0)) misses for $calls calls"
  e=$(entries_of $dir)
  [ "$e" = "$calls/$calls" ] || err "mode=$1 round=$2 state=$3: entries-in-buffer/entries-written $e for $calls calls"
  if ! is_kernel $3; then
    dr=$(dropped_of $dir)
    [ "$dr" = 0 ] || err "mode=$1 round=$2 state=$3: okprobes dropped $dr records"
  fi
  if [ -n "$second" ]; then
    e=$(grep -c ' ev: ' $second/trace)
    [ "$e" = $calls ] || err "mode=$1 round=$2 state=$3: the tracefs instance $second holds $e records for $calls calls"
  fi
}
# state_runs MODE ROUND FRAMEWORK: the framework's event defined, its runs, removed.
state_runs() {
  local k=1
  is_kernel $3 || set_mirror $3
  define $1 $3 || return 1
  while [ $k -le $runs ]; do one_run $1 $2 $3 $k; k=$((k + 1)); done
  [ $2 != 1 ] || echo "EVB-LINE mode=$1 framework=$3 $(grep -m 1 ' ev: ' $(dir_of $3)/trace | sed 's/.* ev: //')"
  [ $2 != 1 ] || [ $3 != mirror ] || echo "EVB-LINE mode=$1 framework=instance $(grep -m 1 ' ev: ' $inst/trace | sed 's/.* ev: //')"
  remove $3
}

for mode in $modes; do
  [ $errors = 0 ] || break
  if [ $mode = opt ]; then o=1; else o=0; fi
  echo $o > /proc/sys/debug/kprobes-optimization
  echo $o > /proc/sys/debug/okprobes-optimization
  echo "EVB-INFO mode=$mode kprobes-optimization=$(cat /proc/sys/debug/kprobes-optimization) okprobes-optimization=$(cat /proc/sys/debug/okprobes-optimization)"
  # A warm-up round (0), checked but not printed: the first runs pay for TCG's translation.
  state_runs $mode 0 kernel; state_runs $mode 0 okprobes; state_runs $mode 0 mirror; state_runs $mode 0 kernel2
  r=1
  while [ $r -le $rounds ] && [ $errors = 0 ]; do
    k=1
    while [ $k -le $runs ]; do one_run $mode $r none $k; k=$((k + 1)); done
    if [ $((r % 2)) = 1 ]; then
      state_runs $mode $r kernel; state_runs $mode $r okprobes; state_runs $mode $r mirror; state_runs $mode $r kernel2
    else
      state_runs $mode $r kernel2; state_runs $mode $r mirror; state_runs $mode $r okprobes; state_runs $mode $r kernel
    fi
    r=$((r + 1))
  done
done
echo 0 > /proc/sys/debug/kprobes-optimization
echo 0 > /proc/sys/debug/okprobes-optimization
echo 0 > $d/tracefs_instance
rmmod okprobes_bench_events || err "rmmod okprobes_bench_events"
echo "EVB-DONE errors=$errors"
[ $errors = 0 ]
