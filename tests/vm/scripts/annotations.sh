# Guest script (busybox sh): okprobes' annotation macros (include/okprobes/okprobes.h) and a
# probe that hits, through the module okp_annotated (tests/vm/modules/annotated.c) and the
# samples, copied to /okp with okprobes.ko itself. A probe on an OKP_NOKPROBE_SYMBOL() or
# __okp_kprobes function is refused (-EINVAL) with a reason naming the annotation, a probe on
# the unannotated neighbour is accepted and hits; this holds for the module loaded before
# okprobes and after it, and the entries go when it unloads. tests/dkms/run drives it with
# the DKMS-built okprobes.ko. Prints TAP lines; exits non-zero if any check failed.
. /okp/tap.sh	# n, failed, check, is, gt, ge
d=/sys/kernel/debug/okprobes
call=/sys/module/okp_annotated/parameters/call
hits() { sed -n "s/.* $1+.* hits=\([0-9]*\).*/\1/p" $d/list | head -1; }
nokprobe='\[OKP_NOKPROBE_SYMBOL\]'
kprobes_text='\[\.kprobes\.text (__kprobes, __okp_kprobes)\]'
# refused FUNCTION SOURCE-REGEX [ENTRY]: the sample's probe on okp_annotated:FUNCTION fails
# with -22 and the reason okprobes gave names the annotation (ENTRY: the blacklist entry's
# symbol, FUNCTION by default; __okp_kprobes functions are covered by the module's whole
# .kprobes.text, one entry).
refused() {
  dmesg -c >/dev/null
  ! insmod /okp/okprobe_example.ko symbol=okp_annotated:$1 2>/dev/null &&
    dmesg | grep -q "returned -22: .*blacklisted: ${3:-$1} $2"
}
# accepted_and_hits: the sample's probe on the unannotated neighbour registers and counts hits.
accepted_and_hits() {
  insmod /okp/okprobe_example.ko symbol=okp_annotated:okp_annotated_plain || return 1
  echo 5 > $call; echo 6 > $call
  h=$(hits okp_annotated_plain); rmmod okprobe_example; gt "$h" 1
}
annotated_checks() { # when
  check "blacklist: okp_annotated_nokprobe [OKP_NOKPROBE_SYMBOL] ($1)" \
    grep -q "	okp_annotated_nokprobe	$nokprobe\$" $d/blacklist
  check "blacklist: the module's .kprobes.text [.kprobes.text (__kprobes, __okp_kprobes)] ($1)" \
    grep -q "	\.kprobes\.text	$kprobes_text\$" $d/blacklist
  check "a probe on an OKP_NOKPROBE_SYMBOL function is refused, -EINVAL, reason names it ($1)" \
    refused okp_annotated_nokprobe "$nokprobe"
  check "a probe on an __okp_kprobes function is refused, -EINVAL, reason names it ($1)" \
    refused okp_annotated_kprobes "$kprobes_text" .kprobes.text
  check "a probe on the unannotated neighbour is accepted and hits ($1)" accepted_and_hits
  check "the module's functions still run (3 calls: 6*3+1 + 6*5+2 + 6*7+3 = 96)" \
    grep -qx 96 $call
}

# 1. okprobes registers and a probe hits (the sample on kernel_clone).
check "the sample registers on kernel_clone" insmod /okp/okprobe_example.ko
sh -c true; sh -c true
check "the sample's probe on kernel_clone counts hits" gt "$(hits kernel_clone)" 0
rmmod okprobe_example

# 2. The annotated module loaded before okprobes: okprobes reads it from the loaded modules.
check "okprobes unloads (to load the annotated module first)" rmmod_wait okprobes
check "okp_annotated loads without okprobes (no calls into it)" insmod /okp/okp_annotated.ko
check "okprobes loads again" insmod /okp/okprobes.ko
annotated_checks "loaded before okprobes"

# 3. Unloading forgets its entries; loading it again (after okprobes) brings them back.
rmmod okp_annotated
check "the module's entries go when it unloads" sh -c "! grep -qE '	okp_annotated_|__okp_kprobes\)\]' $d/blacklist"
check "okp_annotated loads after okprobes" insmod /okp/okp_annotated.ko
annotated_checks "loaded after okprobes"
rmmod okp_annotated

# 4. The samples use the macros as the kernel's samples use theirs.
check "okretprobe_example registers" insmod /okp/okretprobe_example.ko
check "its OKP_NOKPROBE_SYMBOL(entry_handler, ret_handler) are blacklisted" \
  sh -c "grep -q '	entry_handler	$nokprobe\$' $d/blacklist && grep -q '	ret_handler	$nokprobe\$' $d/blacklist"
dmesg -c >/dev/null
check "a probe on okretprobe_example's ret_handler is refused, reason names OKP_NOKPROBE_SYMBOL" \
  sh -c "! insmod /okp/okprobe_example.ko symbol=okretprobe_example:ret_handler && dmesg | grep -q 'returned -22: .*blacklisted: ret_handler $nokprobe'"
rmmod okretprobe_example
check "after unloading the samples no client entry is left" \
  sh -c "! grep -qE '	(entry_handler|ret_handler|okp_annotated_[a-z]*)	|__okp_kprobes\)\]' $d/blacklist"
[ $failed = 0 ]
