// SPDX-License-Identifier: GPL-2.0
/*
 * okp_sweep: a probe at every byte of a deterministic sample of vmlinux functions.
 *
 * The guest script (tests/vm/scripts/sweep.sh) writes vmlinux text symbols, as /proc/kallsyms
 * lines "ADDR t|T NAME", to /sys/kernel/debug/okp_sweep/funcs. Of those that are functions
 * (t/T, not __pfx_ or .L, 0 < size <= max_size, the first name of their address, vmlinux and
 * not a module) the module keeps every stride-th one, counted from `start` (an index into
 * that list or a symbol name), at most max_funcs of them.
 *
 * Each write to `run` sweeps the next batch: for each function it reads the live text with
 * copy_from_kernel_nofault, finds the instruction boundaries with the kernel's own x86 decoder
 * (arch/x86/lib/insn.c and inat.c compiled into this module: a decoder other than okprobes'),
 * then calls okp_register_kprobe at every byte offset with a pre_handler that only counts.
 * Expected: every offset that is not a boundary is refused with -EILSEQ (or, counted apart, as
 * okprobes checks these first: -EINVAL "blacklisted" or -EBUSY "static call trampoline" (whole
 * functions refused before decoding), or -EBUSY because an int3 before it that
 * okprobes cannot explain, e.g. after a call, hides where the instructions are); every boundary is accepted or refused with
 * another errno and a non-empty reason, except that a last instruction whose bytes run past
 * the symbol's end (retbleed_untrain_ret's "test $0xcc,%bl" overlapping the next symbol) may
 * be refused with -EILSEQ: okprobes decodes within the symbol (counted apart). Accepted probes stay armed until the script wrote
 * `release` (after running a workload): up to max_armed probes at once, a batch ends early
 * there, in the middle of a function if need be. `release` unregisters them in one
 * okp_unregister_kprobes and checks that every byte of the batch's functions is again what
 * it was before the sweep.
 *
 * `state` says how far the sweep is; `report` prints the OKP-SWEEP summary line, the tables
 * by errno and by reason, and the first failures. A failure is also logged with pr_err
 * (rate-limited): function+offset, the instruction holding it (offset, bytes), errno, reason.
 *
 * With coverage=1 the same functions serve the jump-optimization coverage measurement
 * (sweep_coverage.c): `run`/`release` then step its batches, and kregister, kwait, krelease
 * appear for the kernel's own kprobes.
 */
#include <linux/atomic.h>
#include <linux/bitmap.h>
#include <linux/ctype.h>
#include <linux/debug_locks.h>
#include <linux/debugfs.h>
#include <linux/kallsyms.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/panic.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <asm/insn.h>
#include <okprobes/okprobes.h>
#include "sweep.h"

static uint stride = 150;	/* Debian 12's stock kernel: a few hundred functions */
module_param(stride, uint, 0444);
MODULE_PARM_DESC(stride, "sweep every stride-th eligible vmlinux function");
static uint max_funcs;		/* 0: no limit */
module_param(max_funcs, uint, 0444);
MODULE_PARM_DESC(max_funcs, "at most this many functions (0: no limit)");
static char *start;
module_param(start, charp, 0444);
MODULE_PARM_DESC(start, "first function: an index into the eligible list, or a symbol name");
static uint max_armed = 1500;	/* okprobes has 4096 out-of-line slots */
module_param(max_armed, uint, 0444);
MODULE_PARM_DESC(max_armed, "most probes armed at once (a batch ends there)");
static uint batch_bytes = 256 * 1024;
module_param(batch_bytes, uint, 0444);
MODULE_PARM_DESC(batch_bytes, "a batch ends after this many bytes of text");
static uint max_size = 64 * 1024;
module_param(max_size, uint, 0444);
MODULE_PARM_DESC(max_size, "skip functions larger than this");
static bool coverage;
module_param(coverage, bool, 0444);
MODULE_PARM_DESC(coverage, "jump-optimization coverage, okprobes vs the kernel (sweep_coverage.c)");

#define MAX_CLASSES 160
#define MAX_NOTES 40
#define CLASS_LEN 96

