#include "sim/config_schema.hpp"

#include <fmt/format.h>

#include <limits>
#include <stdexcept>
#include <utility>

#include "sim/config_values.hpp"
#include "sim/error.hpp"

namespace systolic {

const std::vector<ConfigKey>& config_schema() {
  using namespace config_values;
  static const std::vector<ConfigKey> keys = {
      string_key("name", [](auto& c) -> auto& { return c.name; }, "Preset name, shown in reports."),
      number_key("clock_mhz", [](auto& c) -> auto& { return c.clock_mhz; }, 1.0, 100000.0, "MHz",
                 "Core clock; one MXU cycle. Converts cycles to seconds."),
      integer_key("mxu.rows", [](auto& c) -> auto& { return c.mxu.rows; }, 1, 65536, "PEs",
                  "R: array rows; the reduction dimension K maps onto them."),
      integer_key("mxu.cols", [](auto& c) -> auto& { return c.mxu.cols; }, 1, 65536, "PEs",
                  "C: array columns; output features N map onto them."),
      integer_key("mxu.count", [](auto& c) -> auto& { return c.mxu.count; }, 1, 1024, "",
                  "MXUs per chip; a GEMM's column folds are split between them."),
      enum_key<MxuModel>("mxu.model", [](auto& c) -> auto& { return c.mxu.model; },
                         {{"exact", MxuModel::exact}, {"fast", MxuModel::fast}},
                         "exact: PE grid stepped every cycle with real values; fast: closed form."),
      enum_key<Convention>("mxu.convention", [](auto& c) -> auto& { return c.mxu.convention; },
                           {{"tpu", Convention::tpu}, {"scalesim", Convention::scalesim}},
                           "Cycle convention (docs/mxu.md): tpu overlaps weight loads, "
                           "scalesim reproduces SCALE-Sim v2."),
      enum_key<DType>("mxu.dtype", [](auto& c) -> auto& { return c.mxu.dtype; },
                      {{"int8", DType::int8},
                       {"fp8_e4m3", DType::fp8_e4m3},
                       {"fp8_e5m2", DType::fp8_e5m2},
                       {"bf16", DType::bf16},
                       {"fp16", DType::fp16},
                       {"fp32", DType::fp32}},
                      "Operand type; int8 accumulates in int32, floats in fp32."),
      integer_key("mxu.seed", [](auto& c) -> auto& { return c.mxu.seed; }, 0,
                  std::numeric_limits<int64_t>::max(), "",
                  "Seed of the operand values the exact model computes on."),
      bool_key("memory.ideal", [](auto& c) -> auto& { return c.memory.ideal; },
               "true: operands arrive without stalls (SCALE-Sim CALC mode)."),
  };
  return keys;
}

void validate_config(const ChipConfig& config) {
  (void)config;  // No cross-key rules yet: every key is range-checked on its own.
}

}  // namespace systolic
