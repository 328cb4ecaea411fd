/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Checks of okprobes' C++ core, written once and run twice: in-kernel by the KUnit suite
 * (okp_core_kunit.c) and on the host by GoogleTest (tests/host). Each check reports through
 * the expect callback, which becomes KUNIT_EXPECT_* or ADD_FAILURE_AT.
 */
#ifndef OKP_CORE_CHECKS_H
#define OKP_CORE_CHECKS_H

#ifdef __cplusplus
extern "C" {
#endif

struct okp_check_ctx {
	void *runner; /* struct kunit *, or the host harness */
	void (*expect)(void *runner, int ok, const char *expr, const char *file, int line);
};

void okp_check_hash_table_find(struct okp_check_ctx *ctx);
void okp_check_hash_table_aggregate_order(struct okp_check_ctx *ctx);
void okp_check_hash_table_remove_keeps_readers_chain(struct okp_check_ctx *ctx);
void okp_check_hash_table_spread(struct okp_check_ctx *ctx);
void okp_check_parse_switch(struct okp_check_ctx *ctx);
void okp_check_error_or_try(struct okp_check_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif /* OKP_CORE_CHECKS_H */
