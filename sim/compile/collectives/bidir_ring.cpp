// bidir_ring: the ring of `ring` both ways at once, half the data each way: the same bytes
// per chip over two links, so half the time on the wire (docs/interconnect.md).
#include "sim/compile/collective_algorithm.hpp"

namespace systolic::compile_detail {

const Registration<CollectiveAlgorithm> registration{
    "bidir_ring", 20, "the same ring both ways, half the data each way", WholeRing({+1, -1})};

}  // namespace systolic::compile_detail
