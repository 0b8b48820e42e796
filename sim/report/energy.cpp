#include "sim/report/energy.hpp"

namespace systolic {

nlohmann::ordered_json energy_report(const EnergyConfig& c, const EnergyCounts& n) {
  const double s = c.tech_scale;
  double mac = 0;
  for (size_t t = 0; t < n.macs.size(); ++t) mac += s * c.mac_pj[t] * static_cast<double>(n.macs[t]);
  const double idle = s * c.pe_idle_pj * static_cast<double>(n.pe_idle_cycles);
  const char* pads[] = {"vmem", "weights", "accumulators"};
  std::array<double, 3> pad_mxu{}, pad_dma{}, pad_vpu{};
  for (size_t p = 0; p < 3; ++p) {
    pad_mxu[p] = s * (c.sram_read_pj_per_byte[p] * n.mxu_sram_read[p] + c.sram_write_pj_per_byte[p] * n.mxu_sram_write[p]);
    pad_dma[p] = s * (c.sram_read_pj_per_byte[p] * n.dma_sram_read[p] + c.sram_write_pj_per_byte[p] * n.dma_sram_write[p]);
    pad_vpu[p] = s * (c.sram_read_pj_per_byte[p] * n.vpu_sram_read[p] + c.sram_write_pj_per_byte[p] * n.vpu_sram_write[p]);
  }
  const double hbm = s * (c.hbm_read_pj_per_byte * n.hbm_read + c.hbm_write_pj_per_byte * n.hbm_written);
  const double dma = s * c.dma_pj_per_byte * static_cast<double>(n.dma_bytes);
  const double vpu = s * c.vpu_op_pj * static_cast<double>(n.vpu_ops);
  const double ici = s * c.ici_pj_per_byte * static_cast<double>(n.ici_bytes);
  // Static energy: W x s = J; x 1e12 for pJ. Not scaled by tech_scale (leakage is its own story).
  const double stat = (c.mxu_static_w * static_cast<double>(n.mxus) + c.sram_static_w + c.hbm_static_w) *
                      n.seconds * 1e12;

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
