#include "sim/workload/workload.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "models/common/error.hpp"
#include "sim/workload/detail.hpp"
#include "sim/workload/reader.hpp"

namespace systolic {
namespace workload_detail {

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

// The comparisons name every field; a field added changes the size on x86-64 (libstdc++) and
// these fire there, so it joins its operator== (and Workload::equal_but_chips, unless it says
// which chips).
static_assert(sizeof(void*) != 8 || sizeof(Gemm) == 168, "Gemm changed: update operator==");
static_assert(sizeof(void*) != 8 || sizeof(VectorWork) == 120, "VectorWork changed: update operator==");
static_assert(sizeof(void*) != 8 || sizeof(CollectiveWork) == 256,
              "CollectiveWork changed: update operator==");
static_assert(sizeof(void*) != 8 || sizeof(Workload) == 232, "Workload changed: update operator==");

bool Gemm::operator==(const Gemm& o) const {
  return name == o.name && m == o.m && k == o.k && n == o.n && dtype == o.dtype && repeat == o.repeat &&
         source == o.source && kind == o.kind && b_from_previous == o.b_from_previous &&
         useful_rows == o.useful_rows && b_group == o.b_group && a_dtype == o.a_dtype &&
         b_dtype == o.b_dtype && fp8_scale == o.fp8_scale && weights_of == o.weights_of;
}

bool VectorWork::operator==(const VectorWork& o) const {
  return name == o.name && op == o.op && repeat == o.repeat && after_gemms == o.after_gemms &&
         source == o.source;
}

namespace {

// Every field of two collectives but which chips their groups hold (the groups' shapes count).
bool equal_but_members(const CollectiveWork& a, const CollectiveWork& o) {
  return a.name == o.name && a.kind == o.kind && a.bytes == o.bytes && a.dtype == o.dtype &&
         a.send_bytes == o.send_bytes && a.group.members.size() == o.group.members.size() &&
         a.group.dims == o.group.dims && a.group.wraps == o.group.wraps && a.sends == o.sends &&
         a.receives == o.receives && a.line == o.line && a.channel == o.channel &&
         a.decompose == o.decompose && a.repeat == o.repeat && a.after_gemms == o.after_gemms &&
         a.after_vectors == o.after_vectors && a.joined_by_gemm == o.joined_by_gemm && a.source == o.source;
}

}  // namespace

bool CollectiveWork::operator==(const CollectiveWork& o) const {
  return equal_but_members(*this, o) && group.members == o.group.members;
}

bool Workload::equal_but_chips(const Workload& o) const {
  return name == o.name && path == o.path && gemms == o.gemms && vectors == o.vectors &&
         std::equal(collectives.begin(), collectives.end(), o.collectives.begin(), o.collectives.end(),
                    equal_but_members) &&
         tp == o.tp && tp_divides == o.tp_divides && pp_divides == o.pp_divides;
}

bool Workload::operator==(const Workload& o) const {
  return equal_but_chips(o) && collectives == o.collectives && mesh == o.mesh;
}

namespace {
// The first reader, in rank order, that takes the file by its extension and contents.
const WorkloadReader& reader_of(const std::string& path) {
  using namespace workload_detail;
  if (std::filesystem::is_directory(path)) fail(path, 0, "is a directory, expected a workload file");
  if (!std::ifstream(path)) fail(path, 0, "cannot open workload file");
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const auto& e : WorkloadReaderRegistry::instance().entries()) {
    const auto exts = e.impl->extensions();
    if (std::find(exts.begin(), exts.end(), ext) != exts.end() && e.impl->accepts(path)) return *e.impl;
  }
  fail(path, 0, fmt::format("unknown workload format: expected {}; see docs/workloads.md", workload_formats()));
}
}  // namespace

std::string workload_formats() {
  std::vector<std::string> formats;
  for (const auto& e : WorkloadReaderRegistry::instance().entries()) formats.push_back(e.description);
  const std::string last = formats.back();
  formats.pop_back();
  return fmt::format("{} or {}", fmt::join(formats, ", "), last);
}

std::vector<Workload> WorkloadReader::read_system(const std::string& path, const WorkloadOptions& options,
                                                  const Topology& system) const {
  if (!options.mesh.empty())
    workload_detail::fail(path, 0,
                          "--mesh shards transformer model files (with d_model), not GEMM lists or CSVs");
  if (options.tp != 1 || options.ep != 1)
    workload_detail::fail(path, 0, "--tp and --ep shard transformer model files (with d_model), not GEMM lists or CSVs");
  return std::vector<Workload>(static_cast<size_t>(system.chips()), read(path, options));
}

namespace {
// --overlap off: every collective runs whole, whatever its entry or the sharder asked.
Workload& without_overlap(Workload& w, const WorkloadOptions& options) {
  if (!options.overlap)
    for (CollectiveWork& c : w.collectives) c.decompose = Decompose::none;
  return w;
}
}  // namespace

Workload load_workload(const std::string& path, const WorkloadOptions& options) {
  Workload w = reader_of(path).read(path, options);
  return without_overlap(w, options);
}

std::vector<Workload> load_system_workloads(const std::string& path, const WorkloadOptions& options,
                                            const Topology& system) {
  std::vector<Workload> out = reader_of(path).read_system(path, options, system);
  for (Workload& w : out) without_overlap(w, options);
  return out;
}

std::vector<Workload> load_system_workloads(const std::string& path, const WorkloadOptions& options, int chips) {
  return load_system_workloads(path, options, Topology({chips}));
}

}  // namespace systolic
