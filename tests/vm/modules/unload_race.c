// SPDX-License-Identifier: GPL-2.0
/*
 * Module unload races (issue 15), driven by tests/vm/scripts/unload_race.sh: probes on
 * okp_unload_target.ko (unload_target.c) while it is unloaded and loaded again in a loop.
 *
 * The registrar thread arms one generation of probes whenever okp_unload_target is loaded:
 *   steady_int3    okp_kprobe on okp_unload_target:okp_ut_fn (notrace: an int3)
 *   steady_ftrace  okp_kprobe on okp_unload_target:okp_ut_other (an ftrace entry)
 *   ret            okp_kretprobe on okp_unload_target:okp_ut_sleep (a sleeper returns from it
 *                  during the unload, an exiter exits inside it)
 * and publishes the generation number in the parameter `armed`. When the module goes, the
 * probes turn GONE; the registrar prints their counts once:
 *   OKP-UNLOAD-RACE gen=G int3_hits=N ftrace_hits=N int3_missed=N ftrace_missed=N
 *         ret_entries=N ret_returns=N ret_missed=N ret_reclaimed=N
 * and keeps the GONE probes registered (so debugfs list shows them [GONE]) until the next
 * generation is armed, or the module unloads.
 * The churn thread meanwhile registers and unregisters a probe on okp_ut_fn (sharing the
 * steady probe's address: an aggregate) and a return probe on okp_ut_other as fast as it can,
 * whatever state the target is in; its refusals are counted by errno.
 * Module exit: everything unregistered, then the return stubs in use must come back to what
 * they were at load (every instance returned or reclaimed):
 *   OKP-UNLOAD-RACE-END generations=G churn_ok=N churn_refused=N errnos=E:N,... stubs_before=N
 *         stubs_after=N reclaimed_total=N
 */
#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <okprobes/okprobes.h>

static int armed;
module_param(armed, int, 0444);
MODULE_PARM_DESC(armed, "the generation whose probes are armed now (0: none yet)");

#define TARGET "okp_unload_target:"

struct generation {
	struct okp_kprobe steady_int3, steady_ftrace;
	struct okp_kretprobe ret;
	bool registered, reported;
	int number;
};

static struct generation gens[2];
static struct task_struct *registrar, *churner;
static atomic_long_t ret_entries[2], ret_returns[2];
static unsigned long stubs_before, reclaimed_total;

#define NERRNO 64
static atomic_long_t churn_ok, churn_refused, churn_errno[NERRNO + 1];

static int steady_pre(struct okp_kprobe *p, struct pt_regs *regs)
{
	return 0;
}
NOKPROBE_SYMBOL(steady_pre);

static int ret_entry(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	struct okp_kretprobe *rp = okp_get_kretprobe(ri);

	atomic_long_inc(&ret_entries[rp == &gens[1].ret]);
	return 0;
}
NOKPROBE_SYMBOL(ret_entry);

static int ret_handler(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	struct okp_kretprobe *rp = okp_get_kretprobe(ri);

	atomic_long_inc(&ret_returns[rp == &gens[1].ret]);
	return 0;
}
NOKPROBE_SYMBOL(ret_handler);

static int arm(struct generation *g, int number)
{
	int ret;

	memset(&g->steady_int3, 0, sizeof(g->steady_int3));
	memset(&g->steady_ftrace, 0, sizeof(g->steady_ftrace));
	memset(&g->ret, 0, sizeof(g->ret));
	atomic_long_set(&ret_entries[g == &gens[1]], 0);
	atomic_long_set(&ret_returns[g == &gens[1]], 0);
	g->steady_int3.symbol_name = TARGET "okp_ut_fn";
	g->steady_int3.pre_handler = steady_pre;
	g->steady_ftrace.symbol_name = TARGET "okp_ut_other";
	g->steady_ftrace.pre_handler = steady_pre;
	g->ret.kp.symbol_name = TARGET "okp_ut_sleep";
	g->ret.entry_handler = ret_entry;
	g->ret.handler = ret_handler;
	g->ret.maxactive = 4;
	ret = okp_register_kprobe(&g->steady_int3);
	if (ret)
		return ret;
	ret = okp_register_kprobe(&g->steady_ftrace);
	if (ret) {
		okp_unregister_kprobe(&g->steady_int3);
		return ret;
	}
	ret = okp_register_kretprobe(&g->ret);
	if (ret) {
		okp_unregister_kprobe(&g->steady_ftrace);
		okp_unregister_kprobe(&g->steady_int3);
		return ret;
	}
	g->registered = true;
	g->reported = false;
	g->number = number;
	return 0;
}

static void disarm(struct generation *g)
{
	if (!g->registered)
		return;
	okp_unregister_kretprobe(&g->ret);
	okp_unregister_kprobe(&g->steady_ftrace);
	okp_unregister_kprobe(&g->steady_int3);
	reclaimed_total += g->ret.nreclaimed;
	g->registered = false;
}

