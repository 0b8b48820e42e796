#include "sim/report/energy.hpp"

#include "models/area/sram_model.hpp"

namespace systolic {

namespace {

// pJ per byte of each scratchpad (vmem, weights, accumulators) at 45 nm: by its bank's size.
std::array<double, 3> pad_pj_per_byte(const ChipConfig& config) {
  const auto pads = config.sram.all();
  std::array<double, 3> out{};
  for (size_t p = 0; p < out.size(); ++p)
    out[p] = sram_pj_per_byte(pads[p].capacity_bytes / pads[p].banks, config.energy.sram_pj_per_64b_at_8kib,
                              config.energy.sram_size_exponent);
  return out;
}

}  // namespace

// Leakage, W: the MXUs' PEs (per 128 x 128), every scratchpad's MiB, the HBM.
double static_power_w(const ChipConfig& config) {
  const EnergyConfig& c = config.energy;
  const double arrays =
      static_cast<double>(config.mxu.rows * config.mxu.cols * config.mxu.count) / (128.0 * 128.0);
  double mib = 0;
  for (const auto& pad : config.sram.all()) mib += static_cast<double>(pad.capacity_bytes) / (1 << 20);
  return c.mxu_static_w * arrays + c.sram_static_w_per_mib * mib + c.hbm_static_w;
}

nlohmann::ordered_json energy_report(const ChipConfig& config, const EnergyCounts& n) {
  const EnergyConfig& c = config.energy;
  // On-chip events scale with the node; the HBM's and the links' energy is off the die.
  const double s = c.tech_scale * node_factors(config.area.node).dynamic_energy;
  const double off = c.tech_scale;
  const auto sram_pj = pad_pj_per_byte(config);
  double mac = 0;
  for (size_t t = 0; t < n.macs.size(); ++t) mac += s * c.mac_pj[t] * static_cast<double>(n.macs[t]);
  const double idle = s * c.pe_idle_pj * static_cast<double>(n.pe_idle_cycles);
  const char* pads[] = {"vmem", "weights", "accumulators"};
  std::array<double, 3> pad_mxu{}, pad_dma{}, pad_vpu{};
  for (size_t p = 0; p < 3; ++p) {
    pad_mxu[p] = s * sram_pj[p] * static_cast<double>(n.mxu_sram_read[p] + n.mxu_sram_write[p]);
    pad_dma[p] = s * sram_pj[p] * static_cast<double>(n.dma_sram_read[p] + n.dma_sram_write[p]);
    pad_vpu[p] = s * sram_pj[p] * static_cast<double>(n.vpu_sram_read[p] + n.vpu_sram_write[p]);
  }
  const double hbm = off * (c.hbm_read_pj_per_byte * n.hbm_read + c.hbm_write_pj_per_byte * n.hbm_written);
  const double dma = s * c.dma_pj_per_byte * static_cast<double>(n.dma_bytes);
  const double vpu = s * c.vpu_op_pj * static_cast<double>(n.vpu_ops);
  const double ici = off * c.ici_pj_per_byte * static_cast<double>(n.ici_bytes);
  // Static energy: W x s = J; x 1e12 for pJ. Leakage is not scaled by the node or tech_scale.
  const double stat = static_power_w(config) * n.seconds * 1e12;

  nlohmann::ordered_json by_component;
  by_component["mxu"] = mac + idle;
  for (size_t p = 0; p < 3; ++p) by_component[pads[p]] = pad_mxu[p] + pad_dma[p] + pad_vpu[p];
  by_component["hbm"] = hbm;
  by_component["dma"] = dma;
  by_component["vpu"] = vpu;
  by_component["ici"] = ici;
  by_component["static"] = stat;

  // The same joules by the kind of work that spent them: MXU events and its operand traffic
  // are matmul; DMA fills and drains, the HBM and the DMA engines are dma.
  nlohmann::ordered_json by_kind;
  by_kind["matmul"] = mac + idle + pad_mxu[0] + pad_mxu[1] + pad_mxu[2];
  by_kind["dma"] = pad_dma[0] + pad_dma[1] + pad_dma[2] + hbm + dma;
  by_kind["vector"] = vpu + pad_vpu[0] + pad_vpu[1] + pad_vpu[2];
  by_kind["ici"] = ici;
  by_kind["static"] = stat;

  double total = 0;
  for (const auto& [k, v] : by_component.items()) total += v.get<double>();
  return {{"total", total}, {"by_component", by_component}, {"by_op_kind", by_kind}};
}

}  // namespace systolic
