// libsystemc.so references sc_main; our programs drive the kernel themselves (run_driver.cpp
// calls sc_start on a fresh simulation context per run), so this entry point is never used.
// It is exported so that the Python module, built with hidden visibility, still provides it.
#include <cstdio>

extern "C" __attribute__((visibility("default"))) int sc_main(int, char*[]) {
  std::fprintf(stderr, "systolic: sc_main is not an entry point of this program\n");
  return 1;
}
