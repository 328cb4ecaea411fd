# Guest script (busybox sh), arm64: jump-probe coverage (issue 25) over every COV_STRIDE-th
# function of vmlinux text (default 200): a probe at each of its first instructions
# (okp_arm64_coverage.ko), how many became branches to detours, and the reasons of the others,
# tallied. Needs --file okp_arm64_coverage.ko. Prints TAP lines and the tally (# lines).
. /okp/tap.sh	# n, failed, check, is, gt, ge
stride=${COV_STRIDE:-200}
st=$(awk '$3=="_stext"{print $1}' /proc/kallsyms); et=$(awk '$3=="_etext"{print $1}' /proc/kallsyms)
funcs=$(awk -v s=$st -v e=$et -v k=$stride '$2 ~ /^[tT]$/ && $1 >= s && $1 < e && $3 !~ /^__pfx_|^\$/ {
  if (n++ % k == 0) printf "%s%s", (m++ ? "," : ""), $3 }' /proc/kallsyms)
echo "# $(echo "$funcs" | tr , '\n' | wc -l) functions, every ${stride}th of vmlinux text"
dmesg -c > /dev/null
insmod /okp/okp_arm64_coverage.ko funcs=$funcs max_insns=${COV_MAX_INSNS:-128}
rmmod okp_arm64_coverage
line=$(dmesg | grep 'OKP-COV64 total' | tail -1); echo "# $line"
field() { echo "$line" | sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }
total=$(field total) opt=$(field optimized) ft=$(field ftrace) bp=$(field breakpoint)
check "probes tried on the sample ($total, $ft of them function entries on ftrace)" gt "${total:-0}" 1000
# What a branch could have served: every probe accepted off an ftrace site, and every one
# refused only for want of a branch (no breakpoint trap: "and no jump: ..."). Refused whatever
# the way in (blacklisted, no instruction, a BUG trap, an exclusive sequence) are not counted.
nojump=$(dmesg | grep -c 'OKP-COV64-NOT refused .*and no jump: ')
probed=$(( ${opt:-0} + ${bp:-0} + nojump ))
pct=$(( ${opt:-0} * 1000 / (probed > 0 ? probed : 1) ))
echo "# branches: $opt of $probed probeable instructions off ftrace sites = $((pct / 10)).$((pct % 10))% ($bp breakpoints, $nojump refused for want of a branch)"
check "at least 95% of the probeable instructions off ftrace sites became branches ($((pct / 10)).$((pct % 10))%)" ge "$pct" 950
dmesg | sed -n 's/.*OKP-COV64-NOT \([a-z]*\) [^ ]* \(.*\)/\1: \2/p' |
  sed -e 's/0x[0-9a-f]*/N/g' -e 's/+N\.\.+N/+N..N/g' | sort | uniq -c | sort -rn | sed 's/^/# /'
check "every probe that is not a branch says why" \
  sh -c "! dmesg | grep 'OKP-COV64-NOT' | grep -Eq 'OKP-COV64-NOT [a-z]+ [^ ]+ *$'"
echo "1..$n"
[ $failed = 0 ]
