# Guest script (busybox sh): kprobe events in the kernel's kprobe_events syntax under
# /sys/kernel/debug/okprobes (docs/events.md), with okp_target.ko in /okp (call_read calls
# okp_target_read(&okp_target_record, 7) on a record of known values). A syntax corpus (good
# lines read back in the kernel's format; bad lines refused, each with the kernel's message and
# caret column in error_log and nothing else changed; where the kernel has kprobe events of its
# own, it is given the same bad lines and must log the same), typed values fetched from known
# registers and memory, return values, -EBUSY rules, removal, events/ enable files, trace and
# trace_pipe records, kprobe_profile, the okprobes tracefs instance, several probes in one event
# (appended, and refused appends beside the kernel's), unload with events enabled and hit.
# Standalone, or appended to another script in the same boot (it then continues its numbering).
# Prints TAP lines; exits non-zero if any check failed.
n=${n:-0} failed=${failed:-0}
check() { # description, then a command
  desc=$1; shift; n=$((n + 1))
  if "$@" >/dev/null 2>&1; then echo "ok $n - $desc"; else echo "not ok $n - $desc"; failed=$((failed + 1)); fi
}
is() { [ "$1" = "$2" ]; }
d=/sys/kernel/debug/okprobes
ke=$d/kprobe_events
grep -q '^okp_target ' /proc/modules || insmod /okp/okp_target.ko
call_read=/sys/kernel/debug/okp_target/call_read
call=/sys/kernel/debug/okp_target/call
# The kernel's own kprobe events, where there are (CONFIG_KPROBE_EVENTS), for comparison.
t=/sys/kernel/tracing
mount -t tracefs nodev $t 2>/dev/null
if [ -w $t/kprobe_events ]; then kernel_events=1; else kernel_events=; fi
# okprobes' messages and carets are 6.1's (later kernels reworded some: "Maxactive is only for
# function exit", "Invalid $-valiable specified"): the bad lines are compared on 6.1 only.
case $(uname -r) in 6.1.*) kernel_errors=$kernel_events ;; *) kernel_errors= ;; esac
define() { echo "$1" >> $ke; }
# riscv64 without KGDB: no breakpoint reaches okprobes, which serves function entries (ftrace)
# and return probes only; most events here are on okp_target's assembly functions (no ftrace
# site), so the script is skipped whole, with the reason.
if [ "$(uname -m)" = riscv64 ] && ! grep -q ' kgdb_handle_exception$' /proc/kallsyms; then
  n=$((n + 1)); echo "ok $n - kprobe events # SKIP no KGDB in this kernel: okprobes serves no breakpoint probes here"
  echo "1..$n"; [ $failed = 0 ]; exit
fi
records() { grep -c "^ *[^#].* $1: " $d/trace; }

# 1. The files.
check "kprobe_events, kprobe_profile, error_log, trace, trace_pipe, README, events/enable exist" \
  sh -c "for f in kprobe_events kprobe_profile error_log trace trace_pipe README events/enable; do [ -e $d/\$f ] || exit 1; done"
check "README lists the syntax and the fetch args okprobes supports" \
  sh -c "grep -q 'r\[maxactive\]\[:\[<group>/\]\[<event>\]\] <place> \[<args>\]' $d/README && grep -q 'ustring' $d/README && grep -q 'char, string' $d/README"
echo > $ke; echo > $d/error_log; echo > $d/trace

# 2. Good lines, read back as the kernel prints them.
fn_addr=$(awk '$3 == "okp_target_fn" {print $1; exit}' /proc/kallsyms)
read_addr=$(awk '$3 == "okp_target_read" {print $1; exit}' /proc/kallsyms)
check "a probe with every kind of fetch arg is accepted" define \
  "p:okp/rd okp_target_read magic=+0(%di):x64 neg=+8(%di):s32 negu=+8(%di):u32 b=+12(%di):b4@4/32 name=+16(%di):string ptr=+0(+32(%di)):string n=%si:u8 a2=\$arg2 sym=@okp_target_record:x64 symoff=@okp_target_record+8:s32 imm=\\1234 str=\\\"hi\" cm=\$comm fn=\\0x$read_addr:symbol st=\$stack0 sp=\$stack arr=+16(%di):u8[3] arx=+8(%di):x16[2]"
check "a return event: r and \$retval" define "r:okp/rdret okp_target_read ret=\$retval:s64"
check "SYM%return makes a return event too" define "p:okp/rdret2 okp_target_read%return \$retval"
check "default names: p_SYM_0, r_SYM_0, a module prefix, maxactive" \
  sh -c "echo 'p okp_target_fn %di' >> $ke && echo 'r okp_target_fn' >> $ke && echo 'p okp_target:okp_target_opt' >> $ke && echo 'r5 okp_target_opt' >> $ke"
check "an address probe" define "p:okp/byaddr 0x$fn_addr"
check "kprobe_events reads the first definition back in the kernel's format" \
  grep -qxF "p:okp/rd okp_target_read magic=+0(%di):x64 neg=+8(%di):s32 negu=+8(%di):u32 b=+12(%di):b4@4/32 name=+16(%di):string ptr=+0(+32(%di)):string n=%si:u8 a2=\$arg2 sym=@okp_target_record:x64 symoff=@okp_target_record+8:s32 imm=\\1234 str=\\\"hi\" cm=\$comm fn=\\0x$read_addr:symbol st=\$stack0 sp=\$stack arr=+16(%di):u8[3] arx=+8(%di):x16[2]" $ke
