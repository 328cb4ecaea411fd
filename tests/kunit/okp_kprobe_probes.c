// SPDX-License-Identifier: GPL-2.0
/*
 * Probes that record what their handlers saw, for the x86-64 probe suites (see
 * okp_kprobe_kunit.h), and the suites' .init/.exit.
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/ptrace.h>
#include <linux/smp.h>
#include <okprobes/okprobes.h>

#include "okp_kprobe_kunit.h"

/* The order handlers ran in: 10 * id + 1 for a pre_handler, 10 * id + 2 for a post_handler. */
int okp_t_order[16];
unsigned int okp_t_norder;

static void okp_t_log(int what)
{
	unsigned int n = READ_ONCE(okp_t_norder);

	if (n < ARRAY_SIZE(okp_t_order))
		okp_t_order[n] = what;
	WRITE_ONCE(okp_t_norder, n + 1);
}

/*
 * A word of the interrupted stack, read as an unwinder reads it: at a function's ftrace entry
 * sp + 8 is the caller's frame, where KASAN keeps a redzone (test-debug reported
 * stack-out-of-bounds for okp_kprobe_ftrace_aggregate_post's post handler).
 */
static unsigned long okp_t_top(unsigned long sp)
{
	return READ_ONCE_NOCHECK(*(unsigned long *)sp);
}

static int okp_t_pre(struct okp_kprobe *kp, struct pt_regs *regs)
{
	struct okp_t_probe *p = container_of(kp, struct okp_t_probe, kp);
	unsigned int i;

	if (p->cpu_pre) {
		p->cpu_pre[smp_processor_id()]++;
		return 0;
	}
	p->obs.pre_calls++;
	p->obs.pre_ip = regs->ip;
	p->obs.pre_sp = regs->sp;
	p->obs.pre_top = okp_t_top(regs->sp);
	p->obs.pre_flags = regs->flags;
	okp_t_log(10 * p->id + 1);
	if (p->read_args) {
		for (i = 0; i < ARRAY_SIZE(p->obs.args); i++)
			p->obs.args[i] = okp_arg(regs, i);
		p->obs.regs_args[0] = regs->di;
		p->obs.regs_args[1] = regs->si;
		p->obs.regs_args[2] = regs->dx;
		p->obs.regs_args[3] = regs->cx;
		p->obs.regs_args[4] = regs->r8;
		p->obs.regs_args[5] = regs->r9;
	}
	if (p->pre_call)
		p->obs.hook_result = p->pre_call(p->call_arg, 0);
	if (p->redirect) {
		regs->ip = p->redirect;
		return 1;
	}
	return 0;
}

static void okp_t_post(struct okp_kprobe *kp, struct pt_regs *regs, unsigned long flags)
{
	struct okp_t_probe *p = container_of(kp, struct okp_t_probe, kp);

	if (p->cpu_post) {
		p->cpu_post[smp_processor_id()]++;
		return;
	}
	p->obs.post_calls++;
	p->obs.post_ip = regs->ip;
	p->obs.post_sp = regs->sp;
	p->obs.post_top = okp_t_top(regs->sp);
	p->obs.post_top1 = okp_t_top(regs->sp + 8);
	p->obs.post_flags = regs->flags;
	okp_t_log(10 * p->id + 2);
	if (p->post_call)
		p->obs.hook_result = p->post_call(p->call_arg, 0);
}

struct okp_t_probe *okp_t_new(struct kunit *test, int id, const void *addr,
				     const char *symbol, unsigned int offset, bool pre, bool post)
{
	struct okp_t_probe *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, p);
	p->id = id;
	p->kp.addr = (okp_kprobe_opcode_t *)addr;
	p->kp.symbol_name = symbol;
	p->kp.offset = offset;
	p->kp.pre_handler = pre ? okp_t_pre : NULL;
	p->kp.post_handler = post ? okp_t_post : NULL;
	return p;
}

/* What is registered, for .exit to clean up after a failed assertion. */
static struct okp_kprobe *okp_t_live[48];

void okp_t_track(struct okp_kprobe *kp, bool live)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(okp_t_live); i++) {
		if (live && !okp_t_live[i]) {
			okp_t_live[i] = kp;
			return;
		}
		if (!live && okp_t_live[i] == kp) {
			okp_t_live[i] = NULL;
			return;
		}
	}
}

int okp_t_register(struct okp_t_probe *p)
{
	int ret = okp_register_kprobe(&p->kp);

	if (!ret)
		okp_t_track(&p->kp, true);
	return ret;
}

void okp_t_unregister(struct okp_t_probe *p)
{
	okp_t_track(&p->kp, false);
	okp_unregister_kprobe(&p->kp);
}

void okp_t_reset(struct okp_t_probe *p)
{
	memset(&p->obs, 0, sizeof(p->obs));
}

int okp_t_suite_init(struct kunit *test)
{
	okp_t_norder = 0;
	memset(okp_t_live, 0, sizeof(okp_t_live));
	return 0;
}

void okp_t_suite_exit(struct kunit *test)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(okp_t_live); i++) {
		if (okp_t_live[i]) {
			okp_unregister_kprobe(okp_t_live[i]);
			okp_t_live[i] = NULL;
		}
	}
}