enum kind { K_BOUNDARY_REFUSED, K_NONBOUNDARY, K_ACCEPTED_NOTE, K_NR };
static const char *const kind_name[K_NR] = { "boundary", "non-boundary", "accepted" };

struct reason_class {
	enum kind kind;
	int err;
	unsigned long count;
	char text[CLASS_LEN];
	char example[OKP_REASON_MAX + 160];
};

static DEFINE_MUTEX(lock);
static struct dentry *dir;

/* Intake. */
static struct sweep_func *funcs;
static unsigned int nfuncs, funcs_cap;
static unsigned long eligible, lines_in, skipped_size, skipped_alias, skipped_other;
static bool started;
static unsigned long start_index, base_index;
static char line[KSYM_NAME_LEN + 64];
static size_t line_len;
static bool line_overflow;

/* The sweep. */
static unsigned int cursor, batch_first, batch_end;
static struct okp_kprobe *kps;
static struct okp_kprobe **armed;
static unsigned int narmed;
static atomic_long_t hits;

static struct {
	unsigned long funcs_done, unreadable, decode_stops, offsets, boundaries, nonboundaries;
	unsigned long accepted, moved, nb_ilseq, nb_blacklisted, nb_hidden, b_refused, batches;
	unsigned long max_armed;
	unsigned long nb_accepted, nb_wrong, b_ilseq, b_no_reason, text_mismatch, b_crossing_ilseq;
	unsigned long splat;	/* a taint flag of a splat appeared, or lockdep turned off */
	unsigned long errno_count[K_NR][256];	/* by -errno, 0 = accepted */
	u64 register_ns, unregister_ns, accept_ns, refuse_ns;
} st;

/* The probes that were hit most, over the whole sweep. */
#define NHOT 10
static struct {
	unsigned long nhit;
	char where[KSYM_SYMBOL_LEN];
} hot[NHOT];

static struct reason_class classes[MAX_CLASSES];
static unsigned int nclasses;
static unsigned long classes_dropped;
static char *notes[MAX_NOTES];
static unsigned int nnotes;
static unsigned long notes_dropped;

static unsigned long failures(void)
{
	return st.nb_accepted + st.nb_wrong + st.b_ilseq + st.b_no_reason + st.text_mismatch +
	       st.splat;
}

/*
 * A splat taints the kernel (W: WARN or a BUG: message, D: oops, B: KASAN, L: soft lockup)
 * or turns lockdep off. The refusals' log lines would push it out of the ring buffer within
 * one batch, so the sweep checks after every registration and stops at once: the splat is
 * then among the last lines of the kernel log, and the last probe tried is named.
 */
static const unsigned int splat_taints[] = { TAINT_WARN, TAINT_DIE, TAINT_BAD_PAGE,
					     TAINT_SOFTLOCKUP, TAINT_MACHINE_CHECK };
static unsigned int taint_base;
static int debug_locks_base;

static unsigned int splat_state(void)
{
	unsigned int i, mask = 0;

	for (i = 0; i < ARRAY_SIZE(splat_taints); i++)
		if (test_taint(splat_taints[i]))
			mask |= 1u << i;
	if (debug_locks_base && !READ_ONCE(debug_locks))
		mask |= 1u << i;
	return mask;
}

static int count_pre(struct okp_kprobe *p, struct pt_regs *regs)
{
	atomic_long_inc(&hits);
	return 0;
}

/* --- intake: /proc/kallsyms lines -------------------------------------------------------- */

static bool grow_funcs(void)
{
	unsigned int cap = funcs_cap ? funcs_cap * 2 : 1024;
	struct sweep_func *n = kvcalloc(cap, sizeof(*n), GFP_KERNEL);

	if (!n)
		return false;
	if (funcs)
		memcpy(n, funcs, nfuncs * sizeof(*n));
	kvfree(funcs);
	funcs = n;
	funcs_cap = cap;
	return true;
}

