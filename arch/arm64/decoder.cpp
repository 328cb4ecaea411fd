// SPDX-License-Identifier: GPL-2.0
// arm64 instruction decoding arrives with the arm64 breakpoint backend. Until then the
// self-check has nothing to verify, and says so rather than pretending.
#include "seam/okp_seam.h"

extern "C" int okp_arch_decoder_selfcheck(void) {
  okp_seam_log(OKP_LOG_INFO, "arm64: no instruction decoder yet (breakpoint backend pending)");
  return 0;
}
