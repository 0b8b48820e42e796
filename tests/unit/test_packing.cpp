// Packing library (docs/packing.md): the worked examples of DESIGN.md section 7 exactly, each
// packer on a hand-computed example, windows, overflow and compile policies, decode continuous
// batching, conservation on the Azure code trace, and every kind of bad input.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <iostream>
#include <numeric>

#include "input_error.hpp"
#include "models/common/error.hpp"
#include "sim/packing/bin_packer.hpp"
#include "sim/packing/buckets.hpp"
#include "sim/packing/metrics.hpp"
#include "sim/packing/packer.hpp"
#include "sim/packing/request_log.hpp"

namespace test_packing {

using namespace systolic;
using namespace systolic::packing;
using systolic::testing::input_error_of;

namespace {
const std::string kData = std::string(SYSTOLIC_TEST_DATA) + "/packing/";
const std::string kTraces = std::string(SYSTOLIC_SOURCE_DIR) + "/traces/";
const std::string kAzure = kTraces + "requests/azure-llm-2023/AzureLLMInferenceTrace_code.csv";

std::string log_error(const std::string& file, bool skip = false) {
  return input_error_of([&] { load_request_log(kData + file, skip); });
}

std::string bucket_error(const std::string& file) {
  return input_error_of([&] { load_bucket_set(kData + file); });
}

Request req(int64_t id, double t, int64_t prompt, int64_t output = 1) {
  Request r;
  r.id = id;
  r.arrival_s = t;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  r.line = static_cast<int>(id) + 2;
  return r;
}

std::vector<Item> items_of(const std::vector<int64_t>& lengths) {
  std::vector<Item> items;
  for (size_t i = 0; i < lengths.size(); ++i)
    items.push_back({static_cast<int64_t>(i), lengths[i], 0, 1, 0});
  return items;
}

// Each lane as the list of its segment lengths.
std::vector<std::vector<int64_t>> tokens_of(const std::vector<Lane>& lanes) {
  std::vector<std::vector<int64_t>> out;
  for (const Lane& l : lanes) {
    std::vector<int64_t> t;
    for (const Segment& s : l.segments) t.push_back(s.tokens);
    out.push_back(t);
  }
  return out;
}

using Lanes = std::vector<std::vector<int64_t>>;

Lane lane_of(const std::vector<int64_t>& lengths, int64_t first_id = 0) {
  Lane lane;
  int64_t offset = 0;
  for (int64_t len : lengths) {
    lane.segments.push_back({first_id++, offset, len, 0, 1, 0});
    offset += len;
  }
  return lane;
}

int64_t total_pad(const std::vector<BucketInstance>& instances) {
  int64_t n = 0;
  for (const BucketInstance& i : instances) n += pad_tokens(i);
  return n;
}
}  // namespace

// ---------------------------------------------------------------- worked examples (DESIGN §7)

TEST_CASE("worked example: one 8192 lane holding 3000 + 4000 + 1000", "[packing]") {
  const Lane lane = lane_of({3000, 4000, 1000});
  CHECK(lane.used() == 8000);
  CHECK(pad_tokens(lane, 8192) == 192);
  CHECK(lane.cu_seqlens() == std::vector<int64_t>{0, 3000, 7000, 8000});

  // Full attention computes 8192^2 cells; 3000^2 + 4000^2 + 1000^2 = 26 M are useful.
  const AttentionCells c = attention_cells(lane, 8192);
  CHECK(c.computed == 67'108'864);
  CHECK(c.useful == 26'000'000);
  CHECK(c.masked() == 41'108'864);
  CHECK(c.cross == 8000LL * 8000 - 26'000'000);   // 38 M between the three requests
  CHECK(c.pad == 67'108'864 - 8000LL * 8000);     // 3.1 M on the 192 pad tokens
  CHECK(c.masked_fraction() == Approx(0.6126).margin(0.0001));  // "61 % masked"

  // The same through the whole replay, with the varlen ideal beside it.
  const BucketSet set = make_bucket_set({{1, 8192}}, {{1, 8192}});
  PackOptions o;
  o.packer = "first-fit";
  const PackResult r = pack({req(0, 0, 3000), req(1, 0, 4000), req(2, 0, 1000)}, set, o);
  REQUIRE(r.prefill.size() == 1);
  CHECK(tokens_of(r.prefill[0].lanes) == Lanes{{3000, 4000, 1000}});
  const Summary s = summarize(r);
  CHECK(s.prefill.pad_tokens == 192);
  CHECK(s.prefill.cells.computed == 67'108'864);
  CHECK(s.prefill.cells.useful == 26'000'000);
  CHECK(s.prefill.ideal_tokens == 8000);
  CHECK(s.prefill.ideal_cells == 26'000'000);  // varlen: no pads, no cross cells
}

TEST_CASE("worked example: the [4 x 8192] sheet A..I has 668 pad tokens (2.04 %)", "[packing]") {
  // A 2000 + B 5000 + C 1000 | D 8000 | E 3000 + F 3000 + G 2100 | H 4000 + I 4000.
  // First-fit in arrival order builds exactly this sheet: C fits lane 1 (7000 + 1000), D
  // opens lane 2, E lane 3 (lanes 1 and 2 have 192 free), F and G join E, H opens lane 4
  // (lane 3 has 92 free), I joins H.
  const std::vector<int64_t> abc = {2000, 5000, 1000, 8000, 3000, 3000, 2100, 4000, 4000};
  const std::vector<Lane> lanes = pack_lanes(items_of(abc), 8192, "first-fit");
  CHECK(tokens_of(lanes) == Lanes{{2000, 5000, 1000}, {8000}, {3000, 3000, 2100}, {4000, 4000}});
  const std::vector<BucketInstance> sheet = place_lanes(lanes, {{4, 8192}});
  REQUIRE(sheet.size() == 1);
  const BucketInstance& inst = sheet[0];
  CHECK(inst.shape == Shape{4, 8192});
  std::vector<int64_t> pads;
  for (const Lane& l : inst.lanes) pads.push_back(pad_tokens(l, 8192));
  CHECK(pads == std::vector<int64_t>{192, 192, 92, 192});
  CHECK(pad_tokens(inst) == 668);
  CHECK(useful_tokens(inst) == 32768 - 668);
  CHECK(100 * pad_fraction(inst) == Approx(2.04).margin(0.005));
  CHECK(inst.lanes[2].cu_seqlens() == std::vector<int64_t>{0, 3000, 6000, 8100});

  // The same requests arriving together, through pack() with the bucket set from a file.
  const BucketSet set = load_bucket_set(kData + "sheet.yaml");
  std::vector<Request> rs;
  for (size_t i = 0; i < abc.size(); ++i) rs.push_back(req(static_cast<int64_t>(i), 0.0, abc[i]));
  const Summary s = summarize(pack(rs, set, PackOptions{}));
  // One prefill shape and no decode: each request's one output token comes from prefill.
  REQUIRE(s.shapes.size() == 1);
  CHECK(s.shapes[0].runs == 1);
  CHECK(s.shapes[0].pad_tokens == 668);
  CHECK(100 * (1 - s.shapes[0].fill) == Approx(2.04).margin(0.005));
}

// ---------------------------------------------------------------- the packers by hand

TEST_CASE("each packer on a hand-computed example", "[packing]") {
  // Items in arrival order: 40, 70, 30, 50, 60; lanes of 100 tokens.
  const std::vector<Item> items = items_of({40, 70, 30, 50, 60});
  // none: every item alone.
  CHECK(tokens_of(pack_lanes(items, 100, "none")) == Lanes{{40}, {70}, {30}, {50}, {60}});
  // first-fit: 40 -> L1; 70 -> L2 (L1 has 60); 30 -> L1 (70); 50 -> L3 (L1 30, L2 30 free);
  // 60 -> L4.
  CHECK(tokens_of(pack_lanes(items, 100, "first-fit")) ==
        Lanes{{40, 30}, {70}, {50}, {60}});
  // first-fit-decreasing: 70 60 50 40 30. 70 -> L1; 60 -> L2; 50 -> L3; 40 -> L2 (L1 has 30);
  // 30 -> L1.
  CHECK(tokens_of(pack_lanes(items, 100, "first-fit-decreasing")) ==
        Lanes{{70, 30}, {60, 40}, {50}});
  // best-fit: 40 -> L1 (60 free); 70 -> L2 (30 free); 30 -> L2, the tightest (0 free);
  // 50 -> L1 (10 free); 60 -> L3.
  CHECK(tokens_of(pack_lanes(items, 100, "best-fit")) == Lanes{{40, 50}, {70, 30}, {60}});

  // Lanes to instances with buckets [1, 50], [1, 100], [2, 100].
  const std::vector<Shape> shapes{{1, 50}, {1, 100}, {2, 100}};
  // first-fit: fills 70, 70, 50, 60 -> lengths 100, 100, 50, 100. Three lanes of 100: the
  // largest B they fill is 2: [2, 100] {70, 70}, then [1, 100] {60}; then [1, 50] {50}.
  // Pad 30 + 30 + 40 + 0.
  auto ff = place_lanes(pack_lanes(items, 100, "first-fit"), shapes);
  REQUIRE(ff.size() == 3);
  CHECK(ff[0].shape == Shape{2, 100});
  CHECK(tokens_of(ff[0].lanes) == Lanes{{40, 30}, {70}});
  CHECK(ff[1].shape == Shape{1, 100});
  CHECK(tokens_of(ff[1].lanes) == Lanes{{60}});
  CHECK(ff[2].shape == Shape{1, 50});
  CHECK(total_pad(ff) == 100);
  // best-fit: fills 90, 100, 60, all length 100: [2, 100] {90, 100} + [1, 100] {60}. Pad 50.
  auto bf = place_lanes(pack_lanes(items, 100, "best-fit"), shapes);
  REQUIRE(bf.size() == 2);
  CHECK(total_pad(bf) == 50);
  // first-fit-decreasing: fills 100, 100, 50: [2, 100] + [1, 50], no padding at all.
  auto ffd = place_lanes(pack_lanes(items, 100, "first-fit-decreasing"), shapes);
  REQUIRE(ffd.size() == 2);
  CHECK(ffd[1].shape == Shape{1, 50});
  CHECK(total_pad(ffd) == 0);
  // none: 70 and 60 share a [2, 100] (pad 30 + 40); 40, 30, 50 each a [1, 50] (10 + 20 + 0).
  auto none = place_lanes(pack_lanes(items, 100, "none"), shapes);
  REQUIRE(none.size() == 4);
  CHECK(tokens_of(none[0].lanes) == Lanes{{70}, {60}});
  CHECK(total_pad(none) == 100);
}

TEST_CASE("empty lanes of a batched instance take the longest shorter lanes", "[packing]") {
  // none with buckets [1, 50] and [4, 100]: 70 and 60 need length 100, whose only B is 4, so
  // one [4, 100] with two empty lanes; these take the longest lanes waiting for length 50 (50,
  // then 40); 30 runs alone.
  const auto inst = place_lanes(pack_lanes(items_of({40, 70, 30, 50, 60}), 100, "none"),
                                {{1, 50}, {4, 100}});
  REQUIRE(inst.size() == 2);
  CHECK(inst[0].shape == Shape{4, 100});
  CHECK(tokens_of(inst[0].lanes) == Lanes{{70}, {60}, {50}, {40}});
  CHECK(inst[1].shape == Shape{1, 50});
  CHECK(tokens_of(inst[1].lanes) == Lanes{{30}});
  CHECK(total_pad(inst) == 30 + 40 + 50 + 60 + 20);
  // A [4, 100] with one lane and nothing to move keeps three empty lanes (all pad).
  const auto lone = place_lanes({lane_of({10})}, {{4, 100}});
  REQUIRE(lone.size() == 1);
  CHECK(lone[0].lanes.size() == 4);
  CHECK(pad_tokens(lone[0]) == 390);
  CHECK(attention_cells(lone[0]).computed == 4 * 100 * 100);
  CHECK(attention_cells(lone[0]).useful == 100);
}

// ---------------------------------------------------------------- windows

TEST_CASE("arrival windows group requests until the oldest has waited W ms", "[packing]") {
  const BucketSet set = make_bucket_set({{1, 100}, {4, 100}}, {{4, 200}});
  const std::vector<Request> rs{req(0, 0.000, 10), req(1, 0.010, 20), req(2, 0.020, 30),
                                req(3, 0.030, 40), req(4, 0.100, 50)};
  PackOptions o;
  o.window_ms = 20;
  const PackResult r = pack(rs, set, o);
  // Window 0 opens at 0 and closes at 0.020 (inclusive): requests 0, 1, 2 in one lane.
  // Window 1 opens at 0.030 (request 3), closes 0.050; window 2 opens at 0.100.
  CHECK(r.windows == 3);
  REQUIRE(r.prefill.size() == 3);
  CHECK(tokens_of(r.prefill[0].lanes) == Lanes{{10, 20, 30}});
  CHECK(r.prefill[0].dispatch_s == Approx(0.020));
  CHECK(r.prefill[1].window == 1);
  CHECK(r.prefill[1].dispatch_s == Approx(0.050));
  CHECK(r.prefill[2].dispatch_s == Approx(0.120));
  CHECK(r.accepted[0].prefill_dispatch_s - r.accepted[0].arrival_s == Approx(0.020));
  CHECK(r.accepted[2].prefill_dispatch_s - r.accepted[2].arrival_s == Approx(0.0).margin(1e-12));
  const Summary s = summarize(r);
  CHECK(s.wait.max == Approx(0.020));

  // W = 0: only simultaneous arrivals share a window.
  o.window_ms = 0;
  std::vector<Request> same = rs;
  same[1].arrival_s = 0.0;
  const PackResult z = pack(same, set, o);
  CHECK(z.windows == 4);
  CHECK(tokens_of(z.prefill[0].lanes) == Lanes{{10, 20}});
  CHECK(z.prefill[0].dispatch_s == 0.0);

  // A huge window packs everything into one lane: 10+20+30+40 = 100, then 50 opens a second
  // lane. Two lanes of 100 fill no [4, 100]: they run as two [1, 100].
  o.window_ms = 1e6;
  const PackResult all = pack(rs, set, o);
  CHECK(all.windows == 1);
  REQUIRE(all.prefill.size() == 2);
  CHECK(all.prefill[0].shape == Shape{1, 100});
  CHECK(tokens_of(all.prefill[0].lanes) == Lanes{{10, 20, 30, 40}});
  CHECK(tokens_of(all.prefill[1].lanes) == Lanes{{50}});
  // Five lanes with B in {1, 4}: one full [4, 100], then [1, 100].
  std::vector<Request> five;
  for (int i = 0; i < 5; ++i) five.push_back(req(i, 0.0, 60));
  const PackResult r5 = pack(five, set, o);
  REQUIRE(r5.prefill.size() == 2);
  CHECK(r5.prefill[0].shape == Shape{4, 100});
  CHECK(r5.prefill[1].shape == Shape{1, 100});
}

// ---------------------------------------------------------------- overflow and compile policies

TEST_CASE("a prompt longer than every bucket: rejected, or split into chunks", "[packing]") {
  const BucketSet set = make_bucket_set({{1, 100}}, {{2, 1000}});
  const std::vector<Request> rs{req(0, 0, 250, 5), req(1, 0, 40, 5)};
  PackOptions o;
  o.overflow = Overflow::reject;
  const PackResult rej = pack(rs, set, o);
  REQUIRE(rej.rejected.size() == 1);
  CHECK(rej.rejected[0].request_id == 0);
  CHECK(rej.rejected[0].phase == Phase::prefill);
  CHECK(rej.rejected[0].line == 2);
  CHECK(rej.rejected[0].reason == "prompt of 250 tokens > longest prefill bucket S = 100");
  const Summary srej = summarize(rej);
  CHECK(srej.accepted == 1);
  CHECK(srej.rejected_prefill == 1);
  CHECK(srej.prefill.useful_tokens == 40);
  CHECK(srej.decode.useful_tokens == 4);  // 5 tokens: the first from prefill, 4 decode steps

  // split: chunks of S = 100 from the start of the prompt: 100, 100, 50. First-fit puts the
  // 50-token tail and the 40-token request in one lane: three [1, 100], pad 10.
  o.overflow = Overflow::split;
  const PackResult sp = pack(rs, set, o);
  CHECK(sp.rejected.empty());
  CHECK(sp.split == std::vector<int64_t>{0});
  REQUIRE(sp.prefill.size() == 3);
  CHECK(tokens_of(sp.prefill[2].lanes) == Lanes{{50, 40}});
  const Segment& tail = sp.prefill[2].lanes[0].segments[0];
  CHECK(tail.request_id == 0);
  CHECK(tail.chunk == 2);
  CHECK(tail.chunks == 3);
  CHECK(tail.request_offset == 200);
  CHECK(sp.prefill[1].lanes[0].segments[0].request_offset == 100);
  const Summary s = summarize(sp);
  CHECK(s.split == 1);
  CHECK(s.chunks == 3);
  CHECK(s.prefill.pad_tokens == 10);
  CHECK(s.prefill.useful_tokens == 290);
  // Cells between chunks are not computed by any lane: 250^2 - (100^2 + 100^2 + 50^2).
  CHECK(s.split_cross_cells == 40000);
  CHECK(s.prefill.cells.useful == 22500 + 1600);
  CHECK(s.prefill.cells.useful + s.split_cross_cells == s.prefill.ideal_cells);
}

TEST_CASE("a generation longer than every decode L: rejected, or truncated under split",
          "[packing]") {
  const BucketSet set = make_bucket_set({{1, 100}}, {{2, 100}});
  const std::vector<Request> rs{req(0, 0, 60, 50), req(1, 0, 30, 5)};
  PackOptions o;
  const PackResult rej = pack(rs, set, o);
  REQUIRE(rej.rejected.size() == 1);
  CHECK(rej.rejected[0].phase == Phase::decode);
  CHECK(rej.rejected[0].reason ==
        "prompt + output = 60 + 50 = 110 tokens > longest decode bucket L = 100");
  // Rejected at admission: it is not prefilled either.
  CHECK(summarize(rej).prefill.useful_tokens == 30);

  o.overflow = Overflow::split;
  const PackResult tr = pack(rs, set, o);
  CHECK(tr.rejected.empty());
  REQUIRE(tr.truncated.size() == 1);
  CHECK(tr.truncated[0].generated_tokens == 40);  // KV full at 60 + 40 = 100
  CHECK(tr.truncated[0].dropped_tokens == 10);
  const Summary s = summarize(tr);
  CHECK(s.decode.useful_tokens == 39 + 4);  // decode steps after prefill's token: 40 - 1 and 5 - 1
  CHECK(s.truncated_tokens == 10);
}

TEST_CASE("compiling new shapes at run time stalls dispatch once per shape", "[packing]") {
  const BucketSet set = make_bucket_set({{1, 100}}, {{2, 1000}});
  PackOptions o;
  o.compile_new_shapes = true;
  o.compile_granule = 10;
  o.compile_stall_s = 5;
  // 0: 250 tokens, longer than every bucket: compile [1, 250], dispatched at 0 + 5 s.
  // 1: 245 tokens at 1 s: reuses [1, 250] (2 % pad), but waits for the compiler until 5 s.
  // 2: 20 tokens at 10 s: [1, 100] would be 80 % pad > 50 %: compile [1, 20], dispatch 15 s.
  // 3: 20 tokens at 20 s: reuses [1, 20], no stall.
  const std::vector<Request> rs{req(0, 0, 250), req(1, 1, 245), req(2, 10, 20), req(3, 20, 20)};
  const PackResult r = pack(rs, set, o);
  REQUIRE(r.compiled.size() == 2);
  CHECK(r.compiled[0].shape == Shape{1, 250});
  CHECK(r.compiled[0].phase == Phase::prefill);
  CHECK(r.compiled[1].shape == Shape{1, 20});
  CHECK(r.compiled[1].at_s == 10.0);
  CHECK(r.compile_stall_s == 10.0);
  REQUIRE(r.prefill.size() == 4);
  CHECK(r.prefill[0].dispatch_s == 5.0);
  CHECK(r.prefill[0].runtime_shape);
  CHECK(r.prefill[1].shape == Shape{1, 250});
  CHECK(r.prefill[1].dispatch_s == 5.0);
  CHECK(r.prefill[2].dispatch_s == 15.0);
  CHECK(r.prefill[3].dispatch_s == 20.0);
  CHECK(r.prefill[3].shape == Shape{1, 20});
  CHECK(r.rejected.empty());

  // compile_max_length caps what may be compiled; beyond it the overflow policy applies.
  o.compile_max_length = 200;
  const PackResult capped = pack(rs, set, o);
  CHECK(capped.rejected.size() == 2);  // 250 and 245 round to 250 > 200
  // A threshold of 1 never compiles to save padding.
  o.compile_max_length = 0;
  o.compile_pad_threshold = 1.0;
  CHECK(pack(rs, set, o).compiled.size() == 1);

  // Decode overflow with compilation on: a [1, L'] decode pool compiled for it.
  const BucketSet small = make_bucket_set({{1, 100}}, {{2, 100}});
  o.compile_pad_threshold = 0.5;
  const PackResult d = pack({req(0, 0, 50, 70)}, small, o);
  REQUIRE(d.compiled.size() == 1);
  CHECK(d.compiled[0].phase == Phase::decode);
  CHECK(d.compiled[0].shape == Shape{1, 120});
  REQUIRE(d.decode.size() == 1);
  CHECK(d.decode[0].shape == Shape{1, 120});
  CHECK(d.decode[0].runtime_shape);
  CHECK(d.decode[0].steps == 69);  // 70 tokens, the first from prefill
}

// ---------------------------------------------------------------- decode

TEST_CASE("decode refills freed slots (continuous batching)", "[packing]") {
  // Pool [2 slots, L = 100]; prompt 10 each; outputs A 3, B 1, C 2, D 2 (ready in that order).
  //   step 1: A B   (KV 11 11)  B done
  //   step 2: A C   (12 11)
  //   step 3: A C   (13 12)     A, C done
  //   step 4: D -   (11)
  //   step 5: D -   (12)        D done
  // 5 steps, 8 occupied slot-steps, 2 empty; KV used 22 + 23 + 25 + 11 + 12 = 93 of 5·2·100.
  const std::vector<DecodeJob> jobs{{0, 10, 3, 0}, {1, 10, 1, 0}, {2, 10, 2, 0}, {3, 10, 2, 0}};
  const auto st = schedule_decode(jobs, {{2, 100}});
  REQUIRE(st.size() == 1);
  CHECK(st[0].shape == Shape{2, 100});
  CHECK(st[0].steps == 5);
  CHECK(st[0].requests == 4);
  CHECK(st[0].occupied_slot_steps == 8);
  CHECK(st[0].empty_slot_steps == 2);
  CHECK(st[0].kv_used == 93);
  CHECK(st[0].kv_capacity == 1000);

  // Several B for one L: each step runs the smallest B >= occupied slots.
  const auto multi = schedule_decode({{0, 10, 3, 0}, {1, 10, 1, 0}}, {{1, 100}, {4, 100}});
  REQUIRE(multi.size() == 2);
  CHECK(multi[0].shape == Shape{1, 100});
  CHECK(multi[0].steps == 2);
  CHECK(multi[0].empty_slot_steps == 0);
  CHECK(multi[1].shape == Shape{4, 100});
  CHECK(multi[1].steps == 1);
  CHECK(multi[1].requests == 2);
  CHECK(multi[1].empty_slot_steps == 2);

  // Each request goes to the smallest L >= prompt + output.
  const auto classes = schedule_decode({{0, 10, 5, 0}, {1, 60, 50, 0}}, {{2, 100}, {2, 200}});
  REQUIRE(classes.size() == 2);
  CHECK(classes[0].occupied_slot_steps == 5);
  CHECK(classes[1].occupied_slot_steps == 50);
}

TEST_CASE("pack() runs decode after prefill and reports it per shape", "[packing]") {
  const BucketSet set = load_bucket_set(kData + "issue.yaml");
  CHECK(set.name == "issue");
  const RequestLog log = load_request_log(kData + "seconds.csv");
  const PackResult r = pack(log.requests, set, PackOptions{});
  // 8000 + 3 tokens exceed the one decode pool's L = 4096: rejected at admission.
  REQUIRE(r.accepted.size() == 3);
  CHECK(r.accepted[0].decode_shape == Shape{8, 4096});
  CHECK(r.rejected.size() == 1);  // 8000 + 3 > 4096: no decode pool holds it
  const Summary s = summarize(r);
  CHECK(s.decode.useful_tokens == 3 + 1 + 0);  // outputs 4, 2, 1: prefill gives each its first token
}

// ---------------------------------------------------------------- the Azure code trace

TEST_CASE("the Azure code trace loads as published", "[packing]") {
  const RequestLog log = load_request_log(kAzure);
  // 8,819 data rows (8,820 lines with the header; the last has no newline, so `wc -l` says
  // 8,819 and its README's "8,818" is that count minus the header).
  CHECK(log.requests.size() == 8819);
  CHECK(log.format == LogFormat::azure);
  CHECK(log.origin == "2023-11-16 18:17:03.9799600");
  CHECK(log.warnings.empty());
  CHECK(log.skipped_lines == 0);
  CHECK(log.requests.front().arrival_s == 0.0);
  CHECK(log.requests.front().prompt_tokens == 4808);
  CHECK(log.requests.front().output_tokens == 10);
  CHECK(log.requests.front().line == 2);
  CHECK(log.requests[1].arrival_s == Approx(0.052).margin(1e-9));
  // 19:14:19.9280160 - 18:17:03.9799600
  CHECK(log.requests.back().arrival_s == Approx(3435.948056).margin(1e-6));
  int64_t prompt = 0, output = 0;
  for (const Request& r : log.requests) {
    prompt += r.prompt_tokens;
    output += r.output_tokens;
  }
  CHECK(prompt == 18'059'974);
  CHECK(output == 245'896);
}

TEST_CASE("conservation: every accepted token is packed exactly once", "[packing]") {
  const RequestLog log = load_request_log(kAzure);
  for (const char* file : {"default.yaml", "pow2.yaml"}) {
    const BucketSet set = load_bucket_set(kTraces + "buckets/" + file);
    check_buckets_fit_array(set, 128, 128);
    check_buckets_fit_array(set, 256, 256);
    for (const std::string& p : PackerRegistry::instance().names()) {  // every registered packer
      for (double w : {0.0, 1000.0}) {
        PackOptions o;
        o.packer = p;
        o.window_ms = w;
        const auto t0 = std::chrono::steady_clock::now();
        const PackResult r = pack(log.requests, set, o);
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        INFO(file << " " << p << " W=" << w);
        CHECK(ms < 2000);  // milliseconds in practice; generous for debug builds
        const Summary s = summarize(r);
        CHECK(s.accepted == 8819);
        CHECK(s.prefill.useful_tokens == 18'059'974);
        CHECK(s.prefill.ideal_tokens == 18'059'974);
        CHECK(s.prefill.cells.useful == s.prefill.ideal_cells);  // nothing split
        CHECK(s.decode.useful_tokens == 245'896 - 8'819);  // every output token but prefill's
        CHECK(s.decode.cells.useful == s.decode.ideal_cells);
        // Every request id appears once (one segment, none split).
        std::vector<int> seen(log.requests.size(), 0);
        for (const BucketInstance& inst : r.prefill) {
          CHECK(static_cast<int64_t>(inst.lanes.size()) == inst.shape.batch);
          for (const Lane& lane : inst.lanes) {
            CHECK(lane.used() <= inst.shape.length);
            for (const Segment& seg : lane.segments) seen[static_cast<size_t>(seg.request_id)] += 1;
          }
        }
        CHECK(std::count(seen.begin(), seen.end(), 1) == 8819);
        for (const ShapeSummary& row : s.shapes)
          CHECK(row.cells.masked() == row.cells.computed - row.cells.useful);
        if (p != "none" && w > 0) CHECK(s.prefill.runs < 8819);
      }
    }
  }
  // Split conservation on the issue's set: prompts above 2048... all fit 8192; decode L 4096.
  const BucketSet issue = load_bucket_set(kData + "issue.yaml");
  PackOptions o;
  o.overflow = Overflow::split;
  const Summary s = summarize(pack(log.requests, issue, o));
  CHECK(s.rejected == 0);
  CHECK(s.truncated > 0);
  CHECK(s.prefill.useful_tokens == 18'059'974);
  // Every output token is decoded, dropped by truncation, or the one prefill produced.
  CHECK(s.decode.useful_tokens + s.truncated_tokens + s.accepted == 245'896);
}

TEST_CASE("packing speed on the Azure code trace", "[.packing-bench]") {
  const RequestLog log = load_request_log(kAzure);
  for (const char* file : {"default.yaml", "pow2.yaml"}) {
    const BucketSet set = load_bucket_set(kTraces + "buckets/" + file);
    for (const std::string& p : PackerRegistry::instance().names()) {  // every registered packer
      for (double w : {0.0, 1000.0, 1e9}) {
        PackOptions o;
        o.packer = p;
        o.window_ms = w;
        const auto t0 = std::chrono::steady_clock::now();
        const Summary s = summarize(pack(log.requests, set, o));
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        std::cout << file << " " << p << " W=" << w << " ms: " << ms
                  << " ms, prefill runs " << s.prefill.runs << ", fill " << s.prefill.fill << "\n";
      }
    }
  }
}

// ---------------------------------------------------------------- request logs

TEST_CASE("request logs: Azure timestamps and plain seconds", "[packing]") {
  const RequestLog a = load_request_log(kData + "azure_small.csv");
  REQUIRE(a.requests.size() == 4);
  CHECK(a.origin == "2023-12-31 23:59:59.5");
  CHECK(a.requests[0].arrival_s == 0.0);
  CHECK(a.requests[1].arrival_s == Approx(0.47996).margin(1e-9));  // 'T' separator, 7 digits
  CHECK(a.requests[1].line == 5);                                  // after a comment, a blank
  CHECK(a.requests[2].arrival_s == Approx(0.5).margin(1e-9));      // across midnight and year
  CHECK(a.requests[3].arrival_s == Approx(1.623456789012).margin(1e-9));  // 12 digits
  CHECK(a.requests[3].prompt_tokens == 400);
  CHECK(a.requests[3].output_tokens == 8);

  const RequestLog s = load_request_log(kData + "seconds.csv");
  CHECK(s.format == LogFormat::seconds);
  REQUIRE(s.requests.size() == 4);
  CHECK(s.requests[2].arrival_s == 0.010);
  CHECK(s.requests[3].prompt_tokens == 8000);

  const RequestLog text = parse_request_log("ARRIVAL_S, Prompt_Tokens, output_tokens\n2.5, 7, 1\n", "mem");
  CHECK(text.requests[0].arrival_s == 2.5);  // plain seconds are kept as written
}

TEST_CASE("request logs: unsorted rows are sorted with a warning", "[packing]") {
  const RequestLog log = load_request_log(kData + "unsorted.csv");
  REQUIRE(log.requests.size() == 4);
  std::vector<int64_t> prompts;
  for (const Request& r : log.requests) prompts.push_back(r.prompt_tokens);
  CHECK(prompts == std::vector<int64_t>{20, 40, 10, 30});  // stable: 0.2 (line 3) before 0.2 (line 5)
  CHECK(log.requests[0].id == 0);
  CHECK(log.requests[0].line == 3);
  REQUIRE(log.warnings.size() == 1);
  CHECK_THAT(log.warnings[0], Catch::Contains("unsorted.csv: 2 requests are out of arrival order"));
  CHECK_THAT(log.warnings[0], Catch::Contains("first at line 3"));
  CHECK_THAT(log.warnings[0], Catch::Contains("sorted by arrival time"));
}

TEST_CASE("request logs: every bad input names file and line", "[packing]") {
  CHECK_THAT(log_error("bad_fields.csv"),
             Catch::Contains("bad_fields.csv:3: expected 3 comma-separated fields "
                             "(TIMESTAMP,ContextTokens,GeneratedTokens), got 2"));
  CHECK_THAT(log_error("zero_tokens.csv"),
             Catch::Contains("zero_tokens.csv:3: ContextTokens: expected a positive token count, got 0"));
  CHECK_THAT(log_error("negative_tokens.csv"),
             Catch::Contains("negative_tokens.csv:4: output_tokens: expected a positive token count, got -5"));
  CHECK_THAT(log_error("bad_mixed.csv"),
             Catch::Contains("bad_mixed.csv:3: TIMESTAMP '2023-11-16 25:17:04.0319600': hour 25 is "
                             "not in 0..23"));
  CHECK_THAT(log_error("bad_header.csv"),
             Catch::Contains("bad_header.csv:1: expected a header 'TIMESTAMP,ContextTokens,"
                             "GeneratedTokens' (Azure LLM inference trace) or 'arrival_s,"
                             "prompt_tokens,output_tokens', got 'time,prompt,output'"));
  CHECK_THAT(log_error("empty.csv"), Catch::Contains("empty.csv: empty request log"));
  CHECK_THAT(log_error("header_only.csv"), Catch::Contains("header_only.csv: no request rows"));
  CHECK_THAT(log_error("negative_time.csv"),
             Catch::Contains("negative_time.csv:2: arrival_s: expected a time in seconds"));
  CHECK_THAT(log_error("all_bad.csv", true),
             Catch::Contains("all_bad.csv: no valid request rows: all 2 data rows are bad"));
  CHECK_THAT(log_error("no_such_file.csv"), Catch::Contains("no_such_file.csv: cannot open"));
  CHECK_THAT(input_error_of([] { parse_request_log("TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                             "2023-02-30 00:00:00,1,1\n", "mem.csv"); }),
             Catch::Contains("mem.csv:2: TIMESTAMP '2023-02-30 00:00:00': day 30 is not in 1..28"));
  CHECK_THAT(input_error_of([] { parse_request_log("TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                             "18:17:03,1,1\n", "mem.csv"); }),
             Catch::Contains("mem.csv:2: TIMESTAMP: expected 'YYYY-MM-DD HH:MM:SS[.fraction]'"));
  CHECK_THAT(input_error_of([] { parse_request_log("arrival_s,prompt_tokens,output_tokens\n"
                                             "0,99999999999,1\n", "mem.csv"); }),
             Catch::Contains("mem.csv:2: prompt_tokens: 99999999999 tokens is more than"));

  // skip_bad_lines: count, list, continue.
  const RequestLog skipped = load_request_log(kData + "bad_mixed.csv", true);
  CHECK(skipped.requests.size() == 2);
  CHECK(skipped.skipped_lines == 2);
  REQUIRE(skipped.skipped.size() == 2);
  CHECK_THAT(skipped.skipped[0], Catch::StartsWith(kData + "bad_mixed.csv:3: TIMESTAMP"));
  CHECK_THAT(skipped.skipped[1],
             Catch::Contains("bad_mixed.csv:4: GeneratedTokens: expected a positive integer "
                             "token count, got 'abc'"));
  CHECK(skipped.requests[1].line == 5);
}

// ---------------------------------------------------------------- bucket sets

TEST_CASE("bucket sets load from YAML, sorted by length", "[packing]") {
  const BucketSet set = load_bucket_set(kTraces + "buckets/default.yaml");
  CHECK(set.name == "default");
  REQUIRE(!set.prefill.empty());
  CHECK(set.prefill.front().shape == Shape{1, 512});
  CHECK(set.prefill.back().shape == Shape{4, 8192});
  CHECK(set.decode.front().shape == Shape{16, 2048});
  CHECK(set.prefill.front().line > 0);
  const BucketSet issue = load_bucket_set(kData + "issue.yaml");
  REQUIRE(issue.prefill.size() == 2);
  CHECK(issue.prefill[1].shape == Shape{4, 8192});
  CHECK(issue.decode[0].shape == Shape{8, 4096});
  CHECK(to_string(issue.prefill[0].shape) == "[1, 2048]");
}

TEST_CASE("bucket sets: every bad input names file and line", "[packing]") {
  CHECK_THAT(bucket_error("empty.yaml"), Catch::Contains("empty.yaml: empty bucket set"));
  CHECK_THAT(bucket_error("comment_only.yaml"), Catch::Contains("comment_only.yaml: empty bucket set"));
  CHECK_THAT(bucket_error("empty_prefill.yaml"),
             Catch::Contains("empty_prefill.yaml:1: key 'prefill': expected a non-empty list of "
                             "[B, S] buckets, e.g. [[1, 2048], [4, 8192]], got an empty list"));
  CHECK_THAT(bucket_error("unknown_key.yaml"),
             Catch::Contains("unknown_key.yaml:2: unknown key 'prefil' (did you mean 'prefill'?); "
                             "allowed: name, prefill, decode"));
  CHECK_THAT(bucket_error("missing_decode.yaml"),
             Catch::Contains("missing_decode.yaml:1: missing key 'decode'"));
  CHECK_THAT(bucket_error("short_entry.yaml"),
             Catch::Contains("short_entry.yaml:3: key 'prefill': each bucket must be a list of two "
                             "integers [B, S], got a list of 1 items"));
  CHECK_THAT(bucket_error("zero_batch.yaml"),
             Catch::Contains("zero_batch.yaml:3: key 'prefill': B (lanes) of a [B, S] bucket must "
                             "be an integer in [1, 4096], got '0'"));
  CHECK_THAT(bucket_error("quoted.yaml"),
             Catch::Contains("quoted.yaml:4: key 'decode': L (KV length) of a [B, L] bucket must be "
                             "an integer in [1, 16777216], got the string '4096'"));
  CHECK_THAT(bucket_error("duplicate.yaml"),
             Catch::Contains("duplicate.yaml:3: key 'prefill': bucket [1, 2048] is listed twice "
                             "(also at line 2)"));
  CHECK_THAT(bucket_error("malformed.yaml"), Catch::Contains("malformed YAML"));
  CHECK_THAT(bucket_error("malformed.yaml"), Catch::StartsWith(kData + "malformed.yaml:"));
  CHECK_THAT(bucket_error("decode_scalar.yaml"),
             Catch::Contains("decode_scalar.yaml:2: key 'decode': expected a non-empty list"));
  CHECK_THAT(bucket_error("not_map.yaml"), Catch::Contains("not_map.yaml:1: expected a map"));
  CHECK_THAT(bucket_error("no_such.yaml"), Catch::Contains("no_such.yaml: cannot open"));
  CHECK_THAT(input_error_of([] { make_bucket_set({}, {{8, 4096}}); }),
             Catch::Contains("'prefill' bucket list is empty"));
}

TEST_CASE("bucket lengths must be multiples of the array tile", "[packing]") {
  const BucketSet odd = load_bucket_set(kData + "odd_lengths.yaml");
  CHECK_NOTHROW(check_buckets_fit_array(odd, 4, 4));  // 3000 = 750 x 4
  CHECK_THAT(input_error_of([&] { check_buckets_fit_array(odd, 128, 128); }),
             Catch::Contains("odd_lengths.yaml:4: prefill bucket [1, 3000]: S = 3000 is not a "
                             "multiple of 128 (its width for the 128x128 array)"));
  CHECK_THAT(input_error_of([&] { check_buckets_fit_array(odd, 128, 128); }),
             Catch::Contains("Use 2944 or 3072"));
  CHECK(array_tile(128, 96) == 384);
  const BucketSet issue = load_bucket_set(kData + "issue.yaml");
  CHECK_NOTHROW(check_buckets_fit_array(issue, 256, 256));
  CHECK_THAT(input_error_of([&] { check_buckets_fit_array(issue, 96, 96); }),
             Catch::Contains("prefill bucket [1, 2048]: S = 2048 is not a multiple of 96"));
}

TEST_CASE("pack options are validated", "[packing]") {
  const BucketSet set = make_bucket_set({{1, 100}}, {{1, 100}});
  PackOptions o;
  o.window_ms = -1;
  CHECK_THAT(input_error_of([&] { pack({}, set, o); }),
             Catch::Contains("option 'window_ms': expected a time in milliseconds >= 0, got -1"));
  o = PackOptions{};
  o.compile_pad_threshold = 2;
  CHECK_THAT(input_error_of([&] { validate(o); }), Catch::Contains("option 'compile_pad_threshold'"));
  CHECK(packer_name("first_fit_decreasing", "--policy") == "first-fit-decreasing");
  CHECK(packer_name("ffd", "--policy") == "first-fit-decreasing");
  CHECK(packer_name("best-fit", "--policy") == "best-fit");
  CHECK(input_error_of([] { packer_name("worst-fit", "--policy"); }) ==
        "--policy 'worst-fit': expected one of none, first-fit (ff), first-fit-decreasing (ffd), best-fit (bf) "
        "(did you mean 'first-fit'?)");
  CHECK(kOverflowNames.parse("split") == Overflow::split);
  // An empty log packs to an empty result.
  const Summary s = summarize(pack({}, set, PackOptions{}));
  CHECK(s.requests == 0);
  CHECK(s.shapes.empty());
  // The JSON names its schema.
  CHECK(to_json(s)["packing_schema"] == kPackingSchemaVersion);
}

TEST_CASE("the summary as JSON and as a table", "[packing]") {
  const BucketSet set = load_bucket_set(kData + "sheet.yaml");
  const PackResult r = pack({req(0, 0, 3000, 2), req(1, 0, 4000, 1), req(2, 0, 1000, 1)}, set,
                            PackOptions{});
  const Summary s = summarize(r);
  const auto j = to_json(s);
  CHECK(j["packer"] == "first-fit");
  CHECK(j["requests"]["accepted"] == 3);
  REQUIRE(j["shapes"].size() == 2);
  CHECK(j["shapes"][0]["phase"] == "prefill");
  CHECK(j["shapes"][0]["shape"].dump() == "[4,8192]");
  CHECK(j["shapes"][0]["pad_tokens"] == 4 * 8192 - 8000);
  CHECK(j["prefill"]["varlen_ideal"]["cells"] == 26'000'000);
  CHECK(j["decode"]["useful_tokens"] == 1);  // outputs 2, 1, 1: one decode step after prefill's tokens
  const auto inst = instances_to_json(r);
  REQUIRE(inst.size() == 1);
  CHECK(inst[0]["lanes"][0].dump() == "[[0,3000],[1,4000],[2,1000]]");
  CHECK(inst[0]["lanes"][1].empty());
  const std::string table = format_summary(s);
  CHECK_THAT(table, Catch::Contains("[4, 8192]"));
  CHECK_THAT(table, Catch::Contains("varlen ideal"));
  // Duplicate ids are a programming error, not an input error.
  CHECK_THROWS_AS(pack({req(0, 0, 10), req(0, 1, 10)}, set, PackOptions{}), std::invalid_argument);
}

TEST_CASE("request logs: quoted fields may hold commas; an open quote names its line", "[packing]") {
  // A quoted timestamp and a quoted count parse as the bare ones (libcsv, RFC 4180).
  const RequestLog quoted = parse_request_log("TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                              "\"2023-11-16 18:17:03.9799600\",\"12\",3\n"
                                              "2023-11-16 18:17:04.0319600,7,2\n", "q.csv");
  REQUIRE(quoted.requests.size() == 2);
  CHECK(quoted.requests[0].prompt_tokens == 12);
  CHECK(quoted.requests[1].arrival_s == Approx(0.052).margin(1e-9));
  // A comma inside quotes stays in its field: here it makes the count malformed, on line 2.
  CHECK_THAT(input_error_of([] { parse_request_log("arrival_s,prompt_tokens,output_tokens\n"
                                             "0,\"1,5\",1\n", "mem.csv"); }),
             Catch::Contains("mem.csv:2:") && Catch::Contains("1,5"));
  CHECK_THAT(input_error_of([] { parse_request_log("arrival_s,prompt_tokens,output_tokens\n"
                                             "0,1,1\n\"1,2,1\n", "mem.csv"); }),
             Catch::Contains("mem.csv:3: malformed CSV line"));
}

}  // namespace test_packing
