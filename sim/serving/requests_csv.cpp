#include "sim/serving/requests_csv.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "models/common/error.hpp"

namespace systolic::serving {
namespace {

std::string seconds(double s) { return std::isnan(s) ? "" : fmt::format("{:.9g}", s); }

std::string shape(const std::optional<Shape>& s, bool varlen) {
  if (s) return fmt::format("\"{}\"", packing::to_string(*s));
  return varlen ? "varlen" : "";
}

}  // namespace

void write_requests_csv(std::ostream& out, const ServeResult& result) {
  out << "id,arrival_s,prompt_tokens,output_tokens,generated_tokens,outcome,reason,queue_s,ttft_s,"
         "tbt_mean_s,tbt_max_s,e2e_s,prefill_shape,decode_shape,slot,pad_tokens,energy_pj,kv_transfer_s\n";
  for (const RequestRecord& r : result.records) {
    const bool served = r.served();
    out << fmt::format(
        "{},{:.9g},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.6g},{}\n", r.id, r.arrival_s, r.prompt_tokens,
        r.output_tokens, r.generated_tokens, kOutcomeNames.name(r.outcome), kReasonNames.name(r.reason),
        seconds(served ? r.queue_s() : NAN), seconds(served ? r.ttft_s() : NAN), seconds(r.tbt_mean_s()),
        seconds(r.generated_tokens > 1 ? r.tbt_max_s : NAN), seconds(served ? r.e2e_s() : NAN),
        shape(r.prefill_shape, r.varlen), shape(r.decode_shape, r.varlen && r.generated_tokens > 1), r.slot,
        r.pad_tokens, r.energy_pj, seconds(r.kv_transfer_s));
  }
}

void write_requests_csv(const std::string& path, const ServeResult& result) {
  std::ostringstream text;
  write_requests_csv(text, result);
  std::ofstream file(path, std::ios::binary);
  if (!(file << text.str()))
    throw InputError(path + ": cannot write requests.csv (expected a writable file path)");
}

}  // namespace systolic::serving
