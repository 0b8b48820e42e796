#pragma once
// Bucket sets: the static shapes a chip has compiled binaries for (docs/packing.md, "Buckets").
//
//   name: default                              # optional; defaults to the file's stem
//   prefill: [[1, 2048], [4, 8192]]            # [B, S]: B lanes of S tokens each
//   decode: [[8, 4096]]                        # [B slots, L]: B requests, KV length up to L
//
// Both lists are required and non-empty; every entry is a list of two positive integers
// (B in [1, kMaxBatch], S or L in [1, kMaxTokens]); a shape may appear only once per list.
// Unknown keys are errors with a "did you mean" hint. Errors are InputError "path:line: ...".
#include <cstdint>
#include <string>
#include <vector>

#include "models/common/names.hpp"
#include "sim/packing/request_log.hpp"  // kMaxTokens

namespace systolic::packing {

constexpr int64_t kMaxBatch = 4096;

// Which pass a static shape runs: prefill (a prompt's tokens at once) or decode (one token per
// slot). The lowering (sim/workload/transformer) and the serving replay use this one type.
enum class Phase { prefill, decode };
inline constexpr auto kPhaseNames = name_table<Phase>({{Phase::prefill, "prefill"}, {Phase::decode, "decode"}});

// A static shape: prefill [B, S] (B lanes of S tokens) or decode [B slots, L] (KV length L).
struct Shape {
  int64_t batch = 0;
  int64_t length = 0;
  bool operator==(const Shape& o) const { return batch == o.batch && length == o.length; }
  bool operator!=(const Shape& o) const { return !(*this == o); }
  // By length, then batch: the order bucket lists are kept in.
  bool operator<(const Shape& o) const {
    return length != o.length ? length < o.length : batch < o.batch;
  }
};

std::string to_string(const Shape& shape);  // "[4, 8192]"

struct Bucket {
  Shape shape;
  int line = 0;  // 1-based line in the bucket file (0 when built in code)
};

struct BucketSet {
  std::string name;
  std::string path;             // "" when built in code
  std::vector<Bucket> prefill;  // sorted by (length, batch)
  std::vector<Bucket> decode;   // sorted by (length, batch)
};

BucketSet load_bucket_set(const std::string& path);

// The same from YAML text in memory; `path` names it in messages.
BucketSet parse_bucket_set(const std::string& yaml, const std::string& path);

// A set built in code (tests, Python): validated like a file; lines are 0.
BucketSet make_bucket_set(std::vector<Shape> prefill, std::vector<Shape> decode,
                          std::string name = "inline");

// The array's tile: lcm(rows, cols). See check_buckets_fit_array.
int64_t array_tile(int64_t rows, int64_t cols);

// "Compatible with the array": every prefill length S and every decode length L is a
// multiple of array_tile(rows, cols). Attention maps the sequence dimension onto the array's
// columns (Q·Kᵀ: N = S key positions) and onto its rows (P·V: K = S); a length that is not a
// multiple of both would leave a partial last fold whose idle PEs are neither pad tokens nor
// masked cells, so the padding report of this bucket would understate its waste (a compiler
// that pads the sequence to the tile, as TPU compilers do, turns them into hidden pad tokens).
// Batch sizes are not constrained: B·S (prefill) and B (decode) are the streamed M dimension
// of a weight-stationary array and may have any value. Throws InputError naming the bucket's
// file and line, the array, and the two nearest compatible lengths.
void check_buckets_fit_array(const BucketSet& buckets, int64_t rows, int64_t cols);

}  // namespace systolic::packing
