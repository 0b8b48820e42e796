#include "sim/workload/workload.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "models/common/error.hpp"
#include "sim/workload/detail.hpp"

namespace systolic {
namespace workload_detail {

void fail(const std::string& path, int64_t line, const std::string& message) {
  if (line > 0) throw InputError(fmt::format("{}:{}: {}", path, line, message));
  throw InputError(fmt::format("{}: {}", path, message));
}

std::string source_of(const std::string& path, int64_t line) {
  return fmt::format("{}:{}", path, line);
}


std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::string file_stem(const std::string& path) {
  return std::filesystem::path(path).stem().string();
}

}  // namespace workload_detail

namespace {
constexpr std::pair<CollectiveKind, const char*> kCollectiveNames[] = {
    {CollectiveKind::all_gather, "all_gather"},
    {CollectiveKind::reduce_scatter, "reduce_scatter"},
    {CollectiveKind::all_reduce, "all_reduce"},
    {CollectiveKind::all_to_all, "all_to_all"}};
}  // namespace

std::string collective_kind_name(CollectiveKind kind) {
  for (const auto& [k, name] : kCollectiveNames)
    if (k == kind) return name;
  return "?";
}

std::optional<CollectiveKind> parse_collective_kind(const std::string& name) {
  for (const auto& [k, n] : kCollectiveNames)
    if (name == n) return k;
  return std::nullopt;
}

Workload load_workload(const std::string& path, const WorkloadOptions& options) {
  using namespace workload_detail;
  if (std::filesystem::is_directory(path)) fail(path, 0, "is a directory, expected a workload file");
  if (!std::ifstream(path)) fail(path, 0, "cannot open workload file");
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == ".yaml" || ext == ".yml") {
    if (is_model_file(path)) return load_model_workload(path, options);
    if (!options.weight_dtype.empty() || !options.activation_dtype.empty() || !options.kv_dtype.empty())
      fail(path, 0, "--weight-dtype, --activation-dtype and --kv-dtype apply to transformer model files; a GEMM "
                    "list gives a_dtype and b_dtype per entry (docs/workloads.md)");
    if (!options.bucket.empty())
      fail(path, 0, "--bucket applies to transformer model files (with d_model), not to a GEMM list");
    return load_gemm_yaml(path);
  }
  if (!options.bucket.empty() || !options.weight_dtype.empty() || !options.activation_dtype.empty() ||
      !options.kv_dtype.empty())
    fail(path, 0, "--bucket and the --*-dtype options apply to transformer model files, not to a CSV");
  if (ext == ".csv") return load_scalesim_csv(path);
  fail(path, 0,
       "unknown workload format: expected a GEMM list (.yaml, .yml) or a SCALE-Sim topology "
       "(.csv); see docs/workloads.md");
}

std::vector<Workload> load_system_workloads(const std::string& path, const WorkloadOptions& options, int chips) {
  using namespace workload_detail;
  const std::string ext = std::filesystem::path(path).extension().string();
  if ((ext == ".yaml" || ext == ".yml") && std::ifstream(path) && is_model_file(path))
    return load_model_workloads(path, options, chips);
  if (options.tp != 1 || options.ep != 1)
    fail(path, 0, "--tp and --ep shard transformer model files (with d_model), not GEMM lists or CSVs");
  return std::vector<Workload>(static_cast<size_t>(chips), load_workload(path, options));
}

}  // namespace systolic
