// The lane view (sim/packing/lane_view.hpp) on the seed article's examples, worked by hand:
// 3,000 + 4,000 + 1,000 tokens in one 8,192 lane, and the [4 x 8192] sheet A..I.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "sim/packing/lane_view.hpp"

namespace test_lane_view {

using namespace systolic::packing;
using json = nlohmann::ordered_json;

namespace {

std::vector<Request> requests_at_zero(const std::vector<int64_t>& prompts) {
  std::vector<Request> out;
  for (size_t i = 0; i < prompts.size(); ++i) {
    Request r;
    r.id = static_cast<int64_t>(i);
    r.prompt_tokens = prompts[i];
    r.output_tokens = 1;
    r.line = static_cast<int>(i) + 2;
    out.push_back(r);
  }
  return out;
}

json lanes_of(const std::vector<int64_t>& prompts, Shape prefill) {
  PackOptions o;
  o.packer = "first-fit";
  return lanes_json(pack(requests_at_zero(prompts), make_bucket_set({prefill}, {prefill}, "seed"), o));
}

}  // namespace

TEST_CASE("lane view: 3000 + 4000 + 1000 in one 8192 lane, segment ids 1..3", "[packing]") {
  const json j = lanes_of({3000, 4000, 1000}, {1, 8192});
  CHECK(j["lanes_schema"] == kLanesSchemaVersion);
  REQUIRE(j["instances"].size() == 1);
  const json& inst = j["instances"][0];
  CHECK(inst["shape"].dump() == "[1,8192]");
  CHECK(inst["pad_tokens"] == 192);
  const json& lane = inst["lanes"][0];
  CHECK(lane["cu_seqlens"].dump() == "[0,3000,7000,8000]");
  for (int k = 0; k < 3; ++k) {
    CHECK(lane["segments"][k]["segment_id"] == k + 1);
    CHECK(lane["segments"][k]["request"] == k);
  }
  // 8192^2 cells: 3000^2 + 4000^2 + 1000^2 = 26 M useful, 8000^2 - 26 M = 38 M cross,
  // 8192^2 - 8000^2 = 3,108,864 on pads: 61.3 % masked.
  CHECK(lane["cells"].dump() == R"({"computed":67108864,"useful":26000000,"cross":38000000,"pad":3108864})");
}

TEST_CASE("lane view: the [4 x 8192] sheet A..I, 668 pad tokens", "[packing]") {
  // First-fit in arrival order: A 2000 + B 5000 + C 1000 | D 8000 | E 3000 + F 3000 + G 2100 |
  // H 4000 + I 4000; pads 192, 192, 92, 192.
  const json j = lanes_of({2000, 5000, 1000, 8000, 3000, 3000, 2100, 4000, 4000}, {4, 8192});
  REQUIRE(j["instances"].size() == 1);
  const json& inst = j["instances"][0];
  CHECK(inst["pad_tokens"] == 668);
  CHECK(inst["useful_tokens"] == 32768 - 668);
  const std::vector<std::vector<int64_t>> requests{{0, 1, 2}, {3}, {4, 5, 6}, {7, 8}};
  const std::vector<int64_t> pads{192, 192, 92, 192};
  for (size_t b = 0; b < 4; ++b) {
    const json& lane = inst["lanes"][b];
    CHECK(lane["lane"] == b);
    CHECK(lane["pad_tokens"] == pads[b]);
    REQUIRE(lane["segments"].size() == requests[b].size());
    for (size_t k = 0; k < requests[b].size(); ++k) {
      CHECK(lane["segments"][k]["request"] == requests[b][k]);
      CHECK(lane["segments"][k]["segment_id"] == k + 1);
    }
  }
  CHECK(inst["lanes"][2]["cu_seqlens"].dump() == "[0,3000,6000,8100]");
}

TEST_CASE("lane view: the page embeds the data and loads nothing else", "[packing]") {
  json j = lanes_of({3000, 4000, 1000}, {1, 8192});
  j["bucket_set"] = "</script><b>";  // a name that would close the script element
  const std::string page = lanes_html(j);
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(page.find("</script><b>") == std::string::npos);
  CHECK(page.find(R"(<\/script><b>)") != std::string::npos);
  CHECK(page.find("\"cu_seqlens\":[0,3000,7000,8000]") != std::string::npos);
  CHECK(page.find("src=") == std::string::npos);
  CHECK(page.find("http") == std::string::npos);
}

}  // namespace test_lane_view
