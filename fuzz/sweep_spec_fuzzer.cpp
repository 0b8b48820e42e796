// libFuzzer harness for the sweep spec reader (docs/reliability.md, "Fuzzing"). The reader is
// Python (sim/python/systolic/sweep.py: load_spec, then expand, which counts and resolves the
// points without running them), so this harness embeds CPython and gives libFuzzer the
// coverage of the Python code itself: a C trace function (PyEval_SetTrace) maps each line
// transition inside the systolic package to a counter in libFuzzer's extra-counters section,
// as an edge of the Python program. Any input may be refused with a systolic.InputError (the
// SpecError); any other Python exception is a finding and aborts with its traceback.
//
// The spec is written to a file (load_spec reads a path, as `systolic sweep` does) whose
// relative paths resolve against traces/sweeps/, where the seeds come from. PYTHONPATH must
// name the built systolic package (fuzz/run.sh sets it to build/python).
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unordered_map>

namespace {

// libFuzzer reads this section as extra coverage counters (Linux: __start_/__stop_ symbols).
constexpr size_t kCounters = size_t{1} << 16;
__attribute__((section("__libfuzzer_extra_counters"))) uint8_t counters[kCounters];

PyObject* load_spec = nullptr;
PyObject* expand = nullptr;
PyObject* input_error = nullptr;
std::string base_dir;

// Code objects of the systolic package (and their hash), cached by address: the package's
// functions live as long as the process.
std::unordered_map<PyCodeObject*, uint64_t> code_ids;
uint64_t previous_line = 0;

uint64_t code_id(PyCodeObject* code) {
  const auto it = code_ids.find(code);
  if (it != code_ids.end()) return it->second;
  const char* file = PyUnicode_AsUTF8(code->co_filename);
  const bool ours = file && std::string(file).find("/systolic/") != std::string::npos;
  const uint64_t id = ours ? (reinterpret_cast<uintptr_t>(code) >> 4) * 0x9E3779B97F4A7C15ull | 1 : 0;
  code_ids.emplace(code, id);
  return id;
}

// A line event in a systolic function counts the edge (previous line, this line).
int trace(PyObject*, PyFrameObject* frame, int what, PyObject*) {
  if (what != PyTrace_LINE) return 0;
  PyCodeObject* code = PyFrame_GetCode(frame);
  const uint64_t id = code_id(code);
  Py_DECREF(code);
  if (!id) return 0;
  const uint64_t line = id ^ (static_cast<uint64_t>(PyFrame_GetLineNumber(frame)) * 0xBF58476D1CE4E5B9ull);
  const uint64_t edge = line ^ (previous_line >> 1);
  previous_line = line;
  uint8_t& counter = counters[(edge ^ (edge >> 29)) % kCounters];
  if (counter < 255) ++counter;
  return 0;
}

PyObject* attribute(PyObject* module, const char* name) {
  PyObject* value = PyObject_GetAttrString(module, name);
  if (!value) {
    PyErr_Print();
    std::abort();
  }
  return value;
}

std::string spec_path() {
  static const std::string path = "/tmp/systolic-fuzz-" + std::to_string(getpid()) + "-spec.yaml";
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  Py_Initialize();
  PyObject* sweep = PyImport_ImportModule("systolic.sweep");
  PyObject* systolic = PyImport_ImportModule("systolic");
  if (!sweep || !systolic) {
    PyErr_Print();
    std::fprintf(stderr, "sweep_spec fuzzer: set PYTHONPATH to the built systolic package (build/python)\n");
    std::abort();
  }
  load_spec = attribute(sweep, "load_spec");
  expand = attribute(sweep, "expand");
  input_error = attribute(systolic, "InputError");
  base_dir = std::string(SYSTOLIC_SOURCE_DIR) + "/traces/sweeps";
  PyEval_SetTrace(trace, nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::ofstream(spec_path(), std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  previous_line = 0;
  PyObject* spec = PyObject_CallFunction(load_spec, "ss", spec_path().c_str(), base_dir.c_str());
  PyObject* points = spec ? PyObject_CallOneArg(expand, spec) : nullptr;
  Py_XDECREF(points);
  Py_XDECREF(spec);
  if (!PyErr_Occurred()) return 0;
  if (PyErr_ExceptionMatches(input_error)) {  // refused with a message: the expected outcome
    PyErr_Clear();
    return 0;
  }
  std::fprintf(stderr, "finding: not a systolic.InputError:\n");
  PyErr_Print();
  std::abort();
}
