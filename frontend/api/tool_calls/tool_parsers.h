// tool_parsers.h: each family's parser (a file each), for the registry.
#pragma once
#include "tool_call_parser.h"

namespace radiance::frontend::tools {

const ToolCallParser& hermes_parser();       // hermes_parser.cpp
const ToolCallParser& llama3_json_parser();  // llama3_json_parser.cpp
const ToolCallParser& mistral_parser();      // mistral_parser.cpp
const ToolCallParser& json_parser();         // json_parser.cpp

}  // namespace radiance::frontend::tools
