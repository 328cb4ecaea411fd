// SPDX-License-Identifier: GPL-2.0
/*
 * okp_sweep's differential decoding: okprobes' decoder (Zydis, through the test-only export
 * okp_test_insn_length) against the kernel's own x86 decoder (insn_decode, compiled into this
 * module: sweep_insn.c) on every instruction of every function of vmlinux text.
 *
 * The guest script writes "START END" (hex, _stext and _etext) to
 * /sys/kernel/debug/okp_sweep/decode. The module walks the text symbol by symbol
 * (sprint_symbol gives each symbol's start and size; kallsyms sizes run up to the next symbol,
 * so the walk covers every byte), reads each function's live text and decodes it linearly from
 * its start with the kernel's decoder. At every instruction start it also asks okprobes'
 * decoder for the length of the same bytes. The linear sweep follows the kernel's decoder (the
 * sweep's judge of boundaries); where the kernel's decoder refuses, it follows Zydis, and where
 * both refuse, it steps one byte.
 *
 * Every instruction falls in one class: both agree; the lengths differ; only the kernel decodes
 * it; only Zydis decodes it; neither does. A last instruction whose bytes run past the symbol's
 * end is counted apart (both decoders see the same bytes, so they are still compared). Every
 * disagreement is then explained by where it sits, or not:
 *   - unreachable: the last instruction both decoders agreed on is one execution never falls
 *     through (ret, jmp, ud2, ud1, int3, iret, sysret): what follows until the next agreed
 *     instruction is padding or data in text, where a difference tells nothing about code.
 *     (Reachable code after a ud2, e.g. past a BUG(), would be explained wrongly: every
 *     example is printed, with the instruction before it, for a reader to judge.)
 *   - code32: the symbol is 32-bit code (.code32) that vmlinux text holds for a 32-bit entry
 *     (pvh_start_xen, the PVH boot entry on Debian's kernels): decoded as 64-bit code it
 *     means nothing to either decoder; it runs before the kernel is in long mode, never after
 *     boot, so no probe can fire there.
 *   - zydis_lacks: only the kernel decodes it, and it is an instruction newer than Zydis 4.0
 *     (LKGS, f2 0f 00 /6, Intel FRED's "load kernel GS": 6.12's native_lkgs). okprobes then
 *     refuses every probe from there to the function's end (-EILSEQ: it cannot find the
 *     boundaries), which is safe; only kernel_only disagreements can be explained so.
 *   - anything else is "unexplained": a length difference on reachable code is exactly what
 *     would let okprobes place an int3 inside an instruction, so the TAP check fails on it.
 * `decode` (read) prints OKP-DECODE lines: the counts, the disagreements by class and
 * explanation, and the first MAX_EXAMPLES of them with function+offset, bytes and both lengths.
 */
#include <linux/debugfs.h>
#include <linux/kallsyms.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/mutex.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <asm/insn.h>
#include "sweep.h"

#define MAX_EXAMPLES 64
#define DECODE_MAX_FUNC (16 * 1024 * 1024)	/* larger: not a function; counted, not decoded */

enum dclass { D_AGREE, D_LENGTH, D_KERNEL_ONLY, D_ZYDIS_ONLY, D_NEITHER, D_NR };
static const char *const dclass_name[D_NR] = {
	"agree", "length_differs", "kernel_only", "zydis_only", "neither"
};

struct example {
	char where[KSYM_NAME_LEN + 24];
	enum dclass cls;
	const char *why;	/* NULL: unexplained */
	int klen, zlen;
	u8 bytes[16];
	u8 prev[16];
	unsigned int prev_len;
};

static DEFINE_MUTEX(decode_lock);
static struct {
	bool ran;
	unsigned long funcs, bytes, insns, crossing, unreadable, too_big, no_symbol, largest;
	unsigned long count[D_NR];
	unsigned long explained[D_NR], unexplained[D_NR], code32[D_NR],
		lacks[D_NR];
	u64 ns;
} ds;
static char too_big_name[KSYM_NAME_LEN];	/* the first one */
static char largest_name[KSYM_NAME_LEN];	/* the longest symbol decoded */
static struct example *examples;
static unsigned int nexamples;
static unsigned long examples_dropped;
static u8 *buf;
static size_t buf_len;

/* Execution never falls through past these: what follows need not be code. */
static bool no_fallthrough(const u8 *p, unsigned int len)
{
	switch (p[0]) {
	case 0xc3: case 0xc2: case 0xcb: case 0xca:	/* ret, lret */
	case 0xe9: case 0xeb:				/* jmp */
	case 0xcc:					/* int3 */
	case 0xcf:					/* iret */
		return true;
	case 0x0f:
		/* ud2 (not with an emulate prefix: the emulated instruction goes on), ud1,
		 * ud0, sysret */
		return len >= 2 && ((p[1] == 0x0b && len == 2) || p[1] == 0xb9 || p[1] == 0xff ||
				    p[1] == 0x07);
	case 0xff:					/* jmp *r/m: /4, /5 */
		return len >= 2 && (((p[1] >> 3) & 7) == 4 || ((p[1] >> 3) & 7) == 5);
	case 0x2e: case 0x3e:				/* notrack/cs jmp *r/m */
		return len >= 3 && p[1] == 0xff && (((p[2] >> 3) & 7) == 4);
	case 0x41:					/* jmp *%r8..%r15 */
		return len >= 3 && p[1] == 0xff && (((p[2] >> 3) & 7) == 4);
	case 0xf3:					/* rep ret */
		return len == 2 && p[1] == 0xc3;
	}
	return false;
}

