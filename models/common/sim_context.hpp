#pragma once
// SystemC elaborates once per simulation context, so every run builds its modules in a context
// of its own: this makes one current for its lifetime (declare it before the modules, so that
// they are destroyed first). A process can then simulate any number of times.
#include <systemc>

#include <cstdlib>

namespace systolic {

class FreshContext {
 public:
  FreshContext() {
    setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);
    context_ = new sc_core::sc_simcontext();
    sc_core::sc_curr_simcontext = context_;
    sc_core::sc_default_global_context = context_;
  }
  ~FreshContext() {
    sc_core::sc_curr_simcontext = nullptr;
    sc_core::sc_default_global_context = nullptr;
    delete context_;
  }
  FreshContext(const FreshContext&) = delete;
  FreshContext& operator=(const FreshContext&) = delete;

 private:
  sc_core::sc_simcontext* context_;
};

}  // namespace systolic
