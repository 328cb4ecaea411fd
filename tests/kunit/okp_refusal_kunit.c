// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "okprobes_refusal" (x86-64): every refusal of okp_register_kprobe() with its
 * errno and a reason, on this module's own jump label, static call, WARN and ftrace sites
 * and on asm targets (probe_targets_x86.S); double registration.
 */
#include <kunit/test.h>
#include <linux/bug.h>
#include <linux/jump_label.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/static_call.h>
#include <linux/string.h>
#include <okprobes/okprobes.h>

#include "okp_kprobe_kunit.h"

/* --- C functions owning sites other patching users own. --- */

/* A static symbol of the same name as a local asm one: "okp_t_dup" is ambiguous. */
static noinline __used long okp_t_dup(long a)
{
	return a + 2;
}

/* A jump label site. */
static DEFINE_STATIC_KEY_FALSE(okp_t_key);

static noinline long okp_t_jump_label(long a)
{
	if (static_branch_unlikely(&okp_t_key))
		return a * 2;
	return a + 1;
}

static long (*volatile okp_t_jump_label_ptr)(long) = okp_t_jump_label;

/* A static call site. */
static long okp_t_sc_target(long a)
{
	return a + 5;
}

DEFINE_STATIC_CALL(okp_t_sc, okp_t_sc_target);

static noinline long okp_t_static_call(long a)
{
	return static_call(okp_t_sc)(a) + 1;
}

static long (*volatile okp_t_static_call_ptr)(long) = okp_t_static_call;

/* A WARN site (never triggered: nothing passes 0x5eed). */
static noinline void okp_t_warn(long a)
{
	WARN_ON(a == 0x5eed);
}

static void (*volatile okp_t_warn_ptr)(long) = okp_t_warn;

/* --- Refusals: each with its errno and a reason. --- */

struct okp_t_refusal {
	const char *name;
	int err;
	const char *reason_has;
	const char *symbol;
	unsigned int offset;
	const void *addr;
	/* A site found at run time (NULL: use addr). */
	unsigned long (*find)(struct kunit *test);
	bool null_probe;
};

static unsigned long okp_t_jump_label_site(struct kunit *test)
{
	struct jump_entry *e = THIS_MODULE->jump_entries;
	unsigned int i;

	for (i = 0; i < THIS_MODULE->num_jump_entries; i++, e++)
		if (jump_entry_key(e) == &okp_t_key.key)
			return jump_entry_code(e);
	return 0;
}

static unsigned long okp_t_static_call_site(struct kunit *test)
{
	struct static_call_site *s = THIS_MODULE->static_call_sites;
	int i;

	for (i = 0; i < THIS_MODULE->num_static_call_sites; i++, s++) {
		unsigned long key = ((unsigned long)&s->key + s->key) & ~(unsigned long)STATIC_CALL_SITE_FLAGS;

		if (key == (unsigned long)&STATIC_CALL_KEY(okp_t_sc))
			return (unsigned long)&s->addr + s->addr;
	}
	return 0;
}

static unsigned long okp_t_warn_site(struct kunit *test)
{
	struct bug_entry *b = THIS_MODULE->bug_table;
	char sym[KSYM_SYMBOL_LEN];
	unsigned int i;

	for (i = 0; i < THIS_MODULE->num_bugs; i++, b++) {
		unsigned long addr = (unsigned long)&b->bug_addr_disp + b->bug_addr_disp;

		sprint_symbol(sym, addr);
		if (!strncmp(sym, "okp_t_warn+", strlen("okp_t_warn+")))
			return addr;
	}
	return 0;
}

/* +1 into the call __fentry__ of a C function. */
static unsigned long okp_t_ftrace_site_plus1(struct kunit *test)
{
	struct okp_t_probe *p = okp_t_new(test, 1, NULL, "okp_t_c_orig", 0, true, false);
	unsigned long site;

	if (okp_t_register(p))
		return 0;
	site = (unsigned long)p->kp.addr;
	KUNIT_EXPECT_EQ(test, p->kp.flags & OKP_KPROBE_FLAG_FTRACE, (unsigned int)OKP_KPROBE_FLAG_FTRACE);
	okp_t_unregister(p);
	return site + 1;
}

static unsigned long okp_t_jiffies(struct kunit *test)
{
	return (unsigned long)&jiffies;
}

static const struct okp_t_refusal okp_t_refusals[] = {
	{ "NULL probe", -EINVAL, "NULL", .null_probe = true },
	{ "symbol and address", -EINVAL, "both", .symbol = "okp_t_riprel_load",
	  .addr = okp_t_riprel_load_insn },
	{ "neither symbol nor address", -EINVAL, "neither" },
	{ "unknown symbol", -ENOENT, "no text symbol", .symbol = "okp_t_no_such_function" },
	{ "data symbol", -ENOENT, "no text symbol", .symbol = "okp_t_data" },
	{ "bad module prefix", -EINVAL, "module prefix", .symbol = ":okp_t_riprel_load" },
	{ "ambiguous symbol", -EADDRNOTAVAIL, "ambiguous", .symbol = "okp_t_dup" },
	{ "ambiguous symbol in a module", -EADDRNOTAVAIL, "ambiguous",
	  .symbol = "okprobes_kunit:okp_t_dup" },
	{ "mid-instruction address", -EILSEQ, "not an instruction boundary",
	  .addr = okp_t_riprel_load_insn + 2 },
	{ "mid-instruction symbol+offset", -EILSEQ, "not an instruction boundary",
	  .symbol = "okp_t_riprel_load_insn", .offset = 3 },
	{ "blacklisted (notify_die)", -EINVAL, "blacklisted", .symbol = "notify_die" },
	{ "blacklisted (okprobes itself)", -EINVAL, "blacklisted", .symbol = "okp_register_kprobe" },
	{ "not text (module data)", -EINVAL, "not kernel or module text", .addr = &okp_t_data },
	{ "not text (vmlinux data)", -EINVAL, "not kernel or module text", .find = okp_t_jiffies },
	{ "jump label site", -EBUSY, "jump label", .find = okp_t_jump_label_site },
	{ "static call site", -EBUSY, "static call", .find = okp_t_static_call_site },
	{ "WARN site", -EBUSY, "BUG/WARN", .find = okp_t_warn_site },
	{ "ud2", -EBUSY, "BUG/WARN", .addr = okp_t_ud2_insn },
	{ "exception table site", -EBUSY, "exception-table", .addr = okp_t_extable_insn },
	{ "int3 already there", -EBUSY, "int3", .addr = okp_t_int3_insn },
	{ "int3 before the probe", -EBUSY, "int3", .symbol = "okp_t_int3_before" },
	{ "inside the ftrace call", -EILSEQ, "ftrace call", .find = okp_t_ftrace_site_plus1 },
	{ "hlt (cannot be stepped)", -EINVAL, "hlt", .addr = okp_t_hlt_insn },
};