/* vmlinux text symbols that hold 32-bit code (entered in protected mode, at boot only). */
static const char *const code32_symbols[] = { "pvh_start_xen" };

static bool is_code32(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(code32_symbols); i++)
		if (!strcmp(name, code32_symbols[i]))
			return true;
	return false;
}

/* Instructions Zydis 4.0 does not know and the kernel's decoder does. */
static bool zydis_lacks(const u8 *p, unsigned int avail)
{
	return avail >= 4 && p[0] == 0xf2 && p[1] == 0x0f && p[2] == 0x00 &&
	       ((p[3] >> 3) & 7) == 6;	/* lkgs r/m16 */
}

static void record(const char *name, unsigned int off, enum dclass cls, const char *why, int klen,
		   int zlen, const u8 *at, unsigned int avail, const u8 *prev, unsigned int prev_len)
{
	struct example *e;

	bool explained = why;

	ds.count[cls]++;
	if (why && !strcmp(why, "code32"))
		ds.code32[cls]++;
	if (why && !strcmp(why, "zydis_lacks"))
		ds.lacks[cls]++;
	if (explained)
		ds.explained[cls]++;
	else
		ds.unexplained[cls]++;
	/* Keep every unexplained one up to the limit, and a few explained ones. */
	if (nexamples >= MAX_EXAMPLES || (explained && nexamples >= MAX_EXAMPLES / 2)) {
		examples_dropped++;
		return;
	}
	e = &examples[nexamples++];
	snprintf(e->where, sizeof(e->where), "%s+%#x", name, off);
	e->cls = cls;
	e->why = why;
	e->klen = klen;
	e->zlen = zlen;
	memset(e->bytes, 0, sizeof(e->bytes));
	memcpy(e->bytes, at, min_t(unsigned int, avail, sizeof(e->bytes)));
	e->prev_len = min_t(unsigned int, prev_len, sizeof(e->prev));
	if (prev)
		memcpy(e->prev, prev, e->prev_len);
}

static void decode_function(const char *name, unsigned long start, unsigned int size)
{
	unsigned int avail = size + MAX_INSN_SIZE, off = 0, prev_off = 0, prev_len = 0;
	bool unreachable = false;	/* since the last no-fallthrough, no agreed instruction */

	if (copy_from_kernel_nofault(buf, (void *)start, avail)) {
		avail = size;
		if (copy_from_kernel_nofault(buf, (void *)start, avail)) {
			ds.unreadable++;
			return;
		}
	}
	ds.funcs++;
	ds.bytes += size;
	while (off < size) {
		struct insn insn;
		int klen = 0, zlen;
		enum dclass cls;
		unsigned int step;

		if (!insn_decode(&insn, buf + off, avail - off, INSN_MODE_64) && insn.length)
			klen = insn.length;
		zlen = okp_test_insn_length(buf + off, avail - off);
		if (klen && zlen == klen)
			cls = D_AGREE;
		else if (klen && zlen > 0)
			cls = D_LENGTH;
		else if (klen)
			cls = D_KERNEL_ONLY;
		else if (zlen > 0)
			cls = D_ZYDIS_ONLY;
		else
			cls = D_NEITHER;
		step = klen ? klen : zlen > 0 ? zlen : 1;
		ds.insns++;
		if (off + step > size)
			ds.crossing++;
		if (cls == D_AGREE) {
			ds.count[D_AGREE]++;
			unreachable = no_fallthrough(buf + off, klen);
		} else {
			record(name, off, cls,
			       is_code32(name) ? "code32" :
			       cls == D_KERNEL_ONLY && zydis_lacks(buf + off, avail - off) ? "zydis_lacks" :
			       unreachable ? "unreachable" : NULL, klen, zlen, buf + off, avail - off,
			       prev_len ? buf + prev_off : NULL, prev_len);
		}
		prev_off = off;
		prev_len = step;
		off += step;
	}
}

/* "name+0x10/0x40": the symbol's start and size; false for an address without a symbol. */
static bool symbol_extent(unsigned long addr, char *name, unsigned long *start,
			  unsigned long *size)
{
	char sym[KSYM_SYMBOL_LEN], *plus, *slash;
	unsigned long off;

	sprint_symbol(sym, addr);
	plus = strrchr(sym, '+');
	slash = plus ? strchr(plus, '/') : NULL;
	if (!plus || !slash || strchr(sym, '['))
		return false;
	*slash = '\0';
	if (kstrtoul(plus + 1, 16, &off) || kstrtoul(slash + 1, 16, size) || !*size)
		return false;
	*plus = '\0';
	strscpy(name, sym, KSYM_NAME_LEN);
	*start = addr - off;
	return true;
}

