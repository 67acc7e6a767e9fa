#include "json_scan.h"

#include <algorithm>
#include <cctype>

#include <nlohmann/json.hpp>

namespace radiance::frontend::tools {

namespace {

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// A string starting at text[pos] == '"'.
ScanResult scan_string(std::string_view text, size_t pos) {
    for (size_t i = pos + 1; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\\') {
            ++i;  // the escaped character; a bad escape is the real parser's to refuse
            continue;
        }
        if (c == '"') return {Scan::Complete, i + 1};
        if (static_cast<unsigned char>(c) < 0x20) return {Scan::Invalid, i};
    }
    return {Scan::Incomplete, text.size()};
}

// A number or a literal: its characters run to the end of the text (incomplete: more digits or
// letters may come) or to a character that cannot be part of it.
ScanResult scan_atom(std::string_view text, size_t pos) {
    size_t i = pos;
    while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '-' || text[i] == '+' || text[i] == '.'))
        ++i;
    if (i == pos) return {Scan::Invalid, pos};
    if (i == text.size()) return {Scan::Incomplete, i};
    return {Scan::Complete, i};
}

}  // namespace

size_t skip_ws(std::string_view text, size_t pos) {
    while (pos < text.size() && is_ws(text[pos])) ++pos;
    return pos;
}

bool is_blank(std::string_view text) { return skip_ws(text, 0) == text.size(); }

size_t partial_marker_suffix(std::string_view text, std::string_view marker) {
    for (size_t n = std::min(text.size(), marker.size() - 1); n > 0; --n)
        if (text.substr(text.size() - n) == marker.substr(0, n)) return n;
    return 0;
}

ScanResult scan_value(std::string_view text, size_t pos) {
    if (pos >= text.size()) return {Scan::Incomplete, pos};
    const char first = text[pos];
    if (first == '"') return scan_string(text, pos);
    if (first != '{' && first != '[') return scan_atom(text, pos);
    // Brackets matched with a stack: a stray closer is the text stopping being JSON.
    std::string open;
    for (size_t i = pos; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '"') {
            ScanResult s = scan_string(text, i);
            if (s.status != Scan::Complete) return s;
            i = s.end - 1;
        } else if (c == '{' || c == '[') {
            open += c;
        } else if (c == '}' || c == ']') {
            if (open.empty() || open.back() != (c == '}' ? '{' : '[')) return {Scan::Invalid, i};
            open.pop_back();
            if (open.empty()) return {Scan::Complete, i + 1};
        }
    }
    return {Scan::Incomplete, text.size()};
}

CallScan scan_call_object(std::string_view text, size_t pos, std::initializer_list<std::string_view> argument_keys) {
    CallScan out;
    auto invalid = [&](size_t at) {
        out.status = Scan::Invalid;
        out.end = at;
        return out;
    };
    auto incomplete = [&] {
        out.status = Scan::Incomplete;
        out.end = text.size();
        return out;
    };
    if (pos >= text.size()) return incomplete();
    if (text[pos] != '{') return invalid(pos);
    bool saw_arguments = false;
    size_t i = skip_ws(text, pos + 1);
    if (i < text.size() && text[i] == '}') return invalid(i);  // {}: no name
    while (true) {
        if (i >= text.size()) return incomplete();
        if (text[i] != '"') return invalid(i);
        const ScanResult key = scan_string(text, i);
        if (key.status != Scan::Complete) return key.status == Scan::Incomplete ? incomplete() : invalid(key.end);
        const auto key_json = nlohmann::json::parse(text.substr(i, key.end - i), nullptr, false);
        if (!key_json.is_string()) return invalid(i);
        const std::string k = key_json.get<std::string>();
        i = skip_ws(text, key.end);
        if (i >= text.size()) return incomplete();
        if (text[i] != ':') return invalid(i);
        i = skip_ws(text, i + 1);
        if (i >= text.size()) return incomplete();
        const size_t vstart = i;
        const ScanResult v = scan_value(text, i);
        const bool is_args = std::find(argument_keys.begin(), argument_keys.end(), k) != argument_keys.end();
        if (v.status == Scan::Invalid) return invalid(v.end);
        if (v.status == Scan::Incomplete) {
            if (is_args) {
                out.call.arguments = std::string(text.substr(vstart));
                out.call.streamable = text[vstart] == '{' || text[vstart] == '[';
            }
            return incomplete();
        }
        const std::string_view value = text.substr(vstart, v.end - vstart);
        if (k == "name") {
            const auto n = nlohmann::json::parse(value, nullptr, false);
            if (!n.is_string() || n.get<std::string>().empty()) return invalid(vstart);
            out.call.name = n.get<std::string>();
        } else if (is_args && !saw_arguments) {
            saw_arguments = true;
            out.call.arguments = std::string(value);
            out.call.streamable = value[0] == '{' || value[0] == '[';
        }
        i = skip_ws(text, v.end);
        if (i >= text.size()) return incomplete();
        if (text[i] == ',') {
            i = skip_ws(text, i + 1);
            continue;
        }
        if (text[i] != '}') return invalid(i);
        out.end = i + 1;
        break;
    }
    // The whole object as a real parser sees it (escapes, numbers, literals, duplicate keys).
    const auto whole = nlohmann::ordered_json::parse(text.substr(pos, out.end - pos), nullptr, false);
    if (whole.is_discarded() || out.call.name.empty()) return invalid(pos);
    if (!saw_arguments) {
        out.call.arguments = "{}";
    } else if (out.call.arguments[0] == '"') {
        // Quoted arguments: the string's content, when it is JSON; else the string itself.
        const std::string inner = nlohmann::json::parse(out.call.arguments).get<std::string>();
        const auto parsed = nlohmann::ordered_json::parse(inner, nullptr, false);
        out.call.arguments = parsed.is_discarded() ? nlohmann::json(inner).dump() : inner;
    }
    out.call.complete = true;
    out.status = Scan::Complete;
    return out;
}

}  // namespace radiance::frontend::tools
