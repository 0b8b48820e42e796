#include "sim/compile/collective.hpp"

#include "sim/compile/collective_algorithm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

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

// Where part `j` lies in a buffer that holds the parts rank-relative: part `own` (this chip's)
// first, then the ones after it, wrapping round. Every chip of a ring then reads and writes
// the block of step s at the same address of its HBM, so chips that run alike see the same
// HBM traffic (models/system/symmetry.hpp).
uint64_t rotated_offset(uint64_t total, uint64_t parts, uint64_t own, uint64_t j) {
  const uint64_t at = part(total, parts, j).first, origin = part(total, parts, own).first;
  return at >= origin ? at - origin : total - origin + at;
}

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
    const auto own = [&](int64_t step) {  // a decomposed reduce-scatter's own block of a step
      return ph.own_blocks.empty() ? std::vector<SemWait>{} : ph.own_blocks[static_cast<size_t>(step)];
    };
    arrivals_.clear();
    for (int64_t s = 0; s + 1 < n; ++s) {
      Instruction send{
          IciOp{}, layer_, s == 0 ? (ph.own_blocks.empty() ? before : own(0)) : std::vector<SemWait>{}, {}};
      for (const Way& way : ways) {
        if (s > 0) send.waits.push_back({ph.reduce ? way.sum : way.recv, done_before + static_cast<uint64_t>(s)});
        // Block sent at step s: reduce-scatter passes on the partial sum it just added;
        // all-gather passes on what it received (after a reduce-scatter, starting with the
        // block it finished).
        const int64_t first = ph.after_reduce ? r + way.dir : r;
        const uint64_t block = mod(first - way.dir * s, n);
        const uint64_t size = part(way.bytes, static_cast<uint64_t>(n), block).second;
        // Read from this chip's rank-relative place of the block, written to the receiver's.
        const auto at = [&](int64_t rank) {
          return way.base + rotated_offset(way.bytes, static_cast<uint64_t>(n), mod(rank, n), block);
        };
        std::get<IciOp>(send.op).copies.push_back(
            hbm_copy(ph.members[mod(r + way.dir, n)], size, way.recv, way.dir, at(r), at(r + way.dir)));
      }
      ici_.instructions.push_back(std::move(send));
      std::vector<SemWait>& in = arrivals_.emplace_back();
      for (const Way& way : ways) in.push_back({way.recv, done_before + static_cast<uint64_t>(s + 1)});
      if (!ph.reduce) continue;
      for (const Way& way : ways)
        add_received(way, mod(r - way.dir * (s + 1), n), n, done_before + static_cast<uint64_t>(s + 1),
                     own(s + 1));
    }
    std::vector<SemWait> done;
    done.reserve(ways.size());
    for (const Way& way : ways) done.push_back({ph.reduce ? way.sum : way.recv, done_before + static_cast<uint64_t>(n - 1)});
    return done;
  }

  // The last ring phase's receipts: step s's messages are in once arrivals()[s] hold.
  const std::vector<std::vector<SemWait>>& arrivals() const { return arrivals_; }

  // The next instance: the same phases again, on the same semaphores.
  void next_instance() {
    ++instance_;
    phase_ = 0;
  }

  // Every member sends each other member its share at once; done when n - 1 messages are in.
  // The members are taken by their offset from this chip in the group's grid (offsets in the
  // grid's chip order), and the blocks are held rank-relative: the k-th offset's block at the
  // k-th place, read from there and written to the receiver's place for this chip's offset
  // from it. Chips that a translation of the torus maps onto each other then send alike: the
  // same sizes in the same order, from and to the same addresses (models/system/symmetry.hpp).
  std::vector<SemWait> all_to_all(const GroupView& g, std::vector<SemWait> before) {
    const uint64_t n = g.members.size();
    if (n < 2) return before;
    // Half-way round a ring both ways are as short: chips on even and odd coordinate sums
    // take opposite ones, which balances the links across any bisection.
    int64_t parity = 0;
    for (int64_t x : t_.config.ici.build_topology().coords(t_.chip)) parity += x;
    const int tie = parity % 2 ? -1 : +1;
    const std::vector<int64_t> own = g.grid.coords(g.local);
    const auto offset = [&](uint64_t k, int64_t sign, const std::vector<int64_t>& from) {  // from +- the k-th
      std::vector<int64_t> x = g.grid.coords(static_cast<int>(k));
      for (size_t d = 0; d < x.size(); ++d) x[d] = from[d] + sign * x[d];
      return static_cast<uint64_t>(g.grid.chip_at(x));
    };
    const std::vector<int64_t> origin(own.size(), 0);
    std::vector<uint64_t> place(n + 1, 0);  // where the k-th offset's block starts
    for (uint64_t k = 0; k < n; ++k)
      place[k + 1] = place[k] + (c_.send_bytes.empty() ? part(c_.bytes, n, k).second
                                                       : c_.send_bytes[offset(k, +1, own)]);
    const int recv = own_semaphore("recv");
    Instruction send{IciOp{}, layer_, std::move(before), {}};
    for (uint64_t k = 1; k < n; ++k)  // to the k-th offset; this chip is the receiver's offset -k
      std::get<IciOp>(send.op).copies.push_back(hbm_copy(g.members[offset(k, +1, own)],
                                                         place[k + 1] - place[k], recv, tie, place[k],
                                                         place[offset(k, -1, origin)]));
    ici_.instructions.push_back(std::move(send));
    return {{recv, (instance_ + 1) * (n - 1)}};
  }

  // A collective-permute: this chip sends `bytes` to the next member and receives as much from
  // the one before: round the group's ring, or along its members in order (`line`: the
  // pipeline's stages, whose ends only send or only receive).
  std::vector<SemWait> permute(const GroupView& g, std::vector<SemWait> before) {
    const int64_t n = static_cast<int64_t>(g.members.size());
    if (n < 2) return before;
    std::vector<int> order = g.members;
    int64_t r = g.local;
    if (!c_.line) {
      order = g.chips_of(g.grid.ring_order());
      r = std::find(order.begin(), order.end(), g.members[static_cast<size_t>(g.local)]) - order.begin();
    }
    const bool sends = c_.sends && (!c_.line || r + 1 < n), receives = c_.receives && (!c_.line || r > 0);
    const auto [recv, received] = receive_semaphore();
    if (sends) {
      const int to = order[mod(r + 1, n)];
      IciCopy copy = hbm_copy(to, c_.bytes, -1, +1, 0, 0);
      copy.recv_sem =
          c_.channel.empty() ? t_.program.semaphores[static_cast<size_t>(recv)] : channel_semaphore();
      ici_.instructions.push_back({IciOp{{copy}}, layer_, std::move(before), {}});
      before = {};
    }
    if (!receives) return before;
    return {{recv, received + 1}};
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

  // The semaphore `what` of this collective (`L<layer>.<name>.<what>`), declared by its first
  // instance and shared by the later ones (counts accumulate).
  int own_semaphore(const char* what) {
    if (phase_sems_.empty())
      phase_sems_.push_back({{t_.new_semaphore(fmt::format("L{}.{}.{}", layer_, c_.name, what)), -1}});
    return phase_sems_[0][0].first;
  }
  std::string channel_semaphore() const { return c_.channel + ".recv"; }
  // Where a permute's receipts are counted, and how many there were before this instance: its
  // own semaphore, or its channel's (declared once per program, counting every occurrence).
  std::pair<int, uint64_t> receive_semaphore() {
    if (c_.channel.empty()) return {own_semaphore("recv"), instance_};
    if (!t_.channels) throw std::logic_error("a permute with a channel needs CollectiveTarget::channels");
    auto it = t_.channels->try_emplace(c_.channel, -1, 0).first;
    if (it->second.first < 0 && c_.receives) it->second.first = t_.new_semaphore(channel_semaphore());
    const std::pair<int, uint64_t> now = it->second;
    if (c_.receives) ++it->second.second;
    return now;
  }

  // A message to chip `to`: `bytes` from `offset` of the send area into `dst_offset` of the
  // receive area (HBM to HBM), counted on semaphore `recv` (-1: named by the caller).
  IciCopy hbm_copy(int to, uint64_t bytes, int recv, int tie, uint64_t offset, uint64_t dst_offset) const {
    IciCopy copy;
    copy.to = to;
    copy.bytes = bytes;
    if (recv >= 0) copy.recv_sem = t_.program.semaphores[static_cast<size_t>(recv)];
    copy.tie = tie;
    copy.via_hbm = true;
    copy.src_addr = t_.hbm_base + offset;
    copy.dst_addr = t_.hbm_base + c_.bytes + dst_offset;
    return copy;
  }

  // The received partial sum of `block` is added to this chip's copy of the same block, once
  // `received` messages have arrived one way.
  void add_received(const Way& way, uint64_t block, int64_t n, uint64_t received,
                    const std::vector<SemWait>& own) {
    const uint64_t w = dtype_storage_bytes(c_.dtype, 1);  // the readers reject int4 here: whole bytes
    const uint64_t elems = std::max<uint64_t>(1, part(way.bytes, static_cast<uint64_t>(n), block).second / w);
    const int64_t cols = static_cast<int64_t>(std::min<uint64_t>(elems, 1024));
    VpuOp add{VectorKind::add, static_cast<int64_t>((elems + cols - 1) / cols), cols, c_.dtype};
    Instruction sum{add, layer_, {{way.recv, received}}, {way.sum}};
    sum.waits.insert(sum.waits.end(), own.begin(), own.end());
    stream_of(t_.program, {EngineKind::vpu, 0}).instructions.push_back(std::move(sum));
  }

  CollectiveTarget& t_;
  const CollectiveWork& c_;
  int layer_;
  Stream& ici_;
  size_t phase_ = 0;
  uint64_t instance_ = 0;
  std::vector<std::vector<std::pair<int, int>>> phase_sems_;  // per phase, per direction: recv, sum
  std::vector<std::vector<SemWait>> arrivals_;  // the last ring phase: what step s's receipts are
};

}  // namespace

