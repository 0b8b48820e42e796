// Links the hardware library alone, every member of it (whole archive): a file under models/
// that used anything of sim/ would leave an undefined symbol here, so the linker checks the
// dependency rule (docs/architecture.md) as tests/py/test_architecture.py checks the includes.
#include <systemc>

#include "models/common/dtype.hpp"

int sc_main(int, char*[]) { return systolic::kDTypeNames.parse("bf16") ? 0 : 1; }
