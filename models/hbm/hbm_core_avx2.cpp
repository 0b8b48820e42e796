// HbmCore's booking of whole interleave blocks four at a time, with AVX2 (book_blocks_avx2):
// the chunk() of a plain() HBM on a quad of four pseudo-channels at once (their state is
// stored field by field, one load a field), lane by lane the same arithmetic, so the same
// bookings. Compiled for AVX2 by function attribute and called only where the processor has
// it (cpu_has_avx2): the rest of the build stays baseline x86-64. On other processors no
// vector booking runs (cpu_has_avx2() is false) and book_blocks_avx2 would book one by one.
#include "models/hbm/hbm_core.hpp"

#if !defined(__x86_64__)

namespace systolic {

bool HbmCore::cpu_has_avx2() { return false; }

HbmCore::BlocksBooked HbmCore::book_blocks_avx2(Blocks& blocks, const uint64_t* ready, uint64_t* done,
                                                size_t count) {
  BlocksBooked booked;
  for (size_t i = 0; i < count; ++i) {
    done[i] = chunk<Checks::plain>(timing_, {blocks.pc}, {blocks.bank}, blocks.row, blocks.bursts, ready[i],
                                   booked.rows);
    booked.latest = std::max(booked.latest, done[i]);
    step(timing_, blocks);
  }
  return booked;
}

}  // namespace systolic

#else

#include <immintrin.h>

