// SPDX-License-Identifier: GPL-2.0
// A survey of the riscv64 jump probe's region check and dead-register proof
// (arch/riscv/detour_region.h) on a real kernel image, on the host: every instruction boundary
// of every k-th function, checked as plan_detour will, with the kernel's jump labels
// (__jump_table) and exception table (__ex_table) as hidden edges, its BUG/WARN sites
// (__bug_table, 12-byte entries unless told) and jumps out of a function checked to land on
// another function's entry (tail calls), as the glue will. Static text (before alternatives
// and ftrace's boot-time patching): a preview, not the in-guest coverage.
//
//   riscv_detour_survey VMLINUX SYSTEM_MAP [STRIDE [BUG_ENTRY_SIZE]]
//   SURVEY_IMAGE_BASE=ffffffff80000000 riscv_detour_survey IMAGE SYMBOLS ...
// The second form reads a flat image (Debian's vmlinuz) with symbols in System.map's format
// (tests/host/tools/kallsyms_from_image.py recovers them from the image's kallsyms).
// Prints the fraction of boundaries that would become detours, the refusals by reason (offsets
// folded), the dead registers chosen, and the regions' sizes. SURVEY_NO_TAILS, _NO_TABLES,
// _NO_BUGS leave out what the glue adds (tail calls, jump tables, BUG/WARN sites);
// SURVEY_VERBOSE lists the tables not resolved and the probes with no dead register.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include <elf.h>

#include "arch/riscv/dead_register.h"
#include "arch/riscv/detour_region.h"
#include "arch/riscv/jump_table.h"

namespace {

struct Section {
  Elf64_Addr va = 0;
  Elf64_Off off = 0;
  Elf64_Xword size = 0;
};

std::string fold(std::string why) {
  if (why.rfind("not optimized: ", 0) == 0) why = why.substr(15);
  std::string kind;
  for (size_t k = 0; k < why.size();) {
    if (why.compare(k, 2, "+0") == 0 || why.compare(k, 2, "0x") == 0) {
      kind += "N";
      k += why[k] == '+' ? (why.compare(k, 3, "+0x") == 0 ? 3 : 2) : 2;
      while (k < why.size() && std::isxdigit(static_cast<unsigned char>(why[k]))) ++k;
    } else if (std::isdigit(static_cast<unsigned char>(why[k]))) {
      kind += "N";
      while (k < why.size() && std::isdigit(static_cast<unsigned char>(why[k]))) ++k;
    } else {
      kind += why[k++];
    }
  }
  return kind;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s VMLINUX SYSTEM_MAP [STRIDE]\n", argv[0]);
    return 2;
  }
  const unsigned stride = argc > 3 ? std::atoi(argv[3]) : 20;
  std::ifstream elf(argv[1], std::ios::binary);
  std::vector<char> image((std::istreambuf_iterator<char>(elf)), {});
  std::map<std::string, Section> sections;
  if (const char* base = std::getenv("SURVEY_IMAGE_BASE")) {
    // A flat image (Debian's riscv64 vmlinuz is the kernel's Image with an EFI stub header),
    // loaded at base: one section of everything.
    sections[".text"] = {std::strtoul(base, nullptr, 16), 0, image.size()};
  } else {
    if (image.size() < sizeof(Elf64_Ehdr)) return std::fprintf(stderr, "no ELF\n"), 1;
    auto* eh = reinterpret_cast<Elf64_Ehdr*>(image.data());
    if (eh->e_machine != EM_RISCV) return std::fprintf(stderr, "not a riscv vmlinux\n"), 1;
    auto* sh = reinterpret_cast<Elf64_Shdr*>(image.data() + eh->e_shoff);
    const char* names = image.data() + sh[eh->e_shstrndx].sh_offset;
    for (int i = 0; i < eh->e_shnum; ++i)
      if (sh[i].sh_type != SHT_NOBITS)
        sections[names + sh[i].sh_name] = {sh[i].sh_addr, sh[i].sh_offset, sh[i].sh_size};
  }
  const Section text = sections[".text"];
  auto at_va = [&](Elf64_Addr va) -> const char* {
    for (auto& [n, s] : sections)
      if (s.size && va >= s.va && va < s.va + s.size) return image.data() + s.off + (va - s.va);
    return nullptr;
  };

  // Text symbols from System.map, in address order, and the kernel's tables' bounds.
  std::vector<std::pair<unsigned long, std::string>> syms;
  std::map<std::string, unsigned long> table;
  std::ifstream map(argv[2]);
  std::string line;
  while (std::getline(map, line)) {
    std::istringstream in(line);
    std::string a, t, n;
    in >> a >> t >> n;
    if (n.empty()) continue;
    const unsigned long addr = std::strtoul(a.c_str(), nullptr, 16);
    if (!n.compare(0, 8, "__start_") || !n.compare(0, 7, "__stop_")) table[n] = addr;
    syms.push_back({addr, t == "t" || t == "T" ? n : ""});
  }
  std::sort(syms.begin(), syms.end());

