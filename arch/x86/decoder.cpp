// SPDX-License-Identifier: GPL-2.0
#include "arch/x86/decoder.h"

#include <Zydis/Decoder.h>
#include <Zydis/Mnemonic.h>

#include "seam/kernel_services.h"
#include "seam/core_entries.h"

namespace okp::x86 {

namespace {

// Xen's and KVM's "emulate prefix" (asm/emulate_prefix.h): `ud2; .ascii "xen"` (or "kvm")
// before an instruction the hypervisor emulates when the ud2 traps (xen_cpuid's cpuid). The
// kernel's decoder and its kprobes take the prefix and that instruction as one; Zydis sees a
// ud2, then the letters as instructions of their own (78 65 = js), so a probe's int3 could land
// on the letters or the emulated instruction and break the hypervisor's match. Found by the
// differential decoding of Debian's vmlinux (xen_cpuid+0x1d, tests/vm/modules/sweep_decode.c).
constexpr usize kEmulatePrefixLength = 5;
bool is_emulate_prefix(const u8* b, usize avail) {
  if (avail < kEmulatePrefixLength || b[0] != 0x0f || b[1] != 0x0b) return false;
  return (b[2] == 'x' && b[3] == 'e' && b[4] == 'n') || (b[2] == 'k' && b[3] == 'v' && b[4] == 'm');
}

ErrorOr<DecodedInsn> decode_one(const u8* bytes, usize avail) {
  // Decoder state is a few bytes: initialise per call rather than share a global that two
  // CPUs registering probes would race on.
  ZydisDecoder decoder;
  if (ZYAN_FAILED(ZydisDecoderInit(&decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)))
    return Error(Errno::kInval, "decoder initialisation failed");
  ZydisDecodedInstruction insn;
  if (ZYAN_FAILED(ZydisDecoderDecodeInstruction(&decoder, nullptr, bytes, avail, &insn)))
    return Error(Errno::kIlSeq, "bytes do not decode to an x86-64 instruction");
  DecodedInsn out;
  out.length = insn.length;
  out.rip_relative = (insn.attributes & ZYDIS_ATTRIB_IS_RELATIVE) &&
                     insn.raw.modrm.mod == 0 && insn.raw.modrm.rm == 5;
  out.relative_branch = (insn.attributes & ZYDIS_ATTRIB_IS_RELATIVE) && !out.rip_relative;
  // A relative branch's only immediate is its displacement (Zydis sign-extends it).
  if (out.relative_branch && insn.raw.imm[0].is_relative)
    out.branch_displacement = insn.raw.imm[0].value.s;
  out.mnemonic = ZydisMnemonicGetString(insn.mnemonic);
  return out;
}

}  // namespace

ErrorOr<DecodedInsn> decode(const u8* bytes, usize avail) {
  if (!is_emulate_prefix(bytes, avail)) return decode_one(bytes, avail);
  // One instruction: the ud2 (what runs, and what the planner refuses as a BUG/WARN site)
  // with the prefix's letters and the emulated instruction after it.
  auto ud2 = decode_one(bytes, avail);
  if (ud2.is_error()) return ud2;
  auto emulated = decode_one(bytes + kEmulatePrefixLength, avail - kEmulatePrefixLength);
  if (emulated.is_error()) return emulated.release_error();
  DecodedInsn out = ud2.value();
  out.length = static_cast<u8>(kEmulatePrefixLength + emulated.value().length);
  return out;
}

}  // namespace okp::x86

namespace {

struct KnownInsn {
  okp::u8 bytes[8];
  okp::u8 length;
  bool rip_relative;
  bool relative_branch;
};

// Instructions every x86-64 kernel function is made of; if any decodes wrongly the decoder
// build is broken and no probe may trust it.
constexpr KnownInsn kKnown[] = {
    {{0xf3, 0x0f, 0x1e, 0xfa}, 4, false, false},              // endbr64
    {{0xe8, 0x00, 0x00, 0x00, 0x00}, 5, false, true},         // call rel32 (__fentry__)
    {{0x0f, 0x1f, 0x44, 0x00, 0x00}, 5, false, false},        // nopl 0x0(%rax,%rax,1)
    {{0x48, 0x8b, 0x05, 0x10, 0x00, 0x00, 0x00}, 7, true, false},  // mov rax, [rip+0x10]
    {{0x55}, 1, false, false},                                // push rbp
    {{0x74, 0x05}, 2, false, true},                           // je +5
    {{0xc3}, 1, false, false},                                // ret
};

}  // namespace

extern "C" int okp_arch_decoder_selfcheck(void) {
  for (const KnownInsn& k : kKnown) {
    auto r = okp::x86::decode(k.bytes, sizeof(k.bytes));
    if (r.is_error() || r.value().length != k.length || r.value().rip_relative != k.rip_relative ||
        r.value().relative_branch != k.relative_branch) {
      okp_seam_log(OKP_LOG_ERR, "x86 decoder self-check failed: Zydis build is unusable");
      return okp::to_kernel_errno(okp::Errno::kInval);
    }
  }
  // The trap-path walk follows branch displacements: je -2 must land on itself.
  constexpr okp::u8 kJeSelf[] = {0x74, 0xfe};
  auto je = okp::x86::decode(kJeSelf, sizeof(kJeSelf));
  if (je.is_error() || je.value().branch_displacement != -2) {
    okp_seam_log(OKP_LOG_ERR, "x86 decoder self-check failed: branch displacement decoded wrongly");
    return okp::to_kernel_errno(okp::Errno::kInval);
  }
  return 0;
}