std::optional<RingPhase> WholeRing::single_ring(const CollectiveStep& step) const {
  const GroupView& g = step.group;
  const auto order = g.grid.ring_order();
  const size_t rank = static_cast<size_t>(std::find(order.begin(), order.end(), g.local) - order.begin());
  return RingPhase{g.chips_of(order), rank, 0, false, false, dirs_, {}};
}

std::vector<SemWait> WholeRing::lower(RingEmitter& emit, const CollectiveStep& step,
                                      std::vector<SemWait> ready) const {
  const CollectiveWork& c = step.work;
  RingPhase ph = *single_ring(step);
  ph.bytes = c.bytes;
  const bool rs = c.kind != CollectiveKind::all_gather, ag = c.kind != CollectiveKind::reduce_scatter;
  std::vector<SemWait> done = std::move(ready);
  if (rs) {
    ph.reduce = true;
    done = emit.ring(ph, done);
  }
  if (ag) {
    ph.reduce = false;
    ph.after_reduce = rs;
    done = emit.ring(ph, done);
  }
  return done;
}

GroupView group_view(const CollectiveWork& c, const IciConfig& ici, int chip) {
  if (c.group.empty()) {
    GroupView all{{}, ici.build_topology(), chip};
    for (int i = 0; i < all.grid.chips(); ++i) all.members.push_back(i);
    return all;
  }
  const auto at = std::find(c.group.members.begin(), c.group.members.end(), chip);
  if (at == c.group.members.end())
    throw std::logic_error(fmt::format("collective '{}': chip {} is not in its group", c.name, chip));
  return {c.group.members,
          Topology(c.group.dims, c.group.wraps ? Topology::Wrap::torus : Topology::Wrap::mesh),
          static_cast<int>(at - c.group.members.begin())};
}

