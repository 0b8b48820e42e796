#pragma once
// Writing a command's outputs safely (docs/reliability.md, "Outputs"):
//  * each file is written to a temporary created exclusively next to its target (O_CREAT |
//    O_EXCL, so an existing file or symbolic link at that name is never followed or
//    overwritten; the name has the process id and a counter) and renamed over the target;
//  * the outputs of one command are committed together: nothing is renamed until every one
//    was written, and a set that is not committed removes its temporaries;
//  * an output path is checked writable before the work that fills it.
// Errors are InputError "<path>: cannot write ...", exit 2.
#include <string>
#include <utility>
#include <vector>

namespace systolic {

// A temporary path next to `target`, created empty and exclusively (never an existing file or
// link); the caller writes it and renames it, or removes it. `suffix` ends the name (SystemC's
// VCD writer appends ".vcd" to the name it is given).
std::string create_exclusive_temp(const std::string& target, const std::string& suffix = ".tmp");

// Throws InputError unless `path` can be created: its nearest existing folder is writable and
// it is not a folder itself. Creates nothing; found before a run, not after it.
void check_writable(const std::string& path);

class OutputSet {
 public:
  OutputSet() = default;
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;
  ~OutputSet();  // removes the temporaries of a set not committed

  // Writes `text` to a fresh temporary next to `path`.
  void add(const std::string& path, const std::string& text);
  // Takes an already written temporary (e.g. SystemC's VCD) to rename to `path` at commit.
  void adopt(const std::string& path, const std::string& temp);
  // Renames every temporary over its target.
  void commit();

 private:
  std::vector<std::pair<std::string, std::string>> files_;  // (target, temporary)
};

}  // namespace systolic
