// SPDX-License-Identifier: GPL-2.0
// The fuzz targets' stand-in for the kernel glue (only what the x86 decoder, planner,
// emulator, region check and relocator call). Unlike tests/host's seam, okp_seam_read_nofault
// reads only from the windows a target declares (the fuzzed stack and data), so an emulation
// that computes a wild address gets -EFAULT as in the kernel instead of crashing the fuzzer,
// and an invariant failure aborts: the harness never asks for an impossible slot, so one is a
// finding.
#pragma once

#include <cstddef>
#include <cstdint>

#include "seam/okp_seam.h"

namespace okp_fuzz {
// Readable windows for okp_seam_read_nofault; at most 4, replaced by each call.
void set_readable(const void* const* starts, const size_t* sizes, int n);
void clear_readable();
// Reads the fuzzer's bytes as a stream of little-endian values (zero past the end).
struct Input {
  const uint8_t* data;
  size_t size;
  size_t pos = 0;
  uint8_t u8() { return pos < size ? data[pos++] : 0; }
  uint64_t u64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{u8()} << (8 * i);
    return v;
  }
  size_t left() const { return size - pos; }
};
}  // namespace okp_fuzz