static int decode_range(unsigned long text_start, unsigned long text_end)
{
	static char name[KSYM_NAME_LEN];
	unsigned long addr = text_start, start, size;
	u64 t0 = ktime_get_ns();

	memset(&ds, 0, sizeof(ds));
	nexamples = 0;
	examples_dropped = 0;
	while (addr < text_end) {
		if (!symbol_extent(addr, name, &start, &size)) {
			ds.no_symbol++;
			addr++;
			continue;
		}
		if (start + size > text_end)
			size = text_end - start;
		if (size > DECODE_MAX_FUNC) {
			if (!ds.too_big++)
				snprintf(too_big_name, sizeof(too_big_name), "%s", name);

		} else {
			if (size + MAX_INSN_SIZE > buf_len) {
				kvfree(buf);
				buf_len = size + MAX_INSN_SIZE;
				buf = kvmalloc(buf_len, GFP_KERNEL);
				if (!buf) {
					buf_len = 0;
					return -ENOMEM;
				}
			}
			if (size > ds.largest) {
				ds.largest = size;
				strscpy(largest_name, name, sizeof(largest_name));
			}
			decode_function(name, start, size);
		}
		addr = start + size;
		if (fatal_signal_pending(current))
			return -EINTR;
		cond_resched_tasks_rcu_qs();	/* see sweep.c's run_batch */
	}
	ds.ns = ktime_get_ns() - t0;
	ds.ran = true;
	return 0;
}

static ssize_t decode_write(struct file *file, const char __user *ubuf, size_t count,
			    loff_t *ppos)
{
	char in[64];
	unsigned long s, e;
	int ret;

	if (count >= sizeof(in))
		return -EINVAL;
	if (copy_from_user(in, ubuf, count))
		return -EFAULT;
	in[count] = '\0';
	if (sscanf(in, "%lx %lx", &s, &e) != 2 || s >= e)
		return -EINVAL;
	mutex_lock(&decode_lock);
	ret = decode_range(s, e);
	mutex_unlock(&decode_lock);
	return ret ? ret : count;
}

static int decode_show(struct seq_file *m, void *v)
{
	unsigned long disagree = 0, unexplained = 0;
	unsigned int i;

	mutex_lock(&decode_lock);
	for (i = D_LENGTH; i < D_NR; i++) {
		disagree += ds.count[i];
		unexplained += ds.unexplained[i];
	}
	seq_printf(m, "OKP-DECODE: %s ran=%d funcs=%lu bytes=%lu insns=%lu agree=%lu disagree=%lu "
		   "unexplained=%lu crossing_end=%lu unreadable=%lu too_big=%lu no_symbol=%lu ms=%llu\n",
		   ds.ran && !unexplained ? "PASS" : "FAIL", ds.ran, ds.funcs, ds.bytes, ds.insns,
		   ds.count[D_AGREE], disagree, unexplained, ds.crossing, ds.unreadable, ds.too_big,
		   ds.no_symbol, div_u64(ds.ns, NSEC_PER_MSEC));
	seq_printf(m, "OKP-DECODE: longest symbol decoded: %s, %lu bytes\n", largest_name, ds.largest);
	if (ds.too_big)
		seq_printf(m, "OKP-DECODE: not decoded: %lu symbols over %u bytes, e.g. %s\n",
			   ds.too_big, DECODE_MAX_FUNC, too_big_name);
	for (i = D_LENGTH; i < D_NR; i++)
		seq_printf(m, "OKP-DECODE: class %s count %lu explained %lu (unreachable %lu, code32 %lu, zydis_lacks %lu) unexplained %lu\n",
			   dclass_name[i], ds.count[i], ds.explained[i],
			   ds.explained[i] - ds.code32[i] - ds.lacks[i], ds.code32[i], ds.lacks[i],
			   ds.unexplained[i]);
	for (i = 0; i < nexamples; i++) {
		struct example *e = &examples[i];

		seq_printf(m, "OKP-DECODE: %s %s %s kernel_len=%d zydis_len=%d bytes %*ph after %*ph\n",
			   e->why ? e->why : "UNEXPLAINED", dclass_name[e->cls], e->where,
			   e->klen, e->zlen, (int)sizeof(e->bytes), e->bytes, (int)e->prev_len,
			   e->prev);
	}
	if (examples_dropped)
		seq_printf(m, "OKP-DECODE: ... and %lu more disagreements not listed\n",
			   examples_dropped);
	mutex_unlock(&decode_lock);
	return 0;
}

static int decode_open(struct inode *inode, struct file *file)
{
	return single_open(file, decode_show, NULL);
}

static const struct file_operations decode_fops = {
	.owner = THIS_MODULE,
	.open = decode_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = decode_write,
};

int decode_init(struct dentry *dir)
{
	examples = kcalloc(MAX_EXAMPLES, sizeof(*examples), GFP_KERNEL);
	if (!examples)
		return -ENOMEM;
	debugfs_create_file("decode", 0600, dir, NULL, &decode_fops);
	return 0;
}

void decode_exit(void)
{
	kvfree(buf);
	buf = NULL;
	kfree(examples);
	examples = NULL;
}
