// strings.h: the small string helpers every part needs.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace radiance::str {

// Splits on any of `seps`, dropping empty pieces.
std::vector<std::string> split(std::string_view s, std::string_view seps);
std::string trim(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);
std::string join(const std::vector<std::string>& parts, std::string_view sep);

}  // namespace radiance::str