static bool gone(struct generation *g)
{
	return (READ_ONCE(g->steady_int3.flags) & OKP_KPROBE_FLAG_GONE) &&
	       (READ_ONCE(g->steady_ftrace.flags) & OKP_KPROBE_FLAG_GONE) &&
	       (READ_ONCE(g->ret.kp.flags) & OKP_KPROBE_FLAG_GONE);
}

static int registrar_fn(void *data)
{
	int number = 0, cur = -1;

	while (!kthread_should_stop()) {
		if (cur < 0 || (gens[cur].registered && gens[cur].reported)) {
			int next = cur < 0 ? 0 : !cur;

			/* A new generation, once the target is back; the GONE one goes after it. */
			if (!arm(&gens[next], number + 1)) {
				if (cur >= 0)
					disarm(&gens[cur]);
				cur = next;
				number++;
				WRITE_ONCE(armed, number);
			} else {
				msleep(5);	/* the target is away; each refusal is logged */
			}
		} else if (gone(&gens[cur]) && !gens[cur].reported) {
			struct generation *g = &gens[cur];

			pr_info("OKP-UNLOAD-RACE gen=%d int3_hits=%lu ftrace_hits=%lu int3_missed=%lu ftrace_missed=%lu ret_entries=%ld ret_returns=%ld ret_missed=%d ret_reclaimed=%lu\n",
				g->number, g->steady_int3.nhit, g->steady_ftrace.nhit,
				g->steady_int3.nmissed, g->steady_ftrace.nmissed,
				atomic_long_read(&ret_entries[cur]), atomic_long_read(&ret_returns[cur]),
				g->ret.nmissed, g->ret.nreclaimed);
			g->reported = true;
		}
		usleep_range(500, 1000);
	}
	return 0;
}

static int churn_pre(struct okp_kprobe *p, struct pt_regs *regs)
{
	return 0;
}
NOKPROBE_SYMBOL(churn_pre);

static int churn_ret(struct okp_kretprobe_instance *ri, struct pt_regs *regs)
{
	return 0;
}
NOKPROBE_SYMBOL(churn_ret);

static void count_refusal(int ret)
{
	atomic_long_inc(&churn_refused);
	atomic_long_inc(&churn_errno[clamp(-ret, 0, NERRNO)]);
}

static int churner_fn(void *data)
{
	static struct okp_kprobe kp;
	static struct okp_kretprobe rp;
	int ret;

	while (!kthread_should_stop()) {
		memset(&kp, 0, sizeof(kp));
		kp.symbol_name = TARGET "okp_ut_fn";
		kp.pre_handler = churn_pre;
		ret = okp_register_kprobe(&kp);
		if (ret) {
			count_refusal(ret);
			/* the target is away (each refusal is logged): try again soon, not at once */
			msleep(10);
			continue;
		} else {
			atomic_long_inc(&churn_ok);
			udelay(20);
			okp_unregister_kprobe(&kp);
		}
		memset(&rp, 0, sizeof(rp));
		rp.kp.symbol_name = TARGET "okp_ut_other";
		rp.handler = churn_ret;
		rp.maxactive = 8;
		ret = okp_register_kretprobe(&rp);
		if (ret) {
			count_refusal(ret);
		} else {
			atomic_long_inc(&churn_ok);
			udelay(20);
			okp_unregister_kretprobe(&rp);
		}
		usleep_range(2000, 4000);	/* each refusal is logged: keep the console readable */
	}
	return 0;
}

static int __init okp_unload_race_init(void)
{
	stubs_before = okp_return_stubs_in_use();
	registrar = kthread_run(registrar_fn, NULL, "okp_ur_reg");
	if (IS_ERR(registrar))
		return PTR_ERR(registrar);
	churner = kthread_run(churner_fn, NULL, "okp_ur_churn");
	if (IS_ERR(churner)) {
		kthread_stop(registrar);
		return PTR_ERR(churner);
	}
	return 0;
}

static void __exit okp_unload_race_exit(void)
{
	char errnos[256] = "";
	size_t len = 0;
	unsigned long after;
	int i;

	kthread_stop(churner);
	kthread_stop(registrar);
	disarm(&gens[0]);
	disarm(&gens[1]);
	/* Instances come back after a grace period: wait up to 5 s. */
	for (i = 0; i < 500 && okp_return_stubs_in_use() > stubs_before; i++)
		msleep(10);
	after = okp_return_stubs_in_use();
	for (i = 0; i <= NERRNO; i++)
		if (atomic_long_read(&churn_errno[i]) && len < sizeof(errnos) - 24)
			len += scnprintf(errnos + len, sizeof(errnos) - len, "%s%d:%ld", len ? "," : "",
					 -i, atomic_long_read(&churn_errno[i]));
	pr_info("OKP-UNLOAD-RACE-END generations=%d churn_ok=%ld churn_refused=%ld errnos=%s stubs_before=%lu stubs_after=%lu reclaimed_total=%lu\n",
		armed, atomic_long_read(&churn_ok), atomic_long_read(&churn_refused),
		len ? errnos : "none", stubs_before, after, reclaimed_total);
}

module_init(okp_unload_race_init);
module_exit(okp_unload_race_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("okprobes test: probes on a module that is unloaded and reloaded while hit");
