// SPDX-License-Identifier: GPL-2.0
/*
 * Function-entry probes on ftrace call sites: the `call __fentry__` nop belongs to ftrace, so
 * okprobes never writes a breakpoint there; it adds the site to an ftrace_ops filter instead.
 * Two ops, because IPMODIFY is exclusive per function (livepatch needs it too): only probes
 * that asked for it (OKP_KPROBE_FLAG_IPMODIFY) take it.
 *
 * With DYNAMIC_FTRACE_WITH_REGS ftrace saves a whole pt_regs for ops that ask (SAVE_REGS).
 * A kernel with only DYNAMIC_FTRACE_WITH_ARGS saves the argument registers, frame pointer,
 * return address, stack pointer and pc (ftrace_regs) and restores them on its way out: the
 * handlers get a pt_regs filled from those (other registers read 0), and what they changed of
 * those the arch glue puts back (okp_arch_ftrace_regs_out).
 */
#define pr_fmt(fmt) "okprobes: " fmt

#include <linux/ftrace.h>
#include <linux/kprobes.h>

#include "okp_glue.h"

#if defined(CONFIG_DYNAMIC_FTRACE_WITH_REGS)
#define OKP_FTRACE_ENTRY 1
#define OKP_FTRACE_REGS_FLAGS FTRACE_OPS_FL_SAVE_REGS
#elif defined(CONFIG_DYNAMIC_FTRACE_WITH_ARGS)
#define OKP_FTRACE_ENTRY 1
#define OKP_FTRACE_PARTIAL_REGS 1
#define OKP_FTRACE_REGS_FLAGS 0
#endif

#ifdef OKP_FTRACE_ENTRY

/*
 * How far the ftrace call begins before its record's address. riscv64 since 6.16 (Debian's
 * 7.x) keeps the call's `auipc t0` in place and patches only the `jalr` after it, which is the
 * record (ftrace_location() of a function is its entry + 4); okprobes names a site by the
 * call's first byte, the function's entry, as it does where the record is the whole call.
 */
#ifdef MCOUNT_AUIPC_SIZE
#define OKP_FTRACE_CALL_LEAD MCOUNT_AUIPC_SIZE
#else
#define OKP_FTRACE_CALL_LEAD 0
#endif

static void notrace okp_ftrace_handler(unsigned long ip, unsigned long parent_ip,
				       struct ftrace_ops *ops, struct ftrace_regs *fregs);
static void notrace okp_ftrace_ipmodify_handler(unsigned long ip, unsigned long parent_ip,
						struct ftrace_ops *ops, struct ftrace_regs *fregs);

/* One handler per ops: each calls its own core entry directly, which checks the site's
 * IPMODIFY against a constant (no compare of ops here). */
static struct ftrace_ops okp_ftrace_ops = {
	.func = okp_ftrace_handler,
	.flags = OKP_FTRACE_REGS_FLAGS,
};

static struct ftrace_ops okp_ftrace_ipmodify_ops = {
	.func = okp_ftrace_ipmodify_handler,
	.flags = OKP_FTRACE_REGS_FLAGS | FTRACE_OPS_FL_IPMODIFY,
};

static unsigned int okp_ftrace_users[2]; /* sites per ops; guarded by the registry lock */

#ifdef OKP_FTRACE_PARTIAL_REGS
/* What ftrace saved, as the kernel's own ftrace_partial_regs() hands it to fprobe handlers;
 * every other register 0. */
static noinline void notrace okp_ftrace_regs_in(struct ftrace_regs *fregs, struct pt_regs *regs)
{
	*regs = (struct pt_regs){};
	ftrace_partial_regs(fregs, regs);
}
NOKPROBE_SYMBOL(okp_ftrace_regs_in);
#endif

typedef void (*okp_ftrace_core_fn)(okp_addr_t site, struct okp_regs *regs,
				   struct okp_cpu_state *cpu);

/* Inlined into each handler with a constant core entry: a direct call. */
static __always_inline void okp_ftrace_hit(unsigned long ip, unsigned long parent_ip,
					   struct ftrace_regs *fregs, okp_ftrace_core_fn core)
{
#ifdef OKP_FTRACE_PARTIAL_REGS
	/* On this stack: a nested hit (an NMI's) gets its own; the core's frames are per CPU. */
	struct pt_regs partial;
	struct pt_regs *regs = &partial;
#else
	struct pt_regs *regs = ftrace_get_regs(fregs);
#endif
	int bit;

	if (!regs)
		return;
	bit = ftrace_test_recursion_trylock(ip, parent_ip);
	if (bit < 0)
		return;
#ifdef OKP_FTRACE_PARTIAL_REGS
	okp_ftrace_regs_in(fregs, regs);
#endif
	core(ip - OKP_FTRACE_CALL_LEAD, (struct okp_regs *)regs, this_cpu_ptr(&okp_cpu_state));
#ifdef OKP_FTRACE_PARTIAL_REGS
	okp_arch_ftrace_regs_out(regs, fregs);
#endif
	ftrace_test_recursion_unlock(bit);
}