  // Hidden edges: jump labels (relative entries: code, target, key: 16 bytes) and the
  // exception table (relative: insn, fixup, type, data: 12 bytes).
  std::vector<okp::riscv::HiddenEdge> hidden;
  auto read_table = [&](const char* name, unsigned entry) {
    const unsigned long start = table[std::string("__start_") + name];
    const unsigned long stop = table[std::string("__stop_") + name];
    for (unsigned long e = start; start && e + entry <= stop; e += entry) {
      const char* p = at_va(e);
      if (!p) break;
      int32_t from, to;
      std::memcpy(&from, p, 4);
      std::memcpy(&to, p + 4, 4);
      hidden.push_back({e + from, e + 4 + to});
    }
  };
  read_table("__jump_table", 16);
  const size_t n_jump_labels = hidden.size();
  read_table("__ex_table", 12);
  // BUG/WARN sites: relative bug_entry (bug_addr_disp first), 12 bytes with
  // CONFIG_DEBUG_BUGVERBOSE (file_disp, line, flags), 8 without (flags, padding).
  std::vector<okp_addr_t> bugs;
  {
    const unsigned long start = table["__start___bug_table"], stop = table["__stop___bug_table"];
    const unsigned entry = argc > 4 ? std::atoi(argv[4]) : 12;
    for (unsigned long e = start; start && e + entry <= stop; e += entry) {
      const char* p = at_va(e);
      if (!p) break;
      int32_t disp;
      std::memcpy(&disp, p, 4);
      bugs.push_back(e + disp);
    }
    std::sort(bugs.begin(), bugs.end());
  }
  std::sort(hidden.begin(), hidden.end(),
            [](auto& a, auto& b) { return a.from < b.from || (a.from == b.from && a.to < b.to); });


