#include "sim/common/csv_fields.hpp"

#include <csv.h>

#include <stdexcept>

namespace systolic {
namespace {

void add_field(void* text, size_t size, void* out) {
  static_cast<std::vector<std::string>*>(out)->emplace_back(static_cast<const char*>(text), size);
}

void end_row(int, void*) {}

}  // namespace

std::vector<std::string> csv_fields(std::string_view line) {
  csv_parser p{};
  if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI) != 0) throw std::runtime_error("libcsv: csv_init failed");
  std::vector<std::string> fields;
  const bool ok = csv_parse(&p, line.data(), line.size(), add_field, end_row, &fields) == line.size() &&
                  csv_fini(&p, add_field, end_row, &fields) == 0;
  const int error = csv_error(&p);
  csv_free(&p);
  if (!ok)
    throw std::invalid_argument(std::string("malformed CSV line (") + csv_strerror(error) +
                                "): a field in double quotes must end with a quote before the next comma");
  return fields;
}

}  // namespace systolic
