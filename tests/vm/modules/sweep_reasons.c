// SPDX-License-Identifier: GPL-2.0
/*
 * okp_sweep: outcomes counted by errno and refusals grouped by reason (numbers and symbol
 * names taken out), each class with a first example; notes and failures kept for the report
 * and logged (rate-limited).
 */
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/printk.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <asm/insn.h>
#include <okprobes/okprobes.h>
#include "sweep.h"
#include "sweep_reason_mask.h"
#include "sweep_state.h"

#define MAX_CLASSES 160
#define MAX_NOTES 40
#define CLASS_LEN 96

static const char *const kind_name[K_NR] = { "boundary", "non-boundary", "accepted" };

struct reason_class {
	enum sweep_kind kind;
	int err;
	unsigned long count;
	char text[CLASS_LEN];
	char example[OKP_REASON_MAX + 160];
};

/* By -errno, 0 = accepted. */
static unsigned long errno_count[K_NR][256];
static struct reason_class classes[MAX_CLASSES];
static unsigned int nclasses;
static unsigned long classes_dropped;
static char *notes[MAX_NOTES];
static unsigned int nnotes;
static unsigned long notes_dropped;

void sweep_count_errno(enum sweep_kind kind, int err)
{
	if (err < 0 && -err < 256)
		errno_count[kind][-err]++;
	else if (!err)
		errno_count[kind][0]++;
}

/* --- reasons, grouped ------------------------------------------------------------------- */

/*
 * A reason with its numbers and symbol names taken out, so that refusals group: hex and
 * decimal numbers (not digits inside a word: int3, ud2) become X and N; "A: B [SOURCE, ...]" keeps A and the source ("X is
 * blacklisted [_kprobe_blacklist]"); "owned by: B (…)" keeps B; the word before " [" (a
 * symbol) goes.
 */
void sweep_classify(const char *r, char *out, size_t len)
{
	char norm[OKP_REASON_MAX + 8], *colon, *br;

	sweep_mask_numbers(r, norm, sizeof(norm));
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
unsigned int sweep_insn_at(const struct sweep_func *f, unsigned int off, unsigned int *len)
{
	unsigned int b = off, e;

	while (b > 0 && !test_bit(b, f->boundary))
		b--;
	for (e = b + 1; e < f->decoded && !test_bit(e, f->boundary); e++)
		;
	*len = min(e - b, (unsigned int)MAX_INSN_SIZE);
	return b;
}

void sweep_count_reason(enum sweep_kind kind, int err, const char *reason,
			const struct sweep_func *f, unsigned int off)
{
	char text[CLASS_LEN];
	unsigned int i, b, len, before;

	sweep_count_errno(kind, err);
	sweep_classify(reason, text, sizeof(text));
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
	b = sweep_insn_at(f, off, &len);
	before = min(b, 8u);
	snprintf(classes[nclasses].example, sizeof(classes[0].example),
		 "%s+%#x: %s [bytes +%#x: %*ph | %*ph]", f->name, off, reason, b - before,
		 (int)before, f->orig + b - before, (int)len, f->orig + b);
	nclasses++;
}

__printf(2, 3) void sweep_note(const struct sweep_func *f, const char *fmt, ...)
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

void sweep_failure(const char *what, const struct sweep_func *f, unsigned int off, int err,
		    const char *reason)
{
	unsigned int len, b = sweep_insn_at(f, off, &len);

	sweep_note(f, "FAILURE %s: %s+%#x (%px; instruction at +%#x: %*ph) returned %d reason \"%s\"",
	     what, f->name, off, (void *)(f->addr + off), b, len, f->orig + b, err, reason);
}

void sweep_show_notes(struct seq_file *m, const char *prefix)
{
	unsigned int i;

	for (i = 0; i < nnotes; i++)
		seq_printf(m, "%s: note %s\n", prefix, notes[i] ? notes[i] : "(no memory)");
	if (notes_dropped)
		seq_printf(m, "%s: note ... and %lu more\n", prefix, notes_dropped);
}

static int cmp_class(const void *a, const void *b)
{
	const struct reason_class *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind - y->kind;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

/* The report's tables: outcomes by errno, then reasons by class. */
void reasons_show(struct seq_file *m)
{
	unsigned int i, k, e;

	for (k = 0; k < K_ACCEPTED_NOTE; k++)
		for (e = 0; e < 256; e++)
			if (errno_count[k][e])
				seq_printf(m, "OKP-SWEEP: errno %d count %lu (%s)\n", -(int)e,
					   errno_count[k][e], kind_name[k]);
	sort(classes, nclasses, sizeof(classes[0]), cmp_class, NULL);
	for (i = 0; i < nclasses; i++)
		seq_printf(m, "OKP-SWEEP: reason \"%s\" count %lu errno %d (%s) e.g. %s\n",
			   classes[i].text, classes[i].count, classes[i].err,
			   kind_name[classes[i].kind], classes[i].example);
	if (classes_dropped)
		seq_printf(m, "OKP-SWEEP: reason \"(more classes than the table holds)\" count %lu\n",
			   classes_dropped);
}

void reasons_exit(void)
{
	unsigned int i;

	for (i = 0; i < nnotes; i++)
		kfree(notes[i]);
}