  std::map<std::string, long> reasons;
  std::map<std::string, long> dead_regs;
  long funcs = 0, boundaries = 0, ok = 0, indirect_funcs = 0, tables_seen = 0,
       tables_resolved = 0, ok_jal = 0, jal_single = 0, jal_no_register = 0;
  long region_insns[okp::riscv::kMaxRegionInsns + 1] = {};
  long sampled = 0;
  for (size_t i = 0; i + 1 < syms.size(); ++i) {
    const std::string& name = syms[i].second;
    if (name.empty() || !name.compare(0, 2, ".L") || name[0] == '$') continue;
    const unsigned long start = syms[i].first;
    size_t j = i + 1;
    while (j < syms.size() && syms[j].first == start) ++j;
    if (j == syms.size()) break;
    const unsigned long size = syms[j].first - start;
    if (!size || size > 65536 || start < text.va || start + size > text.va + text.size) continue;
    if (sampled++ % stride) continue;
    const auto* bytes = reinterpret_cast<const okp::u8*>(at_va(start));
    if (!bytes) continue;
    auto lo = std::lower_bound(hidden.begin(), hidden.end(), okp::riscv::HiddenEdge{start, 0},
                               [](auto& a, auto& b) { return a.from < b.from; });
    auto hi = std::lower_bound(hidden.begin(), hidden.end(),
                               okp::riscv::HiddenEdge{start + size, 0},
                               [](auto& a, auto& b) { return a.from < b.from; });
    okp::riscv::FunctionText fn{start, bytes, size, &*lo, static_cast<size_t>(hi - lo)};
    if (lo == hi) fn.hidden = nullptr;
    auto blo = std::lower_bound(bugs.begin(), bugs.end(), start);
    auto bhi = std::lower_bound(bugs.begin(), bugs.end(), start + size);
    fn.bug_sites = blo == bhi ? nullptr : &*blo;
    fn.n_bug_sites = static_cast<size_t>(bhi - blo);
    if (std::getenv("SURVEY_NO_BUGS")) fn.bug_sites = nullptr, fn.n_bug_sites = 0;
    auto decoded = okp::riscv::FunctionFlow::decode(fn);
    if (decoded.is_error()) continue;
    okp::riscv::FunctionFlow flow = decoded.release_value();
    // As the glue will: every jump out lands on a function's entry (none a .cold part), and
    // every jump table's dispatch it recognizes gets its targets from .rodata.
    okp_addr_t out[64];
    const size_t n_out = flow.outside_targets(out, 64);
    bool entries = n_out <= 64;
    for (size_t t = 0; entries && t < n_out; ++t) {
      auto it = std::lower_bound(syms.begin(), syms.end(), std::make_pair(out[t], std::string()));
      entries = it != syms.end() && it->first == out[t] && !it->second.empty() &&
                it->second.find(".cold") == std::string::npos;
    }
    fn.jumps_out_are_tail_calls = entries && !std::getenv("SURVEY_NO_TAILS");
    std::vector<okp::riscv::HiddenEdge> edges(lo, hi);
    if (!std::getenv("SURVEY_NO_TABLES")) {
      for (okp::u32 k = 0; k < flow.count(); ++k)
        if (flow.insn(k).flow == okp::riscv::Flow::kIndirect && okp::riscv::table_base(flow, k))
          ++tables_seen;
      // As the glue will: the tables read from the kernel (here the image), a chunk at a time.
      std::vector<okp::riscv::HiddenEdge> table(4096);
      auto read = [](void* ctx, okp_addr_t addr, okp::u8* out, okp::usize n) {
        auto& at = *static_cast<decltype(at_va)*>(ctx);
        const char* p = at(addr);
        if (!p || !at(addr + n - 1)) return false;
        std::memcpy(out, p, n);
        return true;
      };
      const size_t n = okp::riscv::resolve_jump_tables(flow, read, &at_va, table.data(),
                                                       table.size());
      std::vector<okp_addr_t> dispatches;
      for (size_t t = 0; t < n; ++t) {
        edges.push_back(table[t]);
        if (dispatches.empty() || dispatches.back() != table[t].from)
          dispatches.push_back(table[t].from);
      }
      tables_resolved += static_cast<long>(dispatches.size());
    }
    fn.hidden = edges.empty() ? nullptr : edges.data();
    fn.n_hidden = edges.size();
    {
      auto again = okp::riscv::FunctionFlow::decode(fn);
      if (again.is_error()) continue;
      flow.~FunctionFlow();
      new (&flow) okp::riscv::FunctionFlow(again.release_value());
    }
    const bool sound = flow.compute_liveness();
    ++funcs;
    if (std::getenv("SURVEY_VERBOSE") && !flow.count())
      std::printf("  %s: nothing decodes (%s)\n", name.c_str(),
                  flow.stopped_because() ? flow.stopped_because() : "empty");
    if (flow.first_unresolved_indirect() != okp::riscv::kNoInsn) ++indirect_funcs;
    for (size_t k = 0; k < flow.count(); ++k) {
      ++boundaries;
      if (!sound) {
        reasons["the kernel's tables name an address that is no instruction"]++;
        continue;
      }
      {  // The same boundary under a jal (a detour within +-1 MiB): 4 bytes, no register.
        auto j = okp::riscv::check_detour_region(flow, flow.addr_of(k), okp::riscv::kJalSize);
        if (!j.is_error()) {
          ++ok_jal;
          jal_single += j.value().count == 1;
          jal_no_register += j.value().dead == 0;
        }
      }
      auto r = okp::riscv::check_detour_region(flow, flow.addr_of(k));
      if (!r.is_error()) {
        ++ok;
        dead_regs[okp::riscv::register_name(r.value().dead)]++;
        region_insns[r.value().count]++;
        continue;
      }
      std::string kind = fold(r.error().reason());
      if (kind.rfind("no register is dead", 0) == 0) {
        // Why: everything live (a path reaches an instruction not understood, an indirect
        // jump, leaves the function), or the registers really are all in use.
        const okp::riscv::RegSet live = ~flow.live_in(k) & okp::riscv::kAllRegs;
        kind += live == 0 ? " [every register live at the probe: unknown/indirect/leaves reached]"
                          : " [some registers dead at the probe, none wherever the region leaves]";
        if (std::getenv("SURVEY_VERBOSE") && live)
          std::printf("  %s+%#lx live_in %#x\n", name.c_str(), flow.addr_of(k) - start,
                      flow.live_in(k));
      }
      reasons[kind]++;
    }
  }
  std::printf("functions %ld (every %u-th of %ld text symbols), instruction boundaries %ld\n",
              funcs, stride, sampled, boundaries);
  std::printf("jump labels %zu, exception-table entries %zu, BUG/WARN sites %zu\n",
              n_jump_labels, hidden.size() - n_jump_labels, bugs.size());
  std::printf("jump tables recognized %ld, resolved %ld\n", tables_seen, tables_resolved);
  std::printf("functions with an indirect jump left (no return, far jump nor table): %ld (%.1f%%)\n",
              indirect_funcs, 100.0 * indirect_funcs / funcs);
  std::printf("would become detours: %ld (%.1f%%)\n", ok, 100.0 * ok / boundaries);
  std::printf("  regions of 2/3/4 instructions: %ld / %ld / %ld\n", region_insns[2],
              region_insns[3], region_insns[4]);
  std::printf("under a jal (a detour within +-1 MiB): %ld (%.1f%%), of which one instruction "
              "%ld, with no dead register %ld\n", ok_jal, 100.0 * ok_jal / boundaries,
              jal_single, jal_no_register);
  std::printf("refusals by reason:\n");
  std::vector<std::pair<long, std::string>> v;
  for (auto& [k, n] : reasons) v.push_back({n, k});
  std::sort(v.rbegin(), v.rend());
  for (auto& [n, k] : v) std::printf("  %7ld (%4.1f%%)  %s\n", n, 100.0 * n / boundaries, k.c_str());
  std::printf("dead register chosen:\n");
  v.clear();
  for (auto& [k, n] : dead_regs) v.push_back({n, k});
  std::sort(v.rbegin(), v.rend());
  for (auto& [n, k] : v) std::printf("  %7ld  %s\n", n, k.c_str());
  return 0;
}