/* "ffffffff81000000 T name": eligible if a vmlinux function whose first name this is. */
static int take_line(char *l)
{
	static char sym[KSYM_SYMBOL_LEN];
	static char name[KSYM_NAME_LEN];
	unsigned long addr, size, idx;
	char type, *plus, *slash;
	struct sweep_func *f;

	lines_in++;
	if (sscanf(l, "%lx %c %511s", &addr, &type, name) != 3 || strchr(l, '[') ||
	    (type != 't' && type != 'T') || !strncmp(name, "__pfx_", 6) ||
	    !strncmp(name, ".L", 2)) {
		skipped_other++;
		return 0;
	}
	sprint_symbol(sym, addr);
	plus = strrchr(sym, '+');
	slash = plus ? strchr(plus, '/') : NULL;
	if (!plus || !slash || strchr(sym, '[') || strncmp(plus, "+0x0/", 5)) {
		skipped_other++;	/* a module's, or not a symbol start */
		return 0;
	}
	*plus = '\0';
	if (strcmp(sym, name)) {
		skipped_alias++;	/* a second name of an address: swept under the first */
		return 0;
	}
	if (kstrtoul(slash + 1, 16, &size) || size == 0 || size > max_size) {
		skipped_size++;
		return 0;
	}
	idx = eligible++;
	if (!started) {
		if (!start || !*start)
			started = true;
		else if (isdigit(start[0]))
			started = idx >= start_index;
		else
			started = !strcmp(name, start);
		if (!started)
			return 0;
		base_index = idx;
	}
	if ((idx - base_index) % (stride ? stride : 1) || (max_funcs && nfuncs >= max_funcs))
		return 0;
	if (nfuncs == funcs_cap && !grow_funcs())
		return -ENOMEM;
	f = &funcs[nfuncs];
	memset(f, 0, sizeof(*f));
	f->addr = addr;
	f->size = size;
	f->name = kstrdup(name, GFP_KERNEL);
	if (!f->name)
		return -ENOMEM;
	nfuncs++;
	return 0;
}

static ssize_t funcs_write(struct file *file, const char __user *ubuf, size_t count,
			   loff_t *ppos)
{
	char chunk[256];
	size_t done = 0;
	int ret = 0;

	mutex_lock(&lock);
	if (cursor || narmed) {
		ret = -EBUSY;	/* the sweep started: the list is fixed */
		goto out;
	}
	while (done < count && !ret) {
		size_t n = min(count - done, sizeof(chunk)), i;

		if (copy_from_user(chunk, ubuf + done, n)) {
			ret = -EFAULT;
			break;
		}
		for (i = 0; i < n && !ret; i++) {
			if (chunk[i] != '\n') {
				if (line_len < sizeof(line) - 1)
					line[line_len++] = chunk[i];
				else
					line_overflow = true;
				continue;
			}
			line[line_len] = '\0';
			if (!line_overflow && line_len)
				ret = take_line(line);
			line_len = 0;
			line_overflow = false;
		}
		done += n;
		cond_resched();
	}
out:
	mutex_unlock(&lock);
	return ret ? ret : count;
}

static const struct file_operations funcs_fops = {
	.owner = THIS_MODULE,
	.write = funcs_write,
	.llseek = noop_llseek,
};

/* --- reasons, grouped ------------------------------------------------------------------- */

/*
 * A reason with its numbers and symbol names taken out, so that refusals group: hex and
 * decimal numbers (not digits inside a word: int3, ud2) become X and N; "A: B [SOURCE, ...]" keeps A and the source ("X is
 * blacklisted [_kprobe_blacklist]"); "owned by: B (…)" keeps B; the word before " [" (a
 * symbol) goes.
 */
static void classify(const char *r, char *out, size_t len)
{
	char norm[OKP_REASON_MAX + 8], *colon, *br, *o = norm, *end = norm + sizeof(norm) - 1;
	const char *p = r;

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
	colon = strstr(norm, ": ");
	br = strstr(norm, " [");
	if (colon && (!br || colon < br)) {
		char *tail = colon + 2;

		*colon = '\0';
		if (strstr(norm, "owned by")) {
			char *paren = strstr(tail, " (");

			if (paren)
				*paren = '\0';
			snprintf(out, len, "%s: %s", norm, tail);
		} else if (br) {
			char *stop = strpbrk(br + 2, ",]");

			if (stop)
				*stop = '\0';
			snprintf(out, len, "%s [%s]", norm, br + 2);
		} else {
			snprintf(out, len, "%s", norm);
		}
		return;
	}
	if (br) {
		char *stop = strpbrk(br + 2, ",]"), *word;

		if (stop)
			*stop = '\0';
		*br = '\0';
		word = strrchr(norm, ' ');
		if (word)
			*word = '\0';
		snprintf(out, len, "%s [%s]", norm, br + 2);
		return;
	}
	snprintf(out, len, "%s", norm);
}

