// Config keys of the memory system: HBM, scratchpads and DMA (docs/memory.md).
#include "sim/config/schema_memory.hpp"

#include <limits>

#include "models/hbm/dram_standard.hpp"
#include "sim/config/values.hpp"

namespace systolic {
namespace {

using namespace config_values;

void add_hbm_keys(std::vector<ConfigKey>& k) {
  ConfigKey preset = registry_key<DramStandard>("hbm.preset", [](auto& c) -> auto& { return c.hbm_preset; },
                                                "Starting point for every hbm.* key: " +
                                                    DramRegistry::instance().described() +
                                                    ". Keys given beside it refine the preset.");
  const auto set_name = preset.set;
  preset.set = [set_name](ChipConfig& c, const YAML::Node& n) {
    set_name(c, n);
    c.hbm = DramRegistry::instance().find(c.hbm_preset)->impl->config;
  };
  preset.first = true;
  k.push_back(preset);
  k.push_back(integer_key("hbm.channels", [](auto& c) -> auto& { return c.hbm.channels; }, 1, 4096, "",
                          "Channels over all stacks (HBM2: 8 per stack)."));
  k.push_back(integer_key("hbm.pseudo_channels", [](auto& c) -> auto& { return c.hbm.pseudo_channels; }, 1, 16,
                          "", "Pseudo-channels per channel, each with its own data bus and banks."));
  k.push_back(integer_key("hbm.banks", [](auto& c) -> auto& { return c.hbm.banks; }, 1, 1024, "",
                          "Banks per pseudo-channel."));
  k.push_back(size_key("hbm.page_bytes", [](auto& c) -> auto& { return c.hbm.page_bytes; }, 1,
                       "Row-buffer size of one bank."));
  k.push_back(size_key("hbm.capacity_bytes", [](auto& c) -> auto& { return c.hbm.capacity_bytes; }, 1,
                       "Total capacity; tensors must fit."));
  k.push_back(integer_key("hbm.bus_bits", [](auto& c) -> auto& { return c.hbm.bus_bits; }, 1, 4096, "bits",
                          "Data-bus width of one pseudo-channel."));
  k.push_back(number_key("hbm.data_rate_gbps", [](auto& c) -> auto& { return c.hbm.data_rate_gbps; }, 0.001,
                         100, "Gb/s per pin", "Transfers per ns on each data pin."));
  k.push_back(integer_key("hbm.burst_length", [](auto& c) -> auto& { return c.hbm.burst_length; }, 1, 64,
                          "beats", "Beats per burst; burst bytes = bus_bits / 8 * burst_length."));
  const auto timing = [&](const char* key, double HbmConfig::*field, const char* doc) {
    k.push_back(number_key(key, [field](auto& c) -> auto& { return c.hbm.*field; }, 0, 1e9, "ns", doc));
  };
  timing("hbm.t_rcd_ns", &HbmConfig::t_rcd_ns, "ACT to column command.");
  timing("hbm.t_rp_ns", &HbmConfig::t_rp_ns, "PRE to ACT.");
  timing("hbm.t_cl_ns", &HbmConfig::t_cl_ns, "Column command to first data (CAS latency).");
  timing("hbm.t_ras_ns", &HbmConfig::t_ras_ns, "ACT to PRE of the same bank.");
  timing("hbm.t_rrd_ns", &HbmConfig::t_rrd_ns, "ACT to ACT, different banks of a pseudo-channel.");
  timing("hbm.t_faw_ns", &HbmConfig::t_faw_ns, "Window holding at most four ACTs.");
  timing("hbm.t_refi_ns", &HbmConfig::t_refi_ns, "Refresh interval.");
  timing("hbm.t_rfc_ns", &HbmConfig::t_rfc_ns, "Time a refresh blocks the pseudo-channel (0: no refresh).");
  k.push_back(size_key("hbm.interleave_bytes", [](auto& c) -> auto& { return c.hbm.interleave_bytes; }, 1,
                       "Consecutive blocks of this size rotate over the pseudo-channels."));
  k.push_back(size_key("hbm.chunk_bytes", [](auto& c) -> auto& { return c.hbm.chunk_bytes; }, 1,
                       "Largest piece timed as one unit (a page): simulation cost is per chunk."));
}

void add_sram_keys(std::vector<ConfigKey>& k) {
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
}

void add_dma_keys(std::vector<ConfigKey>& k) {
  k.push_back(integer_key("dma.engines", [](auto& c) -> auto& { return c.dma.engine.engines; }, 1, 64, "",
                          "DMA engines; each has its own descriptor queue and shares the HBM."));
  k.push_back(bool_key("dma.double_buffer", [](auto& c) -> auto& { return c.dma.double_buffer; },
                       "true: ping/pong tiles, the next load overlaps compute; false: load, then compute."));
  k.push_back(size_key("dma.request_bytes", [](auto& c) -> auto& { return c.dma.engine.request_bytes; }, 0,
                       "Largest HBM request of a DMA engine (0: hbm.chunk_bytes)."));
  k.push_back(integer_key("dma.max_outstanding", [](auto& c) -> auto& { return c.dma.engine.max_outstanding; }, 1,
                          1 << 20, "requests", "Requests one engine keeps in flight."));
  k.push_back(integer_key("dma.quantum_cycles", [](auto& c) -> auto& { return c.dma.engine.quantum_cycles; }, 1,
                          std::numeric_limits<int64_t>::max(), "cycles",
                          "How far an engine books HBM time ahead before yielding to the others."));
}

// The vector unit (models/vpu/vpu_core.hpp has the cost table).
void add_vpu_keys(std::vector<ConfigKey>& k) {
  k.push_back(integer_key("vpu.lanes", [](auto& c) -> auto& { return c.vpu.lanes; }, 1, 65536, "elements",
                          "Columns of a vector register."));
  k.push_back(integer_key("vpu.sublanes", [](auto& c) -> auto& { return c.vpu.sublanes; }, 1, 1024, "rows",
                          "Rows of a vector register."));
  k.push_back(integer_key("vpu.ops_per_cycle", [](auto& c) -> auto& { return c.vpu.ops_per_cycle; }, 1, 64, "",
                          "Vector-register operations issued per cycle."));
  k.push_back(integer_key("vpu.transcendental_ops", [](auto& c) -> auto& { return c.vpu.transcendental_ops; }, 1,
                          1024, "", "Register operations per exp, tanh, reciprocal or rsqrt."));
  k.push_back(integer_key("vpu.latency_cycles", [](auto& c) -> auto& { return c.vpu.latency_cycles; }, 0, 1000000,
                          "cycles", "Pipeline fill and drain per vector instruction."));
}

}  // namespace

std::vector<ConfigKey> memory_keys() {
  std::vector<ConfigKey> k;
  add_hbm_keys(k);
  add_sram_keys(k);
  add_dma_keys(k);
  add_vpu_keys(k);
  return k;
}

}  // namespace systolic