static void okp_t_refusal_desc(const struct okp_t_refusal *r, char *desc)
{
	strscpy(desc, r->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(okp_t_refusal, okp_t_refusals, okp_t_refusal_desc);

static void okp_kprobe_refusal(struct kunit *test)
{
	const struct okp_t_refusal *r = test->param_value;
	struct okp_t_probe *p;
	const void *addr = r->addr;
	unsigned int offset = r->offset;
	u8 before = 0;
	int ret;

	if (r->null_probe) {
		KUNIT_EXPECT_EQ(test, okp_register_kprobe(NULL), r->err);
		KUNIT_EXPECT_TRUE(test, okp_t_has(okp_kprobe_reason(NULL), r->reason_has));
		okp_unregister_kprobe(NULL);
		return;
	}
	if (r->find) {
		addr = (const void *)r->find(test);
		KUNIT_ASSERT_TRUE_MSG(test, addr != NULL, "site not found in this module");
	}
	if (r->symbol && !strcmp(r->symbol, "okp_t_int3_before"))
		offset = okp_t_int3_before_off;
	p = okp_t_new(test, 1, addr, r->symbol, offset, true, false);
	if (addr && r->err != -EINVAL)
		before = okp_t_byte(addr);

	ret = okp_t_register(p);
	KUNIT_EXPECT_EQ_MSG(test, ret, r->err, "reason: '%s'", okp_kprobe_reason(&p->kp));
	KUNIT_EXPECT_TRUE_MSG(test, okp_kprobe_reason(&p->kp)[0] != '\0', "empty reason");
	KUNIT_EXPECT_TRUE_MSG(test, okp_t_has(okp_kprobe_reason(&p->kp), r->reason_has),
			      "reason '%s' does not say '%s'", okp_kprobe_reason(&p->kp),
			      r->reason_has);
	kunit_info(test, "%d: %s\n", ret, okp_kprobe_reason(&p->kp));
	if (!ret) {
		okp_t_unregister(p);
		return;
	}
	/* Refused: not registered, text untouched, addr as the caller left it. */
	KUNIT_EXPECT_EQ(test, okp_disable_kprobe(&p->kp), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, (const void *)p->kp.addr, addr);
	if (addr && r->err != -EINVAL)
		KUNIT_EXPECT_EQ(test, okp_t_byte(addr), before);
}

/* Registering one struct twice: -EEXIST, and the registered probe is left as it was. */
static void okp_kprobe_already_registered(struct kunit *test)
{
	struct okp_t_probe *p = okp_t_new(test, 1, okp_t_rdtsc_insn, NULL, 0, true, false);
	char reason[OKP_REASON_MAX];

	KUNIT_ASSERT_EQ(test, okp_t_register(p), 0);
	strscpy(reason, okp_kprobe_reason(&p->kp), sizeof(reason));
	KUNIT_EXPECT_TRUE(test, reason[0] != '\0');
	KUNIT_EXPECT_EQ(test, okp_register_kprobe(&p->kp), -EEXIST);
	KUNIT_EXPECT_STREQ(test, okp_kprobe_reason(&p->kp), reason);
	KUNIT_EXPECT_EQ(test, okp_t_rdtsc(1, 0), 2L);
	KUNIT_EXPECT_EQ(test, p->kp.nhit, 1UL);
	okp_t_unregister(p);
	KUNIT_EXPECT_EQ(test, okp_t_rdtsc(1, 0), 2L);
	KUNIT_EXPECT_EQ(test, p->kp.nhit, 1UL);
}

/* The sites the refusal cases use exist and behave (the asm ones are never called). */
static void okp_kprobe_c_sites_callable(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, okp_t_jump_label_ptr(3), 4L);
	KUNIT_EXPECT_EQ(test, okp_t_static_call_ptr(3), 9L);
	okp_t_warn_ptr(3);
	KUNIT_EXPECT_EQ(test, okp_t_dup(3), 5L);
}

static struct kunit_case okp_refusal_cases[] = {
	KUNIT_CASE_PARAM(okp_kprobe_refusal, okp_t_refusal_gen_params),
	KUNIT_CASE(okp_kprobe_already_registered),
	KUNIT_CASE(okp_kprobe_c_sites_callable),
	{}
};

static struct kunit_suite okp_refusal_suite = {
	.name = "okprobes_refusal",
	.init = okp_t_suite_init,
	.exit = okp_t_suite_exit,
	.test_cases = okp_refusal_cases,
};
kunit_test_suites(&okp_refusal_suite);
