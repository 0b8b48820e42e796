#pragma once
// std::optional in report.json: the value, or null where it is not given (a flag left out, an
// open end of a window). nlohmann::json has no conversion of its own for it.
#include <nlohmann/json.hpp>

#include <optional>

namespace nlohmann {

template <class T>
struct adl_serializer<std::optional<T>> {
  template <class Json>
  static void to_json(Json& j, const std::optional<T>& value) {
    if (value) {
      j = *value;
    } else {
      j = nullptr;
    }
  }
};

}  // namespace nlohmann
