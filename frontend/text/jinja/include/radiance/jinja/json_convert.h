// Template contexts usually arrive as JSON (messages, tools, kwargs). Objects keep the
// key order of the JSON value: pass nlohmann::ordered_json to keep the order the caller
// wrote (tojson prints keys in that order, as Python's json.dumps does);
// nlohmann::json iterates its keys sorted.
#pragma once

#include <nlohmann/json.hpp>

#include "radiance/jinja/value.h"

namespace radiance::jinja {

Value from_json(const nlohmann::json& j);
Value from_json(const nlohmann::ordered_json& j);

}  // namespace radiance::jinja
