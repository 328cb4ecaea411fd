/* SPDX-License-Identifier: GPL-2.0 */
/* The arm64 return stubs' count and size, defined once for return_stubs.S and probe_arch.h. */
#ifndef OKP_ARM64_RETURN_STUBS_H
#define OKP_ARM64_RETURN_STUBS_H

#define OKP_RET_STUBS 4096
#define OKP_RET_STUB_SIZE 16	/* four instructions */

#endif
