// Python's json.dumps, which transformers installs as the `tojson` filter
// (ensure_ascii=False by default, optional indent, separators and sort_keys).
#pragma once

#include <optional>
#include <string>

#include "radiance/jinja/value.h"

namespace radiance::jinja::detail {

struct JsonDumpOptions {
    bool ensure_ascii = false;
    std::optional<std::string> indent;  // nullopt: one line
    std::string item_separator = ", ";
    std::string key_separator = ": ";
    bool sort_keys = false;
};

std::string py_json_dumps(const Value& v, const JsonDumpOptions& opts);

}  // namespace radiance::jinja::detail
