// SPDX-License-Identifier: GPL-2.0
// riscv instruction decoding arrives with the riscv breakpoint backend. Until then the
// self-check has nothing to verify, and says so rather than pretending.
#include "seam/okp_seam.h"

extern "C" int okp_arch_decoder_selfcheck(void) {
  okp_seam_log(OKP_LOG_INFO, "riscv: no instruction decoder yet (breakpoint backend pending)");
  return 0;
}
