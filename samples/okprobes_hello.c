// SPDX-License-Identifier: GPL-2.0
/*
 * The smallest okprobes client: links against okprobes.ko's exports and refuses to load if
 * the okprobes it runs with speaks another API than the header it was built with.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <okprobes/okprobes.h>

static int __init okprobes_hello_init(void)
{
	unsigned int loaded = okp_api_version();

	if (loaded != OKP_API_VERSION) {
		pr_err("built for okprobes API %u, loaded okprobes speaks %u\n", OKP_API_VERSION, loaded);
		return -EPROTO;
	}
	pr_info("linked against okprobes API %u\n", loaded);
	return 0;
}

static void __exit okprobes_hello_exit(void)
{
	pr_info("bye\n");
}

module_init(okprobes_hello_init);
module_exit(okprobes_hello_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("okprobes sample client: API handshake");