check "... the return events" sh -c "grep -qxF 'r:okp/rdret okp_target_read ret=\$retval:s64' $ke && grep -qxF 'r:okp/rdret2 okp_target_read arg1=\$retval' $ke"
check "... default names and groups" sh -c "grep -qxF 'p:kprobes/p_okp_target_fn_0 okp_target_fn arg1=%di' $ke && grep -qxF 'r:kprobes/r_okp_target_fn_0 okp_target_fn' $ke && grep -qxF 'p:kprobes/p_okp_target_okp_target_opt_0 okp_target:okp_target_opt' $ke && grep -qxF 'r5:kprobes/r_okp_target_opt_0 okp_target_opt' $ke"
# (0x%p as the kernel prints it: a hashed value, or (____ptrval____) this early after boot)
check "... the address probe" grep -qE '^p:okp/byaddr 0x[^ ]+$' $ke
check "each event has events/GROUP/EVENT/{enable,format}" \
  sh -c "[ -f $d/events/okp/rd/enable ] && [ -f $d/events/okp/rd/format ] && [ -f $d/events/kprobes/r_okp_target_fn_0/enable ] && [ -f $d/events/okp/enable ]"
check "format names the fields and the print fmt" \
  sh -c "grep -q '^name: rd$' $d/events/okp/rd/format && grep -q 'field:s32 neg;' $d/events/okp/rd/format && grep -q 'field:__data_loc char\[\] name;' $d/events/okp/rd/format && grep -q '^print fmt: \"(%lx) magic=0x%Lx neg=%d' $d/events/okp/rd/format"
check "a new event is disabled" is "$(cat $d/events/okp/rd/enable)" 0

# 3. Values, in the kernel's record format.
echo 1 > $d/events/okp/rd/enable
check "enable reads 1; the group's reads X (mixed)" sh -c "[ \$(cat $d/events/okp/rd/enable) = 1 ] && [ \$(cat $d/events/okp/enable) = X ]"
echo 1 > $call_read
rec=$(grep ' rd: ' $d/trace)
echo "# $rec"
# (+0x4 where the kernel has IBT: okprobes, as the kernel's kprobes, probes after the ENDBR)
check "one call, one record, in the kernel's format" \
  sh -c "echo '$rec' | grep -qE '^ +[^ ]+-[0-9]+ +\[[0-9]{3}\] [.dDbXnNpzZhHs0-9a-f]{5} +[0-9]+\.[0-9]{6}: rd: \(okp_target_read\+0x[04]/0x[0-9a-f]+ \[okp_target\]\) '"
for v in 'magic=0x1122334455667788' 'neg=-5' 'negu=4294967291' 'b=10' 'name="okprobes"' \
         'ptr="pointed-to"' 'n=7' 'a2=0x7' 'sym=0x1122334455667788' 'symoff=-5' 'imm=0x4d2' \
         'str="hi"' 'fn=okp_target_read+0x0/0x' 'arr={111,107,112}' 'arx={0xfffb,0xffff}'; do
  check "fetched $v" sh -c "echo '$rec' | grep -qF ' $v'"
done
check "fetched \$comm as the caller's name" sh -c "echo '$rec' | grep -qE ' cm=\"[^\"]+\"'"
check "fetched \$stack0 and \$stack" sh -c "echo '$rec' | grep -qE ' st=0x[0-9a-f]+ sp=0x[0-9a-f]+ '"
echo 1 > $d/events/okp/rdret/enable; echo 1 > $d/events/okp/rdret2/enable
echo 1 > $call_read
check "a return event records (caller+off/size <- func) and \$retval:s64" \
  grep -qE ' rdret: \(call_read_set\+0x[0-9a-f]+/0x[0-9a-f]+ \[okp_target\] <- okp_target_read\) ret=2$' $d/trace
check "a %return event records \$retval as x64 by default" grep -qE ' rdret2: \(.* <- okp_target_read\) arg1=0x2$' $d/trace
check "kprobe_profile: rd 2 hits, rdret 1, no misses" \
  sh -c "awk '\$1 == \"rd\" {h=\$2; m=\$3} \$1 == \"rdret\" {r=\$2} END {exit !(h == 2 && m == 0 && r == 1)}' $d/kprobe_profile"
check "kprobe_profile: a disabled event has no hits" sh -c "awk '\$1 == \"p_okp_target_fn_0\" {exit \$2 != 0}' $d/kprobe_profile && grep -q p_okp_target_fn_0 $d/kprobe_profile"

# 3b. Arrays of strings (string[N]: N string pointers in memory, the last NULL), char (6.12's
#     type), nesting 14 deep (the kernel's limit): read back, format, values.
more="names=+40(%di):string[3] one=+32(%di):string[1] c=+16(%di):char cs=+16(%di):char[3] deep=+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(%di))))))))))))))"
check "string arrays, char, 14 nested dereferences are accepted" define "p:okp/more okp_target_read $more"
check "... read back as written" grep -qxF "p:okp/more okp_target_read $more" $ke
fmt=$d/events/okp/more/format
check "... format: a string array's data_locs, char as u8" \
  sh -c "grep -q 'field:__data_loc char\[\]\[3\] names;.*size:12;' $fmt && grep -q 'field:u8 cs\[\];.*size:3;' $fmt"
cat > /tmp/okp-more-fmt <<'EOF'
print fmt: "(%lx) names={\"%s\",\"%s\",\"%s\"} one={\"%s\"} c='%c' cs={'%c','%c','%c'} deep=0x%Lx", REC->__probe_ip, __get_str(names[0]), __get_str(names[1]), __get_str(names[2]), __get_str(one[0]), REC->c, REC->cs[0], REC->cs[1], REC->cs[2], REC->deep
EOF
check "... print fmt: each element, as the kernel's" is "$(grep '^print fmt' $fmt)" "$(cat /tmp/okp-more-fmt)"
echo 1 > $d/events/okp/more/enable; echo 1 > $call_read; echo 0 > $d/events/okp/more/enable
rec=$(grep ' more: ' $d/trace); echo "# $rec"
for v in 'names={"one","two",(fault)}' 'one={"pointed-to"}' "c='o'" "cs={'o','k','p'}" 'deep=0x0'; do
  check "fetched $v" sh -c "echo '$rec' | grep -qF ' $v'"
