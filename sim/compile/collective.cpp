#include "sim/compile/collective.hpp"

#include "sim/compile/collective_algorithm.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/common/error.hpp"
#include "models/ici/topology.hpp"

namespace systolic::compile_detail {
namespace {

Stream& stream_of(Program& p, EngineId id) {
  for (Stream& s : p.streams)
    if (s.engine == id) return s;
  p.streams.push_back({id, {}});
  return p.streams.back();
}

// Bytes [offset, offset + size) of part `j` when `total` is cut into `parts` nearly equal parts.
std::pair<uint64_t, uint64_t> part(uint64_t total, uint64_t parts, uint64_t j) {
  const uint64_t q = total / parts, rem = total % parts;
  return {j * q + std::min(j, rem), q + (j < rem ? 1 : 0)};
}

uint64_t mod(int64_t a, int64_t n) { return static_cast<uint64_t>(((a % n) + n) % n); }

class Lowering final : public RingEmitter {
 public:
  Lowering(CollectiveTarget& t, const CollectiveWork& c, int layer)
      : t_(t), c_(c), layer_(layer), ici_(stream_of(t.program, {EngineKind::ici, 0})) {
    stream_of(t.program, {EngineKind::vpu, 0});
  }

  // Emits the phase's steps; each step's messages wait for `before` (step 0) or for the
  // step before; returns the conditions that hold once this chip has all it receives.
  std::vector<SemWait> ring(const RingPhase& ph, std::vector<SemWait> before) override {
    const int64_t n = static_cast<int64_t>(ph.members.size());
    if (n < 2) return before;
    const std::vector<Way> ways = ways_of(ph);
    const uint64_t done_before = instance_ * static_cast<uint64_t>(n - 1);  // earlier instances' counts
    const int64_t r = static_cast<int64_t>(ph.rank);
    for (int64_t s = 0; s + 1 < n; ++s) {
      Instruction send{IciOp{}, layer_, s == 0 ? before : std::vector<SemWait>{}, {}};
      for (const Way& way : ways) {
        if (s > 0) send.waits.push_back({ph.reduce ? way.sum : way.recv, done_before + static_cast<uint64_t>(s)});
        // Block sent at step s: reduce-scatter passes on the partial sum it just added;
        // all-gather passes on what it received (after a reduce-scatter, starting with the
        // block it finished).
        const int64_t first = ph.after_reduce ? r + way.dir : r;
        const auto [offset, size] = part(way.bytes, static_cast<uint64_t>(n), mod(first - way.dir * s, n));
        std::get<IciOp>(send.op).copies.push_back(
            hbm_copy(ph.members[mod(r + way.dir, n)], size, way.recv, way.dir, way.base + offset));
      }
      ici_.instructions.push_back(std::move(send));
      if (!ph.reduce) continue;
      for (const Way& way : ways) add_received(way, mod(r - way.dir * (s + 1), n), n, done_before + static_cast<uint64_t>(s + 1));
    }
    std::vector<SemWait> done;
    done.reserve(ways.size());
    for (const Way& way : ways) done.push_back({ph.reduce ? way.sum : way.recv, done_before + static_cast<uint64_t>(n - 1)});
    return done;
  }

  // The next instance: the same phases again, on the same semaphores.
  void next_instance() {
    ++instance_;
    phase_ = 0;
  }

  // Every member sends each other member its share at once; done when n - 1 messages are in.
  std::vector<SemWait> all_to_all(const Topology& topo, size_t rank, std::vector<SemWait> before) {
    const uint64_t n = static_cast<uint64_t>(topo.chips());
    if (n < 2) return before;
    // Half-way round a ring both ways are as short: chips on even and odd coordinate sums
    // take opposite ones, which balances the links across any bisection.
    int64_t parity = 0;
    for (int64_t x : topo.coords(static_cast<int>(rank))) parity += x;
    const int tie = parity % 2 ? -1 : +1;
    if (phase_sems_.empty()) phase_sems_.push_back({{t_.new_semaphore(fmt::format("L{}.{}.recv", layer_, c_.name)), -1}});
    const int recv = phase_sems_[0][0].first;
    Instruction send{IciOp{}, layer_, std::move(before), {}};
    uint64_t offset = 0;
    for (uint64_t j = 0; j < n; ++j) {
      const uint64_t bytes = c_.send_bytes.empty() ? part(c_.bytes, n, j).second : c_.send_bytes[j];
      if (j != rank) std::get<IciOp>(send.op).copies.push_back(hbm_copy(static_cast<int>(j), bytes, recv, tie, offset));
      offset += bytes;
    }
    ici_.instructions.push_back(std::move(send));
    return {{recv, (instance_ + 1) * (n - 1)}};
  }

 private:
  // One direction of a ring phase: its share of the bytes and its semaphores (sum: -1 unless
  // the phase reduces).
  struct Way {
    int dir;
    uint64_t base, bytes;
    int recv, sum;
  };