/* The instruction (by the kernel's decoder) holding offset off: its offset and length. */
static unsigned int insn_at(const struct sweep_func *f, unsigned int off, unsigned int *len)
{
	unsigned int b = off, e;

	while (b > 0 && !test_bit(b, f->boundary))
		b--;
	for (e = b + 1; e < f->decoded && !test_bit(e, f->boundary); e++)
		;
	*len = min(e - b, (unsigned int)MAX_INSN_SIZE);
	return b;
}

static void count_reason(enum kind kind, int err, const char *reason, const struct sweep_func *f,
			 unsigned int off)
{
	char text[CLASS_LEN];
	unsigned int i, b, len, before;

	if (err < 0 && -err < 256)
		st.errno_count[kind][-err]++;
	else if (!err)
		st.errno_count[kind][0]++;
	classify(reason, text, sizeof(text));
	for (i = 0; i < nclasses; i++) {
		if (classes[i].kind == kind && classes[i].err == err && !strcmp(classes[i].text, text)) {
			classes[i].count++;
			return;
		}
	}
	if (nclasses == MAX_CLASSES) {
		classes_dropped++;
		return;
	}
	classes[nclasses].kind = kind;
	classes[nclasses].err = err;
	classes[nclasses].count = 1;
	strscpy(classes[nclasses].text, text, sizeof(classes[0].text));
	b = insn_at(f, off, &len);
	before = min(b, 8u);
	snprintf(classes[nclasses].example, sizeof(classes[0].example),
		 "%s+%#x: %s [bytes +%#x: %*ph | %*ph]", f->name, off, reason, b - before,
		 (int)before, f->orig + b - before, (int)len, f->orig + b);
	nclasses++;
}

