// mistral: Mistral's [TOOL_CALLS] markup, after any text. Two spellings, as Mistral's tokenizer
// versions write them (vLLM reads both):
//   [TOOL_CALLS][{"name": "f", "arguments": {...}}, ...]          (v3 and earlier templates)
//   [TOOL_CALLS]f[ARGS]{...}[TOOL_CALLS]g[ARGS]{...}              (v11 and later)
// [TOOL_CALLS] is a special token, so requests with tools keep special tokens in their text
// (needs_special_tokens), and Mistral's templates want call ids of 9 letters and digits.
#include "content_text.h"
#include "json_scan.h"
#include "tool_parsers.h"

#include <nlohmann/json.hpp>

namespace radiance::frontend::tools {

namespace {

constexpr std::string_view kMarker = "[TOOL_CALLS]";
constexpr std::string_view kArgs = "[ARGS]";
constexpr std::string_view kCallId = "[CALL_ID]";

class MistralParser : public ToolCallParser {
public:
    std::string_view name() const override { return "mistral"; }
    bool needs_special_tokens() const override { return true; }
    bool markup_anywhere() const override { return true; }
    std::string new_call_id() const override { return ToolCallParser::new_call_id().substr(5, 9); }
    CallMarkup markup() const override { return {"", "", "", "arguments", true}; }
    const ToolCallParser& constrained_parser() const override { return json_parser(); }

    ParseState parse(std::string_view text, bool final) const override {
        ParseState st;
        std::vector<std::string_view> segments;
        size_t pos = 0;
        while (true) {
            const size_t p = text.find(kMarker, pos);
            if (p == std::string_view::npos) {
                std::string_view rest = text.substr(pos);
                if (!final) rest.remove_suffix(partial_marker_suffix(rest, kMarker));
                segments.push_back(rest);
                break;
            }
            segments.push_back(text.substr(pos, p - pos));
            st.tail = p;
            const size_t q = skip_ws(text, p + kMarker.size());
            const Scan s = q < text.size() && text[q] == '[' ? read_array(text, q, st, pos) : read_named(text, q, st, pos);
            if (s == Scan::Invalid) {
                st.malformed = true;
                break;
            }
            if (s == Scan::Incomplete) {
                if (final) st.malformed = true;
                break;
            }
            st.tail = pos;
        }
        if (!st.malformed) st.content = content_of(segments, final);
        return st;
    }

private:
    // [{...}, {...}] at text[pos]; `next` is set past the closing bracket.
    static Scan read_array(std::string_view text, size_t pos, ParseState& st, size_t& next) {
        size_t i = skip_ws(text, pos + 1);
        while (true) {
            CallScan c = scan_call_object(text, i, {"arguments"});
            if (c.status == Scan::Invalid) return Scan::Invalid;
            st.calls.push_back(std::move(c.call));
            if (c.status == Scan::Incomplete) return Scan::Incomplete;
            i = skip_ws(text, c.end);
            if (i == text.size()) return Scan::Incomplete;
            if (text[i] == ']') {
                next = i + 1;
                return Scan::Complete;
            }
            if (text[i] != ',') return Scan::Invalid;
            i = skip_ws(text, i + 1);
        }
    }

    // name[ARGS]{...} (or name[CALL_ID]id[ARGS]{...}, or name{...}) at text[pos].
    static Scan read_named(std::string_view text, size_t pos, ParseState& st, size_t& next) {
        CallProgress& call = st.calls.emplace_back();
        size_t i = pos;
        while (i < text.size() && text[i] != '[' && text[i] != '{') ++i;
        std::string_view name = text.substr(pos, i - pos);
        while (!name.empty() && (name.back() == ' ' || name.back() == '\n')) name.remove_suffix(1);
        if (i == text.size()) return Scan::Incomplete;
        if (name.empty() || name.find_first_of(" \n\t\"") != std::string_view::npos) return Scan::Invalid;
        if (text[i] == '[') {
            std::string_view rest = text.substr(i);
            if (rest.size() < kCallId.size() && kCallId.substr(0, rest.size()) == rest) return Scan::Incomplete;
            if (rest.substr(0, kCallId.size()) == kCallId) {
                const size_t a = text.find(kArgs, i);
                if (a == std::string_view::npos) return Scan::Incomplete;
                i = a;
                rest = text.substr(i);
            }
            if (rest.size() < kArgs.size()) return kArgs.substr(0, rest.size()) == rest ? Scan::Incomplete : Scan::Invalid;
            if (rest.substr(0, kArgs.size()) != kArgs) return Scan::Invalid;
            i = skip_ws(text, i + kArgs.size());
        }
        call.name = std::string(name);
        if (i == text.size()) return Scan::Incomplete;
        const ScanResult v = scan_value(text, i);
        if (v.status == Scan::Invalid) return Scan::Invalid;
        call.streamable = text[i] == '{' || text[i] == '[';
        call.arguments = std::string(text.substr(i, v.end - i));
        if (v.status == Scan::Incomplete) return Scan::Incomplete;
        if (nlohmann::json::parse(call.arguments, nullptr, false).is_discarded()) return Scan::Invalid;
        call.complete = true;
        next = v.end;
        return Scan::Complete;
    }
};

}  // namespace

const ToolCallParser& mistral_parser() {
    static const MistralParser p;
    return p;
}

}  // namespace radiance::frontend::tools