namespace systolic {

bool HbmCore::cpu_has_avx2() { return __builtin_cpu_supports("avx2"); }

namespace {
using V = __m256i;

[[gnu::target("avx2"), gnu::always_inline]] inline V vload(const void* p) {
  return _mm256_loadu_si256(static_cast<const V*>(p));
}
[[gnu::target("avx2"), gnu::always_inline]] inline void vstore(void* p, V v) {
  _mm256_storeu_si256(static_cast<V*>(p), v);
}
// Lane by lane, signed: book_blocks_avx2 takes a group of four this way only while its times
// are below 2^61, so that the sums it compares stay below 2^63 (a closed bank's row is -1).
[[gnu::target("avx2"), gnu::always_inline]] inline V vmax(V a, V b) {
  return _mm256_blendv_epi8(a, b, _mm256_cmpgt_epi64(b, a));
}
[[gnu::target("avx2"), gnu::always_inline]] inline V vadd(V a, V b) { return _mm256_add_epi64(a, b); }
// if_set ? a : b, lane by lane (`if_set`: all ones or zero).
[[gnu::target("avx2"), gnu::always_inline]] inline V vselect(V if_set, V a, V b) {
  return _mm256_blendv_epi8(b, a, if_set);
}
[[gnu::target("avx2"), gnu::always_inline]] inline int vlanes(V mask) {
  return _mm256_movemask_pd(_mm256_castsi256_pd(mask));
}
}  // namespace

// One function, longer than most, on purpose: the timing constants, the walk and the row
// counts stay in registers across the groups of four.
[[gnu::target("avx2")]] HbmCore::BlocksBooked HbmCore::book_blocks_avx2(Blocks& walk, const uint64_t* ready,
                                                                        uint64_t* done, size_t count) {
  const Timing& k = timing_;
  Blocks blocks = walk;  // a local: the caller's would be stored and reloaded every group
  RowCounts rows;
  uint64_t latest = 0;  // the latest data end, of the blocks booked one by one and (below) four at a time
  V latest_group = _mm256_setzero_si256();  // (below 2^61: signed)
  const uint64_t xfer = k.xfer_ps[blocks.bursts];
  const V t_cl = _mm256_set1_epi64x(static_cast<int64_t>(k.t_cl));
  const V t_rp = _mm256_set1_epi64x(static_cast<int64_t>(k.t_rp));
  const V t_act_to_data = _mm256_set1_epi64x(static_cast<int64_t>(k.t_act_to_data));
  const V t_ras = _mm256_set1_epi64x(static_cast<int64_t>(k.t_ras));
  const V t_rrd = _mm256_set1_epi64x(static_cast<int64_t>(k.t_rrd));
  const V xfer_v = _mm256_set1_epi64x(static_cast<int64_t>(xfer));
  const V row = _mm256_set1_epi64x(static_cast<int64_t>(blocks.row));
  const V closed = _mm256_set1_epi64x(-1);
  const V top_bits = _mm256_set1_epi64x(static_cast<int64_t>(uint64_t{7} << 61));
  const bool refresh_on = refresh_on_;  // else next_refresh is UINT64_MAX: never due
  // One block by chunk(), and the walk on.
  auto one = [&](size_t i) {
    done[i] = chunk<Checks::plain>(k, {blocks.pc}, {blocks.bank}, blocks.row, blocks.bursts, ready[i], rows);
    latest = std::max(latest, done[i]);
    step(k, blocks);
  };
  size_t i = 0;
  while (i < count) {
    // Four at a time from the first lane of a quad, while the four are all pseudo-channels.
    if ((blocks.index & 3) != 0 || count - i < 4 || k.pcs - blocks.index < 4) {
      one(i++);
      continue;
    }
    uint64_t* const p = blocks.pc;
    uint64_t* const b = blocks.bank;
    const V bus_free = vload(p + 4 * kBusFree), next_refresh = vload(p + 4 * kNextRefresh);
    const V rrd_ready = vload(p + 4 * kRrdReady);
    const V open_row = vload(b + 4 * kOpenRow), bank_ready = vload(b + 4 * kReady);
    const V bank_ras = vload(b + 4 * kBankRas);
    // Lane by lane: one 32-byte load of four 8-byte stores just made (the caller's issue
    // times) would wait for them to retire instead of taking them from the store buffer.
    const V now = _mm256_set_epi64x(static_cast<int64_t>(ready[i + 3]), static_cast<int64_t>(ready[i + 2]),
                                    static_cast<int64_t>(ready[i + 1]), static_cast<int64_t>(ready[i]));
    // Times of 2^61 ps or more (some 26 days of simulated time): these four one by one, in 64
    // bits unsigned as chunk() books them. A pseudo-channel's bus_free bounds its other times
    // but for a tRAS or tRRD (below 2^51 ps by HbmConfig's limits) and its next refresh.
    if (!_mm256_testz_si256(_mm256_or_si256(now, bus_free), top_bits)) {
      for (int lane = 0; lane < 4; ++lane) one(i++);
      continue;
    }
    // chunk(), both ways: a hit's data after its column command, a miss's after PRE and ACT.
    const V hit = _mm256_cmpeq_epi64(open_row, row);
    const V open = _mm256_cmpgt_epi64(open_row, closed);
    const V cmd = vmax(now, bank_ready);
    const V hit_start = vmax(bus_free, vadd(cmd, t_cl));
    V act = vmax(vadd(cmd, _mm256_and_si256(t_rp, open)), _mm256_and_si256(vadd(bank_ras, t_rp), open));
    act = vmax(act, rrd_ready);
    const V data_start = vselect(hit, hit_start, vmax(bus_free, vadd(act, t_act_to_data)));
    if (refresh_on && vlanes(_mm256_cmpgt_epi64(next_refresh, data_start)) != 0xF) {
      for (int lane = 0; lane < 4; ++lane) one(i++);  // a refresh due in a lane: one by one
      continue;
    }
    const V data_end = vadd(data_start, xfer_v);
    vstore(done + i, data_end);
    latest_group = vmax(latest_group, data_end);
    const int hits = vlanes(hit);
    rows.hits += static_cast<uint64_t>(__builtin_popcount(hits));
    rows.conflicts += static_cast<uint64_t>(__builtin_popcount(vlanes(open) & ~hits));
    const V act_ras = vadd(act, t_ras);
    vstore(p + 4 * kBusFree, data_end);
    vstore(p + 4 * kRrdReady, vselect(hit, rrd_ready, vadd(act, t_rrd)));
    vstore(p + 4 * kRasReady, vselect(hit, vload(p + 4 * kRasReady), act_ras));
    vstore(p + 4 * kBusy, vadd(vload(p + 4 * kBusy), xfer_v));
    vstore(b + 4 * kOpenRow, row);
    vstore(b + 4 * kReady, _mm256_sub_epi64(data_end, t_cl));
    vstore(b + 4 * kBankRas, vselect(hit, bank_ras, act_ras));
    i += 4;
    blocks.index += 4;
    blocks.pc += kPcQuad;
    blocks.bank += k.bank_quad_stride;
    wrap(k, blocks);
  }
  walk = blocks;
  alignas(32) uint64_t group_latest[4];
  vstore(group_latest, latest_group);
  for (const uint64_t end : group_latest) latest = std::max(latest, end);
  return {rows, latest};
}

}  // namespace systolic

#endif  // __x86_64__
