#pragma once
// The serving engine (docs/serving.md): replays a request log on one chip, one forward step at
// a time, and keeps one record per request. A scheduler (scheduler.hpp) decides what each
// step holds; the engine owns the clock, the arrivals, the KV-cache budget and the records,
// and enforces what no scheduler may break: a request is never in a step before it arrived,
// never decodes before its prefill finished (the first token comes from prefill), and gets
// exactly one outcome.
//
// Event-driven: the clock moves only by whole steps (their cost from the StepCost oracle) and
// by jumps to the next arrival when the chip has nothing to run. A scheduler with several
// chips (disaggregated) keeps one clock per chip and runs each step at its chip's clock
// (execute_at); the engine checks the same rules against that step's start.
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <vector>

#include "models/common/names.hpp"
#include "sim/packing/buckets.hpp"
#include "sim/packing/lane_view.hpp"
#include "sim/packing/request_log.hpp"
#include "sim/serving/step_cost.hpp"
#include "sim/serving/work_table.hpp"

namespace systolic::serving {

using packing::Request;

enum class Outcome { served, truncated, rejected };
// Why a request was truncated or rejected.
enum class Reason { none, prompt_exceeds_prefill, context_exceeds_decode, kv_exceeds_capacity };
// A request whose prompt + output exceeds the decode length L: rejected, or its output cut to
// what L holds (at least the token prefill produces).
enum class Overflow { reject, truncate };

inline constexpr auto kOutcomeNames = name_table<Outcome>(
    {{Outcome::served, "served"}, {Outcome::truncated, "truncated"}, {Outcome::rejected, "rejected"}});
inline constexpr auto kReasonNames =
    name_table<Reason>({{Reason::none, ""},
                        {Reason::prompt_exceeds_prefill, "prompt-exceeds-prefill"},
                        {Reason::context_exceeds_decode, "context-exceeds-decode"},
                        {Reason::kv_exceeds_capacity, "kv-exceeds-capacity"}});
inline constexpr auto kOverflowNames =
    name_table<Overflow>({{Overflow::reject, "reject"}, {Overflow::truncate, "truncate"}});
static_assert(kOutcomeNames.dense() && kReasonNames.dense() && kOverflowNames.dense());

struct ServeOptions {
  packing::BucketSet buckets;  // the static shapes: prefill [B, S], decode [B slots, L]
  // How a static prefill step's prompts fill its lanes: a packer registered in
  // sim/packing/packers/ (none: one prompt per lane), into lanes of the longest prefill S.
  std::string packer = "none";
  // Batching window: a prefill step takes waiting requests only once the oldest of them has
  // waited this long (0: at once), so that more arrive to share its shape.
  double window_s = 0;
  // Runtime shapes for prefill (static shapes only): a prompt longer than every S runs alone in
  // a new [1, round_up(prompt, granule)] shape (up to the model's context), and a lone lane
  // that would be more than `compile_pad_threshold` pad gets [1, round_up(used, granule)]. The
  // first step of each new shape waits compile_stall_s for its compilation (the chip idle).
  bool compile_new_shapes = false;
  double compile_stall_s = 30;
  int64_t compile_granule = 128;
  double compile_pad_threshold = 0.5;
  // Keep every static prefill step's lanes for the lane view (ServeResult::lanes).
  bool record_lanes = false;
  // chunked: prompt tokens per step, run as a prefill [1, C] beside the decode shape. 512 is the
  // token budget Sarathi-Serve uses for strict TBT SLOs (Agrawal et al., OSDI 2024, sec. 5).
  int64_t chunk_tokens = 512;
  // The KV-cache budget: bytes per token of context (all layers, K and V) and the HBM left for
  // the cache after weights and activations. Both required (> 0): the caller derives them
  // from the model and the chip.
  double kv_bytes_per_token = 0;
  double kv_capacity_bytes = 0;
  Overflow overflow = Overflow::reject;
  // The model's context (max_seq; 0: none): `dynamic` has no S or L, but a prompt longer than
  // this is rejected and a longer context truncated or rejected (`overflow`), as the model
  // cannot run them.
  int64_t model_context = 0;
  // disaggregated: chips in each pool (each chip runs the set's shapes), and the link the KV
  // cache crosses from a prefill chip to a decode chip (ICI or the host link: the caller gives
  // its bytes/s; required > 0 for disaggregated).
  int64_t prefill_chips = 1;
  int64_t decode_chips = 1;
  double kv_link_bytes_per_s = 0;
};

// One request's history. Times are seconds of replayed time; NaN where it never happened.
struct RequestRecord {
  int64_t id = 0;
  double arrival_s = 0;
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;  // as logged
  int64_t target_tokens = 0;  // what will be generated (output_tokens unless truncated)
  int64_t prefilled_tokens = 0;
  int64_t generated_tokens = 0;  // the first from prefill, then one per decode step
  Outcome outcome = Outcome::served;
  Reason reason = Reason::none;
  bool decided = false;      // finished or rejected
  bool kv_reserved = false;  // holds its KV cache (from admission to its last token)
  int64_t kv_pool = 0;       // whose KV budget holds it (a chip of the decode pool)
  double kv_transfer_s = 0;  // moving its KV cache to the decode chip after prefill (disaggregated)
  double start_s = std::numeric_limits<double>::quiet_NaN();  // first step holding it began
  double first_token_s = std::numeric_limits<double>::quiet_NaN();
  double last_token_s = std::numeric_limits<double>::quiet_NaN();
  double tbt_sum_s = 0;  // over the generated_tokens - 1 gaps between its tokens
  double tbt_max_s = 0;
  std::optional<Shape> prefill_shape;  // first static prefill step that held it
  std::optional<Shape> decode_shape;
  bool varlen = false;     // served by varlen steps (no shape)
  int64_t slot = -1;       // decode slot (static: lane of its batch; disaggregated: chip x B + slot)
  int64_t pad_tokens = 0;  // pad positions of its steps attributed to it
  double energy_pj = 0;    // its share of its steps' energy

