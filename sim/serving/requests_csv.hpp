#pragma once
// requests.csv (docs/serving.md, "requests.csv"): one row per request of a serving replay, in
// request id (arrival) order. Columns:
//   id, arrival_s, prompt_tokens, output_tokens   the request as logged
//   generated_tokens                              tokens it received (first from prefill)
//   outcome                                       served | truncated | rejected
//   reason                                        why truncated or rejected ("" when served)
//   queue_s                                       first step holding it began - arrival
//   ttft_s                                        first token - arrival
//   tbt_mean_s, tbt_max_s                         mean and largest gap between its tokens
//   e2e_s                                         last token - arrival
//   prefill_shape, decode_shape                   "[B, S]" / "[B, L]", "varlen", or ""
//   slot                                          decode slot (-1: never decoded; disaggregated:
//                                                 decode chip x B + slot)
//   pad_tokens                                    pad positions attributed to it
//   energy_pj                                     its share of its steps' energy
//   kv_transfer_s                                 its KV cache crossing to the decode chip
//                                                 (disaggregated; 0 otherwise)
// Times are seconds; a time that does not apply (a rejected request; TBT of one token) is empty.
#include <ostream>
#include <string>

#include "sim/serving/engine.hpp"

namespace systolic::serving {

void write_requests_csv(std::ostream& out, const ServeResult& result);
// Writes the whole file or nothing: the text is built first, then written in one go.
void write_requests_csv(const std::string& path, const ServeResult& result);

}  // namespace systolic::serving
