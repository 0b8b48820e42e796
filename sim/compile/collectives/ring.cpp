// ring: one ring through every chip, one direction; each phase takes n - 1 steps of S/n bytes,
// so an all_reduce sends 2 (n - 1)/n S per chip over one link (docs/interconnect.md).
#include "sim/compile/collective_algorithm.hpp"

namespace systolic::compile_detail {

const Registration<CollectiveAlgorithm> registration{"ring", 10, "one ring over every chip, one direction",
                                                     WholeRing({+1})};

}  // namespace systolic::compile_detail