  bool served() const { return decided && outcome != Outcome::rejected; }
  double queue_s() const { return start_s - arrival_s; }
  double ttft_s() const { return first_token_s - arrival_s; }
  double e2e_s() const { return last_token_s - arrival_s; }
  // Mean gap between consecutive tokens; NaN with a single token.
  double tbt_mean_s() const;
  // Useful token positions it occupied: its prompt and every decoded token.
  int64_t useful_tokens() const { return prefilled_tokens + std::max<int64_t>(0, generated_tokens - 1); }
};

// Whole-replay sums, counted per step (independently of the records, for the conservation check).
struct ServeTotals {
  int64_t steps = 0;
  double busy_s = 0;  // time spent running steps
  double energy_pj = 0;
  int64_t positions = 0;  // token positions computed (static: the whole shape)
  int64_t useful = 0;     // prompt tokens and decode tokens of requests
  int64_t pad = 0;        // positions - useful
  double first_arrival_s = 0;
  double end_s = 0;  // the last step's end (or the last arrival if nothing ran)
  int64_t compiled_shapes = 0;  // new prefill shapes compiled during the replay
  double compile_stall_s = 0;   // the time steps waited for them
};

struct ServeResult {
  std::string scheduler;
  std::vector<RequestRecord> records;  // records[i].id == i
  ServeTotals totals;
  std::vector<ShapeWork> shapes;             // the work table: every step part, by shape
  std::vector<packing::LaneInstance> lanes;  // static prefill steps (with options.record_lanes)
};

// One request's part in a step.
struct Work {
  int64_t request = 0;
  int64_t prefill_tokens = 0;  // prefill: prompt tokens this step computes; decode: unused
  int64_t slot = -1;           // decode slot (-1: it does not decode), for the record
  int64_t lane = 0;            // static prefill: the lane of the shape its tokens are in
};

// One forward step: a prefill part, a decode part, or both (chunked).
struct Step {
  bool varlen = false;  // true: exactly the works (no shape, no pads)
  Shape prefill_shape;  // static steps: the shapes run
  bool runtime_prefill = false;  // prefill_shape is compiled during the replay (not a bucket)
  Shape decode_shape;
  std::vector<Work> prefill;
  std::vector<Work> decode;  // one new token each
  void clear() { prefill.clear(), decode.clear(); }
};

class Engine {
 public:
  // What the scheduler's shapes can hold (0: no limit): checked as each request arrives.
  struct Limits {
    int64_t max_prompt = 0;
    int64_t max_context = 0;  // prompt + output of a request that decodes
  };