static void notrace okp_ftrace_handler(unsigned long ip, unsigned long parent_ip,
				       struct ftrace_ops *ops, struct ftrace_regs *fregs)
{
	okp_ftrace_hit(ip, parent_ip, fregs, okp_core_on_ftrace);
}
NOKPROBE_SYMBOL(okp_ftrace_handler);

static void notrace okp_ftrace_ipmodify_handler(unsigned long ip, unsigned long parent_ip,
						struct ftrace_ops *ops, struct ftrace_regs *fregs)
{
	okp_ftrace_hit(ip, parent_ip, fregs, okp_core_on_ftrace_ipmodify);
}
NOKPROBE_SYMBOL(okp_ftrace_ipmodify_handler);

okp_addr_t okp_ftrace_entry_point(void)
{
	return (okp_addr_t)okp_ftrace_handler;
}

okp_addr_t okp_ftrace_ipmodify_entry_point(void)
{
	return (okp_addr_t)okp_ftrace_ipmodify_handler;
}

okp_addr_t okp_seam_ftrace_site(okp_addr_t addr)
{
	/* ftrace_location() answers for any byte of the record, and maps sym+0 to it; a byte of
	 * the call's lead (its auipc) is the byte before the record's. */
	okp_addr_t rec;

	if (!okp_ksyms.ftrace_location)
		return 0;
	rec = okp_ksyms.ftrace_location(addr);
	if (!rec && OKP_FTRACE_CALL_LEAD)
		rec = okp_ksyms.ftrace_location_range ?
			okp_ksyms.ftrace_location_range(addr, addr + OKP_FTRACE_CALL_LEAD) : 0;
	return rec ? rec - OKP_FTRACE_CALL_LEAD : 0;
}

/*
 * ftrace_location_range() finds a record overlapping the range in one binary search;
 * ftrace_location() of a byte that is no call site also looks up its symbol (to map sym+0),
 * which in a module walks all of its symbols, for every byte of a detour region.
 */
okp_addr_t okp_seam_ftrace_site_in(okp_addr_t addr, unsigned long len)
{
	okp_addr_t a, site = 0;

	if (!len)
		return 0;
	if (okp_ksyms.ftrace_location_range) {
		site = okp_ksyms.ftrace_location_range(addr, addr + len - 1 + OKP_FTRACE_CALL_LEAD);
		return site ? site - OKP_FTRACE_CALL_LEAD : 0;
	}
	for (a = addr; a < addr + len && !site; a++)
		site = okp_seam_ftrace_site(a);
	return site;
}

void __weak okp_arch_before_text_stop(void)
{
}

/* Where ftrace patches its sites in stop_machine (riscv64), arming or disarming one stops
 * every CPU: okp_arch_before_text_stop() first. */
int okp_seam_ftrace_arm(okp_addr_t site, int ipmodify)
{
	struct ftrace_ops *ops = ipmodify ? &okp_ftrace_ipmodify_ops : &okp_ftrace_ops;
	int ret;

	okp_arch_before_text_stop();
	ret = ftrace_set_filter_ip(ops, site + OKP_FTRACE_CALL_LEAD, 0, 0);

	if (ret) {
		pr_err("ftrace refused the site %pS: %d\n", (void *)site, ret);
		return ret;
	}
	if (okp_ftrace_users[ipmodify]++ == 0) {
		ret = register_ftrace_function(ops);
		if (ret) {
			pr_err("cannot register okprobes' ftrace ops%s: %d\n",
			       ipmodify ? " (IPMODIFY: livepatch or another tool may own the function)" : "",
			       ret);
			okp_ftrace_users[ipmodify]--;
			ftrace_set_filter_ip(ops, site + OKP_FTRACE_CALL_LEAD, 1, 0);
		}
	}
	return ret;
}

void okp_seam_ftrace_disarm(okp_addr_t site, int ipmodify)
{
	struct ftrace_ops *ops = ipmodify ? &okp_ftrace_ipmodify_ops : &okp_ftrace_ops;

	okp_arch_before_text_stop();
	/* Unregister before emptying the filter: an empty filter means "trace everything". */
	if (--okp_ftrace_users[ipmodify] == 0)
		unregister_ftrace_function(ops);
	ftrace_set_filter_ip(ops, site + OKP_FTRACE_CALL_LEAD, 1, 0);
}

#else /* neither DYNAMIC_FTRACE_WITH_REGS nor WITH_ARGS */

okp_addr_t okp_ftrace_entry_point(void)
{
	return 0;
}

okp_addr_t okp_ftrace_ipmodify_entry_point(void)
{
	return 0;
}

okp_addr_t okp_seam_ftrace_site(okp_addr_t addr)
{
	return 0;
}

okp_addr_t okp_seam_ftrace_site_in(okp_addr_t addr, unsigned long len)
{
	return 0;
}

int okp_seam_ftrace_arm(okp_addr_t site, int ipmodify)
{
	return -EOPNOTSUPP;
}

void okp_seam_ftrace_disarm(okp_addr_t site, int ipmodify)
{
}

#endif
