// The man pages rowprobe(8) and rowprobe.conf(5), generated from the option tables that also
// drive parsing, `rowprobe -h` and docs/plugin-strings.md: the command-line options
// (cli.cpp's describeOptions, through commandLineOptions()) and every registered plugin's
// OptionSpec table. `rowprobe --man 8 > docs/man/rowprobe.8` and
// `rowprobe --man 5 > docs/man/rowprobe.conf.5` regenerate the committed pages; a test
// (tests/unit/core/manpage_test.cpp) keeps them current and lint-clean.
#pragma once

#include <string>

namespace rowprobe::core {

/// The roff source of rowprobe(8) (section 8) or rowprobe.conf(5) (section 5).
std::string manPage(int section);

/// `text` escaped for roff: backslashes, and a leading '.' or '\''.
std::string roffEscape(const std::string& text);

}  // namespace rowprobe::core
