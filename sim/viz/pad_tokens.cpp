#include "sim/viz/pad_tokens.hpp"

#include <fmt/format.h>

#include "models/common/error.hpp"
#include "models/common/suggest.hpp"
#include "sim/packing/bin_packer.hpp"
#include "sim/packing/metrics.hpp"
#include "sim/packing/request_log.hpp"

namespace systolic {

int64_t PadTokens::pad_count() const {
  int64_t used = 0;
  for (int64_t u : useful) used += u;
  return bucket.batch * bucket.length - used;
}

PadTokens uniform_pad_tokens(packing::Shape bucket, int64_t pad) {
  if (pad < 0 || pad > bucket.length)
    throw InputError(fmt::format("--pad-tokens {}: expected 0 to S = {} pad tokens per lane of the bucket {}x{}",
                                 pad, bucket.length, bucket.batch, bucket.length));
  PadTokens t;
  t.bucket = bucket;
  t.useful.assign(static_cast<size_t>(bucket.batch), bucket.length - pad);
  t.origin = fmt::format("--pad-tokens {}", pad);
  return t;
}

PadTokens pad_tokens_of(const packing::BucketInstance& instance, std::string origin) {
  PadTokens t;
  t.bucket = instance.shape;
  for (const auto& lane : instance.lanes) t.useful.push_back(lane.used());
  t.useful.resize(static_cast<size_t>(instance.shape.batch), 0);  // unused lanes are empty
  t.origin = std::move(origin);
  return t;
}

PadTokens packed_instance(const std::string& requests, const std::string& buckets, int64_t index,
                          const std::string& packer, double window_ms) {
  const std::string packer_id = packing::packer_name(packer, "--policy");
  const packing::RequestLog log = packing::load_request_log(requests);
  const packing::BucketSet set = packing::load_bucket_set(buckets);
  packing::PackOptions options;
  options.packer = packer_id;
  options.window_ms = window_ms;
  packing::validate(options);
  const packing::PackResult result = packing::pack(log.requests, set, options);
  if (index < 0 || static_cast<size_t>(index) >= result.prefill.size())
    throw InputError(fmt::format("--instance {}: {} through {} gives {} prefill instance{} (0 to {})", index,
                                 requests, buckets, result.prefill.size(),
                                 result.prefill.size() == 1 ? "" : "s",
                                 static_cast<int64_t>(result.prefill.size()) - 1));
  const packing::BucketInstance& inst = result.prefill[static_cast<size_t>(index)];
  std::string lanes;
  for (const auto& lane : inst.lanes) {
    std::string ids;
    for (const auto& seg : lane.segments) ids += (ids.empty() ? "" : "+") + fmt::format("#{}", seg.request_id);
    lanes += fmt::format("{}[{}]", lanes.empty() ? "" : " ", ids);
  }
  return pad_tokens_of(inst, fmt::format("instance {} of {} packed {} through {}: requests {}", index,
                                         requests, packer_id, set.name, lanes));
}

std::vector<uint8_t> pad_token_rows(const PadTokens& tokens, const LayerInfo& layer, int64_t instance) {
  const int64_t B = tokens.bucket.batch, S = tokens.bucket.length;
  const auto useful = [&](int64_t lane) { return tokens.useful.at(static_cast<size_t>(lane)); };
  std::vector<uint8_t> rows;
  if (layer.kind == LayerKind::vector || layer.name.find(".expert_") != std::string::npos) return rows;
  if (layer.kind == LayerKind::attention && layer.m == S) {
    const int64_t lane = instance % B;
    for (int64_t s = 0; s < S; ++s) rows.push_back(s >= useful(lane) ? 1 : 0);
  } else if (layer.m == B * S) {
    for (int64_t t = 0; t < B * S; ++t) rows.push_back(t % S >= useful(t / S) ? 1 : 0);
  } else if (layer.kind == LayerKind::matmul && layer.m == B) {
    for (int64_t b = 0; b < B; ++b) rows.push_back(useful(b) == 0 ? 1 : 0);
  }
  return rows;
}

}  // namespace systolic
