// SPDX-License-Identifier: GPL-2.0
/*
 * okp_sweep's coverage mode (coverage=1): how many instruction boundaries end up jump-optimized
 * with okprobes, and with the kernel's own kprobes (CONFIG_OPTPROBES), at the same addresses.
 *
 * The functions are the sweep's (every stride-th vmlinux function; instruction boundaries by
 * the kernel's own decoder, sweep.c). A batch takes boundaries round-robin over the functions,
 * at least `gap` bytes apart within a function (a probe inside another's 5-byte region keeps it
 * from being optimized, in both frameworks), at most batch_max of them. Per batch the guest
 * script (tests/vm/scripts/coverage.sh) writes, in this order:
 *   run        okprobes: okp_register_kprobe at each boundary (pre_handler only), then
 *              okp_wait_for_optimizer(); each probe is OKP_KPROBE_FLAG_OPTIMIZED or has a
 *              "not optimized: ..." reason. Checked on the way: an optimized probe's first byte
 *              is a jmp (e9), a breakpoint probe's an int3 (cc), and no branch of the function
 *              (by the kernel's decoder) lands inside an optimized region, which lies inside
 *              the function and holds no int3/ud2/ud1
 *   release    (after the script ran a workload through them) okp_unregister_kprobes; the
 *              text must be as it was
 *   kregister  the kernel's register_kprobe (pre_handler only) at the addresses okprobes
 *              accepted; the script sets debug.kprobes-optimization=0 before and 1 after, so the
 *              kernel's optimizer takes them all in one pass instead of one pass (a tasks-RCU
 *              grace period, kprobe_mutex held) every few registrations
 *   kwait      until the kernel's optimizer has done every probe it queued: optimized means
 *              KPROBE_FLAG_OPTIMIZED on the probe's aggregate kprobe (the flag is set when it is
 *              queued; a user's struct kprobe never gets it) and a jmp (e9) at the address
 *   krelease   unregister_kprobes, then waits until the kernel's optimizer restored the text
 * Only boundaries both frameworks accepted, at the address asked for (not moved past an
 * ENDBR64), are compared. Why the kernel did not optimize one is inferred here from its rules
 * in arch/x86/kernel/kprobes/opt.c (can_optimize, copy_optimized_instructions, can_boost),
 * except the exception table and reserved text ("other"); a kernel-optimized probe that these
 * rules would refuse is counted (kernel_infer_mismatch): the inference is then wrong somewhere.
 *
 * `report` prints the OKP-COVERAGE lines: the summary, tables (okprobes' reasons, the
 * kernel's inferred ones, each also for the probes only the other framework optimized), the
 * "only kernel" examples with their bytes and okprobes' reason, then notes and failures.
 */
#include <linux/bitmap.h>
#include <linux/ctype.h>
#include <linux/delay.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <asm/inat.h>
#include <asm/insn.h>
#include <okprobes/okprobes.h>
#include "sweep.h"

static uint gap = 32;
module_param(gap, uint, 0444);
MODULE_PARM_DESC(gap, "coverage: least distance between two probes of one function in a batch");
static uint batch_max = 500;	/* okprobes: a step slot and a detour's cells each */
module_param(batch_max, uint, 0444);
MODULE_PARM_DESC(batch_max, "coverage: most boundaries per batch");
static uint kwait_ms = 120000;
module_param(kwait_ms, uint, 0444);
MODULE_PARM_DESC(kwait_ms, "coverage: longest wait for the kernel's optimizer");

#define CLASS_LEN 120
#define MAX_CLASSES 240
#define MAX_EXAMPLES 40
#define EXAMPLE_LEN (OKP_REASON_MAX + KSYM_NAME_LEN + 96)

enum phase { P_IDLE, P_OKP_ARMED, P_OKP_RELEASED, P_K_ARMED, P_K_WAITED };

/* A relative branch of a function: the kernel's kind (jmp, jcc, loop, jrcxz) or a call. */
struct cov_branch {
	unsigned int off;
	bool call;
	unsigned long target;
};

struct cov_func {
	struct cov_branch *br;
	unsigned int nbr;
	unsigned int indirect;	/* the first indirect jump or jump to a thunk, or ~0 */
	char indirect_what[64];
	char before_end[96];	/* how the symbol before ends ("" until asked) */
};

struct cov_probe {
	unsigned int func, off;
	int okp_ret, k_ret;
	bool okp_moved, okp_opt, okp_ftrace, k_moved, k_opt, k_ftrace, k_aggr;
	char reason[OKP_REASON_MAX];
};

enum table {
	T_OKP_NOT,	/* okprobes' reasons, both accepted, okprobes did not optimize */
	T_OKP_ONLY_K,	/* the same, where the kernel did optimize */
	T_K_NOT,	/* the kernel's (inferred), both accepted, the kernel did not optimize */
	T_K_ONLY_OKP,	/* the same, where okprobes did optimize */
	T_OKP_REFUSED,	/* okprobes refused the boundary (the kernel was not asked) */
	T_K_REFUSED,	/* okprobes accepted, the kernel refused */
	T_RUNS_ON,	/* okprobes: "SYM runs on into the function": how SYM really ends */
	T_NR
};
static const char *const table_name[T_NR] = {
	"okprobes-not-optimized", "okprobes-not-optimized-kernel-did", "kernel-not-optimized",
	"kernel-not-optimized-okprobes-did", "okprobes-refused", "kernel-refused",
	"runs-on-into:symbol-before-ends-with",
};