done
echo '-:okp/more' >> $ke
# 3c. Strings up to the kernel's limit (MAX_STRING_SIZE, PATH_MAX: 4095 bytes and the NUL):
#     3000 letters whole, 6000 cut at 4095; read through trace, then all the records through
#     trace_pipe in 1000-byte reads (the long record's text spans eight of them).
check "long strings: an event of a 3000- and a 6000-letter string" \
  define "p:okp/long okp_target_read l=+0(+64(%di)):string ll=+0(+72(%di)):string"
echo > $d/trace
echo 1 > $d/events/okp/long/enable; echo 1 > $call_read; echo 0 > $d/events/okp/long/enable
string_len() { # field; a record's line on stdin: its string's length, or -1
  awk -v f=" $1=\"" '{ i = index($0, f); if (!i) { print -1; exit }
                       s = substr($0, i + length(f)); print index(s, "\"") - 1; exit }'
}
rec=$(grep ' long: ' $d/trace)
check "... the 3000 letters whole" is "$(echo "$rec" | string_len l)" 3000
check "... the 6000 cut at 4095, as the kernel cuts them" is "$(echo "$rec" | string_len ll)" 4095
check "... the letters as they are" sh -c "echo '$rec' | grep -qF ' l=\"abcdefghijklmnopqrstuvwxyzabcd'"
all=$(grep -v '^#' $d/trace | wc -c)
piped=$(timeout 20 dd if=$d/trace_pipe bs=1000 count=$(( (all + 999) / 1000 )) 2>/dev/null | grep ' long: ')
check "... trace_pipe read 1000 bytes at a time gives the same line" is "$piped" "$rec"
echo '-:okp/long' >> $ke
# 6.12's %pD (a struct file's name) and %pd (a struct dentry's): rewritten, as the kernel's, to
# +0x0(+0xNAME(+0xDENTRY(FETCHARG))):string with this kernel's offsets, listed so.
check "%pD: a file's name, rewritten to a string through f_path.dentry and d_name.name" define "p:okp/pd vfs_read f=%di:%pD"
pd=$(sed -n 's/^p:okp\/pd vfs_read f=\(+0x0(+0x[0-9a-f]*(+0x[0-9a-f]*(%di))):string\)$/\1/p' $ke)
dentry=$(echo "$pd" | sed -n 's/^+0x0(+0x[0-9a-f]*(\(+0x[0-9a-f]*\)(%di))):string$/\1/p')
echo "# %pD: $pd"
check "... listed as the rewritten string fetch" [ -n "$dentry" ]
check "%pd: a dentry's name, the same fetch from its address" \
  sh -c "echo 'p:okp/pd2 vfs_read d=$dentry(%di):%pd' >> $ke && grep -qxF 'p:okp/pd2 vfs_read d=$pd' $ke"
echo 1 > $d/events/okp/pd/enable; echo 1 > $d/events/okp/pd2/enable
read -r l < /proc/version
echo 0 > $d/events/okp/pd/enable; echo 0 > $d/events/okp/pd2/enable
check "... each records the name of a file read (/proc/version)" \
  sh -c "grep -q ' pd: (vfs_read+0x[0-9a-f]*/0x[0-9a-f]*) f=\"version\"$' $d/trace && grep -q ' pd2: (vfs_read+0x[0-9a-f]*/0x[0-9a-f]*) d=\"version\"$' $d/trace"
echo '-:okp/pd' >> $ke; echo '-:okp/pd2' >> $ke

# 4. -EBUSY while enabled; removal.
check "an enabled event cannot be removed" sh -c "! echo '-:okp/rd' >> $ke"
check "kprobe_events cannot be cleared while an event is enabled" sh -c "! echo > $ke"
check "... and both changed nothing" sh -c "grep -q '^p:okp/rd ' $ke && [ \$(cat $d/events/okp/rd/enable) = 1 ]"
echo 0 > $d/events/enable
check "events/enable 0 disables every event" sh -c "[ \$(cat $d/events/enable) = 0 ] && [ \$(cat $d/events/okp/rd/enable) = 0 ]"
before=$(records rd)
echo 1 > $call_read
check "a disabled event records nothing" is "$(records rd)" "$before"
check "-:GRP/EVENT removes an event and its directory" sh -c "echo '-:okp/byaddr' >> $ke && ! grep -q byaddr $ke && [ ! -d $d/events/okp/byaddr ]"
check "-:EVENT finds the event in its group (kprobes)" sh -c "echo '-:p_okp_target_fn_0' >> $ke && ! grep -q p_okp_target_fn_0 $ke"
check "removing an event that does not exist fails" sh -c "! echo '-:okp/nosuch' >> $ke"
# The kernel's other -: forms (dyn_event_release): -:EVENT removes that event of every group,
# -:GRP/ every event of the group; only '/' separates a group there; -: alone is refused.
define "p:okp_a/dup okp_target_fn"; define "p:okp_b/dup okp_target_fn"; define "p:okp_b/other okp_target_fn"
echo 1 > $d/events/okp_b/dup/enable
check "-:EVENT with that event enabled in one group fails (EBUSY), removing nothing" \
  sh -c "! echo '-:dup' >> $ke && [ \$(grep -c '/dup ' $ke) = 2 ]"