  // `kv_pools`: how many separate KV budgets of options.kv_capacity_bytes there are (one per chip
  // that holds KV caches).
  Engine(const std::vector<Request>& requests, const StepCost& cost, const ServeOptions& options,
         int64_t kv_pools = 1);

  // The single chip's clock; with several chips, the end of the last step run.
  double now() const { return now_; }
  const StepCost& cost() const { return cost_; }
  bool done() const { return decided_ == static_cast<int64_t>(records_.size()); }
  // Takes every request arrived by now: rejected or truncated against `limits` and the KV
  // budget, else queued in `waiting()` (arrival order).
  void admit_arrivals(const Limits& limits) { admit_arrivals(limits, now_); }
  void admit_arrivals(const Limits& limits, double until);
  // The next arrival not yet admitted; +infinity when none is left.
  double next_arrival_s() const;
  std::deque<int64_t>& waiting() { return waiting_; }
  // When a prefill step may take the waiting requests: the oldest's arrival + the batching
  // window (options.window_s); +infinity when none waits.
  double batch_ready_s() const;
  // Jumps the clock to the next arrival or the end of the batching window, whichever comes
  // first after now; false when there is neither.
  bool wait_for_event();
  // Reserves the KV cache of a request's whole context in `pool` at time `at` (a finished
  // request's cache is free from its last token on); false (nothing reserved) if it does not fit.
  bool reserve_kv(int64_t id, int64_t pool, double at);
  bool reserve_kv(int64_t id) { return reserve_kv(id, 0, now_); }
  // The request's KV cache moves for `seconds` after its prefill: it may decode only from its
  // first token + seconds on.
  void set_kv_transfer(int64_t id, double seconds);
  void execute(const Step& step) { execute_at(step, now_); }
  // Runs `step` on a chip whose clock reads `start`; returns when it ends.
  double execute_at(const Step& step, double start);
  const RequestRecord& record(int64_t id) const { return records_[static_cast<size_t>(id)]; }
  bool prefilled(int64_t id) const { return record(id).prefilled_tokens == record(id).prompt_tokens; }
  bool finished(int64_t id) const { return record(id).decided; }
  ServeResult take_result(std::string scheduler);

 private:
  void triage(RequestRecord& r, const Limits& limits);
  void reject(RequestRecord& r, Reason reason);
  double compile_stall(const Step& step);
  StepCharge run_part(Phase phase, const Step& step);
  void attribute(const std::vector<Work>& works, int64_t positions, double energy_pj, Phase phase);
  void account(Phase phase, const Step& step, const StepCharge& charge);
  void emit_token(RequestRecord& r);
  void check_part(Phase phase, const Step& step) const;
  packing::AttentionCells prefill_cells(const Step& step);
  void record_lanes(const Step& step);

  const StepCost& cost_;
  const ServeOptions& options_;
  std::vector<RequestRecord> records_;
  std::deque<int64_t> waiting_;
  size_t next_arrival_ = 0;
  int64_t decided_ = 0;
  double now_ = 0;
  struct KvPool {
    int64_t used_tokens = 0;  // reserved context of the requests holding KV here
    // (time, tokens) freed by requests that finished, not yet subtracted: a chip may look at
    // the pool before another chip's step that frees them has ended.
    std::priority_queue<std::pair<double, int64_t>, std::vector<std::pair<double, int64_t>>, std::greater<>>
        freed;
  };
  std::vector<KvPool> kv_pools_;
  ServeTotals totals_;
  WorkTable table_;
  std::set<Shape> compiled_;          // runtime prefill shapes compiled so far
  std::vector<int64_t> lane_used_;    // scratch: tokens per lane of a prefill step (prefill_cells)
  std::vector<packing::LaneInstance> recorded_;
  std::vector<int64_t> lengths_;  // scratch for varlen costs
};

}  // namespace systolic::serving
