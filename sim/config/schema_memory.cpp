// Config keys of the memory system (HBM, scratchpads, DMA; docs/memory.md) and of the vector unit.
#include "sim/config/schema_memory.hpp"

#include <limits>

#include "models/hbm/dram_standard.hpp"
#include "sim/config/values.hpp"

namespace systolic {
namespace {

using namespace config_values;

// hbm.preset: set first, it resets every hbm.* key to the standard's values.
ConfigKey hbm_preset_key() {
  ConfigKey preset = registry_key<DramStandard>(
      "hbm.preset", CONFIG_FIELD(hbm_preset),
      "Starting point for every hbm.* key: " + DramRegistry::instance().described() +
          ". Keys given beside it refine the preset.");
  const auto set_name = preset.set;
  preset.set = [set_name](ChipConfig& c, const YAML::Node& n) {
    set_name(c, n);
    c.hbm = DramRegistry::instance().find(c.hbm_preset)->impl->config;
  };
  preset.first = true;
  return preset;
}

}  // namespace

std::vector<ConfigKey> hbm_keys() {
  const auto timing = [](const char* key, auto ref, const char* doc) {
    return number_key(key, ref, 0, 1e9, "ns", doc);
  };
  return {
      hbm_preset_key(),
      integer_key(CONFIG_KEY(hbm.channels), 1, 4096, "", "Channels over all stacks (HBM2: 8 per stack)."),
      integer_key(CONFIG_KEY(hbm.pseudo_channels), 1, 16, "",
                  "Pseudo-channels per channel, each with its own data bus and banks."),
      integer_key(CONFIG_KEY(hbm.banks), 1, 1024, "", "Banks per pseudo-channel."),
      size_key(CONFIG_KEY(hbm.page_bytes), 1, "Row-buffer size of one bank."),
      size_key(CONFIG_KEY(hbm.capacity_bytes), 1, "Total capacity; tensors must fit."),
      integer_key(CONFIG_KEY(hbm.bus_bits), 1, 4096, "bits", "Data-bus width of one pseudo-channel."),
      number_key(CONFIG_KEY(hbm.data_rate_gbps), 0.001, 100, "Gb/s per pin",
                 "Transfers per ns on each data pin."),
      integer_key(CONFIG_KEY(hbm.burst_length), 1, 64, "beats",
                  "Beats per burst; burst bytes = bus_bits / 8 * burst_length."),
      timing(CONFIG_KEY(hbm.t_rcd_ns), "ACT to column command."),
      timing(CONFIG_KEY(hbm.t_rp_ns), "PRE to ACT."),
      timing(CONFIG_KEY(hbm.t_cl_ns), "Column command to first data (CAS latency)."),
      timing(CONFIG_KEY(hbm.t_ras_ns), "ACT to PRE of the same bank."),
      timing(CONFIG_KEY(hbm.t_rrd_ns), "ACT to ACT, different banks of a pseudo-channel."),
      timing(CONFIG_KEY(hbm.t_faw_ns), "Window holding at most four ACTs."),
      timing(CONFIG_KEY(hbm.t_refi_ns), "Refresh interval."),
      timing(CONFIG_KEY(hbm.t_rfc_ns), "Time a refresh blocks the pseudo-channel (0: no refresh)."),
      size_key(CONFIG_KEY(hbm.interleave_bytes), 1,
               "Consecutive blocks of this size rotate over the pseudo-channels."),
      size_key(CONFIG_KEY(hbm.chunk_bytes), 1,
               "Largest piece timed as one unit (a page): simulation cost is per chunk."),
  };
}

// sram.<pad>_bytes, _banks, _port_bytes and _ports for each scratchpad.
std::vector<ConfigKey> sram_keys() {
  std::vector<ConfigKey> k;
  const auto scratchpad = [&](const char* name, ScratchpadConfig SramConfig::*pad, const char* what) {
    const std::string p = std::string("sram.") + name;
    k.push_back(size_key(p + "_bytes", [pad](auto& c) -> auto& { return (c.sram.*pad).capacity_bytes; }, 1,
                         std::string("Capacity of the ") + what + "."));
    k.push_back(integer_key(p + "_banks", [pad](auto& c) -> auto& { return (c.sram.*pad).banks; }, 1, 65536, "",
                            "Banks; the capacity splits evenly over them."));
    k.push_back(integer_key(p + "_port_bytes", [pad](auto& c) -> auto& { return (c.sram.*pad).port_bytes_per_cycle; },
                            1, 1 << 20, "bytes/cycle", "Width of one port."));
    k.push_back(integer_key(p + "_ports", [pad](auto& c) -> auto& { return (c.sram.*pad).ports; }, 1, 64, "",
                            "Ports that can move data at once."));
  };
  scratchpad("vmem", &SramConfig::vmem, "vector memory holding activations");
  scratchpad("weights", &SramConfig::weights, "weight buffer feeding the MXUs");
  scratchpad("accumulators", &SramConfig::accumulators, "accumulators holding partial sums (32-bit)");
  return k;
}

std::vector<ConfigKey> dma_keys() {
  return {
      integer_key("dma.engines", CONFIG_FIELD(dma.engine.engines), 1, 64, "",
                  "DMA engines; each has its own descriptor queue and shares the HBM."),
      bool_key(CONFIG_KEY(dma.double_buffer),
               "true: ping/pong tiles, the next load overlaps compute; false: load, then compute."),
      size_key("dma.request_bytes", CONFIG_FIELD(dma.engine.request_bytes), 0,
               "Largest HBM request of a DMA engine (0: hbm.chunk_bytes)."),
      integer_key("dma.max_outstanding", CONFIG_FIELD(dma.engine.max_outstanding), 1, 1 << 20, "requests",
                  "Requests one engine keeps in flight."),
      integer_key("dma.quantum_cycles", CONFIG_FIELD(dma.engine.quantum_cycles), 1,
                  std::numeric_limits<int64_t>::max(), "cycles",
                  "How far an engine books HBM time ahead before yielding to the others."),
  };
}

// The vector unit (models/vpu/vpu_core.hpp has the cost table).
std::vector<ConfigKey> vpu_keys() {
  return {
      integer_key(CONFIG_KEY(vpu.lanes), 1, 65536, "elements", "Columns of a vector register."),
      integer_key(CONFIG_KEY(vpu.sublanes), 1, 1024, "rows", "Rows of a vector register."),
      integer_key(CONFIG_KEY(vpu.ops_per_cycle), 1, 64, "", "Vector-register operations issued per cycle."),
      integer_key(CONFIG_KEY(vpu.transcendental_ops), 1, 1024, "",
                  "Register operations per exp, tanh, reciprocal or rsqrt."),
      integer_key(CONFIG_KEY(vpu.latency_cycles), 0, 1000000, "cycles",
                  "Pipeline fill and drain per vector instruction."),
  };
}

}  // namespace systolic
