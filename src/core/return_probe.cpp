// SPDX-License-Identifier: GPL-2.0
// Return probes: pools of return stubs, the entry handler that arms one, the return path
// the stub's trampoline calls, registration and unregistration. See return_probe.h.
#include "core/return_probe.h"

#include "core/cpu_frames.h"
#include "core/hit_path.h"
#include "core/registry.h"
#include "core/string.h"
#include "arch/arch_contract.h"

namespace okp {

namespace {

// A pool: the stubs a return probe owns and the instances they stand for.
struct ReturnPool {
  okp_kretprobe* rp;
  ReturnPool* next;           // g_pools link: registry lock to change, RCU to read
  StubStack free;
  u32 nstubs;
  u32 in_use;                 // atomic: instances in use now
  usize instance_size;
  u32* stub_index;            // [nstubs]
  u8* instances;              // nstubs * instance_size
};

// A stub's life: kFree (on a pool's or the global free stack) -> kArmed (a frame of a
// registered probe points at it) -> kFree at its return or reclaim. Unregister turns kArmed
// into kDetached: the frame still returns through it, with no handler, and the stub goes to
// the global stack. Every move out of kArmed or kDetached is one atomic exchange or
// compare-exchange, so a return and a reclaim never both release a stub.
enum StubLife : u32 { kFree = 0, kArmed = 1, kDetached = 2 };

// Per stub, global and never freed (see return_probe.h).
struct StubState {
  ReturnPool* pool;                // while registered; followed only by whoever moves it out
                                   // of kArmed (an RCU read side keeps the pool alive)
  okp_kretprobe_instance* instance;  // in the pool; null once its probe is unregistered
  unsigned long ret_addr;          // the real return address of the frame using it
  unsigned long frame;             // the stack slot that held ret_addr (now holds the stub)
  void* task;                      // the task whose frame it is (only compared, never followed)
  u32 next_free;                   // StubStack link (index + 1)
  u32 life;                        // StubLife
};

constinit StubState g_stubs[arch::kReturnStubs > 0 ? arch::kReturnStubs : 1] = {};
constinit StubStack g_free_stubs;  // stubs no pool holds
constinit bool g_stubs_ready = false;  // registry lock

// Every registered probe's pool, for the task-free reclaim: changed under the registry lock,
// read under RCU (a pool is freed only after unregister's grace period).
constinit ReturnPool* g_pools = nullptr;
// At least the number of kDetached stubs (raised before a stub is detached, lowered after it
// is freed). While it is above zero the task-free reclaim scans every stub, not just the
// registered pools'.
constinit long g_detached_live = 0;

OKP_HIT_PATH okp_kretprobe* return_probe_of(okp_kprobe* kp) {
  return reinterpret_cast<okp_kretprobe*>(reinterpret_cast<u8*>(kp) -
                                          __builtin_offsetof(okp_kretprobe, kp));
}

OKP_HIT_PATH ReturnPool* pool_of(const okp_kretprobe* rp) {
  return static_cast<ReturnPool*>(__atomic_load_n(&rp->okp_pool, __ATOMIC_ACQUIRE));
}

OKP_HIT_PATH bool rp_disabled(const okp_kretprobe* rp) {
  return __atomic_load_n(&rp->kp.flags, __ATOMIC_RELAXED) &
         (OKP_KPROBE_FLAG_DISABLED | OKP_KPROBE_FLAG_GONE);
}

OKP_HIT_PATH void count_rp_miss(okp_kretprobe* rp, okp_kretprobe_miss_cause cause) {
  __atomic_fetch_add(&rp->nmissed_by[cause], 1, __ATOMIC_RELAXED);
  if (cause == OKP_RP_MISS_POOL_EMPTY) __atomic_fetch_add(&rp->nmissed, 1, __ATOMIC_RELAXED);
}

// A frame the arch proves will never return through its stub (on x86-64: its stack slot holds
// neither the stub nor the index the stub pushes, or is unreadable, the stack of an exited
// task) is gone: the instance can be reclaimed.
OKP_HIT_PATH bool frame_is_gone(u32 index) {
  return !arch::frame_may_return(g_stubs[index].frame, index);
}

// Moves a stub in state `life` whose frame is gone to kFree; true if it did.
OKP_HIT_PATH bool try_reclaim(u32 index, StubLife life) {
  StubState& st = g_stubs[index];
  if (__atomic_load_n(&st.life, __ATOMIC_ACQUIRE) != life || !frame_is_gone(index)) return false;
  u32 expected = life;
  return __atomic_compare_exchange_n(&st.life, &expected, kFree, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_RELAXED);
}

// A reclaimed stub (its frame will never return) goes where a return would put it: back to
// its probe's pool (it was kArmed: the caller's RCU read side or registry lock keeps the pool
// alive), or to the global stack (it was kDetached).
OKP_HIT_PATH void give_back_reclaimed(u32 index, u32 was) {
  if (was == kDetached) {
    g_free_stubs.push(index);
    __atomic_fetch_sub(&g_detached_live, 1, __ATOMIC_RELEASE);
    return;
  }
  ReturnPool* pool = g_stubs[index].pool;
  __atomic_fetch_sub(&pool->in_use, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&pool->rp->nreclaimed, 1, __ATOMIC_RELAXED);
  pool->free.push(index);
}

// The frame of stub index, if it belongs to task, can never return: task is being freed.
void reclaim_if_owned_by(u32 index, const void* task) {
  StubState& st = g_stubs[index];
  u32 was = __atomic_load_n(&st.life, __ATOMIC_ACQUIRE);
  if (was == kFree || __atomic_load_n(&st.task, __ATOMIC_RELAXED) != task) return;
  if (__atomic_compare_exchange_n(&st.life, &was, kFree, false, __ATOMIC_ACQ_REL,
                                  __ATOMIC_RELAXED))
    give_back_reclaimed(index, was);
}

u32 reclaim_pool(ReturnPool* pool) {
  u32 n = 0;
  for (u32 k = 0; k < pool->nstubs; ++k) {
    const u32 index = pool->stub_index[k];
    if (!try_reclaim(index, kArmed)) continue;
    give_back_reclaimed(index, kArmed);
    ++n;
  }
  return n;
}

OKP_HIT_PATH void note_peak(okp_kretprobe* rp, u32 in_use) {
  unsigned int peak = __atomic_load_n(&rp->peak, __ATOMIC_RELAXED);
  while (in_use > peak &&
         !__atomic_compare_exchange_n(&rp->peak, &peak, in_use, true, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED)) {
  }
}

}  // namespace

OKP_HIT_PATH void arm_return(okp_kprobe* kp, okp_regs* regs, void* task) {
  okp_kretprobe* rp = return_probe_of(kp);
  ReturnPool* pool = pool_of(rp);
  if (!pool) return;
  auto* pt = reinterpret_cast<pt_regs*>(regs);
  u32 index = 0;
  // An empty pool is a miss, as in the kernel's kretprobes: no reclaim scan here (it would
  // walk the pool on every miss, in the trap). Frames that will never return are reclaimed
  // when their task is freed and at unregister.
  if (!pool->free.pop(&index)) {
    count_rp_miss(rp, OKP_RP_MISS_POOL_EMPTY);
    return;
  }
  StubState& st = g_stubs[index];
  const okp_addr_t frame = arch::return_frame(regs);
  st.frame = frame;
  st.ret_addr = arch::return_address(regs);
  okp_kretprobe_instance* ri = st.instance;
  ri->rp = rp;
  ri->ret_addr = st.ret_addr;
  ri->frame = frame;
  ri->task = task;
  st.task = task;
  if (rp->entry_handler && rp->entry_handler(ri, pt)) {
    pool->free.push(index);
    return;
  }
  arch::set_return_address(regs, arch::return_stub_address(index));
  // Published last: a reclaimer that sees kArmed also sees the slot armed.
  __atomic_store_n(&st.life, kArmed, __ATOMIC_RELEASE);
  note_peak(rp, __atomic_add_fetch(&pool->in_use, 1, __ATOMIC_RELAXED));
}

OKP_HIT_PATH int return_entry(okp_kprobe* kp, pt_regs* regs) {
  arm_return(kp, reinterpret_cast<okp_regs*>(regs), okp_seam_current_task());
  return 0;
}

namespace {

OKP_HIT_PATH bool stub_take_global(u32* index) { return g_free_stubs.pop(index); }

// Detached stubs (their probe unregistered while a frame still pointed at them) go back to
// the global stack when their frame returns; frames that never return are found here.
void reclaim_detached() {
  for (u32 i = 0; i < arch::kReturnStubs; ++i) {
    if (try_reclaim(i, kDetached)) give_back_reclaimed(i, kDetached);
  }
}

void init_stubs() {
  if (g_stubs_ready) return;
  for (u32 i = arch::kReturnStubs; i > 0; --i) g_free_stubs.push(i - 1);
  g_stubs_ready = true;
}

// Returns stubs [0, n) of pool to the global stack (registration failed).
OKP_HIT_PATH void release_stubs(ReturnPool* pool, u32 n) {
  for (u32 k = 0; k < n; ++k) {
    StubState& st = g_stubs[pool->stub_index[k]];
    st.pool = nullptr;
    st.instance = nullptr;
    g_free_stubs.push(pool->stub_index[k]);
  }
}

unsigned int default_maxactive() {
  const unsigned int twice = 2 * okp_seam_possible_cpus();
  return twice > 10 ? twice : 10;
}

// Registry lock held. Readers that already hold the pool keep walking from it: its next
// stays valid until the grace period before it is freed.
void unlink_pool(ReturnPool* pool) {
  for (ReturnPool** link = &g_pools; *link; link = &(*link)->next) {
    if (*link != pool) continue;
    __atomic_store_n(link, pool->next, __ATOMIC_RELEASE);
    return;
  }
}

ErrorOr<ReturnPool*> make_pool(okp_kretprobe* rp, u32 nstubs) {
  const usize instance_size =
      (sizeof(okp_kretprobe_instance) + rp->data_size + 7) & ~static_cast<usize>(7);
  const usize bytes = sizeof(ReturnPool) + nstubs * sizeof(u32) + nstubs * instance_size;
  auto* mem = static_cast<u8*>(okp_seam_alloc(bytes, OKP_GFP_KERNEL));
  if (!mem) return Error(Errno::kNoMem, "out of memory for the instance pool");
  auto* pool = reinterpret_cast<ReturnPool*>(mem);
  pool->rp = rp;
  pool->nstubs = nstubs;
  pool->instance_size = instance_size;
  pool->stub_index = reinterpret_cast<u32*>(mem + sizeof(ReturnPool));
  pool->instances = mem + sizeof(ReturnPool) + nstubs * sizeof(u32);
  return pool;
}

// Called without the registry lock. The refusal is logged and kept for debugfs `refused`,
// as a probe's are.
int refuse(okp_kretprobe* rp, Errno code, const char* reason) {
  if (rp) copy_string(rp->kp.okp_reason, OKP_REASON_MAX, reason);
  char line[OKP_REASON_MAX + 64];
  okp_seam_format(line, sizeof(line), "refused return probe: %s (%d)", reason,
                  to_kernel_errno(code));
  okp_seam_log(OKP_LOG_ERR, line);
  registry().record_refusal(rp ? &rp->kp : nullptr, to_kernel_errno(code));
  return to_kernel_errno(code);
}

// Gives pool `want` stubs from the global stack (registry lock held); -ENOSPC, with none
// taken, when there are not enough.
int take_stubs(ReturnPool* pool, u32 want) {
  u32 got = 0;
  for (; got < want; ++got) {
    u32 index;
    if (!stub_take_global(&index)) {
      reclaim_detached();
      if (!stub_take_global(&index)) break;
    }
    pool->stub_index[got] = index;
    StubState& st = g_stubs[index];
    st.instance = reinterpret_cast<okp_kretprobe_instance*>(pool->instances + got * pool->instance_size);
    st.life = kFree;
    st.pool = pool;
  }
  if (got < want) {
    release_stubs(pool, got);
    return to_kernel_errno(Errno::kNoSpc);
  }
  for (u32 k = want; k > 0; --k) pool->free.push(pool->stub_index[k - 1]);
  return 0;
}

// Publishes the pool and registers the entry probe (registry lock held). On failure the pool
// is unlinked and its stubs returned; the caller waits a grace period, then frees it (and
// finishes *rollback's unregister).
int publish(Locked lock, okp_kretprobe* rp, ReturnPool* pool, okp_kprobe** rollback) {
  pool->next = g_pools;
  __atomic_store_n(&g_pools, pool, __ATOMIC_RELEASE);
  rp->nmissed = 0;
  rp->peak = 0;
  rp->nreclaimed = 0;
  for (auto& m : rp->nmissed_by) m = 0;
  rp->kp.pre_handler = return_entry;
  rp->kp.post_handler = nullptr;
  __atomic_store_n(&rp->okp_pool, pool, __ATOMIC_RELEASE);
  const int err = registry().register_probe_locked(lock, &rp->kp, /*return_probe=*/true, rollback);
  if (err) {
    __atomic_store_n(&rp->okp_pool, nullptr, __ATOMIC_RELEASE);
    unlink_pool(pool);
    release_stubs(pool, pool->nstubs);
  }
  return err;
}

}  // namespace

OKP_HIT_PATH void StubStack::push(u32 index) {
  u64 old = __atomic_load_n(&head, __ATOMIC_ACQUIRE);
  u64 next;
  do {
    __atomic_store_n(&g_stubs[index].next_free, static_cast<u32>(old), __ATOMIC_RELAXED);
    next = (((old >> 32) + 1) << 32) | (index + 1);
  } while (!__atomic_compare_exchange_n(&head, &old, next, true, __ATOMIC_RELEASE,
                                        __ATOMIC_ACQUIRE));
}

OKP_HIT_PATH bool StubStack::pop(u32* index) {
  u64 old = __atomic_load_n(&head, __ATOMIC_ACQUIRE);
  u64 next;
  do {
    const u32 top = static_cast<u32>(old);
    if (!top) return false;
    // May read a link that a racing pop+push changed: the tag makes that exchange fail.
    const u32 link = __atomic_load_n(&g_stubs[top - 1].next_free, __ATOMIC_RELAXED);
    next = (((old >> 32) + 1) << 32) | link;
  } while (!__atomic_compare_exchange_n(&head, &old, next, true, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE));
  *index = static_cast<u32>(old) - 1;
  return true;
}

bool is_return_entry(const okp_kprobe* kp) { return kp->pre_handler == return_entry; }

// Functions a return probe must not be put on: they never return to their caller, so the
// frame's instance would be taken and its handler never run. Each arch adds its own (the
// context switch, which returns into another task; arch/<arch>).
const char* return_probe_unsafe(const char* symbol) {
  static constexpr const char* kUnsafe[][2] = {
      {"do_exit", "it never returns to its caller"},
      {"do_group_exit", "it never returns to its caller"},
      {"make_task_dead", "it never returns to its caller"},
      {"kthread_exit", "it never returns to its caller"},
      {"kthread_complete_and_exit", "it never returns to its caller"},
      {"panic", "it never returns to its caller"},
      {"__stack_chk_fail", "it never returns to its caller"},
      {"machine_power_off", "it never returns to its caller"},
      {"machine_halt", "it never returns to its caller"},
      {"machine_restart", "it never returns to its caller"},
      {"cpu_startup_entry", "it never returns to its caller"},
  };
  // symbol is "name+0xoff/0xsize": compare the name up to '+' or a '.' suffix.
  usize n = 0;
  while (symbol[n] && symbol[n] != '+' && symbol[n] != '.') ++n;
  if (const char* why = arch::return_probe_unsafe_here(symbol, n)) return why;
  for (const auto& entry : kUnsafe) {
    const char* name = entry[0];
    usize i = 0;
    while (i < n && name[i] && name[i] == symbol[i]) ++i;
    if (i == n && !name[i]) return entry[1];
  }
  return nullptr;
}

void describe_return_probe(const okp_kretprobe* rp, char* buf, usize len) {
  const ReturnPool* pool = pool_of(rp);
  const unsigned long pool_empty = rp->nmissed_by[OKP_RP_MISS_POOL_EMPTY];
  const unsigned long reentry = rp->nmissed_by[OKP_RP_MISS_REENTRY] + rp->kp.nmissed_by[OKP_MISS_REENTRY];
  okp_seam_format(buf, len,
                  " maxactive=%u in_use=%u peak=%u missed_pool_empty=%lu missed_reentry=%lu "
                  "missed_disabled=%lu reclaimed=%lu%s",
                  pool ? pool->nstubs : 0, pool ? __atomic_load_n(&pool->in_use, __ATOMIC_RELAXED) : 0,
                  rp->peak, pool_empty, reentry, rp->nmissed_by[OKP_RP_MISS_DISABLED],
                  rp->nreclaimed, pool_empty ? " advice=\"raise maxactive\"" : "");
}

}  // namespace okp

