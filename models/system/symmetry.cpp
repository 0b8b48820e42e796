#include "models/system/symmetry.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

namespace systolic {
namespace {

const char* const kAxis[] = {"x", "y", "z"};

// What the messages need of a symmetry: `hops` is the most links a message crosses (`example`
// one such message); `valid` turns false for a message to no chip of the system (the system
// check names it).
struct Traffic {
  bool valid = true;
  size_t hops = 0;
  std::string example;
};

Traffic traffic_of(const Topology& topology, const std::vector<const Program*>& programs) {
  Traffic out;
  for (int c = 0; c < topology.chips(); ++c)
    for (const Stream& s : programs[static_cast<size_t>(c)]->streams) {
      if (s.engine.kind != EngineKind::ici) continue;  // only the ICI engine sends
      for (const Instruction& i : s.instructions)
        if (const auto* op = std::get_if<IciOp>(&i.op))
          for (const IciCopy& m : op->copies) {
            if (m.to < 0 || m.to >= topology.chips() || m.to == c) {
              out.valid = false;
              return out;
            }
            const size_t hops = topology.route(c, m.to, m.tie).size();
            if (hops > out.hops) {
              out.hops = hops;
              out.example = fmt::format("chip {} sends to chip {} over {} links", c, m.to, hops);
            }
          }
    }
  return out;
}

// Whether σ moves every chip by one offset (modulo the dimensions) on a wrapped topology.
bool is_translation(const Topology& t, const std::vector<int>& chip) {
  if (!t.wraps()) return false;
  const std::vector<int64_t> by = t.coords(chip[0]);
  for (int c = 0; c < t.chips(); ++c) {
    auto x = t.coords(c);
    for (size_t d = 0; d < x.size(); ++d) x[d] += by[d];
    if (t.chip_at(x) != chip[static_cast<size_t>(c)]) return false;
  }
  return true;
}

// A translation's image of every link (it keeps each link's direction). Over one link a
// symmetry's link map is only what the messages show (ChipSymmetry::link); over several, a
// representative's router books on the images of links its own messages never cross.
void map_every_link(const Topology& t, ChipSymmetry& s) {
  s.link.assign(static_cast<size_t>(t.link_count()), -1);
  const int dims = static_cast<int>(t.dims().size());
  for (int l = 0; l < t.link_count(); ++l)
    if (t.link_exists(l))
      s.link[static_cast<size_t>(l)] = t.link(s.chip[static_cast<size_t>(t.link_source(l))],
                                              static_cast<size_t>(l / 2 % dims), l % 2 ? -1 : +1);
}

void add_candidate(const Topology& t, std::vector<ChipSymmetry>& out, std::string name,
                   std::vector<int> chip) {
  for (const ChipSymmetry& s : out)
    if (s.chip == chip) return;
  const bool translation = is_translation(t, chip);
  out.push_back({std::move(name), std::move(chip), {}, translation});
}

// Steps along the ring order and along each wrapped dimension (by each proper divisor of its
// length, so groups of chips map onto groups), and the mirror image of each dimension. With
// messages over several links only translations keep the links' traffic alike (the routers'
// order tells the directions apart, models/ici/ici_router.hpp), so only they are kept, and a
// step along two dimensions at once joins them: all-to-all's ties alternate with the parity of
// a chip's coordinates (docs/interconnect.md, section 3), which such a step keeps.
std::vector<ChipSymmetry> candidates(const Topology& t, bool multi_hop) {
  std::vector<ChipSymmetry> out;
  const int n = t.chips();
  const std::vector<int> order = t.ring_order();
  for (int step = 1; step < n; ++step) {
    if (n % step != 0) continue;
    std::vector<int> chip(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
      chip[static_cast<size_t>(order[static_cast<size_t>(i)])] = order[static_cast<size_t>((i + step) % n)];
    add_candidate(t, out, fmt::format("ring+{}", step), std::move(chip));
  }
  const size_t dims = t.dims().size();
  const auto shifted = [&](std::vector<int64_t> by) {
    std::vector<int> chip(static_cast<size_t>(n));
    for (int c = 0; c < n; ++c) {
      auto x = t.coords(c);
      for (size_t d = 0; d < dims; ++d) x[d] += by[d];
      chip[static_cast<size_t>(c)] = t.chip_at(x);
    }
    return chip;
  };
  for (size_t d = 0; d < dims; ++d) {
    const int64_t k = t.dims()[d];
    for (int64_t step = 1; step < k && t.wraps(); ++step) {
      if (k % step != 0) continue;
      std::vector<int64_t> by(dims, 0);
      by[d] = step;
      add_candidate(t, out, fmt::format("{}+{}", kAxis[d], step), shifted(by));
    }
    for (size_t e = d + 1; e < dims && multi_hop && t.wraps(); ++e) {
      std::vector<int64_t> by(dims, 0);
      by[d] = by[e] = 1;
      if (t.dims()[d] > 1 && t.dims()[e] > 1)
        add_candidate(t, out, fmt::format("{}+1{}+1", kAxis[d], kAxis[e]), shifted(by));
    }
    if (k < 2) continue;
    std::vector<int> chip(static_cast<size_t>(n));
    for (int c = 0; c < n; ++c) {
      auto x = t.coords(c);
      x[d] = k - 1 - x[d];
      chip[static_cast<size_t>(c)] = t.chip_at(x);
    }
    add_candidate(t, out, fmt::format("mirror {}", kAxis[d]), std::move(chip));
  }
  if (multi_hop) {
    out.erase(std::remove_if(out.begin(), out.end(), [](const ChipSymmetry& s) { return !s.translation; }),
              out.end());
    for (ChipSymmetry& s : out) map_every_link(t, s);
  }
  return out;
}

// Checks chip cb's program against chip ca's under σ; fills σ's link map (with `preimage`,
// its inverse). Returns "" or the first difference.
class Comparison {
 public:
  Comparison(const Topology& t, ChipSymmetry& s, const SymmetryRules& rules)
      : t_(t), s_(s), rules_(rules), preimage_(static_cast<size_t>(t.link_count()), -1) {
    if (s_.link.empty()) s_.link.assign(static_cast<size_t>(t.link_count()), -1);
    for (size_t l = 0; l < s_.link.size(); ++l)
      if (s_.link[l] >= 0) preimage_[static_cast<size_t>(s_.link[l])] = static_cast<int>(l);
  }

  std::string programs(int ca, const Program& a, int cb, const Program& b) {
    const std::string at = fmt::format("chip {} and chip {}", ca, cb);
    if (&a != &b) {
      if (!(a.layers == b.layers)) return at + ": their layer tables differ";
      if (!(a.buffers == b.buffers) || !(a.regions == b.regions)) return at + ": their buffers differ";
      if (a.semaphores != b.semaphores) return at + ": their semaphores differ";
    }
    if (a.streams.size() != b.streams.size()) return at + ": their engines differ";
    for (size_t i = 0; i < a.streams.size(); ++i) {
      const Stream &sa = a.streams[i], &sb = b.streams[i];
      if (!(sa.engine == sb.engine) || sa.instructions.size() != sb.instructions.size())
        return at + ": their engines differ";
      const std::string engine = engine_name(sa.engine.kind, sa.engine.index);
      if (sa.engine.kind != EngineKind::ici) {
        if (sa.instructions != sb.instructions) return fmt::format("{}: their {} streams differ", at, engine);
        continue;
      }
      for (size_t j = 0; j < sa.instructions.size(); ++j) {
        const std::string why = instruction(ca, sa.instructions[j], cb, sb.instructions[j]);
        if (!why.empty()) return fmt::format("{}: {} instruction {}: {}", at, engine, j, why);
      }
    }
    return "";
  }

 private:
  std::string instruction(int ca, const Instruction& a, int cb, const Instruction& b) {
    const auto* oa = std::get_if<IciOp>(&a.op);
    const auto* ob = std::get_if<IciOp>(&b.op);
    if (!oa || !ob) return a == b ? "" : "differs";
    if (a.layer != b.layer || a.waits != b.waits || a.signals != b.signals || a.frees != b.frees)
      return "differs";
    if (oa->copies.size() != ob->copies.size()) return "sends a different number of messages";
    for (size_t k = 0; k < oa->copies.size(); ++k) {
      const IciCopy &ma = oa->copies[k], &mb = ob->copies[k];
      if (ma.bytes != mb.bytes || ma.recv_sem != mb.recv_sem || ma.via_hbm != mb.via_hbm)
        return "a message differs";
      if (rules_.memory_timed && (ma.src_addr != mb.src_addr || ma.dst_addr != mb.dst_addr))
        return "a message reads or writes other HBM addresses";
      if (s_.chip[static_cast<size_t>(ma.to)] != mb.to)
        return fmt::format("a message goes to chip {} where the relabelling gives chip {}", mb.to,
                           s_.chip[static_cast<size_t>(ma.to)]);
      const std::vector<int> ra = t_.route(ca, ma.to, ma.tie), rb = t_.route(cb, mb.to, mb.tie);
      if (ra.size() != rb.size()) return "a message takes another route";
      for (size_t h = 0; h < ra.size(); ++h) {
        const int la = ra[h], lb = rb[h];
        int& image = s_.link[static_cast<size_t>(la)];
        int& back = preimage_[static_cast<size_t>(lb)];
        if ((image != -1 && image != lb) || (back != -1 && back != la)) return "a message takes another link";
        image = lb;
        back = la;
      }
    }
    return "";
  }

  const Topology& t_;
  ChipSymmetry& s_;
  const SymmetryRules& rules_;
  std::vector<int> preimage_;
};

// The orbits of `symmetries`: each chip reached from the smallest chip of its orbit.
void orbits(ChipClasses& classes) {
  const size_t n = classes.representative.size();
  std::vector<bool> seen(n, false);
  for (size_t root = 0; root < n; ++root) {
    if (seen[root]) continue;
    seen[root] = true;
    classes.representative[root] = static_cast<int>(root);
    std::deque<int> queue{static_cast<int>(root)};
    while (!queue.empty()) {
      const int s = queue.front();
      queue.pop_front();
      for (size_t g = 0; g < classes.symmetries.size(); ++g) {
        const auto t = static_cast<size_t>(classes.symmetries[g].chip[static_cast<size_t>(s)]);
        if (seen[t]) continue;
        seen[t] = true;
        classes.representative[t] = static_cast<int>(root);
        classes.parent[t] = s;
        classes.via[t] = static_cast<int>(g);
        queue.push_back(static_cast<int>(t));
      }
    }
  }
}

// The symmetries applied, in order, to map chip s's representative to s.
std::vector<int> path(const ChipClasses& c, int s) {
  std::vector<int> out;
  for (int u = s; c.parent[static_cast<size_t>(u)] != -1; u = c.parent[static_cast<size_t>(u)])
    out.push_back(c.via[static_cast<size_t>(u)]);
  std::reverse(out.begin(), out.end());
  return out;
}

// "" unless, with a timed memory system, two chips' messages would write the same bytes of a
// simulated chip's HBM under the same semaphore (the chip's port orders what arrives at one
// time by the chunks, models/ici/ici_port.hpp, so two such chunks are told apart only by the
// order they were sent in, which is the kernel's), or a representative's messages to a chip
// land on no simulated chip (its send ends when their write does, which nothing would time).
// Checked on the representatives' landings (a message of chip s of a class lands where g_s
// takes it): by symmetry the other chips' are their images.
std::string landing_limit(const ChipClasses& classes, const std::vector<const Program*>& programs) {
  using Write = std::tuple<uint64_t, uint64_t, std::string>;  // address, bytes, semaphore
  std::vector<std::vector<int>> members(programs.size());
  for (int s = 0; s < classes.chips(); ++s)
    members[static_cast<size_t>(classes.representative[static_cast<size_t>(s)])].push_back(s);
  std::map<std::pair<int, Write>, int> sender;  // (chip, write) -> the chip whose message it is
  for (int r : classes.simulated_chips()) {
    std::map<int, std::set<Write>> to;  // by destination
    for (const Stream& st : programs[static_cast<size_t>(r)]->streams)
      if (st.engine.kind == EngineKind::ici)
        for (const Instruction& i : st.instructions)
          if (const auto* op = std::get_if<IciOp>(&i.op))
            for (const IciCopy& m : op->copies)
              if (m.via_hbm) to[m.to].emplace(m.dst_addr, m.bytes, m.recv_sem);
    for (const auto& [d, writes] : to) {
      bool lands = false;
      for (int s : members[static_cast<size_t>(r)]) {
        const int at = classes.image(s, d);
        if (!classes.simulated(at)) continue;
        lands = true;
        for (const Write& w : writes) {
          const int first = sender.try_emplace({at, w}, s).first->second;
          if (first != s)
            return fmt::format(
                "chips {} and {} write the same {} B at {:#x} of chip {}'s HBM, signalling '{}'", first, s,
                std::get<1>(w), std::get<0>(w), at, std::get<2>(w));
        }
      }
      if (!lands) return fmt::format("chip {}'s messages to chip {} land on no simulated chip", r, d);
    }
  }
  return "";
}

}  // namespace

std::vector<int> ChipClasses::simulated_chips() const {
  std::vector<int> out;
  for (int c = 0; c < chips(); ++c)
    if (simulated(c)) out.push_back(c);
  return out;
}

int ChipClasses::image(int s, int x) const {
  for (int g : path(*this, s)) x = symmetries[static_cast<size_t>(g)].chip[static_cast<size_t>(x)];
  return x;
}

int ChipClasses::image_link(int s, int link) const {
  for (int g : path(*this, s)) {
    link = symmetries[static_cast<size_t>(g)].link[static_cast<size_t>(link)];
    if (link < 0) throw std::logic_error("symmetry: a link no message crosses has no image");
  }
  return link;
}

ChipClasses every_chip(int chips, std::string why) {
  ChipClasses c;
  c.representative.resize(static_cast<size_t>(chips));
  for (int i = 0; i < chips; ++i) c.representative[static_cast<size_t>(i)] = i;
  c.parent.assign(static_cast<size_t>(chips), -1);
  c.via.assign(static_cast<size_t>(chips), -1);
  c.limit = std::move(why);
  return c;
}

ChipClasses chip_classes(const Topology& topology, const std::vector<const Program*>& programs,
                         const SymmetryRules& rules) {
  const int n = topology.chips();
  if (static_cast<int>(programs.size()) != n || n < 2) return every_chip(n, "");
  const Traffic traffic = traffic_of(topology, programs);
  if (!traffic.valid) return every_chip(n, "");
  const bool multi_hop = traffic.hops > 1;
  if (multi_hop && !rules.hop_latency)
    return every_chip(n, traffic.example +
                             ": with no hop latency a chunk reaches the next chip at the time it "
                             "left, and which goes on first depends on the order the simulator "
                             "runs the chips");
  std::string limit;
  if (multi_hop && !topology.wraps())
    limit = traffic.example + ": only translations keep such traffic alike, and a mesh has none";
  ChipClasses classes = every_chip(n, "");
  for (ChipSymmetry& s : candidates(topology, multi_hop)) {
    Comparison compare(topology, s, rules);
    std::string why;
    for (int c = 0; c < n && why.empty(); ++c) {
      const int image = s.chip[static_cast<size_t>(c)];
      why = compare.programs(c, *programs[static_cast<size_t>(c)], image,
                             *programs[static_cast<size_t>(image)]);
    }
    if (why.empty())
      classes.symmetries.push_back(std::move(s));
    else if (limit.empty())
      limit = fmt::format("{} does not map the system onto itself ({})", s.name, why);
  }
  orbits(classes);
  if (rules.memory_timed && static_cast<int>(classes.simulated_chips().size()) < n) {
    std::string clash = landing_limit(classes, programs);
    if (!clash.empty()) return every_chip(n, std::move(clash));
  }
  if (classes.simulated_chips().size() > 1) classes.limit = limit;
  return classes;
}

}  // namespace systolic
