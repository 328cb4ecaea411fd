/* SPDX-License-Identifier: GPL-2.0 */
/* The return stubs' count and size, defined once for return_stubs.S and probe_arch.h. */
#ifndef OKP_RISCV_RETURN_STUBS_H
#define OKP_RISCV_RETURN_STUBS_H

#define OKP_RET_STUBS 4096
#define OKP_RET_STUB_SIZE 16
/* Where a stub's jal links: the stub's address plus this. */
#define OKP_RET_STUB_LINK 12

#endif