using namespace okp;

// The trampoline's callback (preemption off: an RCU read side, see src/kernel/return.c): runs the return
// handler for the frame of stub `index` and answers the real return address.
extern "C" OKP_HIT_PATH unsigned long okp_core_on_return(struct okp_regs* regs, unsigned long index,
                                            struct okp_cpu_state* cpu) {
  if (index >= arch::kReturnStubs) {
    okp_seam_invariant_failed("return stub index out of range", __FILE__, __LINE__);
    return 0;
  }
  StubState& st = g_stubs[index];
  const unsigned long ret_addr = st.ret_addr;  // before the stub can be reused
  arch::set_instruction_pointer(regs, ret_addr);
  const u32 was = __atomic_exchange_n(&st.life, kFree, __ATOMIC_ACQ_REL);
  if (was == kFree) {
    okp_seam_invariant_failed("a live frame's return stub was not in use", __FILE__, __LINE__);
    return ret_addr;
  }
  if (was == kDetached) {  // the probe is gone: no handler, the stub goes back to the global stack
    g_free_stubs.push(static_cast<u32>(index));
    __atomic_fetch_sub(&g_detached_live, 1, __ATOMIC_RELEASE);
    return ret_addr;
  }
  // kArmed: unregister's grace period waits for us (preemption is off) before it frees the pool.
  ReturnPool* pool = st.pool;
  okp_kretprobe* rp = pool->rp;
  if (cpu->depth > 0) {
    count_rp_miss(rp, OKP_RP_MISS_REENTRY);
  } else if (rp_disabled(rp)) {
    count_rp_miss(rp, OKP_RP_MISS_DISABLED);
  } else if (rp->handler && push_frame(cpu, nullptr, kHandlers)) {
    rp->handler(st.instance, reinterpret_cast<pt_regs*>(regs));
    pop_frame(cpu);
  }
  __atomic_fetch_sub(&pool->in_use, 1, __ATOMIC_RELAXED);
  pool->free.push(static_cast<u32>(index));
  return ret_addr;
}