echo 0 > $d/events/okp_b/dup/enable
check "-:GRP.EVENT does not name a group (fails, removes nothing)" sh -c "! echo '-:okp_a.dup' >> $ke && [ \$(grep -c '/dup ' $ke) = 2 ]"
check "-: alone is refused" sh -c "! echo '-:' >> $ke"
check "-:EVENT removes the event of that name in every group" \
  sh -c "echo '-:dup' >> $ke && ! grep -q '/dup ' $ke && [ ! -d $d/events/okp_a ] && grep -q '^p:okp_b/other ' $ke"
define "p:okp_b/dup okp_target_fn"
check "-:GRP/ removes every event of the group" \
  sh -c "echo '-:okp_b/' >> $ke && ! grep -q '^p:okp_b/' $ke && [ ! -d $d/events/okp_b ]"

# 5. trace and trace_pipe.
echo > $d/trace
check "> trace clears the records" sh -c "[ \$(grep -vc '^#' $d/trace) = 0 ] && grep -q 'entries-in-buffer/entries-written: 0/0' $d/trace"
echo 1 > $d/events/okp/rd/enable
cat $d/trace_pipe > /tmp/okp-pipe & pipe_pid=$!
sleep 0.3
echo 3 > $call_read
# the reader wakes when the kernel schedules it: on a debug kernel under a loaded host that
# takes seconds, so wait for the records (up to 20 s) instead of a fixed time
i=0
while [ "$(grep -c ' rd: ' /tmp/okp-pipe)" -lt 3 ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
kill $pipe_pid; wait $pipe_pid 2>/dev/null
check "a blocked trace_pipe reader gets the 3 records written meanwhile" is "$(grep -c ' rd: ' /tmp/okp-pipe)" 3
check "trace_pipe consumed them" is "$(records rd)" 0
echo 2 > $call_read
check "trace_pipe returns what is there (non-blocking read of 2 records)" is "$(timeout 10 head -n 2 $d/trace_pipe | grep -c ' rd: ')" 2

# 5b. Under load (4 writers; the rings fill): every hit is a record kept or one counted as
#     dropped, and every kept record is whole.
hits_before=$(awk '$1 == "rd" {print $2}' $d/kprobe_profile)
echo > $d/trace
for i in 1 2 3 4; do echo 1000 > $call_read & done; wait
echo 0 > $d/events/okp/rd/enable
hits=$(($(awk '$1 == "rd" {print $2}' $d/kprobe_profile) - hits_before))
counts=$(sed -n 's/^# entries-in-buffer\/entries-written: \([0-9]*\)\/\([0-9]*\) .*/\1 \2/p' $d/trace)
dropped=$(sed -n 's/^# okprobes: \([0-9]*\) dropped.*/\1/p' $d/trace)
whole=$(grep -cE '^ +[^ ]+-[0-9]+ +\[[0-9]{3}\] [.a-zA-Z0-9]{5} +[0-9]+\.[0-9]{6}: rd: \(okp_target_read\+0x[04]/0x[0-9a-f]+ \[okp_target\]\) magic=0x1122334455667788 .* st=0x[0-9a-f]+ sp=0x[0-9a-f]+ arr=\{111,107,112\} arx=\{0xfffb,0xffff\}$' $d/trace)
echo "# 4000 calls: hits $hits, entries/written $counts, dropped $dropped, whole records $whole"
check "4000 calls from 4 writers: 4000 hits, each written" sh -c "[ $hits = 4000 ] && [ '${counts#* }' = 4000 ]"
check "... written = kept + dropped, some dropped (the rings were full)" sh -c "[ $((${counts% *} + dropped)) = 4000 ] && [ $dropped -gt 0 ]"
check "... every kept record is whole" is "$whole" "${counts% *}"
echo > $d/trace

# 5c. Records are stored binary and printed when read: they stay readable, the same text, after
#     their event is removed (its format outlives it), through trace and then trace_pipe; a
#     new event with the same name prints its own arguments.
echo > $d/trace
define "p:okp/gone okp_target_read magic=+0(%di):x64 name=+16(%di):string"
echo 1 > $d/events/okp/gone/enable; echo 2 > $call_read; echo 0 > $d/events/okp/gone/enable
before=$(grep ' gone: ' $d/trace)
echo '-:okp/gone' >> $ke
define "p:okp/gone okp_target_read n=%si:u8"
echo 1 > $d/events/okp/gone/enable; echo 1 > $call_read; echo 0 > $d/events/okp/gone/enable
echo '-:okp/gone' >> $ke
check "a removed event's records read the same after its removal" is "$(grep ' gone: ' $d/trace | head -n 2)" "$before"
check "... beside the records of a new event of the same name, with its own arguments" sh -c "[ \$(grep -c ' gone: (okp_target_read+0x[04]/0x[0-9a-f]* \[okp_target\]) magic=0x1122334455667788 name=\"okprobes\"\$' $d/trace) = 2 ] && grep -q ' gone: (okp_target_read+0x[04]/0x[0-9a-f]* \[okp_target\]) n=7\$' $d/trace"
check "... and trace_pipe takes them, the same text" is "$(timeout 2 head -n 2 $d/trace_pipe)" "$before"
echo > $d/trace

# 6. Bad lines: each refused with the kernel's message, the caret under the kernel's column, and
#    nothing else changed. "column|message|line".
defs_before=$(cat $ke)
bad=/tmp/okp-bad-lines
cat > $bad <<'LINES'
24|Invalid register name|p:okp/bad okp_target_fn %foo
24|$retval is not available on probe|p:okp/bad okp_target_fn $retval
10|Retprobe address must be an function entry|r:okp/bad vfs_read+8 %ax
23|Invalid probed address suffix|p:okp/bad okp_target_fn%foo
10|Invalid probed address or symbol|p:okp/bad no_such_function_okp
1|Maxactive is not for kprobe|p5:okp/bad okp_target_fn
1|Invalid maxactive number|r0:okp/bad okp_target_fn
1|Maxactive is too big|r9999:okp/bad okp_target_fn
2|Group name is not specified|p:/bad okp_target_fn
6|Event name must follow the same rules as C identifiers|p:okp/1bad okp_target_fn
32|Dereference brace is not closed|p:okp/bad okp_target_fn x=+8(%di
26|Dereference needs a brace|p:okp/bad okp_target_fn x=+8%di
30|Unknown type is specified|p:okp/bad okp_target_fn x=%di:u7
30|String accepts only memory argument|p:okp/bad okp_target_fn x=%di:string
24|Argument name must follow the same rules as C identifiers|p:okp/bad okp_target_fn 9x=%di
30|This argument name is already used|p:okp/bad okp_target_fn x=%di x=%si
24|Invalid $-variable specified|p:okp/bad okp_target_fn $stackx
25|Invalid immediate value|p:okp/bad okp_target_fn \abc
31|String is not closed with '"'|p:okp/bad okp_target_fn x=\"abc
29|$comm can not be dereferenced|p:okp/bad okp_target_fn x=+0($comm):string
24|Invalid argument number|p:okp/bad okp_target_fn $arg0
24|File offset is not available with kprobe|p:okp/bad okp_target_fn @+10
30|Invalid bitfield|p:okp/bad okp_target_fn x=%di:b0@1/32
24|Argument name is too long|p:okp/bad okp_target_fn aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=%di
24|Invalid memory address|p:okp/bad okp_target_fn @0x12z
38|Array is not closed|p:okp/bad okp_target_fn x=+0(%di):u8[2
39|Array has wrong suffix|p:okp/bad okp_target_fn x=+0(%di):u8[2]x
37|Invalid array size|p:okp/bad okp_target_fn x=+0(%di):u8[0]
37|Array number is too big|p:okp/bad okp_target_fn x=+0(%di):u8[65]
30|String accepts only memory argument|p:okp/bad okp_target_fn x=%di:u8[2]
30|String accepts only memory argument|p:okp/bad okp_target_fn x=%di:string[2]
34|String accepts only memory argument|p:okp/bad okp_target_fn x=+0(%di):symstr[2]
33|Symbol String doesn't accept data/userdata|p:okp/bad okp_target_fn x=$stack:symstr
35|Symbol String doesn't accept data/userdata|p:okp/bad okp_target_fn x=+u0(%di):symstr
34|Invalid bitfield|p:okp/bad okp_target_fn x=+0(%di):b4@/32
29|Dereference is too much nested|p:okp/bad okp_target_fn x=+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(%di)))))))))))))))
26|Dereference is too much nested|p:okp/bad okp_target_fn x=+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(@0x1))))))))))))):u8[2]
134|Event too big (too many fields?)|p:okp/bad okp_target_fn a=+0(%di):u64[64] b=+0(%di):u64[64] c=+0(%di):u64[64] d=+0(%di):u64[64] e=+0(%di):u64[64] f=+0(%di):u64[64] g=+0(%di):u64[64]
24|Invalid $-variable specified|p:okp/bad okp_target_fn $arg*
24|Invalid $-variable specified|r:okp/bad okp_target_fn $arg1
24|Invalid register name|p:okp/bad okp_target_fn %di->next
10|Failed to register probe event|p:okp/bad okp_arg
LINES
# The last entry of an error_log: "column|message".
last_error() {
  tail -n 3 "$1" | awk 'NR == 1 {sub(/^\[ *[0-9]+\.[0-9]+\] trace_kprobe: error: /, ""); m = $0}
                        NR == 3 {print index($0, "^") - 12 "|" m}'
}
while IFS='|' read -r col msg line; do
  if ! echo "$line" >> $ke 2>/dev/null; then refused=1; else refused=; fi
  got=$(last_error $d/error_log)
  if [ -n "$refused" ] && [ "$got" = "$col|$msg" ] && grep -qF "  Command: $line" $d/error_log; then
    echo "ok - refused with the kernel's error and caret: $line"
  else
    echo "not ok - refused with the kernel's error and caret: $line (got '$got', refused=$refused)"
  fi
  if [ -n "$kernel_errors" ] && [ "$msg" != "Failed to register probe event" ]; then
    echo "$line" >> $t/kprobe_events 2>/dev/null
    kgot=$(last_error $t/error_log)
    if [ "$kgot" = "$got" ]; then echo "ok - the kernel's kprobe events log the same: $line"
    else echo "not ok - the kernel's kprobe events log the same: $line (kernel '$kgot', okprobes '$got')"; fi
  fi
