// libFuzzer harness for one reader of user input (docs/reliability.md, "Fuzzing"), chosen at
// compile time by SYSTOLIC_FUZZ_READER (fuzz/CMakeLists.txt builds one binary per reader).
// Any input may be refused with an InputError; anything else escaping the reader (another
// exception, a crash, a sanitizer report, a hang past -timeout) is a finding.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
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


void read(const std::string& text) {
#if SYSTOLIC_FUZZ_READER == 1
  load_config(as_file(text, ".yaml"));
#elif SYSTOLIC_FUZZ_READER == 2
  load_workload(as_file(text, ".yaml"));
#elif SYSTOLIC_FUZZ_READER == 3
  load_workload(as_file(text, ".csv"));
#elif SYSTOLIC_FUZZ_READER == 4
  transformer::parse_model(text, "m.yaml");
#elif SYSTOLIC_FUZZ_READER == 5
  // The chip fuzz/run.sh compiles its seed trace for, so seeds get past the header check.
  static const ChipConfig config = load_config(std::string(SYSTOLIC_SOURCE_DIR) + "/configs/tiny-4x4.yaml");
  parse_trace(text, "t.trace", config);
#elif SYSTOLIC_FUZZ_READER == 6
  packing::parse_request_log(text, "r.csv");
#elif SYSTOLIC_FUZZ_READER == 7
  packing::parse_bucket_set(text, "b.yaml");
#else
#error "SYSTOLIC_FUZZ_READER: 1 config, 2 GEMM list, 3 topology CSV, 4 model, 5 trace, 6 request log, 7 bucket set"
#endif
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    read(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const InputError&) {
    // refused with a message: the expected outcome for most inputs
  } catch (const std::exception& e) {
    std::fprintf(stderr, "finding: not an InputError: %s\n", e.what());
    std::abort();
  }
  return 0;
}