extern "C" int okp_core_register_kretprobe(struct okp_kretprobe* rp) {
  if (arch::kReturnStubs == 0) {
    char reason[OKP_REASON_MAX];
    okp_seam_format(reason, sizeof(reason), "return probes are not implemented on %s yet",
                    OKP_ARCH_NAME);
    return refuse(rp, Errno::kOpNotSupp, reason);
  }
  if (!rp) return refuse(nullptr, Errno::kInval, "NULL return probe");
  if (pool_of(rp)) return refuse(rp, Errno::kExist, "this okp_kretprobe is already registered");
  if (rp->data_size > 4096)
    return refuse(rp, Errno::kInval, "data_size over 4096 bytes per instance");
  const unsigned int want = rp->maxactive > 0 ? static_cast<unsigned int>(rp->maxactive)
                                              : default_maxactive();
  if (want > arch::kReturnStubs)
    return refuse(rp, Errno::kNoSpc, "maxactive exceeds okprobes' return stubs (4096)");

  // The pool, its stubs and the entry probe are published together under the lock.
  ReturnPool* pool = nullptr;
  okp_kprobe* rollback = nullptr;
  const char* own_refusal = nullptr;  // refused here, not by the entry's registration
  int err;
  {
    RegistryGuard guard;
    init_stubs();
    auto made = make_pool(rp, want);
    if (made.is_error()) {
      err = made.error().kernel_errno();
      own_refusal = made.error().reason();
    } else {
      pool = made.value();
      err = take_stubs(pool, want);
      if (err) own_refusal = "not enough free return stubs for maxactive";
      else err = publish(guard, rp, pool, &rollback);
    }
  }
  if (!err) return 0;
  if (pool) {
    // A task-free scan may still walk the unlinked pool (its stubs are all free: it does
    // nothing with them, but it reads them); a refused entry's record waits too.
    okp_seam_synchronize_rcu();
    RegistryGuard guard;
    if (rollback) registry().finish_unregister(guard, &rollback, 1);
    okp_seam_free(pool);
  }
  // The entry's own refusals were logged and kept by the registry.
  return own_refusal ? refuse(rp, static_cast<Errno>(-err), own_refusal) : err;
}

