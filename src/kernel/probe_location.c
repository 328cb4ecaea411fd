// SPDX-License-Identifier: GPL-2.0
/*
 * Where a probe goes: a symbol (or an address) and an offset resolved to kernel or module text
 * that stays, and described for the core (its function, its module). Process context, under
 * the registry lock.
 */
#include <linux/module.h>
#include <linux/preempt.h>
#include <linux/string.h>

#include "okp_glue.h"

static void okp_describe(unsigned long addr, struct okp_text_info *info)
{
	okp_symbol_extent(addr, info->symbol, sizeof(info->symbol), &info->func_start,
			  &info->func_size);
}

int okp_seam_locate(const char *symbol_name, okp_addr_t addr, unsigned int offset,
		    okp_addr_t *resolved, struct okp_text_info *info, char *reason,
		    unsigned long reason_len)
{
	struct module *mod = NULL;
	int ret;

	if (symbol_name) {
		ret = okp_resolve_symbol(symbol_name, &addr, reason, reason_len);
		if (ret)
			return ret;
	}
	addr += offset;
	if (addr >= okp_ksyms._stext && addr < okp_ksyms._etext) {
		/* vmlinux text */
	} else if (okp_ksyms._sinittext && addr >= okp_ksyms._sinittext &&
		   addr < okp_ksyms._einittext) {
		snprintf(reason, reason_len, "%px is in vmlinux __init text, freed after boot",
			 (void *)addr);
		return -EINVAL;
	} else {
		preempt_disable();
		mod = okp_ksyms.__module_text_address ? okp_ksyms.__module_text_address(addr) : NULL;
		if (mod) {
			info->module_init_text = within_module_init(addr, mod);
			strscpy(info->module_name, mod->name, sizeof(info->module_name));
			if (mod->state == MODULE_STATE_GOING) {
				snprintf(reason, reason_len, "module %s is going away", mod->name);
				mod = ERR_PTR(-ENOENT);
			} else if (info->module_init_text && mod->state == MODULE_STATE_LIVE) {
				snprintf(reason, reason_len,
					 "%px is in module %s's __init text, freed when it went live",
					 (void *)addr, mod->name);
				mod = ERR_PTR(-EINVAL);
			}
		}
		preempt_enable();
		if (IS_ERR(mod))
			return PTR_ERR(mod);
		if (!mod) {
			snprintf(reason, reason_len, "%px is not kernel or module text", (void *)addr);
			return -EINVAL;
		}
	}
	info->module = mod;
	okp_describe(addr, info);
	*resolved = addr;
	return 0;
}
