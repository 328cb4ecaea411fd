/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The seam: the one interface between okprobes' freestanding C++ core and the kernel glue,
 * split by direction and concern:
 *   seam/types.h            plain data both sides pass (addresses, text info, the register
 *                           frame mirrored from pt_regs, per-CPU hit state)
 *   seam/kernel_services.h  core -> kernel: what the core asks of the kernel (src/kernel/)
 *   seam/core_entries.h     kernel -> core: the core's entry points (src/core/)
 *   seam/jump_services.h    the jump optimizer's, both ways, only with OKP_JUMP_PROBES
 *                           (kernel side under src/kernel/arch/x86/)
 * Core files include the part they use; the glue includes this whole index (through
 * src/kernel/okp_glue.h).
 */
#ifndef OKP_SEAM_H
#define OKP_SEAM_H

#include "seam/types.h"
#include "seam/kernel_services.h"
#include "seam/core_entries.h"
#ifdef OKP_JUMP_PROBES
#include "seam/jump_services.h"
#endif

#endif /* OKP_SEAM_H */
