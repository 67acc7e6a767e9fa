// The filter registry is assembled from three groups, one source file each.
#pragma once

#include <string_view>
#include <unordered_map>

#include "builtins.h"

namespace radiance::jinja::detail {

using FilterTable = std::unordered_map<std::string_view, FilterFn>;

void add_text_filters(FilterTable& table);      // strings: trim, replace, indent, tojson, ...
void add_sequence_filters(FilterTable& table);  // lists/dicts: join, map, select, sort, ...
void add_value_filters(FilterTable& table);     // scalars: default, int, float, round, ...

}  // namespace radiance::jinja::detail