namespace okp {
namespace {

// Unregister, top half (registry lock held): after this no CPU runs the entry handler (once
// the grace period passed), frames that never return gave their instance back, and frames
// still inside will return through a detached stub.
void detach_return_probe(Locked, ReturnPool* pool) {
  reclaim_pool(pool);
  // The count goes up before each detach, so a task-free reclaim that no longer finds this
  // pool still scans for them.
  for (u32 k = 0; k < pool->nstubs; ++k) {
    StubState& st = g_stubs[pool->stub_index[k]];
    __atomic_fetch_add(&g_detached_live, 1, __ATOMIC_ACQ_REL);
    u32 armed = kArmed;
    if (!__atomic_compare_exchange_n(&st.life, &armed, kDetached, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
      __atomic_fetch_sub(&g_detached_live, 1, __ATOMIC_RELEASE);
  }
  unlink_pool(pool);
}

// Bottom half, after the grace period (registry lock held): return paths and reclaims that
// took a stub out of kArmed have finished, nobody follows this pool.
void free_return_probe(Locked, okp_kretprobe* rp, ReturnPool* pool) {
  for (u32 k = 0; k < pool->nstubs; ++k) {
    StubState& st = g_stubs[pool->stub_index[k]];
    st.instance = nullptr;
    st.pool = nullptr;
  }
  u32 index;
  while (pool->free.pop(&index)) g_free_stubs.push(index);
  __atomic_store_n(&rp->okp_pool, nullptr, __ATOMIC_RELEASE);
}

}  // namespace
}  // namespace okp

// num return probes, one RCU grace period for all of them (waited for unlocked).
extern "C" void okp_core_unregister_kretprobes(struct okp_kretprobe** rps, int num) {
  constexpr int kBatch = 64;  // kprobe pointers per grace period, on the stack
  for (int base = 0; base < num; base += kBatch) {
    const int n = num - base < kBatch ? num - base : kBatch;
    okp_kprobe* kps[kBatch] = {};
    bool any = false;
    {
      RegistryGuard guard;
      for (int i = 0; i < n; ++i) {
        okp_kretprobe* rp = rps[base + i];
        if (!rp || !pool_of(rp)) continue;
        bool repeated = false;
        for (int j = 0; j < i && !repeated; ++j) repeated = rps[base + j] == rp;
        if (repeated) continue;
        kps[i] = &rp->kp;
        registry().detach_probes(guard, &kps[i], 1);
        detach_return_probe(guard, pool_of(rp));
        any = true;
      }
    }
    if (!any) continue;
    okp_seam_synchronize_rcu();
    ReturnPool* pools[kBatch] = {};
    {
      RegistryGuard guard;
      registry().finish_unregister(guard, kps, n);
      for (int i = 0; i < n; ++i) {
        if (!kps[i]) continue;
        okp_kretprobe* rp = rps[base + i];
        pools[i] = pool_of(rp);
        free_return_probe(guard, rp, pools[i]);
      }
    }
    for (ReturnPool* pool : pools) okp_seam_free(pool);
  }
}

extern "C" void okp_core_unregister_kretprobe(struct okp_kretprobe* rp) {
  okp_core_unregister_kretprobes(&rp, 1);
}

extern "C" int okp_core_set_kretprobe_disabled(struct okp_kretprobe* rp, int off) {
  if (!rp || !pool_of(rp)) return to_kernel_errno(Errno::kInval);
  return okp_core_set_kprobe_disabled(&rp->kp, off);
}

extern "C" OKP_HIT_PATH unsigned long okp_core_kretprobe_find_ret_addr(void* task, unsigned long addr) {
  const okp_addr_t base = arch::return_stub_address(0);
  if (arch::kReturnStubs == 0 || addr < base ||
      addr >= base + arch::kReturnStubs * arch::kReturnStubSize)
    return addr;
  const u32 index = static_cast<u32>((addr - base) / arch::kReturnStubSize);
  const StubState& st = g_stubs[index];
  if (__atomic_load_n(&st.life, __ATOMIC_ACQUIRE) == kFree) return addr;
  if (task && __atomic_load_n(&st.task, __ATOMIC_RELAXED) != task) return addr;
  return st.ret_addr;
}

// A task is freed (its last reference is gone, RCU read side held by the glue): every frame
// it still held an instance for is dead (it exited inside the function, or unwound past it).
// Without this, an exited task's instance stays taken while its cached stack still holds
// the stub. Walks the registered pools, and every stub only while detached frames exist.
extern "C" void okp_core_on_task_free(void* task) {
  for (ReturnPool* pool = __atomic_load_n(&g_pools, __ATOMIC_ACQUIRE); pool;
       pool = __atomic_load_n(&pool->next, __ATOMIC_ACQUIRE)) {
    for (u32 k = 0; k < pool->nstubs; ++k) reclaim_if_owned_by(pool->stub_index[k], task);
  }
  if (__atomic_load_n(&g_detached_live, __ATOMIC_ACQUIRE) <= 0) return;
  for (u32 i = 0; i < arch::kReturnStubs; ++i) {
    if (__atomic_load_n(&g_stubs[i].life, __ATOMIC_RELAXED) == kDetached)
      reclaim_if_owned_by(i, task);
  }
}

// Stubs in use now (all pools and detached ones): KUnit and the stress test check it returns
// to zero once every probe is unregistered and every frame returned.
extern "C" unsigned long okp_core_return_stubs_in_use(void) {
  unsigned long n = 0;
  for (u32 i = 0; i < arch::kReturnStubs; ++i)
    n += __atomic_load_n(&g_stubs[i].life, __ATOMIC_RELAXED) != kFree;
  return n;
}