  // The phase's directions, on semaphores per phase shared by the collective's instances
  // (counts accumulate).
  std::vector<Way> ways_of(const RingPhase& ph) {
    const size_t p = phase_++;
    if (p == phase_sems_.size()) {
      std::vector<std::pair<int, int>> sems;
      for (int dir : ph.dirs) {
        const std::string tag = fmt::format("L{}.{}.p{}{}", layer_, c_.name, p, dir > 0 ? '+' : '-');
        sems.emplace_back(t_.new_semaphore(tag + ".recv"), ph.reduce ? t_.new_semaphore(tag + ".sum") : -1);
      }
      phase_sems_.push_back(std::move(sems));
    }
    std::vector<Way> ways;
    for (size_t i = 0; i < ph.dirs.size(); ++i) {
      const auto [base, bytes] = part(ph.bytes, ph.dirs.size(), i);
      ways.push_back({ph.dirs[i], base, bytes, phase_sems_[p][i].first, phase_sems_[p][i].second});
    }
    return ways;
  }

  // A message to chip `to`: `bytes` from `offset` of the send area into the same offset of
  // the receive area (HBM to HBM), counted on semaphore `recv`.
  IciCopy hbm_copy(int to, uint64_t bytes, int recv, int tie, uint64_t offset) const {
    IciCopy copy;
    copy.to = to;
    copy.bytes = bytes;
    copy.recv_sem = t_.program.semaphores[static_cast<size_t>(recv)];
    copy.tie = tie;
    copy.via_hbm = true;
    copy.src_addr = t_.hbm_base + offset;
    copy.dst_addr = t_.hbm_base + c_.bytes + offset;
    return copy;
  }

  // The received partial sum of `block` is added to this chip's copy of the same block, once
  // `received` messages have arrived one way.
  void add_received(const Way& way, uint64_t block, int64_t n, uint64_t received) {
    const uint64_t w = dtype_storage_bytes(c_.dtype, 1);  // the readers reject int4 here: whole bytes
    const uint64_t elems = std::max<uint64_t>(1, part(way.bytes, static_cast<uint64_t>(n), block).second / w);
    const int64_t cols = static_cast<int64_t>(std::min<uint64_t>(elems, 1024));
    VpuOp add{VectorKind::add, static_cast<int64_t>((elems + cols - 1) / cols), cols, c_.dtype};
    Instruction sum{add, layer_, {{way.recv, received}}, {way.sum}};
    stream_of(t_.program, {EngineKind::vpu, 0}).instructions.push_back(std::move(sum));
  }

  CollectiveTarget& t_;
  const CollectiveWork& c_;
  int layer_;
  Stream& ici_;
  size_t phase_ = 0;
  uint64_t instance_ = 0;
  std::vector<std::vector<std::pair<int, int>>> phase_sems_;  // per phase, per direction: recv, sum
};

}  // namespace

std::vector<SemWait> WholeRing::lower(RingEmitter& emit, const CollectiveStep& step,
                                      std::vector<SemWait> ready) const {
  const CollectiveWork& c = step.work;
  const auto order = step.topology.ring_order();
  const size_t rank = static_cast<size_t>(std::find(order.begin(), order.end(), step.chip) - order.begin());
  const bool rs = c.kind != CollectiveKind::all_gather, ag = c.kind != CollectiveKind::reduce_scatter;
  std::vector<SemWait> done = std::move(ready);
  if (rs) done = emit.ring({order, rank, c.bytes, true, false, dirs_}, done);
  if (ag) done = emit.ring({order, rank, c.bytes, false, rs, dirs_}, done);
  return done;
}

uint64_t collective_hbm_bytes(const CollectiveWork& c) {
  uint64_t sent = c.bytes;
  if (!c.send_bytes.empty()) {
    sent = 0;
    for (uint64_t b : c.send_bytes) sent += b;
  }
  return 2 * std::max(sent, c.bytes);
}

Producer emit_collective(CollectiveTarget& t, const CollectiveWork& c, const Producer& input) {
  const IciConfig& ici = t.config.ici;
  if (ici.topology == IciTopologyKind::none)
    throw InputError(fmt::format("{}: collective '{}' needs a multi-chip system, but ici.topology is none "
                                 "(e.g. --set ici.topology=ring --set ici.dims=4)",
                                 c.source, c.name));
  const Topology topo = ici.build_topology();
  const int layer = static_cast<int>(t.program.layers.size());
  t.program.layers.push_back({c.name, static_cast<int64_t>(c.bytes), 1, 1, c.dtype, c.repeat, 0, c.source, LayerKind::collective});
  if (!c.send_bytes.empty() && c.send_bytes.size() != static_cast<size_t>(topo.chips()))
    throw InputError(fmt::format("{}: collective '{}': {} send sizes for {} chips", c.source, c.name,
                                 c.send_bytes.size(), topo.chips()));

  const CollectiveAlgorithm& algorithm = CollectiveRegistry::instance().get(ici.algorithm, "key 'ici.algorithm'");
  Lowering low(t, c, layer);
  std::vector<SemWait> done;
  for (int64_t instance = 0; instance < c.repeat; ++instance, low.next_instance()) {
    // What instance i's first messages wait for: instance i of the input (all of it when the
    // counts differ).
    Instruction probe{IciOp{}, layer, {}, {}};
    input.add_wait(probe, instance, c.repeat);
    std::vector<SemWait> ready = probe.waits;
    if (c.kind == CollectiveKind::all_to_all)
      done = low.all_to_all(topo, static_cast<size_t>(t.chip), ready);
    else
      done = algorithm.lower(low, {c, topo, t.chip}, ready);
  }
  Producer out;
  out.also = done;
  return out;
}

}  // namespace systolic::compile_detail
