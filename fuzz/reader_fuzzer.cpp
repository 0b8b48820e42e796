// libFuzzer harness for the readers of user input written in C++ (docs/reliability.md,
// "Fuzzing"): one binary, the reader chosen by $SYSTOLIC_FUZZ_READER (fuzz/run.sh sets it), so
// the instrumented libraries are linked once rather than once per reader. Any input may be
// refused with an InputError; anything else escaping the reader (another exception, a crash, a
// sanitizer report, a hang past -timeout) is a finding.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <functional>
#include <map>
#include <string>

#include "models/common/error.hpp"
#include "sim/config/config.hpp"
#include "sim/packing/buckets.hpp"
#include "sim/packing/request_log.hpp"
#include "sim/trace/trace.hpp"
#include "sim/workload/transformer/model.hpp"
#include "sim/workload/workload.hpp"

namespace {

using namespace systolic;

// The readers that take a path only read a file: one per process, rewritten each run.
std::string as_file(const std::string& text, const char* extension) {
  static const std::string path = "/tmp/systolic-fuzz-" + std::to_string(getpid()) + extension;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

// The chip fuzz/run.sh compiles its seed trace for, so seeds get past the header check.
const ChipConfig& trace_chip() {
  static const ChipConfig config = load_config(std::string(SYSTOLIC_SOURCE_DIR) + "/configs/tiny-4x4.yaml");
  return config;
}

using Reader = std::function<void(const std::string&)>;
const std::map<std::string, Reader> kReaders = {
    {"config", [](const std::string& text) { load_config(as_file(text, ".yaml")); }},
    {"gemm_list", [](const std::string& text) { load_workload(as_file(text, ".yaml")); }},
    {"topology", [](const std::string& text) { load_workload(as_file(text, ".csv")); }},
    {"model", [](const std::string& text) { transformer::parse_model(text, "m.yaml"); }},
    {"trace", [](const std::string& text) { parse_trace(text, "t.trace", trace_chip()); }},
    {"request_log", [](const std::string& text) { packing::parse_request_log(text, "r.csv"); }},
    {"bucket_set", [](const std::string& text) { packing::parse_bucket_set(text, "b.yaml"); }},
};
const Reader* reader = nullptr;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* name = std::getenv("SYSTOLIC_FUZZ_READER");
  const auto it = kReaders.find(name ? name : "");
  if (it == kReaders.end()) {
    std::fprintf(stderr, "set SYSTOLIC_FUZZ_READER to one of:");
    for (const auto& [n, r] : kReaders) std::fprintf(stderr, " %s", n.c_str());
    std::fprintf(stderr, "\n");
    std::exit(2);
  }
  reader = &it->second;
  if (it->first == "trace") trace_chip();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (*reader)(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const InputError&) {
    // refused with a message: the expected outcome for most inputs
  } catch (const std::exception& e) {
    std::fprintf(stderr, "finding: not an InputError: %s\n", e.what());
    std::abort();
  }
  return 0;
}