uint64_t collective_hbm_bytes(const CollectiveWork& c) {
  uint64_t sent = c.bytes;
  if (!c.send_bytes.empty()) {
    sent = 0;
    for (uint64_t b : c.send_bytes) sent += b;
  }
  return 2 * std::max(sent, c.bytes);
}

namespace {

// A decomposed all-gather or reduce-scatter (sim/compile/overlap.hpp): the algorithm's single
// ring phase, step by step. An all-gather's result comes in blocks: this chip's own (ready with
// its input), then what each step brings.
Producer decomposed(Lowering& low, const CollectiveAlgorithm& algorithm, const CollectiveStep& step,
                    const Producer& input, std::vector<SemWait> ready) {
  std::optional<RingPhase> ph = algorithm.single_ring(step);
  if (!ph) throw std::logic_error("collective '" + step.work.name + "': decomposed, but not a single ring");
  ph->bytes = step.work.bytes;
  ph->reduce = step.work.kind == CollectiveKind::reduce_scatter;
  Producer out;
  if (ph->reduce) {
    ph->own_blocks = input.chunks;
    for (auto& block : ph->own_blocks) block.insert(block.end(), input.also.begin(), input.also.end());
    out.also = low.ring(*ph, std::move(ready));
    return out;
  }
  out.chunks.push_back(ready);
  low.ring(*ph, std::move(ready));
  for (const auto& arrived : low.arrivals()) out.chunks.push_back(arrived);
  return out;
}

}  // namespace

