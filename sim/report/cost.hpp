#pragma once
// A run's cost: the chip's area block by block, its power (static and dynamic, from the
// energy the run spent over its time), and the throughput per mm^2, per W and per dollar
// (docs/area.md; fields in docs/report.md).
#include <cstdint>

#include <nlohmann/json.hpp>

#include "models/chip/chip_config.hpp"

namespace systolic {

// {"by_block": {mxu, vmem, ..., uncore}, "chip": one chip's total, "total": all chips'}.
nlohmann::ordered_json area_json(const ChipConfig& config, size_t chips);

// {"total", "static", "dynamic"} in W: the report's energy_pj over its totals.seconds.
nlohmann::ordered_json power_json(const nlohmann::ordered_json& report);

// Throughput per mm^2 and per W, and the cost proxy; per token when `tokens` > 0 (a
// transformer model at a bucket shape), else those fields are null. Reads the report's
// totals, energy_pj, area_mm2 and power_w.
nlohmann::ordered_json efficiency_json(const ChipConfig& config, const nlohmann::ordered_json& report,
                                       int64_t tokens);

}  // namespace systolic
