// json_scan.h: reading JSON that may still be being written. Tool-call markup carries JSON
// objects; a stream sees them cut anywhere, so these scanners tell a value that is incomplete
// (more text may finish it) from one that is already broken, and find a call's name and
// arguments inside an object before it closes.
#pragma once
#include <initializer_list>
#include <string>
#include <string_view>

#include "tool_call_parser.h"

namespace radiance::frontend::tools {

enum class Scan { Complete, Incomplete, Invalid };

struct ScanResult {
    Scan status = Scan::Invalid;
    size_t end = 0;  // one past the value (Complete), or where the text stopped being JSON (Invalid)
};

size_t skip_ws(std::string_view text, size_t pos);
// The JSON value starting at text[pos] (structure only: brackets, strings and escapes, the
// characters of literals and numbers; a complete value is checked by a real parser later).
ScanResult scan_value(std::string_view text, size_t pos);

// A call object starting at text[pos]: {"name": "...", "arguments": {...}} with the arguments
// under any of `argument_keys`, keys in any order, other keys skipped. Complete only when the
// whole object parses as JSON and has a non-empty string name; its arguments default to "{}",
// and arguments given as a string holding JSON become that JSON (some models quote them).
struct CallScan {
    Scan status = Scan::Invalid;
    size_t end = 0;
    CallProgress call;
};
CallScan scan_call_object(std::string_view text, size_t pos, std::initializer_list<std::string_view> argument_keys);

// The longest end of `text` that is a proper prefix of `marker` (text that may become it).
size_t partial_marker_suffix(std::string_view text, std::string_view marker);
// Whether text is empty or whitespace only.
bool is_blank(std::string_view text);

}  // namespace radiance::frontend::tools