done < $bad > /tmp/okp-bad-results
while read -r r; do
  n=$((n + 1))
  case "$r" in not*) failed=$((failed + 1)); echo "not ok $n ${r#not ok - }" ;; *) echo "ok $n ${r#ok - }" ;; esac
done < /tmp/okp-bad-results
if [ -n "$kernel_events" ] && [ -z "$kernel_errors" ]; then
  n=$((n + 1)); echo "ok $n - the kernel's kprobe events log the same errors # SKIP $(uname -r) is not 6.1, okprobes' baseline"
fi
check "the refused lines changed no definition" is "$(cat $ke)" "$defs_before"
check "a line that is not p, r or - is refused" sh -c "! echo 'x:okp/bad okp_target_fn' >> $ke"

# 7. Beside the kernel's own kprobe event on the same function: the same values.
if [ -n "$kernel_events" ]; then
  cmp_args="magic=+0(%di):x64 neg=+8(%di):s32 name=+16(%di):string n=%si:u8 names=+40(%di):string[3] arx=+8(%di):x16[2] unames=+40(%di):ustring[2] ln=+0(+64(%di)):string"
  echo "p:okp/cmp okp_target_read $cmp_args" >> $ke
  echo "p:okp/cmp okp_target_read $cmp_args" >> $t/kprobe_events
  sed -n '/^format:/,$p' $t/events/okp/cmp/format > /tmp/okp-fmt-theirs
  sed -n '/^format:/,$p' $d/events/okp/cmp/format > /tmp/okp-fmt-ours
  check "the kernel's format of the same event: the same fields and print fmt (arrays, a string array)" \
    cmp -s /tmp/okp-fmt-ours /tmp/okp-fmt-theirs
  diff /tmp/okp-fmt-ours /tmp/okp-fmt-theirs | sed 's/^/# /'
  echo > $t/trace; echo 1 > $t/events/okp/cmp/enable; echo 1 > $d/events/okp/cmp/enable
  echo 1 > $call_read
  echo 0 > $t/events/okp/cmp/enable; echo 0 > $d/events/okp/cmp/enable
  ours=$(grep ' cmp: ' $d/trace | sed 's/.*: cmp: //'); theirs=$(grep ' cmp: ' $t/trace | sed 's/.*: cmp: //')
  echo "# okprobes: $ours"; echo "# kernel:   $theirs"
  # arm64: okprobes serves a function's entry at its ftrace call site (+0x4) but records the
  # function's start, where the kernel (no KPROBES_ON_FTRACE there) probes: the same line.
  check "the kernel's kprobe event on the same function records the same line" is "$ours" "$theirs"
  echo '-:okp/cmp' >> $t/kprobe_events