struct cov_class {
	enum table table;
	unsigned long count;
	char text[CLASS_LEN];
	char example[EXAMPLE_LEN];
};

static struct cov_func *cf;
static struct cov_probe *cp;
static struct okp_kprobe *okps;
static struct okp_kprobe **okp_armed;
static struct kprobe *kks;
static struct kprobe **k_armed;
static unsigned int nb, nokp, nk, batch_no, rr;
static enum phase phase;
static atomic_long_t k_hits;

static struct {
	unsigned long funcs_done, boundaries, okp_refused, k_refused, moved, both, ftrace,
		ftrace_disagree, okp_opt, k_opt, both_opt, only_okp, only_k, neither;
	unsigned long k_flagged_batch, k_prepared_not_opt, k_infer_mismatch, batches;
	/* failures */
	unsigned long okp_byte_bad, okp_region_bad, okp_pending, okp_no_reason, okp_slots_full,
		text_mismatch, k_text_timeout, k_pending, splat;
	u64 okp_reg_ns, okp_wait_ns, okp_unreg_ns, k_reg_ns, k_wait_ns, k_unreg_ns;
} st;

static struct cov_class classes[MAX_CLASSES];
static unsigned int nclasses;
static unsigned long classes_dropped;
static char *examples[MAX_EXAMPLES];
static unsigned int example_func[MAX_EXAMPLES];
static unsigned int nexamples;

static unsigned long failures(void)
{
	return st.okp_byte_bad + st.okp_region_bad + st.okp_pending + st.okp_no_reason +
	       st.okp_slots_full + st.text_mismatch + st.k_text_timeout + st.k_pending + st.splat;
}

static int k_pre(struct kprobe *p, struct pt_regs *regs)
{
	atomic_long_inc(&k_hits);
	return 0;
}

/* --- reasons ------------------------------------------------------------------------------ */

/*
 * okprobes' reason without its numbers and symbol names, so that reasons group: hex and
 * decimal numbers (not digits inside a word: int3, ud2) become X and N; the name of a
 * neighbouring symbol or a blacklisted one becomes SYM.
 */