Producer emit_collective(CollectiveTarget& t, const CollectiveWork& c, const Producer& input,
                         bool decompose) {
  const IciConfig& ici = t.config.ici;
  if (ici.topology == IciTopologyKind::none)
    throw InputError(fmt::format("{}: collective '{}' needs a multi-chip system, but ici.topology is none "
                                 "(e.g. --set ici.topology=ring --set ici.dims=4)",
                                 c.source, c.name));
  const GroupView group = group_view(c, ici, t.chip);
  const int layer = static_cast<int>(t.program.layers.size());
  t.program.layers.push_back({c.name, static_cast<int64_t>(c.bytes), 1, 1, c.dtype, c.repeat, 0, c.source, LayerKind::collective});
  if (!c.send_bytes.empty() && c.send_bytes.size() != group.members.size())
    throw InputError(fmt::format("{}: collective '{}': {} send sizes for {} chips", c.source, c.name,
                                 c.send_bytes.size(), group.members.size()));

  const CollectiveAlgorithm& algorithm = CollectiveRegistry::instance().get(ici.algorithm, "key 'ici.algorithm'");
  Lowering low(t, c, layer);
  std::vector<SemWait> done;
  for (int64_t instance = 0; instance < c.repeat; ++instance, low.next_instance()) {
    // What instance i's first messages wait for: instance i of the input (all of it when the
    // counts differ).
    Instruction probe{IciOp{}, layer, {}, {}};
    if (!decompose || c.kind != CollectiveKind::reduce_scatter) input.add_wait(probe, instance, c.repeat);
    std::vector<SemWait> ready = probe.waits;
    if (decompose) return decomposed(low, algorithm, {c, group}, input, std::move(ready));
    if (c.kind == CollectiveKind::all_to_all)
      done = low.all_to_all(group, ready);
    else if (c.kind == CollectiveKind::permute)
      done = low.permute(group, ready);
    else
      done = algorithm.lower(low, {c, group}, ready);
  }
  Producer out;
  out.also = done;
  return out;
}

}  // namespace systolic::compile_detail