else
  n=$((n + 1)); echo "ok $n - the kernel's kprobe event on the same function # SKIP no kprobe events in this kernel"
fi

# 8. An event on a module that is not loaded waits; it arms when the module comes (and fires in
#    its init), and survives the module's unload and reload.
echo > $ke; echo > $d/trace
rmmod okp_target
check "an event on a module not loaded is accepted" define "p:okp/pend okp_target:okp_target_fn x=%di:u64"
check "... listed, with its files" sh -c "grep -qxF 'p:okp/pend okp_target:okp_target_fn x=%di:u64' $ke && [ -f $d/events/okp/pend/enable ]"
echo 1 > $d/events/okp/pend/enable
check "... and enabled while it waits" is "$(cat $d/events/okp/pend/enable)" 1
insmod /okp/okp_target.ko init_calls=1
grep ' pend: ' $d/trace | sed 's/^/# /'
# (okp_target_fn and okp_target_body are one address: kallsyms names either)
check "it fires in the module's init once the module loads" grep -q ' pend: (okp_target_[a-z]*+0x[0-9a-f]*/0x[0-9a-f]* \[okp_target\]) x=10$' $d/trace
echo 1 > $call
check "... and on later calls" grep -q ' pend: .* x=20$' $d/trace
rmmod okp_target
check "the event stays, enabled, when the module goes" sh -c "grep -q '^p:okp/pend ' $ke && [ \$(cat $d/events/okp/pend/enable) = 1 ]"
echo > $d/trace
insmod /okp/okp_target.ko init_calls=2
check "it fires again after a reload, in init" is "$(grep -c ' pend: ' $d/trace)" 2
echo 0 > $d/events/okp/pend/enable

