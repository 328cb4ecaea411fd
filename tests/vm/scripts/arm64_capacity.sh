# Guest script (busybox sh), arm64 (issue 25): how many probes on the kernel's text can be
# branches at once. A probe on every instruction of the largest function of vmlinux text
# (okp_arm64_coverage.ko, all registered together); on a kernel whose slot area is out of a
# b's reach of its text (Debian's, RANDOMIZE_MODULE_REGION_FULL) every detour goes into the
# padding before _etext, and the ones past its room are refused saying so. CAP_MIN: the fewest
# branches expected (make check-long: 350 on Debian 6.12's 20 KiB of padding).
. /okp/tap.sh	# n, failed, check, is, gt, ge
st=$(awk '$3=="_stext"{print $1}' /proc/kallsyms); et=$(awk '$3=="_etext"{print $1}' /proc/kallsyms)
# Sizes from the low 32 bits of consecutive text symbols (busybox awk's numbers are doubles).
f=$(awk -v s=$st -v e=$et '$2 ~ /^[tT]$/ && $1 >= s && $1 < e {print $1, $3}' /proc/kallsyms | sort |
  awk 'NR > 1 { printf "%d %s\n", ("0x" substr($1, 9)) - ("0x" substr(pa, 9)), pn } { pa = $1; pn = $2 }' |
  sort -n | tail -1 | awk '{print $2}')
echo "# the largest function: $f"
dmesg -c > /dev/null
insmod /okp/okp_arm64_coverage.ko funcs=$f max_insns=${CAP_INSNS:-1000}
rmmod okp_arm64_coverage
line=$(dmesg | grep 'OKP-COV64 total' | tail -1); echo "# $line"
opt=$(echo "$line" | sed -n 's/.* optimized=\([0-9]*\).*/\1/p')
check "at least ${CAP_MIN:-350} probes on $f are branches at once (${opt:-0})" ge "${opt:-0}" "${CAP_MIN:-350}"
dmesg | sed -n 's/.*OKP-COV64-NOT \([a-z]*\) [^ ]* \(.*\)/\1: \2/p' | sed -e 's/0x[0-9a-f]*/N/g' |
  sort | uniq -c | sort -rn | sed 's/^/# /'
check "every probe that is not a branch says why" \
  sh -c "! dmesg | grep 'OKP-COV64-NOT' | grep -Eq 'OKP-COV64-NOT [a-z]+ [^ ]+ *$'"
echo "1..$n"
[ $failed = 0 ]
