// SPDX-License-Identifier: GPL-2.0
/*
 * okp_sweep's coverage mode: the tally of a batch, both frameworks' results per boundary,
 * with reasons grouped into classes (numbers and symbol names taken out), and the report
 * (debugfs "coverage": the OKP-COVERAGE lines) and state line.
 */
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/kprobes.h>
#include <okprobes/okprobes.h>
#include "sweep.h"
#include "sweep_coverage.h"
#include "sweep_reason_mask.h"

#define CLASS_LEN 120
#define MAX_CLASSES 240
#define MAX_EXAMPLES 40
#define EXAMPLE_LEN (OKP_REASON_MAX + KSYM_NAME_LEN + 96)

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

static struct cov_class classes[MAX_CLASSES];
static unsigned int nclasses;
static unsigned long classes_dropped;
static char *examples[MAX_EXAMPLES];
static unsigned int example_func[MAX_EXAMPLES];
static unsigned int nexamples;

/* --- reasons ------------------------------------------------------------------------------ */

/*
 * okprobes' reason without its numbers and symbol names, so that reasons group: hex and
 * decimal numbers (not digits inside a word: int3, ud2) become X and N; the name of a
 * neighbouring symbol or a blacklisted one becomes SYM.
 */
static void normalize(const char *r, char *out, size_t len)
{
	char norm[OKP_REASON_MAX + 8], *w;
	size_t n;

	/* 3 bytes of headroom, for a name shorter than the "SYM" written over it below. */
	sweep_mask_numbers(r, norm, sizeof(norm) - 3);
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

/* "only kernel" examples already kept from function i: three at most from each. */
static unsigned int examples_of(unsigned int i)
{
	unsigned int k, n = 0;

	for (k = 0; k < nexamples; k++)
		n += example_func[k] == i;
	return n;
}

void cov_tally(void)
{
	unsigned int i;
	char text[CLASS_LEN], buf[CLASS_LEN];

	for (i = 0; i < cov_nprobes; i++) {
		struct cov_probe *p = &cov_probes[i];
		struct sweep_func *f = sweep_func(p->func);
		const struct cov_func *c = &cov_funcs[p->func];
		const char *kwhy;

		cov_st.boundaries++;
		if (p->okp_ret) {
			cov_st.okp_refused++;
			normalize(p->reason[0] ? p->reason : "(no reason)", buf, sizeof(buf));
			snprintf(text, sizeof(text), "%d %s", p->okp_ret, buf);
			count_class(T_OKP_REFUSED, text, f, p->off, p->reason);
			continue;
		}
		if (p->k_ret) {
			cov_st.k_refused++;
			snprintf(text, sizeof(text), "errno %d", p->k_ret);
			count_class(T_K_REFUSED, text, f, p->off, "");
			continue;
		}
		if (p->okp_moved || p->k_moved) {
			cov_st.moved++;	/* +0 of an ENDBR64 function: the probe went to +4 */
			continue;
		}
		cov_st.both++;
		if (p->okp_ftrace || p->k_ftrace) {
			cov_st.ftrace++;
			if (p->okp_ftrace != p->k_ftrace)
				cov_st.ftrace_disagree++;
		}
		cov_st.okp_opt += p->okp_opt;
		cov_st.k_opt += p->k_opt;
		if (p->okp_opt && p->k_opt)
			cov_st.both_opt++;
		else if (p->okp_opt)
			cov_st.only_okp++;
		else if (p->k_opt)
			cov_st.only_k++;
		else
			cov_st.neither++;
		kwhy = NULL;
		if (!p->k_opt || !p->okp_opt) {
			if (p->k_ftrace)
				kwhy = "(served by ftrace)";
			else
				kwhy = cov_kernel_rule(f, c, p->off, buf, sizeof(buf));
		}
		if (p->k_opt && kwhy && !p->k_ftrace) {
			cov_st.k_infer_mismatch++;
			if (cov_st.k_infer_mismatch <= 5)
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
				count_class(T_RUNS_ON, cov_symbol_before_end(f, &cov_funcs[p->func]), f, p->off,
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
	bool pass = sweep_nfuncs() > 0 && cov_st.funcs_done == sweep_nfuncs() && cov_phase == P_IDLE &&
		    !cov_failures();

	pct(a, sizeof(a), cov_st.okp_opt, cov_st.both);
	pct(b, sizeof(b), cov_st.k_opt, cov_st.both);
	pct(c, sizeof(c), cov_st.okp_opt, cov_st.both - cov_st.ftrace);
	pct(d, sizeof(d), cov_st.k_opt, cov_st.both - cov_st.ftrace);
	seq_printf(m, "OKP-COVERAGE: %s funcs=%lu boundaries=%lu okp_refused=%lu kernel_refused=%lu "
		   "moved=%lu both_accepted=%lu ftrace=%lu okp_optimized=%lu kernel_optimized=%lu "
		   "both_optimized=%lu only_okp=%lu only_kernel=%lu neither=%lu batches=%lu "
		   "failures=%lu\n", pass ? "PASS" : "FAIL", cov_st.funcs_done, cov_st.boundaries,
		   cov_st.okp_refused, cov_st.k_refused, cov_st.moved, cov_st.both, cov_st.ftrace,
		   cov_st.okp_opt, cov_st.k_opt, cov_st.both_opt, cov_st.only_okp, cov_st.only_k,
		   cov_st.neither, cov_st.batches, cov_failures());
	sweep_show_selection(m, "OKP-COVERAGE");
	seq_printf(m, "OKP-COVERAGE: optimized of both-accepted: okprobes %s kernel %s; without "
		   "ftrace sites: okprobes %s kernel %s\n", a, b, c, d);
	seq_printf(m, "OKP-COVERAGE: checks: okp_byte_bad=%lu okp_region_bad=%lu okp_pending=%lu "
		   "okp_slots_full=%lu text_mismatch=%lu kernel_text_timeout=%lu kernel_pending=%lu "
		   "splat=%lu kernel_prepared_not_optimized=%lu kernel_infer_mismatch=%lu "
		   "ftrace_disagree=%lu\n", cov_st.okp_byte_bad, cov_st.okp_region_bad,
		   cov_st.okp_pending, cov_st.okp_slots_full, cov_st.text_mismatch,
		   cov_st.k_text_timeout, cov_st.k_pending, cov_st.splat, cov_st.k_prepared_not_opt,
		   cov_st.k_infer_mismatch, cov_st.ftrace_disagree);
	seq_printf(m, "OKP-COVERAGE: settings gap=%u batch_max=%u; hits okprobes=%ld kernel=%ld; "
		   "ms: okp_register=%llu okp_optimize=%llu okp_unregister=%llu kernel_register=%llu "
		   "kernel_optimize=%llu kernel_unregister=%llu\n", cov_gap, cov_batch_max, sweep_hits(),
		   atomic_long_read(&cov_k_hits), div_u64(cov_st.okp_reg_ns, NSEC_PER_MSEC),
		   div_u64(cov_st.okp_wait_ns, NSEC_PER_MSEC), div_u64(cov_st.okp_unreg_ns, NSEC_PER_MSEC),
		   div_u64(cov_st.k_reg_ns, NSEC_PER_MSEC), div_u64(cov_st.k_wait_ns, NSEC_PER_MSEC),
		   div_u64(cov_st.k_unreg_ns, NSEC_PER_MSEC));
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

void cov_tally_exit(void)
{
	unsigned int i;

	for (i = 0; i < nexamples; i++)
		kfree(examples[i]);
}