# 8b. The okprobes tracefs instance (where the kernel has tracing): the records again, after
#     the kernel's own task, CPU, flags and time, then the probed function's name (what the
#     text entries the instance had before showed). Compared by pid, CPU and text (the task
#     column is the kernel's saved-cmdlines cache, the time its clock's).
inst=$t/instances/okprobes
# "pid cpu text" of each record, sorted (two clocks may order near records differently)
own_records() { grep -v '^#' $d/trace | sed -n 's/^ *[^ ]*-\([0-9]*\) *\[\([0-9]*\)\] [^ ]* *[0-9]*\.[0-9]*: /\1 \2 /p' | sort; }
inst_records() { grep -v '^#' $inst/trace | sed -n 's/^ *[^ ]*-\([0-9]*\) *\[\([0-9]*\)\] [^ ]* *[0-9]*\.[0-9]*: [^ ]*: /\1 \2 /p' | sort; }
if [ -d $t/instances ]; then
  check "the tracefs instance okprobes exists (made at the first event)" [ -f $inst/trace ]
  # The copy is okprobes' kernel trace event okprobes/record (binary, printed when read),
  # off by default; tracefs_instance and the instance's enable file are one switch.
  check "tracefs_instance says 0 (the default): okprobes/record is off in the instance" \
    sh -c "[ \$(cat $d/tracefs_instance) = 0 ] && [ \$(cat $inst/events/okprobes/record/enable) = 0 ]"
  echo 1 > $d/tracefs_instance
  check "tracefs_instance 1 enables okprobes/record in the instance, not at the top level" \
    sh -c "[ \$(cat $d/tracefs_instance) = 1 ] && [ \$(cat $inst/events/okprobes/record/enable) = 1 ] && [ \$(cat $t/events/okprobes/record/enable) = 0 ]"
  echo > $d/trace; echo > $inst/trace
  define "p:okp/inst okp_target_read magic=+0(%di):x64 neg=+8(%di):s32 name=+16(%di):string n=%si:u8"
  define "r:okp/instret okp_target_read ret=\$retval:s64"
  echo 1 > $d/events/okp/inst/enable; echo 1 > $d/events/okp/instret/enable
  echo 3 > $call_read
  echo 0 > $d/events/okp/inst/enable; echo 0 > $d/events/okp/instret/enable
  own_records > /tmp/okp-own; inst_records > /tmp/okp-inst
  sed -n '/ inst: /{s/^/# instance: /p;q}' $inst/trace
  check "the instance holds okprobes' 6 records: the same pid, CPU, event and values" \
    sh -c "[ \$(grep -c . /tmp/okp-own) = 6 ] && cmp -s /tmp/okp-own /tmp/okp-inst"
  check "... each after the probed function's symbol (a return event's: its function's)" \
    sh -c "[ \$(grep -c ': okp_target_read: inst: (okp_target_read+0x[04]/' $inst/trace) = 3 ] && [ \$(grep -c ': okp_target_read: instret: (call_read_set+' $inst/trace) = 3 ]"
  echo 0 > $inst/tracing_on
  echo 1 > $d/events/okp/inst/enable; echo 1 > $call_read; echo 0 > $d/events/okp/inst/enable
  check "the instance's tracing_on 0 keeps the records out of it, not out of okprobes' trace" \
    sh -c "[ \$(grep -c ' inst: ' $d/trace) = 4 ] && [ \$(grep -c ' inst: ' $inst/trace) = 3 ]"
  echo 1 > $inst/tracing_on
  echo 0 > $d/tracefs_instance
  echo 1 > $d/events/okp/inst/enable; echo 1 > $call_read; echo 0 > $d/events/okp/inst/enable
  check "tracefs_instance 0 disables okprobes/record there: records out of the instance, not out of okprobes' trace" \
    sh -c "[ \$(cat $inst/events/okprobes/record/enable) = 0 ] && [ \$(grep -c ' inst: ' $d/trace) = 5 ] && [ \$(grep -c ' inst: ' $inst/trace) = 3 ]"
  check "tracefs_instance refuses what is not 0 or 1" sh -c "! echo x > $d/tracefs_instance && [ \$(cat $d/tracefs_instance) = 0 ]"
  # What trace-cmd does (record|start -B okprobes -e okprobes): the instance's enable file.
  echo 1 > $inst/events/okprobes/record/enable
  echo 1 > $d/events/okp/inst/enable; echo 1 > $call_read; echo 0 > $d/events/okp/inst/enable
  check "the instance's okprobes/record enable 1 turns the copy on: tracefs_instance says 1, the record is copied" \
    sh -c "[ \$(cat $d/tracefs_instance) = 1 ] && [ \$(grep -c ' inst: ' $d/trace) = 6 ] && [ \$(grep -c ' inst: ' $inst/trace) = 4 ]"
  echo 0 > $inst/events/okprobes/record/enable
  echo 1 > $d/events/okp/inst/enable; echo 1 > $call_read; echo 0 > $d/events/okp/inst/enable
  check "... and 0 there off: tracefs_instance says 0, the record is in okprobes' trace only" \
    sh -c "[ \$(cat $d/tracefs_instance) = 0 ] && [ \$(grep -c ' inst: ' $d/trace) = 7 ] && [ \$(grep -c ' inst: ' $inst/trace) = 4 ]"
  check "the instance cannot be removed while okprobes holds it" sh -c "! rmdir $inst && [ -f $inst/trace ]"
  echo '-:okp/inst' >> $ke; echo '-:okp/instret' >> $ke
  check "... and it keeps the records of removed events" is "$(inst_records | grep -c ' inst: ')" 4
  # A removed event's format lives while okprobes' trace holds a record of it; the instance's
  # copies may outlive it (the kernel's ring keeps what okprobes' drops), and then say so.
  echo > $d/trace
  check "... printed as an event okprobes no longer has once okprobes' trace is cleared" \
    is "$(grep -c ': okprobes: a record of an event okprobes no longer has$' $inst/trace)" 7
  echo > $inst/trace
else
  n=$((n + 1)); echo "ok $n - the tracefs instance okprobes # SKIP no tracefs instances here (no CONFIG_TRACING, or tracefs not mountable)"
fi

# 8c. Several probes in one event (6.1's rules): a line naming an existing event with the same
#     probe type and argument names and types adds a probe to it; otherwise it is refused
#     (EEXIST) with the kernel's message and caret, beside the kernel's own on 6.1.
call_opt=/sys/kernel/debug/okp_target/call_opt
echo > $d/trace
define "p:okp/two okp_target_read x=%si:u64"
# (the second probe on call_read_set, okp_target_read's caller, x its n: the kernel's kprobe
# events, given the same lines below, refuse notrace functions such as okp_target_fn)
check "a line naming an existing event, with the same argument names and types, adds a probe" \
  define "p:okp/two call_read_set x=%si:u64"
printf '%s\n' "p:okp/two okp_target_read x=%si:u64" "p:okp/two call_read_set x=%si:u64" > /tmp/okp-two
check "kprobe_events lists each probe of the event, in order" sh -c "grep '^p:okp/two ' $ke | cmp -s - /tmp/okp-two"
check "... one event: one directory, one format" sh -c "[ \$(ls $d/events/okp | grep -cx two) = 1 ] && grep -q '^print fmt: \"(%lx) x=%Lu\", REC->__probe_ip, REC->x$' $d/events/okp/two/format"
echo 1 > $d/events/okp/two/enable
echo 2 > $call_read
check "enabling the event enables both probes: 2 records from one, 1 from the other" \
  sh -c "[ \$(grep -c ' two: (okp_target_read+0x[04]/0x[0-9a-f]* \[okp_target\]) x=7$' $d/trace) = 2 ] && [ \$(grep -c ' two: (call_read_set+0x[04]/0x[0-9a-f]* \[okp_target\]) x=2$' $d/trace) = 1 ]"
check "kprobe_profile: a line per probe, each with its hits (2, 1)" \
  is "$(awk '$1 == "two" {printf "%s/%s ", $2, $3}' $d/kprobe_profile)" "2/0 1/0 "
