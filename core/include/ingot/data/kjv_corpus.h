// The King James Bible of Debian's bible-kjv-text, the corpus a fresh Debian machine has: its
// compressed /usr/lib/bible.data read through the package's own reader, `bible` (bible-kjv).
#pragma once

#include <string>

namespace ingot::data {

/// The bible-kjv-text data file.
inline constexpr const char* kKjvDataFile = "/usr/lib/bible.data";

/// The whole text, Genesis 1:1 to Revelation 22:21: a line "Genesis 1" per chapter, then one verse
/// per line without its number, a blank line between chapters (about 4.3 MB). InputError with
/// what to install when the package or its reader is missing.
std::string kjv_text();

}  // namespace ingot::data
