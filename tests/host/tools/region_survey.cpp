// SPDX-License-Identifier: GPL-2.0
// A survey of the jump optimizer's region check (arch/x86/detour_region.h) on a real kernel
// image, on the host: every instruction boundary of every k-th function, checked as the
// optimizer will, beside the kernel's optprobes rule (a function with any indirect jump, a
// retpoline thunk jump included, is refused whole). Static text (before alternatives), no
// exception table: a preview, not the in-guest coverage benchmark.
//
//   region_survey VMLINUX KALLSYMS [STRIDE]
// KALLSYMS: lines "ADDR TYPE NAME" (or "KS ADDR NAME") of the same kernel, KASLR allowed.
#include <algorithm>
#include <cstdio>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <elf.h>

#include "arch/x86/decoder.h"
#include "arch/x86/detour_region.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s VMLINUX KALLSYMS [STRIDE]\n", argv[0]);
    return 2;
  }
  const unsigned stride = argc > 3 ? std::atoi(argv[3]) : 50;
  std::ifstream elf(argv[1], std::ios::binary);
  std::vector<char> image((std::istreambuf_iterator<char>(elf)), {});
  auto* eh = reinterpret_cast<Elf64_Ehdr*>(image.data());
  auto* sh = reinterpret_cast<Elf64_Shdr*>(image.data() + eh->e_shoff);
  const char* names = image.data() + sh[eh->e_shstrndx].sh_offset;
  Elf64_Addr text_va = 0;
  Elf64_Off text_off = 0;
  Elf64_Xword text_size = 0;
  for (int i = 0; i < eh->e_shnum; ++i)
    if (!std::strcmp(names + sh[i].sh_name, ".text")) {
      text_va = sh[i].sh_addr, text_off = sh[i].sh_offset, text_size = sh[i].sh_size;
    }
  // Symbols (text only), relocated to the image by _stext.
  std::vector<std::pair<unsigned long, std::string>> syms;
  std::ifstream ks(argv[2]);
  std::string line;
  unsigned long stext = 0;
  while (std::getline(ks, line)) {
    std::istringstream in(line);
    std::string a, t, n;
    in >> a;
    if (a == "KS") {
      in >> a >> n;
      t = "t";
    } else {
      in >> t >> n;
    }
    if (n.empty() || (t != "t" && t != "T")) continue;
    unsigned long addr = std::strtoul(a.c_str(), nullptr, 16);
    if (n == "_stext") stext = addr;
    syms.push_back({addr, n});
  }
  std::sort(syms.begin(), syms.end());
  const unsigned long slide = stext - text_va;
  std::map<std::string, long> ours, kernel_refused_fn;
  long boundaries = 0, ok = 0, kernel_ok = 0, funcs = 0, one_insn = 0;
  for (size_t i = 0; i + 1 < syms.size(); i += stride) {
    const unsigned long start = syms[i].first - slide, size = syms[i + 1].first - syms[i].first;
    const std::string& name = syms[i].second;
    if (!size || size > 65536 || start < text_va || start + size > text_va + text_size) continue;
    if (!name.compare(0, 6, "__pfx_") || !name.compare(0, 2, ".L")) continue;
    const auto* bytes = reinterpret_cast<const okp::u8*>(image.data() + text_off + (start - text_va));
    okp::x86::FunctionText fn{start, bytes, size};
    // The boundaries, and the kernel's rule: any indirect jump refuses the whole function.
    std::vector<size_t> offs;
    bool indirect = false;
    for (size_t off = 0; off < size;) {
      auto d = okp::x86::decode(bytes + off, size - off);
      if (d.is_error()) break;
      offs.push_back(off);
      const okp::u8 b0 = bytes[off], b1 = off + 1 < size ? bytes[off + 1] : 0;
      if (b0 == 0xff && ((b1 >> 3) & 7) == 4) indirect = true;  // jmp r/m
      if (d.value().relative_branch && b0 == 0xe9) {
        const unsigned long t = start + off + d.value().length + d.value().branch_displacement + slide;
        auto it = std::upper_bound(syms.begin(), syms.end(), std::make_pair(t, std::string("\xff")));
        if (it != syms.begin() && (it - 1)->second.find("__x86_indirect_thunk") == 0) indirect = true;
      }
      off += d.value().length;
    }
    ++funcs;
    for (size_t off : offs) {
      ++boundaries;
      auto r = okp::x86::check_detour_region(fn, start + off, nullptr, 0);
      if (!r.is_error()) {
        ++ok;
        if (r.value().count == 1) ++one_insn;  // patched without waiting (core/optimizer/jump_optimizer.cpp)
        if (!indirect) ++kernel_ok;
        continue;
      }
      if (!indirect) ++kernel_refused_fn["(the kernel would try; okprobes refuses)"];
      std::string why = r.error().reason();
      if (why.rfind("not optimized: ", 0) == 0) why = why.substr(15);
      // group by kind: offsets, numbers and mnemonics folded
      std::string kind;
      for (size_t k = 0; k < why.size();) {
        if (why.compare(k, 3, "+0x") == 0 || why.compare(k, 2, "0x") == 0) {
          kind += "N";
          k += why[k] == '+' ? 3 : 2;
          while (k < why.size() && std::isxdigit(static_cast<unsigned char>(why[k]))) ++k;
        } else if (std::isdigit(static_cast<unsigned char>(why[k]))) {
          kind += "N";
          while (k < why.size() && std::isdigit(static_cast<unsigned char>(why[k]))) ++k;
        } else {
          kind += why[k++];
        }
      }
      if (kind.size() > 2 && kind[0] == 'j' && kind.find(" at N jumps to") != std::string::npos)
        kind = "jcc/jmp" + kind.substr(kind.find(" at N"));
      size_t q = kind.find('\'');
      if (q != std::string::npos && kind.find('\'', q + 1) != std::string::npos)
        kind = kind.substr(0, q) + "'X'" + kind.substr(kind.find('\'', q + 1) + 1);
      ours[kind]++;
    }
  }
  std::printf("functions %ld, instruction boundaries %ld\n", funcs, boundaries);
  std::printf("okprobes region check accepts %ld (%.1f%%)\n", ok, 100.0 * ok / boundaries);
  std::printf("  of which one instruction (no wait to patch): %ld (%.1f%%)\n", one_insn,
              ok ? 100.0 * one_insn / ok : 0.0);
  std::printf("kernel optprobes rule (no indirect jump in the function) and region ok: %ld (%.1f%%)\n",
              kernel_ok, 100.0 * kernel_ok / boundaries);
  std::printf("okprobes refusals by reason:\n");
  std::vector<std::pair<long, std::string>> v;
  for (auto& [k, n] : ours) v.push_back({n, k});
  std::sort(v.rbegin(), v.rend());
  for (auto& [n, k] : v) std::printf("  %7ld  %s\n", n, k.c_str());
  return 0;
}