check "a probe appended to an enabled event is enabled at once" define "p:okp/two okp_target_opt x=%di:u64"
echo 1 > $call_opt
check "... and records under the event" grep -qE ' two: \(okp_target_opt\+0x[04]/0x[0-9a-f]+ \[okp_target\]\) x=20$' $d/trace
check "an enabled event's probe cannot be removed" sh -c "! echo '-:okp/two okp_target_opt' >> $ke"
echo 0 > $d/events/okp/two/enable
check "-:GRP/EVENT PLACE ARGS removes only the probe it matches" \
  sh -c "echo '-:okp/two okp_target_opt x=%di:u64' >> $ke && grep '^p:okp/two ' $ke | cmp -s - /tmp/okp-two"
check "... one that matches no probe fails, changing nothing" \
  sh -c "! echo '-:okp/two call_read_set x=%di:u64' >> $ke && grep '^p:okp/two ' $ke | cmp -s - /tmp/okp-two"
check "a bitfield appends to a u32 argument of the same name (the kernel's types compare so)" \
  sh -c "echo 'p:okp/bf okp_target_read b=+12(%di):u32' >> $ke && echo 'p:okp/bf okp_target_fn b=+12(%di):b4@4/32' >> $ke && [ \$(grep -c '^p:okp/bf ' $ke) = 2 ]"
echo '-:okp/bf' >> $ke
# Refused appends: "column|message|line", each tried on okp/two (okp_target_read, call_read_set).
cat > $bad <<'LINES'
0|Probe type is different from existing probe|r:okp/two okp_target_opt
25|Argument type or name is different from existing probe|p:okp/two okp_target_opt x=%di:u32
25|Argument type or name is different from existing probe|p:okp/two okp_target_opt y=%di:u64
25|Argument type or name is different from existing probe|p:okp/two okp_target_opt
35|Argument type or name is different from existing probe|p:okp/two okp_target_opt x=%di:u64 z=%si
25|Argument type or name is different from existing probe|p:okp/two okp_target_opt x=+0(%di):u64[2]
0|There is already the exact same probe event|p:okp/two call_read_set x=%si:u64
LINES
if [ -n "$kernel_errors" ]; then
  echo "p:okp/two okp_target_read x=%si:u64" >> $t/kprobe_events
  echo "p:okp/two call_read_set x=%si:u64" >> $t/kprobe_events
fi
defs_before=$(cat $ke)
while IFS='|' read -r col msg line; do
  if ! echo "$line" >> $ke 2>/tmp/okp-err; then refused=1; else refused=; fi
  got=$(last_error $d/error_log)
  if [ -n "$refused" ] && grep -q 'File exists' /tmp/okp-err && [ "$got" = "$col|$msg" ] && grep -qF "  Command: $line" $d/error_log; then
    echo "ok - an append refused (EEXIST) with the kernel's error and caret: $line"
  else
    echo "not ok - an append refused (EEXIST) with the kernel's error and caret: $line (got '$got', refused=$refused: $(cat /tmp/okp-err))"
  fi
  if [ -n "$kernel_errors" ]; then
    echo "$line" >> $t/kprobe_events 2>/dev/null
    kgot=$(last_error $t/error_log)
    if [ "$kgot" = "$got" ]; then echo "ok - the kernel's kprobe events log the same: $line"
    else echo "not ok - the kernel's kprobe events log the same: $line (kernel '$kgot', okprobes '$got')"; fi
  fi
done < $bad > /tmp/okp-bad-results
while read -r r; do
  n=$((n + 1))
  case "$r" in not*) failed=$((failed + 1)); echo "not ok $n ${r#not ok - }" ;; *) echo "ok $n ${r#ok - }" ;; esac
done < /tmp/okp-bad-results
check "the refused appends changed no definition" is "$(cat $ke)" "$defs_before"
if [ -n "$kernel_errors" ]; then
  check "the kernel's kprobe_events lists the event's probes as okprobes does" \
    sh -c "grep '^p:okp/two ' $t/kprobe_events | cmp -s - /tmp/okp-two"
  echo > $d/trace; echo > $t/trace
  echo 1 > $d/events/okp/two/enable; echo 1 > $t/events/okp/two/enable
  echo 2 > $call_read
  echo 0 > $d/events/okp/two/enable; echo 0 > $t/events/okp/two/enable
  grep ' two: ' $d/trace | sed 's/.*: two: //' > /tmp/okp-ours; grep ' two: ' $t/trace | sed 's/.*: two: //' > /tmp/okp-theirs
  sed 's/^/# okprobes: /' /tmp/okp-ours; sed 's/^/# kernel:   /' /tmp/okp-theirs
  check "... and records the same 3 lines from its two probes" sh -c "[ \$(grep -c . /tmp/okp-ours) = 3 ] && cmp -s /tmp/okp-ours /tmp/okp-theirs"
  echo '-:okp/two' >> $t/kprobe_events
elif [ -n "$kernel_events" ]; then
  n=$((n + 1)); echo "ok $n - the kernel's kprobe events beside okprobes' appended probes # SKIP $(uname -r) is not 6.1, okprobes' baseline"
else
  n=$((n + 1)); echo "ok $n - the kernel's kprobe events beside okprobes' appended probes # SKIP no kprobe events in this kernel"
fi
check "-:GRP/EVENT removes every probe of the event, and its directory" \
  sh -c "echo '-:okp/two' >> $ke && ! grep -q '^p:okp/two ' $ke && [ ! -d $d/events/okp/two ] && ! grep -q ' two ' $d/kprobe_profile"

# 9. Clearing all. (An event left enabled and hit while okprobes unloads: events_unload_hot.sh,
#    the guest's last script: its busy reader would slow every script after it.)
check "> kprobe_events removes every event once none is enabled" sh -c "echo > $ke && [ -z \"\$(cat $ke)\" ] && [ ! -d $d/events/okp ]"
echo "1..$n"
[ $failed = 0 ]