static __printf(2, 3) void note(const struct sweep_func *f, const char *fmt, ...)
{
	char msg[OKP_REASON_MAX + 160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pr_err_ratelimited("OKP-SWEEP: %s\n", msg);
	if (nnotes < MAX_NOTES)
		notes[nnotes++] = kstrdup(msg, GFP_KERNEL);
	else
		notes_dropped++;
}

static void failure(const char *what, const struct sweep_func *f, unsigned int off, int err,
		    const char *reason)
{
	unsigned int len, b = insn_at(f, off, &len);

	note(f, "FAILURE %s: %s+%#x (%px; instruction at +%#x: %*ph) returned %d reason \"%s\"",
	     what, f->name, off, (void *)(f->addr + off), b, len, f->orig + b, err, reason);
}

/* --- shared with the coverage mode (sweep.h) --------------------------------------------- */

unsigned int sweep_nfuncs(void)
{
	return nfuncs;
}

struct sweep_func *sweep_func(unsigned int i)
{
	return &funcs[i];
}

static int prepare(struct sweep_func *f);
static void free_func(struct sweep_func *f);

int sweep_prepare(struct sweep_func *f)
{
	return prepare(f);
}

void sweep_free_func(struct sweep_func *f)
{
	free_func(f);
}

unsigned int sweep_insn_at(const struct sweep_func *f, unsigned int off, unsigned int *len)
{
	return insn_at(f, off, len);
}

void sweep_note(const struct sweep_func *f, const char *fmt, ...)
{
	char msg[OKP_REASON_MAX + 160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	note(f, "%s", msg);
}

void sweep_show_notes(struct seq_file *m, const char *prefix)
{
	unsigned int i;

	for (i = 0; i < nnotes; i++)
		seq_printf(m, "%s: note %s\n", prefix, notes[i] ? notes[i] : "(no memory)");
	if (notes_dropped)
		seq_printf(m, "%s: note ... and %lu more\n", prefix, notes_dropped);
}

void sweep_show_selection(struct seq_file *m, const char *prefix)
{
	seq_printf(m, "%s: selection stride=%u start=%s max_funcs=%u: %u of %lu eligible "
		   "(lines %lu; skipped: %lu size, %lu alias, %lu other)\n", prefix, stride,
		   start ? start : "0", max_funcs, nfuncs, eligible, lines_in, skipped_size,
		   skipped_alias, skipped_other);
}

unsigned int sweep_new_splat(void)
{
	unsigned int now = splat_state() & ~taint_base;

	taint_base |= now;
	return now;
}

int sweep_count_pre(struct okp_kprobe *p, struct pt_regs *regs)
{
	return count_pre(p, regs);
}

long sweep_hits(void)
{
	return atomic_long_read(&hits);
}

void sweep_classify(const char *reason, char *out, size_t len)
{
	classify(reason, out, len);
}

struct okp_kprobe **sweep_armed(unsigned int *n)
{
	*n = narmed;
	return armed;
}

void sweep_lock(void)
{
	mutex_lock(&lock);
}

void sweep_unlock(void)
{
	mutex_unlock(&lock);
}

/* --- the sweep ---------------------------------------------------------------------------- */

static int prepare(struct sweep_func *f)
{
	unsigned int avail = f->size + SLACK, off = 0;
	struct insn insn;

	f->prepared = true;
	f->crossing = ~0u;
	f->orig = kvzalloc(f->size + SLACK, GFP_KERNEL);
	f->boundary = bitmap_zalloc(f->size, GFP_KERNEL);
	if (!f->orig || !f->boundary)
		return -ENOMEM;
	if (copy_from_kernel_nofault(f->orig, (void *)f->addr, avail)) {
		avail = f->size;
		if (copy_from_kernel_nofault(f->orig, (void *)f->addr, avail)) {
			st.unreadable++;
			note(f, "%s (%px, %u bytes) is unreadable: skipped", f->name,
			     (void *)f->addr, f->size);
			f->decoded = 0;
			return 0;
		}
	}
	while (off < f->size) {
		if (insn_decode(&insn, f->orig + off, avail - off, INSN_MODE_64) < 0 ||
		    !insn.length) {
			st.decode_stops++;
			note(f, "the kernel's decoder stops in %s at +%#x (%*ph): the sweep of it ends there",
			     f->name, off, (int)min(avail - off, 8u), f->orig + off);
			break;
		}
		__set_bit(off, f->boundary);
		if (off + insn.length > f->size)
			f->crossing = off;
		off += insn.length;
	}
	f->decoded = min(off, f->size);
	return 0;
}

static void try_offset(struct sweep_func *f, unsigned int off)
{
	struct okp_kprobe *kp = &kps[narmed];
	unsigned long addr = f->addr + off;
	const char *reason;
	u64 t0;
	int ret;

	memset(kp, 0, sizeof(*kp));
	kp->addr = (okp_kprobe_opcode_t *)addr;
	kp->pre_handler = count_pre;
	t0 = ktime_get_ns();
	ret = okp_register_kprobe(kp);
	if (ret)
		st.refuse_ns += ktime_get_ns() - t0;
	else
		st.accept_ns += ktime_get_ns() - t0;
	reason = okp_kprobe_reason(kp);
	st.offsets++;
	if (test_bit(off, f->boundary)) {
		st.boundaries++;
		if (!ret) {
			st.accepted++;
			st.errno_count[K_BOUNDARY_REFUSED][0]++;
			if ((unsigned long)kp->addr != addr)
				st.moved++;
			if (reason[0])
				count_reason(K_ACCEPTED_NOTE, 0, reason, f, off);
			armed[narmed++] = kp;
			st.max_armed = max_t(unsigned long, st.max_armed, narmed);
			return;
		}
		st.b_refused++;
		count_reason(K_BOUNDARY_REFUSED, ret, reason[0] ? reason : "(no reason)", f, off);
		if (ret == -EILSEQ && off == f->crossing) {
			/* Its bytes run into the next symbol: okprobes decodes within the symbol. */
			st.b_crossing_ilseq++;
		} else if (ret == -EILSEQ) {
			st.b_ilseq++;
			failure("a boundary refused with -EILSEQ", f, off, ret, reason);
		} else if (!reason[0]) {
			st.b_no_reason++;
			failure("a boundary refused without a reason", f, off, ret, reason);
		}
		return;
	}
	st.nonboundaries++;
	if (!ret) {
		/* An int3 inside an instruction: take it out at once. */
		okp_unregister_kprobe(kp);
		st.nb_accepted++;
		st.errno_count[K_NONBOUNDARY][0]++;
		failure("a non-boundary accepted", f, off, ret, reason);
		return;
	}
	count_reason(K_NONBOUNDARY, ret, reason[0] ? reason : "(no reason)", f, off);
	if (ret == -EILSEQ && reason[0]) {
		st.nb_ilseq++;
	} else if ((ret == -EINVAL && strstr(reason, "blacklisted")) ||
		   (ret == -EBUSY && strstr(reason, "static call trampoline"))) {
		/* Whole-function refusals, checked before any decoding: the blacklist, and a
		 * static call's trampoline (__SCT__*, refused by name at every offset; the 6.12
		 * stock kernel's sample has some). */
		st.nb_blacklisted++;
	} else if (ret == -EBUSY && strstr(reason, "hides the instructions before the probe")) {
		st.nb_hidden++;
	} else {
		st.nb_wrong++;
		failure("a non-boundary not refused with -EILSEQ", f, off, ret, reason);
	}
}

/* Sweeps the next batch; the probes it accepted stay armed until release. */
static int run_batch(void)
{
	unsigned long bytes = 0;
	u64 t0 = ktime_get_ns();
	int ret = 0;

	if (narmed)
		return -EBUSY;
	if (st.splat)
		return -EIO;
	batch_first = cursor;
	batch_end = cursor;
	while (cursor < nfuncs) {
		struct sweep_func *f = &funcs[cursor];

		if (!f->prepared) {
			ret = prepare(f);
			if (ret)
				break;
		}
		batch_end = cursor + 1;
		while (f->next < f->decoded && narmed < max_armed) {
			unsigned int off = f->next++, now;

			try_offset(f, off);
			now = splat_state() & ~taint_base;
			if (now) {
				st.splat++;
				taint_base |= now;
				note(f, "FAILURE a splat (taint/lockdep mask %#x) while %s+%#x was the last probe tried (%u armed): see the kernel log above",
				     now, f->name, off, narmed);
				ret = -EIO;
				break;
			}
			/* A batch runs minutes under TCG in this one syscall: let RCU-tasks, which
			 * okprobes' optimizer waits for, see a quiescent state (cond_resched() is a
			 * preemption, and a preempted task is an RCU-tasks holdout). */
			cond_resched_tasks_rcu_qs();
		}
		if (ret)
			break;
		if (f->next < f->decoded)
			break;	/* max_armed reached: the rest of f in the next batch */
		st.funcs_done++;
		cursor++;
		bytes += f->size;
		if (bytes >= batch_bytes)
			break;
	}
	st.batches++;
	st.register_ns += ktime_get_ns() - t0;
	return ret;
}

static void free_func(struct sweep_func *f)
{
	kvfree(f->orig);
	f->orig = NULL;
	bitmap_free(f->boundary);
	f->boundary = NULL;
	bitmap_free(f->todo);
	f->todo = NULL;
}

/* Unregisters the batch's probes; its functions' text must be as it was. */
static void release_batch(void)
{
	unsigned int i;
	u64 t0;
	u8 *now;

	for (i = 0; i < narmed; i++) {
		unsigned long n = READ_ONCE(armed[i]->nhit);
		unsigned int j = NHOT;

		while (j > 0 && hot[j - 1].nhit < n)
			j--;
		if (j == NHOT)
			continue;
		memmove(&hot[j + 1], &hot[j], (NHOT - 1 - j) * sizeof(hot[0]));
		hot[j].nhit = n;
		sprint_symbol(hot[j].where, (unsigned long)armed[i]->addr);
	}
	t0 = ktime_get_ns();
	if (narmed)
		okp_unregister_kprobes(armed, narmed);
	narmed = 0;
	st.unregister_ns += ktime_get_ns() - t0;
	now = kvmalloc(max_size + SLACK, GFP_KERNEL);
	for (i = batch_first; i < batch_end; i++) {
		struct sweep_func *f = &funcs[i];
		unsigned int off;

		if (!f->orig)
			continue;
		if (now && f->decoded && !copy_from_kernel_nofault(now, (void *)f->addr, f->size) &&
		    memcmp(now, f->orig, f->size)) {
			for (off = 0; off < f->size && now[off] == f->orig[off]; off++)
				;
			st.text_mismatch++;
			note(f, "FAILURE text not restored: %s+%#x is %*ph, was %*ph", f->name, off,
			     (int)min(f->size - off, 8u), now + off, (int)min(f->size - off, 8u),
			     f->orig + off);
		}
		if (f->next >= f->decoded)
			free_func(f);
	}
	kvfree(now);
	batch_first = batch_end = cursor;
}

static ssize_t run_write(struct file *file, const char __user *ubuf, size_t count, loff_t *ppos)
{
	int ret;

	mutex_lock(&lock);
	ret = coverage ? coverage_run() : run_batch();
	mutex_unlock(&lock);
	return ret ? ret : count;
}

static ssize_t release_write(struct file *file, const char __user *ubuf, size_t count,
			     loff_t *ppos)
{
	int ret = 0;

	mutex_lock(&lock);
	if (coverage)
		ret = coverage_release();
	else
		release_batch();
	mutex_unlock(&lock);
	return ret ? ret : count;
}

/* Coverage mode: the kernel's kprobes at the batch's addresses (sweep_coverage.c). */
static ssize_t kstep_write(struct file *file, const char __user *ubuf, size_t count,
			   loff_t *ppos)
{
	int (*step)(void) = file->private_data;
	int ret;

	mutex_lock(&lock);
	ret = step();
	mutex_unlock(&lock);
	return ret ? ret : count;
}

static const struct file_operations kstep_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = kstep_write,
	.llseek = noop_llseek,
};

static const struct file_operations run_fops = {
	.owner = THIS_MODULE,
	.write = run_write,
	.llseek = noop_llseek,
};

static const struct file_operations release_fops = {
	.owner = THIS_MODULE,
	.write = release_write,
	.llseek = noop_llseek,
};

static int state_show(struct seq_file *m, void *v)
{
	mutex_lock(&lock);
	if (coverage) {
		coverage_state(m);
		mutex_unlock(&lock);
		return 0;
	}
	seq_printf(m, "funcs=%u done=%lu armed=%u hits=%ld failures=%lu offsets=%lu batches=%lu\n",
		   nfuncs, st.funcs_done, narmed, atomic_long_read(&hits), failures(), st.offsets,
		   st.batches);
	mutex_unlock(&lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(state);

static int cmp_class(const void *a, const void *b)
{
	const struct reason_class *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind - y->kind;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

static int report_show(struct seq_file *m, void *v)
{
	bool pass;
	unsigned int i, k, e;

	mutex_lock(&lock);
	if (coverage) {
		coverage_report(m);
		mutex_unlock(&lock);
		return 0;
	}
	pass = nfuncs > 0 && st.funcs_done == nfuncs && !narmed && !failures();
	seq_printf(m, "OKP-SWEEP: %s funcs=%lu offsets=%lu boundaries=%lu accepted=%lu moved=%lu "
		   "refused_boundary=%lu nonboundaries=%lu refused_ilseq_ok=%lu "
		   "refused_blacklisted_ok=%lu refused_hidden_ok=%lu hits=%ld failures=%lu text_mismatch=%lu "
		   "crossing_end_ilseq=%lu decode_stops=%lu unreadable=%lu batches=%lu max_armed=%lu register_ms=%llu "
		   "(accepting %llu, refusing %llu) unregister_ms=%llu\n", pass ? "PASS" : "FAIL", st.funcs_done, st.offsets,
		   st.boundaries, st.accepted, st.moved, st.b_refused, st.nonboundaries, st.nb_ilseq,
		   st.nb_blacklisted, st.nb_hidden, atomic_long_read(&hits), failures(), st.text_mismatch,
		   st.b_crossing_ilseq, st.decode_stops, st.unreadable, st.batches, st.max_armed,
		   div_u64(st.register_ns, NSEC_PER_MSEC), div_u64(st.accept_ns, NSEC_PER_MSEC),
		   div_u64(st.refuse_ns, NSEC_PER_MSEC), div_u64(st.unregister_ns, NSEC_PER_MSEC));
	seq_printf(m, "OKP-SWEEP: selection stride=%u start=%s max_funcs=%u: %u of %lu eligible "
		   "(lines %lu; skipped: %lu size, %lu alias, %lu other)\n", stride,
		   start ? start : "0", max_funcs, nfuncs, eligible, lines_in, skipped_size,
		   skipped_alias, skipped_other);
	seq_printf(m, "OKP-SWEEP: failures: nonboundary_accepted=%lu nonboundary_wrong_errno=%lu "
		   "boundary_ilseq=%lu boundary_no_reason=%lu text_mismatch=%lu\n", st.nb_accepted,
		   st.nb_wrong, st.b_ilseq, st.b_no_reason, st.text_mismatch);
	for (k = 0; k < K_ACCEPTED_NOTE; k++)
		for (e = 0; e < 256; e++)
			if (st.errno_count[k][e])
				seq_printf(m, "OKP-SWEEP: errno %d count %lu (%s)\n", -(int)e,
					   st.errno_count[k][e], kind_name[k]);
	sort(classes, nclasses, sizeof(classes[0]), cmp_class, NULL);
	for (i = 0; i < nclasses; i++)
		seq_printf(m, "OKP-SWEEP: reason \"%s\" count %lu errno %d (%s) e.g. %s\n",
			   classes[i].text, classes[i].count, classes[i].err,
			   kind_name[classes[i].kind], classes[i].example);
	if (classes_dropped)
		seq_printf(m, "OKP-SWEEP: reason \"(more classes than the table holds)\" count %lu\n",
			   classes_dropped);
	for (i = 0; i < NHOT && hot[i].nhit; i++)
		seq_printf(m, "OKP-SWEEP: hot %s hits %lu\n", hot[i].where, hot[i].nhit);
	sweep_show_notes(m, "OKP-SWEEP");
	mutex_unlock(&lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(report);

static int __init okp_sweep_init(void)
{
	if (okp_api_version() != OKP_API_VERSION)
		return -EPROTO;
	if (!max_armed || max_size > 1024 * 1024)
		return -EINVAL;
	if (start && isdigit(start[0]) && kstrtoul(start, 0, &start_index))
		return -EINVAL;
	debug_locks_base = READ_ONCE(debug_locks);
	taint_base = splat_state();
	if (coverage) {
		int ret = coverage_init();

		if (ret)
			return ret;
	} else {
		kps = kvcalloc(max_armed, sizeof(*kps), GFP_KERNEL);
		armed = kvcalloc(max_armed, sizeof(*armed), GFP_KERNEL);
		if (!kps || !armed) {
			kvfree(kps);
			kvfree(armed);
			return -ENOMEM;
		}
	}
	dir = debugfs_create_dir("okp_sweep", NULL);
	debugfs_create_file("funcs", 0200, dir, NULL, &funcs_fops);
	debugfs_create_file("run", 0200, dir, NULL, &run_fops);
	debugfs_create_file("release", 0200, dir, NULL, &release_fops);
	debugfs_create_file("state", 0400, dir, NULL, &state_fops);
	debugfs_create_file("report", 0400, dir, NULL, &report_fops);
	if (coverage) {
		debugfs_create_file("kregister", 0200, dir, coverage_kregister, &kstep_fops);
		debugfs_create_file("kwait", 0200, dir, coverage_kwait, &kstep_fops);
		debugfs_create_file("krelease", 0200, dir, coverage_krelease, &kstep_fops);
	}
	/* sweep_return.c and sweep_decode.c: their own debugfs files, run by the script. */
	return_init(dir);
	optimize_init(dir);
	return decode_init(dir);
}

static void __exit okp_sweep_exit(void)
{
	unsigned int i;

	debugfs_remove(dir);
	return_exit();
	decode_exit();
	if (coverage)
		coverage_exit();
	else
		release_batch();
	for (i = 0; i < nfuncs; i++) {
		free_func(&funcs[i]);
		kfree(funcs[i].name);
	}
	kvfree(funcs);
	for (i = 0; i < nnotes; i++)
		kfree(notes[i]);
	kvfree(kps);
	kvfree(armed);
}

module_init(okp_sweep_init);
module_exit(okp_sweep_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("okprobes test: a probe at every byte of a sample of vmlinux functions");
