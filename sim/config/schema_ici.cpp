// Config keys of the inter-chip interconnect (docs/interconnect.md).
#include "sim/config/schema_ici.hpp"

#include "sim/compile/collective_algorithm.hpp"
#include "sim/config/values.hpp"

namespace systolic {
namespace {

// "8", "2x4", "4x4x4": chips per dimension.
std::vector<int64_t> parse_dims(const std::string& text) {
  const std::string kind = "chip counts joined by 'x', e.g. 8, 2x4 or 4x4x4";
  std::vector<int64_t> dims;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t x = text.find('x', at);
    const std::string part = text.substr(at, x == std::string::npos ? std::string::npos : x - at);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 6)
      config_values::expected(kind, text);
    dims.push_back(std::stoll(part));
    if (x == std::string::npos) break;
    at = x + 1;
  }
  return dims;
}

}  // namespace

std::vector<ConfigKey> ici_keys() {
  using namespace config_values;
  return {
      enum_key(CONFIG_KEY(ici.topology), kIciTopologyNames,
               "How the chips are wired; none: a single chip. ici.wraparound says whether dimensions wrap."),
      {"ici.dims", "chips per dimension joined by 'x' (8, 2x4, 4x4x4)", "chips",
       "Chips along each dimension; their product is the system's chip count.",
       [](ChipConfig& c, const YAML::Node& n) { c.ici.dims = parse_dims(scalar_text(n)); },
       [](const ChipConfig& c) { return nlohmann::ordered_json(dims_text(c.ici.dims)); }},
      bool_key(CONFIG_KEY(ici.wraparound),
               "true: every dimension wraps around (a torus, a ring); false: a mesh, no link from "
               "one edge to the other (a line instead of a ring)."),
      number_key(CONFIG_KEY(ici.link_gbps), 0.0, 1e6, "GB/s", "Bandwidth of one link in one direction."),
      number_key(CONFIG_KEY(ici.link_latency_ns), 0.0, 1e9, "ns",
                 "Per hop: wire, SerDes and router, paid once per chunk head."),
      integer_key(CONFIG_KEY(ici.ports), 1, 64, "",
                  "ICI ports per chip; the topology uses two per dimension longer than one chip."),
      size_key(CONFIG_KEY(ici.chunk_bytes), 1,
               "Messages cross the network in chunks of this size (cut-through per chunk)."),
      registry_key<compile_detail::CollectiveAlgorithm>(
          CONFIG_KEY(ici.algorithm), "How the compiler lowers collectives: " +
                                         compile_detail::CollectiveRegistry::instance().described() + "."),
  };
}

}  // namespace systolic
