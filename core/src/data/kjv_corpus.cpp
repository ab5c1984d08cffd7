// kjv_text: runs Debian's reader of bible.data once (its compression is the package's own) and
// keeps the text, without the verse numbers.
#include "ingot/data/kjv_corpus.h"

#include <fmt/format.h>
#include <sys/wait.h>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "ingot/base/error.h"

namespace ingot::data {

std::string kjv_text() {
  const char* install = "install Debian's bible-kjv-text and its reader bible-kjv (apt-get install bible-kjv-text "
                        "bible-kjv; scripts/setup does), or give data.text.path a text file";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(kKjvDataFile, ec))
    throw InputError(fmt::format("data.text.path kjv: {} is missing: {}", kKjvDataFile, install));
  // -l: no line wrapping; the whole book range.
  FILE* pipe = popen("bible -l1000000 gen1:1-rev22:21 2>/dev/null", "r");
  if (pipe == nullptr) throw InputError(fmt::format("data.text.path kjv: cannot start the reader `bible`: {}", install));
  std::string raw;
  char buffer[1 << 16];
  for (size_t n; (n = fread(buffer, 1, sizeof(buffer), pipe)) > 0;) raw.append(buffer, n);
  const int status = pclose(pipe);
  if (status != 0 || raw.size() < 1000000)
    throw InputError(fmt::format("data.text.path kjv: the reader `bible` {} ({} bytes of text): {}",
                                 WIFEXITED(status) && WEXITSTATUS(status) == 127 ? "is not installed" : "failed",
                                 raw.size(), install));
  // "Genesis 1" headings, "  12 verse text" lines, blank lines between chapters.
  std::string text;
  text.reserve(raw.size());
  std::istringstream lines(raw);
  bool first = true;
  for (std::string line; std::getline(lines, line);) {
    size_t i = 0;
    while (i < line.size() && line[i] == ' ') ++i;
    if (i == line.size()) continue;
    if (i == 0) {  // a chapter heading
      if (!first) text += '\n';
      first = false;
      text += line;
      text += '\n';
      continue;
    }
    size_t digits = i;
    while (digits < line.size() && std::isdigit(static_cast<unsigned char>(line[digits])) != 0) ++digits;
    if (digits < line.size() && line[digits] == ' ' && digits > i) i = digits + 1;
    text.append(line, i, std::string::npos);
    text += '\n';
  }
  return text;
}

}  // namespace ingot::data
