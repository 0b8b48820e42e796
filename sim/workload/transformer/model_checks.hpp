#pragma once
// Shared by the model-file reader (model.cpp) and the checks it and validate_model run
// (model_checks.cpp). Internal to sim/workload/transformer/.
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "sim/workload/transformer/model.hpp"

namespace systolic::transformer::model_detail {

constexpr int64_t kMaxDim = int64_t{1} << 24;
constexpr int64_t kMaxLayers = 65536;
constexpr int64_t kMaxExperts = 65536;

std::string join(const std::vector<std::string>& words);

// Where a key's problem is reported: "path:line: " from a file, "model 'x': " in code.
using Locate = std::function<std::string(const std::string& key)>;

// Relations between keys, once each key is individually valid. `given` says which optional
// keys the file (or the caller) set explicitly.
void check_relations(const ModelSpec& m, const std::set<std::string>& given, const Locate& at);

}  // namespace systolic::transformer::model_detail