static void normalize(const char *r, char *out, size_t len)
{
	char norm[OKP_REASON_MAX + 8], *o = norm, *end = norm + sizeof(norm) - 4, *w;
	const char *p = r;
	size_t n;

	while (*p && o < end) {
		if (p[0] == '0' && p[1] == 'x' && isxdigit(p[2])) {
			for (p += 2; isxdigit(*p); p++)
				;
			*o++ = 'X';
		} else if (isdigit(*p) && (p == r || !isalpha(p[-1]))) {
			while (isdigit(*p))
				p++;
			*o++ = 'N';
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	w = norm + strlen("not optimized: ");
	if (strstarts(norm, "not optimized: ") &&
	    (strstr(w, " (the symbol") || strstr(w, " (the function's cold part)") ||
	     strstr(w, " runs on into the function") || strstarts(w, "cannot read "))) {
		if (strstarts(w, "cannot read "))
			w += strlen("cannot read ");
		n = strcspn(w, " +");
		if (strlen(norm) + 4 < sizeof(norm)) {
			memmove(w + 3, w + n, strlen(w + n) + 1);
			memcpy(w, "SYM", 3);
		}
	}
	w = strstr(norm, "overlaps blacklisted ");
	if (w)
		strcpy(w + strlen("overlaps blacklisted "), "SYM");
	strscpy(out, norm, len);
}

static void example(char *buf, size_t len, const struct sweep_func *f, unsigned int off,
		    const char *what)
{
	unsigned int ilen, b = sweep_insn_at(f, off, &ilen), before = min(b, 8u);

	snprintf(buf, len, "%s+%#x [bytes +%#x: %*ph | %*ph]: %s", f->name, off, b - before,
		 (int)before, f->orig + b - before, (int)ilen, f->orig + b, what);
}

static void count_class(enum table t, const char *full, const struct sweep_func *f,
			unsigned int off, const char *what)
{
	char text[CLASS_LEN];
	unsigned int i;

	strscpy(text, full, sizeof(text));	/* compared as stored */
	for (i = 0; i < nclasses; i++) {
		if (classes[i].table == t && !strcmp(classes[i].text, text)) {
			classes[i].count++;
			return;
		}
	}
	if (nclasses == MAX_CLASSES) {
		classes_dropped++;
		return;
	}
	classes[nclasses].table = t;
	classes[nclasses].count = 1;
	strscpy(classes[nclasses].text, text, CLASS_LEN);
	example(classes[nclasses].example, EXAMPLE_LEN, f, off, what);
	nclasses++;
}

/* --- the kernel's rules (arch/x86/kernel/kprobes/{core,opt}.c of 6.1), for the reasons ---- */

#define W(row, b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, ba, bb, bc, bd, be, bf)		\
	(((b0##UL << 0x0)|(b1##UL << 0x1)|(b2##UL << 0x2)|(b3##UL << 0x3) |		\
	  (b4##UL << 0x4)|(b5##UL << 0x5)|(b6##UL << 0x6)|(b7##UL << 0x7) |		\
	  (b8##UL << 0x8)|(b9##UL << 0x9)|(ba##UL << 0xa)|(bb##UL << 0xb) |		\
	  (bc##UL << 0xc)|(bd##UL << 0xd)|(be##UL << 0xe)|(bf##UL << 0xf))		\
	 << (row % 32))
/* The kernel's twobyte_is_boostable, copied. */
static const u32 twobyte_is_boostable[256 / 32] = {
	W(0x00, 0, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0) |
	W(0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1) ,
	W(0x20, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0) |
	W(0x30, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0) ,
	W(0x40, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1) |
	W(0x50, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0) ,
	W(0x60, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1) |
	W(0x70, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1) ,
	W(0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0) |
	W(0x90, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1) ,
	W(0xa0, 1, 1, 0, 1, 1, 1, 0, 0, 1, 1, 0, 1, 1, 1, 0, 1) |
	W(0xb0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1) ,
	W(0xc0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1) |
	W(0xd0, 0, 1, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1, 1, 1, 0, 1) ,
	W(0xe0, 0, 1, 1, 0, 0, 1, 0, 0, 1, 1, 0, 1, 1, 1, 0, 1) |
	W(0xf0, 0, 1, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0)
};
#undef W

/* NULL when the kernel's can_boost() (without its exception-table test) accepts insn. */
static const char *not_boostable(struct insn *insn, char *buf, size_t len)
{
	insn_byte_t prefix;
	u8 op = insn->opcode.bytes[0];
	int i;

	if (insn->opcode.nbytes == 2) {
		u8 op2 = insn->opcode.bytes[1];

		if (twobyte_is_boostable[op2 / 32] & (1u << (op2 % 32)))
			return NULL;
		if ((op2 & 0xf0) == 0x80)
			return "jcc";
		snprintf(buf, len, "two-byte opcode 0f %02x", op2);
		return buf;
	}
	if (insn->opcode.nbytes != 1)
		return "three-byte opcode";
	for_each_insn_prefix(insn, i, prefix) {
		if (prefix == 0x2e || inat_is_address_size_prefix(inat_get_opcode_attribute(prefix)))
			return "cs or address-size prefix";
	}
	switch (op) {
	case 0x70 ... 0x7f:
		return "jcc";
	case 0xe8:
		return "call";
	case 0xe9:
	case 0xeb:
		return "jmp";
	case 0xc0 ... 0xc1:
	case 0xd0 ... 0xd3:
		return "shift/rotate (grp2)";
	case 0xf6 ... 0xf7:
		return "test/not/neg/mul/div (grp3)";
	case 0xfe:
		return "inc/dec of a byte (grp4)";
	case 0xcc ... 0xce:
		return "int3/int/into";
	case 0xe0 ... 0xe3:
		return "loop/jrcxz";
	case 0xf0 ... 0xf4:
		return "lock/rep/hlt";
	case 0x62:
	case 0x9a:
	case 0xd6:
	case 0xd8 ... 0xdf:
		snprintf(buf, len, "opcode %02x", op);
		return buf;
	case 0xff:
		if (X86_MODRM_REG(insn->modrm.bytes[0]) == 4)
			return NULL;
		return X86_MODRM_REG(insn->modrm.bytes[0]) == 2 ? "indirect call (grp5)" : "grp5";
	default:
		return NULL;
	}
}

static bool decode(const struct sweep_func *f, unsigned int off, struct insn *insn)
{
	return insn_decode(insn, f->orig + off, f->size + SLACK - off, INSN_MODE_64) >= 0 &&
	       insn->length;
}

/* The function's relative branches, and its first indirect jump the kernel would see. */
static int scan_function(struct sweep_func *f, struct cov_func *c)
{
	unsigned int off, cap = 0;
	struct insn insn;
	char sym[KSYM_SYMBOL_LEN];

	c->indirect = ~0u;
	for (off = 0; off < f->decoded; off = find_next_bit(f->boundary, f->decoded, off + 1)) {
		u8 op, op2;
		bool krange, call;
		unsigned long target;

		if (!decode(f, off, &insn))
			break;
		op = insn.opcode.bytes[0];
		op2 = insn.opcode.bytes[1];
		if (c->indirect == ~0u && ((op == 0xff && (X86_MODRM_REG(insn.modrm.value) & 6) == 4) ||
					  op == 0xea)) {
			c->indirect = off;
			strscpy(c->indirect_what, "an indirect jump", sizeof(c->indirect_what));
		}
		krange = (op >= 0xe0 && op <= 0xe3) || op == 0xe9 || op == 0xeb ||
			 (op >= 0x70 && op <= 0x7f) || (op == 0x0f && (op2 & 0xf0) == 0x80);
		call = op == 0xe8;
		if (!krange && !call)
			continue;
		target = f->addr + off + insn.length + insn.immediate.value;
		if (krange && c->indirect == ~0u &&
		    (target < f->addr || target >= f->addr + f->size)) {
			char *plus;

			sprint_symbol(sym, target);
			plus = strchr(sym, '+');
			if (plus)
				*plus = '\0';
			/* __indirect_thunk_start..end: the retpoline and return thunks */
			if (strstr(sym, "thunk") || strstarts(sym, "srso_") ||
			    strstarts(sym, "retbleed_") || strstarts(sym, "entry_untrain_ret")) {
				c->indirect = off;
				snprintf(c->indirect_what, sizeof(c->indirect_what), "a jump to %s", sym);
			}
		}
		if (c->nbr == cap) {
			struct cov_branch *n;

			cap = cap ? cap * 2 : 16;
			n = kvmalloc_array(cap, sizeof(*n), GFP_KERNEL);
			if (!n)
				return -ENOMEM;
			if (c->br)
				memcpy(n, c->br, c->nbr * sizeof(*n));
			kvfree(c->br);
			c->br = n;
		}
		c->br[c->nbr].off = off;
		c->br[c->nbr].call = call;
		c->br[c->nbr].target = target;
		c->nbr++;
	}
	return 0;
}

/*
 * Why the kernel's rules refuse to optimize f+off (NULL: they would optimize it), in the order
 * the kernel checks: can_optimize() decodes the whole function and stops at the first
 * instruction that is an indirect jump (or a jump to a thunk) or jumps into [addr+1, addr+5];
 * then copy_optimized_instructions() needs every instruction of the region boostable.
 */
static const char *kernel_rule(const struct sweep_func *f, const struct cov_func *c,
			       unsigned int off, char *buf, size_t len)
{
	unsigned long start = f->addr + off + 1, first_into = ~0ul;
	unsigned int i, r;
	struct insn insn;

	if (f->size - off < 5)
		return "fewer than 5 bytes to the function's end";
	for (i = 0; i < c->nbr; i++) {
		if (!c->br[i].call && c->br[i].target >= start && c->br[i].target <= start + 4) {
			first_into = c->br[i].off;
			break;
		}
	}
	if (c->indirect != ~0u && c->indirect < first_into) {
		snprintf(buf, len, "the function has %s (counted as an indirect jump)",
			 c->indirect_what);
		return buf;
	}
	if (first_into != ~0ul)
		return "a jump into the 4 bytes after the probe";
	for (r = off; r < off + 5 && r < f->decoded; r += insn.length) {
		char what[40];
		const char *why;

		if (!decode(f, r, &insn))
			return "the region does not decode";
		why = not_boostable(&insn, what, sizeof(what));
		if (why) {
			snprintf(buf, len, "the region has an instruction it cannot boost: %s", why);
			return buf;
		}
	}
	return NULL;
}

/* --- batches ------------------------------------------------------------------------------ */

static int prepare_func(unsigned int i)
{
	struct sweep_func *f = sweep_func(i);
	int ret = sweep_prepare(f);

	if (ret)
		return ret;
	f->todo = bitmap_zalloc(max(f->size, 1u), GFP_KERNEL);
	if (!f->todo)
		return -ENOMEM;
	if (f->decoded) {
		bitmap_copy(f->todo, f->boundary, f->decoded);
		f->left = bitmap_weight(f->todo, f->decoded);
		ret = scan_function(f, &cf[i]);
	}
	return ret;
}

static void free_finished(void)
{
	unsigned int i, n = sweep_nfuncs();

	for (i = 0; i < n; i++) {
		struct sweep_func *f = sweep_func(i);

		if (f->prepared && !f->left && f->orig) {
			sweep_free_func(f);
			kvfree(cf[i].br);
			cf[i].br = NULL;
			st.funcs_done++;
		}
	}
}

/* Boundaries at least gap apart within each function, round-robin over the functions. */
static int select_batch(void)
{
	unsigned int n = sweep_nfuncs(), visited;

	nb = 0;
	batch_no++;
	for (visited = 0; visited < n && nb < batch_max; visited++) {
		unsigned int i = (rr + visited) % n, off, last = 0;
		struct sweep_func *f = sweep_func(i);
		bool have = false;

		if (!f->prepared) {
			int ret = prepare_func(i);

			if (ret)
				return ret;
		}
		if (!f->left)
			continue;
		for (off = find_first_bit(f->todo, f->decoded); off < f->decoded;
		     off = find_next_bit(f->todo, f->decoded, off + 1)) {
			if (have && off < last + gap)
				continue;
			memset(&cp[nb], 0, sizeof(cp[nb]));
			cp[nb].func = i;
			cp[nb].off = off;
			__clear_bit(off, f->todo);
			f->left--;
			f->mark = batch_no;
			last = off;
			have = true;
			if (++nb == batch_max)
				break;
		}
		if (nb == batch_max && f->left)
			break;	/* this function again first in the next batch */
	}
	rr = (rr + visited) % n;
	return 0;
}

static bool splat(const char *when, const struct sweep_func *f, unsigned int off)
{
	unsigned int now = sweep_new_splat();

	if (!now)
		return false;
	st.splat++;
	sweep_note(f, "FAILURE a splat (taint/lockdep mask %#x) %s %s+%#x: see the kernel log",
		   now, when, f->name, off);
	return true;
}

/* Each function of the batch must read as it did before the sweep. */
static unsigned int text_differs(bool report)
{
	unsigned int i, n = sweep_nfuncs(), bad = 0, biggest = 0;
	u8 *now;

	for (i = 0; i < n; i++)
		if (sweep_func(i)->mark == batch_no)
			biggest = max(biggest, sweep_func(i)->size);
	now = kvmalloc(biggest + 1, GFP_KERNEL);
	if (!now)
		return 1;
	for (i = 0; i < n; i++) {
		struct sweep_func *f = sweep_func(i);
		unsigned int off;

		if (f->mark != batch_no || !f->decoded)
			continue;
		if (copy_from_kernel_nofault(now, (void *)f->addr, f->size) ||
		    !memcmp(now, f->orig, f->size))
			continue;
		bad++;
		if (!report)
			continue;
		for (off = 0; off < f->size && now[off] == f->orig[off]; off++)
			;
		sweep_note(f, "FAILURE text not restored: %s+%#x is %*ph, was %*ph", f->name, off,
			   (int)min(f->size - off, 8u), now + off, (int)min(f->size - off, 8u),
			   f->orig + off);
	}
	kvfree(now);
	return bad;
}

/*
 * An optimized okprobes probe, checked with the kernel's decoder: the instructions covering
 * the jump's 5 bytes lie in the function, hold no int3/ud2/ud1, and no relative branch or call
 * of the function lands inside them (after their first byte).
 */
static void check_region(const struct sweep_func *f, const struct cov_func *c, unsigned int off)
{
	unsigned int r = off, i;
	unsigned long a = f->addr + off, end;
	struct insn insn;

	while (r < off + 5) {
		if (r >= f->decoded || !decode(f, r, &insn)) {
			st.okp_region_bad++;
			sweep_note(f, "FAILURE optimized, but the region of %s+%#x runs past the decoded function (%u bytes)",
				   f->name, off, f->decoded);
			return;
		}
		if (insn.opcode.bytes[0] == 0xcc || (insn.opcode.bytes[0] == 0x0f &&
		    (insn.opcode.bytes[1] == 0x0b || insn.opcode.bytes[1] == 0xb9))) {
			st.okp_region_bad++;
			sweep_note(f, "FAILURE optimized, but the region of %s+%#x holds %*ph at +%#x",
				   f->name, off, insn.length, f->orig + r, r);
			return;
		}
		r += insn.length;
	}
	if (r > f->size) {
		st.okp_region_bad++;
		sweep_note(f, "FAILURE optimized, but the region %s+%#x..+%#x crosses the end (+%#x)",
			   f->name, off, r, f->size);
		return;
	}
	end = f->addr + r;
	for (i = 0; i < c->nbr; i++) {
		if (c->br[i].target > a && c->br[i].target < end) {
			st.okp_region_bad++;
			sweep_note(f, "FAILURE optimized, but %s+%#x (%*ph) branches to +%#lx, inside the region +%#x..+%#x",
				   f->name, c->br[i].off, 5, f->orig + c->br[i].off,
				   c->br[i].target - f->addr, off, r - 1);
			return;
		}
	}
}

static u8 byte_at(unsigned long a)
{
	u8 b = 0;

	if (copy_from_kernel_nofault(&b, (void *)a, 1))
		return 0;
	return b;
}

int coverage_run(void)
{
	unsigned int i, tries;
	u64 t0;
	int ret;

	if (phase != P_IDLE)
		return -EBUSY;
	if (st.splat)
		return -EIO;
	if (!cf) {
		cf = kvcalloc(max(sweep_nfuncs(), 1u), sizeof(*cf), GFP_KERNEL);
		if (!cf)
			return -ENOMEM;
	}
	ret = select_batch();
	if (ret)
		return ret;
	phase = P_OKP_ARMED;
	if (!nb)
		return 0;
	st.batches++;
	t0 = ktime_get_ns();
	for (i = 0; i < nb; i++) {
		struct cov_probe *p = &cp[i];
		struct sweep_func *f = sweep_func(p->func);
		struct okp_kprobe *kp = &okps[i];

		memset(kp, 0, sizeof(*kp));
		kp->addr = (okp_kprobe_opcode_t *)(f->addr + p->off);
		kp->pre_handler = sweep_count_pre;
		p->okp_ret = okp_register_kprobe(kp);
		if (p->okp_ret)
			strscpy(p->reason, okp_kprobe_reason(kp), sizeof(p->reason));
		else
			okp_armed[nokp++] = kp;
		if (splat("while registering with okprobes", f, p->off))
			return -EIO;
		cond_resched();
	}
	st.okp_reg_ns += ktime_get_ns() - t0;
	t0 = ktime_get_ns();
	/* Every probe registered before it is done when it returns; more rounds are a safety net. */
	for (tries = 0; tries < 5; tries++) {
		unsigned int pending = 0;

		okp_wait_for_optimizer();
		for (i = 0; i < nb; i++) {
			struct okp_kprobe *kp = &okps[i];

			if (!cp[i].okp_ret && !(READ_ONCE(kp->flags) &
			     (OKP_KPROBE_FLAG_OPTIMIZED | OKP_KPROBE_FLAG_FTRACE)) &&
			    !okp_kprobe_reason(kp)[0])
				pending++;
		}
		if (!pending)
			break;
		msleep(100);
	}
	st.okp_wait_ns += ktime_get_ns() - t0;
	for (i = 0; i < nb; i++) {
		struct cov_probe *p = &cp[i];
		struct sweep_func *f = sweep_func(p->func);
		struct okp_kprobe *kp = &okps[i];
		unsigned int flags = READ_ONCE(kp->flags), koff;
		u8 b;

		if (p->okp_ret)
			continue;
		p->okp_moved = (unsigned long)kp->addr != f->addr + p->off;
		p->okp_opt = flags & OKP_KPROBE_FLAG_OPTIMIZED;
		p->okp_ftrace = flags & OKP_KPROBE_FLAG_FTRACE;
		strscpy(p->reason, okp_kprobe_reason(kp), sizeof(p->reason));
		koff = (unsigned long)kp->addr - f->addr;
		b = byte_at((unsigned long)kp->addr);
		if (p->okp_opt) {
			if (b != 0xe9) {
				st.okp_byte_bad++;
				sweep_note(f, "FAILURE %s+%#x is OPTIMIZED but its first byte is %02x, not a jmp",
					   f->name, koff, b);
			}
			if (koff < f->size)
				check_region(f, &cf[p->func], koff);
		} else if (!p->okp_ftrace) {
			if (b != 0xcc) {
				st.okp_byte_bad++;
				sweep_note(f, "FAILURE %s+%#x is a breakpoint probe but its first byte is %02x",
					   f->name, koff, b);
			}
			if (!p->reason[0]) {
				st.okp_pending++;
				sweep_note(f, "FAILURE %s+%#x: neither optimized nor a reason after okp_wait_for_optimizer()",
					   f->name, koff);
			} else if (strstr(p->reason, "slot cells are in use")) {
				st.okp_slots_full++;	/* the batch is too large: lower batch_max */
				if (st.okp_slots_full == 1)
					sweep_note(f, "FAILURE %s+%#x: %s (lower batch_max)", f->name,
						   koff, p->reason);
			}
		}
	}
	return 0;
}

int coverage_release(void)
{
	u64 t0 = ktime_get_ns();

	if (phase != P_OKP_ARMED)
		return -EBUSY;
	if (nokp)
		okp_unregister_kprobes(okp_armed, nokp);
	nokp = 0;
	st.okp_unreg_ns += ktime_get_ns() - t0;
	st.text_mismatch += text_differs(true);
	phase = P_OKP_RELEASED;
	return 0;
}

/* The aggregate kprobe the kernel made for p (to optimize it), or NULL. */
static struct kprobe *aggregate(struct kprobe *p)
{
	struct kprobe *ap = container_of(READ_ONCE(p->list.next), struct kprobe, list);

	return ap == p ? NULL : ap;
}

int coverage_kregister(void)
{
	unsigned int i;
	u64 t0 = ktime_get_ns();

	if (phase != P_OKP_RELEASED)
		return -EBUSY;
	phase = P_K_ARMED;
	for (i = 0; i < nb; i++) {
		struct cov_probe *p = &cp[i];
		struct sweep_func *f = sweep_func(p->func);
		struct kprobe *kk = &kks[i];

		if (p->okp_ret)
			continue;	/* okprobes refused it: the kernel is not asked */
		memset(kk, 0, sizeof(*kk));
		kk->addr = (kprobe_opcode_t *)(f->addr + p->off);
		kk->pre_handler = k_pre;
		p->k_ret = register_kprobe(kk);
		if (!p->k_ret) {
			k_armed[nk++] = kk;
			p->k_moved = (unsigned long)kk->addr != f->addr + p->off;
			p->k_ftrace = kk->flags & KPROBE_FLAG_FTRACE;
		}
		if (splat("while registering with the kernel", f, p->off))
			return -EIO;
		cond_resched();
	}
	st.k_reg_ns += ktime_get_ns() - t0;
	return 0;
}

/*
 * How the symbol just before f ends, by the kernel's decoder: okprobes refuses a function whose
 * predecessor "runs on into" it (its last instruction does not end the flow), taking the
 * function's symbol for an inner label. A last call to a noreturn function (__stack_chk_fail,
 * panic) does not run on.
 */
static const char *symbol_before_end(const struct sweep_func *f, struct cov_func *c)
{
	char sym[KSYM_SYMBOL_LEN], *plus, *slash;
	unsigned long off, size, start, last = 0, at;
	struct insn insn;
	u8 *text;

	if (c->before_end[0])
		return c->before_end;
	strscpy(c->before_end, "(unknown)", sizeof(c->before_end));
	sprint_symbol(sym, f->addr - 1);
	plus = strrchr(sym, '+');
	slash = plus ? strchr(plus, '/') : NULL;
	if (!plus || !slash)
		return c->before_end;
	*slash = '\0';
	if (kstrtoul(plus + 1, 16, &off) || kstrtoul(slash + 1, 16, &size) || size > 65536)
		return c->before_end;
	start = f->addr - 1 - off;
	text = kvmalloc(size + SLACK, GFP_KERNEL);
	if (!text || copy_from_kernel_nofault(text, (void *)start, size + SLACK)) {
		kvfree(text);
		return c->before_end;
	}
	for (at = 0; at < size; at += insn.length) {
		if (insn_decode(&insn, text + at, size + SLACK - at, INSN_MODE_64) < 0 ||
		    !insn.length) {
			snprintf(c->before_end, sizeof(c->before_end), "(does not decode)");
			kvfree(text);
			return c->before_end;
		}
		last = at;
	}
	insn_decode(&insn, text + last, size + SLACK - last, INSN_MODE_64);
	if (insn.opcode.bytes[0] == 0xe8) {
		sprint_symbol(sym, start + last + insn.length + insn.immediate.value);
		plus = strchr(sym, '+');
		if (plus)
			*plus = '\0';
		snprintf(c->before_end, sizeof(c->before_end), "call %s", sym);
	} else {
		snprintf(c->before_end, sizeof(c->before_end), "%*ph", insn.length, text + last);
	}
	kvfree(text);
	return c->before_end;
}

/* "only kernel" examples already kept from function i: three at most from each. */
static unsigned int examples_of(unsigned int i)
{
	unsigned int k, n = 0;

	for (k = 0; k < nexamples; k++)
		n += example_func[k] == i;
	return n;
}

static void tally(void)
{
	unsigned int i;
	char text[CLASS_LEN], buf[CLASS_LEN];

	for (i = 0; i < nb; i++) {
		struct cov_probe *p = &cp[i];
		struct sweep_func *f = sweep_func(p->func);
		const struct cov_func *c = &cf[p->func];
		const char *kwhy;

		st.boundaries++;
		if (p->okp_ret) {
			st.okp_refused++;
			normalize(p->reason[0] ? p->reason : "(no reason)", buf, sizeof(buf));
			snprintf(text, sizeof(text), "%d %s", p->okp_ret, buf);
			count_class(T_OKP_REFUSED, text, f, p->off, p->reason);
			continue;
		}
		if (p->k_ret) {
			st.k_refused++;
			snprintf(text, sizeof(text), "errno %d", p->k_ret);
			count_class(T_K_REFUSED, text, f, p->off, "");
			continue;
		}
		if (p->okp_moved || p->k_moved) {
			st.moved++;	/* +0 of an ENDBR64 function: the probe went to +4 */
			continue;
		}
		st.both++;
		if (p->okp_ftrace || p->k_ftrace) {
			st.ftrace++;
			if (p->okp_ftrace != p->k_ftrace)
				st.ftrace_disagree++;
		}
		st.okp_opt += p->okp_opt;
		st.k_opt += p->k_opt;
		if (p->okp_opt && p->k_opt)
			st.both_opt++;
		else if (p->okp_opt)
			st.only_okp++;
		else if (p->k_opt)
			st.only_k++;
		else
			st.neither++;
		kwhy = NULL;
		if (!p->k_opt || !p->okp_opt) {
			if (p->k_ftrace)
				kwhy = "(served by ftrace)";
			else
				kwhy = kernel_rule(f, c, p->off, buf, sizeof(buf));
		}
		if (p->k_opt && kwhy && !p->k_ftrace) {
			st.k_infer_mismatch++;
			if (st.k_infer_mismatch <= 5)
				sweep_note(f, "the kernel optimized %s+%#x although its rules as copied here say: %s",
					   f->name, p->off, kwhy);
		}
		if (!p->k_opt) {
			if (!kwhy)
				kwhy = p->k_aggr ? "prepared, but not optimized (another kprobe in the region?)"
						 : "other: exception table, reserved text (jump label, static call, alternative), entry text";
			count_class(T_K_NOT, kwhy, f, p->off, kwhy);
			if (p->okp_opt)
				count_class(T_K_ONLY_OKP, kwhy, f, p->off, kwhy);
		}
		if (!p->okp_opt) {
			char what[EXAMPLE_LEN];

			if (p->okp_ftrace)
				strscpy(text, "(served by ftrace)", sizeof(text));
			else
				normalize(p->reason[0] ? p->reason : "(no reason)", text, sizeof(text));
			count_class(T_OKP_NOT, text, f, p->off, p->reason);
			if (strstr(p->reason, " runs on into the function"))
				count_class(T_RUNS_ON, symbol_before_end(f, &cf[p->func]), f, p->off,
					    p->reason);
			if (p->k_opt) {
				count_class(T_OKP_ONLY_K, text, f, p->off, p->reason);
				if (nexamples < MAX_EXAMPLES && examples_of(p->func) < 3) {
					example(what, sizeof(what), f, p->off, p->reason);
					example_func[nexamples] = p->func;
					examples[nexamples++] = kstrdup(what, GFP_KERNEL);
				}
			}
		}
	}
}

int coverage_kwait(void)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(kwait_ms);
	unsigned int i, pending;
	u64 t0 = ktime_get_ns();

	if (phase != P_K_ARMED)
		return -EBUSY;
	for (;;) {
		pending = 0;
		for (i = 0; i < nk; i++) {
			struct kprobe *ap = aggregate(k_armed[i]);

			if (ap && (READ_ONCE(ap->flags) & KPROBE_FLAG_OPTIMIZED) &&
			    byte_at((unsigned long)k_armed[i]->addr) != 0xe9)
				pending++;
		}
		if (!pending || time_after(jiffies, deadline))
			break;
		msleep(50);
	}
	st.k_wait_ns += ktime_get_ns() - t0;
	if (pending) {
		st.k_pending += pending;
		sweep_note(NULL, "FAILURE %u kernel kprobes still queued for optimization after %u ms",
			   pending, kwait_ms);
	}
	st.k_flagged_batch = 0;
	for (i = 0; i < nb; i++) {
		struct cov_probe *p = &cp[i];
		struct kprobe *ap;

		if (p->okp_ret || p->k_ret)
			continue;
		ap = aggregate(&kks[i]);
		p->k_aggr = ap;
		if (ap && (READ_ONCE(ap->flags) & KPROBE_FLAG_OPTIMIZED)) {
			st.k_flagged_batch++;
			p->k_opt = byte_at((unsigned long)kks[i].addr) == 0xe9;
		}
		if (ap && !p->k_opt)
			st.k_prepared_not_opt++;
	}
	tally();
	phase = P_K_WAITED;
	return 0;
}

int coverage_krelease(void)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(kwait_ms);
	u64 t0 = ktime_get_ns();

	if (phase != P_K_WAITED)
		return -EBUSY;
	if (nk)
		unregister_kprobes(k_armed, nk);
	nk = 0;
	/* An optimized kprobe's jump is taken out by the kernel's optimizer, later. */
	while (text_differs(false)) {
		if (time_after(jiffies, deadline)) {
			st.k_text_timeout += text_differs(true);
			break;
		}
		msleep(50);
	}
	st.k_unreg_ns += ktime_get_ns() - t0;
	free_finished();
	phase = P_IDLE;
	return st.k_text_timeout ? -EIO : 0;
}

void coverage_state(struct seq_file *m)
{
	seq_printf(m, "funcs=%u done=%lu batch=%u phase=%d probes=%u okp_armed=%u k_armed=%u "
		   "kernel_flagged=%lu hits=%ld kernel_hits=%ld failures=%lu\n", sweep_nfuncs(),
		   st.funcs_done, batch_no, phase, nb, nokp, nk, st.k_flagged_batch, sweep_hits(),
		   atomic_long_read(&k_hits), failures());
}

static int cmp_class(const void *a, const void *b)
{
	const struct cov_class *x = a, *y = b;

	if (x->table != y->table)
		return x->table - y->table;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

/* n/d as a percentage with one decimal. */
static void pct(char *buf, size_t len, unsigned long n, unsigned long d)
{
	unsigned long p = d ? (n * 1000 + d / 2) / d : 0;

	snprintf(buf, len, "%lu.%lu%%", p / 10, p % 10);
}

void coverage_report(struct seq_file *m)
{
	char a[16], b[16], c[16], d[16];
	unsigned int i;
	bool pass = sweep_nfuncs() > 0 && st.funcs_done == sweep_nfuncs() && phase == P_IDLE &&
		    !failures();

	pct(a, sizeof(a), st.okp_opt, st.both);
	pct(b, sizeof(b), st.k_opt, st.both);
	pct(c, sizeof(c), st.okp_opt, st.both - st.ftrace);
	pct(d, sizeof(d), st.k_opt, st.both - st.ftrace);
	seq_printf(m, "OKP-COVERAGE: %s funcs=%lu boundaries=%lu okp_refused=%lu kernel_refused=%lu "
		   "moved=%lu both_accepted=%lu ftrace=%lu okp_optimized=%lu kernel_optimized=%lu "
		   "both_optimized=%lu only_okp=%lu only_kernel=%lu neither=%lu batches=%lu "
		   "failures=%lu\n", pass ? "PASS" : "FAIL", st.funcs_done, st.boundaries,
		   st.okp_refused, st.k_refused, st.moved, st.both, st.ftrace, st.okp_opt, st.k_opt,
		   st.both_opt, st.only_okp, st.only_k, st.neither, st.batches, failures());
	sweep_show_selection(m, "OKP-COVERAGE");
	seq_printf(m, "OKP-COVERAGE: optimized of both-accepted: okprobes %s kernel %s; without "
		   "ftrace sites: okprobes %s kernel %s\n", a, b, c, d);
	seq_printf(m, "OKP-COVERAGE: checks: okp_byte_bad=%lu okp_region_bad=%lu okp_pending=%lu "
		   "okp_slots_full=%lu text_mismatch=%lu kernel_text_timeout=%lu kernel_pending=%lu "
		   "splat=%lu kernel_prepared_not_optimized=%lu kernel_infer_mismatch=%lu "
		   "ftrace_disagree=%lu\n", st.okp_byte_bad, st.okp_region_bad, st.okp_pending,
		   st.okp_slots_full, st.text_mismatch, st.k_text_timeout, st.k_pending, st.splat,
		   st.k_prepared_not_opt, st.k_infer_mismatch, st.ftrace_disagree);
	seq_printf(m, "OKP-COVERAGE: settings gap=%u batch_max=%u; hits okprobes=%ld kernel=%ld; "
		   "ms: okp_register=%llu okp_optimize=%llu okp_unregister=%llu kernel_register=%llu "
		   "kernel_optimize=%llu kernel_unregister=%llu\n", gap, batch_max, sweep_hits(),
		   atomic_long_read(&k_hits), div_u64(st.okp_reg_ns, NSEC_PER_MSEC),
		   div_u64(st.okp_wait_ns, NSEC_PER_MSEC), div_u64(st.okp_unreg_ns, NSEC_PER_MSEC),
		   div_u64(st.k_reg_ns, NSEC_PER_MSEC), div_u64(st.k_wait_ns, NSEC_PER_MSEC),
		   div_u64(st.k_unreg_ns, NSEC_PER_MSEC));
	sort(classes, nclasses, sizeof(classes[0]), cmp_class, NULL);
	for (i = 0; i < nclasses; i++)
		seq_printf(m, "OKP-COVERAGE: table %s count %lu \"%s\" e.g. %s\n",
			   table_name[classes[i].table], classes[i].count, classes[i].text,
			   classes[i].example);
	if (classes_dropped)
		seq_printf(m, "OKP-COVERAGE: table (full) count %lu\n", classes_dropped);
	for (i = 0; i < nexamples; i++)
		seq_printf(m, "OKP-COVERAGE: only-kernel %s\n", examples[i] ? examples[i] : "(no memory)");
	sweep_show_notes(m, "OKP-COVERAGE");
}

int coverage_init(void)
{
	if (!batch_max || batch_max > 4096)
		return -EINVAL;
	cp = kvcalloc(batch_max, sizeof(*cp), GFP_KERNEL);
	okps = kvcalloc(batch_max, sizeof(*okps), GFP_KERNEL);
	okp_armed = kvcalloc(batch_max, sizeof(*okp_armed), GFP_KERNEL);
	kks = kvcalloc(batch_max, sizeof(*kks), GFP_KERNEL);
	k_armed = kvcalloc(batch_max, sizeof(*k_armed), GFP_KERNEL);
	if (!cp || !okps || !okp_armed || !kks || !k_armed) {
		coverage_exit();
		return -ENOMEM;
	}
	return 0;
}

void coverage_exit(void)
{
	unsigned int i;

	if (nokp)
		okp_unregister_kprobes(okp_armed, nokp);
	if (nk)
		unregister_kprobes(k_armed, nk);
	nokp = nk = 0;
	if (cf)
		for (i = 0; i < sweep_nfuncs(); i++)
			kvfree(cf[i].br);
	kvfree(cf);
	for (i = 0; i < nexamples; i++)
		kfree(examples[i]);
	kvfree(cp);
	kvfree(okps);
	kvfree(okp_armed);
	kvfree(kks);
	kvfree(k_armed);
	cf = NULL;
	cp = NULL;
}
