// llama3_json: Llama 3.1 / 3.2 / 3.3's JSON tool calling. The template asks for
//   {"name": function name, "parameters": dictionary of argument name and its value}
// as the whole answer, possibly after <|python_tag|> (a special token, gone from the text unless
// special tokens are kept); several calls are separated by ';' (vLLM's reading). As vLLM's
// streaming reader, an answer is calls only when it starts with one: text first means plain text
// (vLLM's non-streaming reader takes a JSON object from anywhere and drops the text around it, so
// its two answers differ; here both are one reading), and JSON that is not a call is text too.
#include "json_scan.h"
#include "tool_parsers.h"

namespace radiance::frontend::tools {

namespace {

constexpr std::string_view kPythonTag = "<|python_tag|>";

class Llama3JsonParser : public ToolCallParser {
public:
    std::string_view name() const override { return "llama3_json"; }
    CallMarkup markup() const override { return {"", "", "; ", "parameters", false}; }

    ParseState parse(std::string_view text, bool final) const override {
        ParseState st;
        size_t pos = skip_ws(text, 0);
        if (text.substr(pos, kPythonTag.size()) == kPythonTag) pos = skip_ws(text, pos + kPythonTag.size());
        const std::string_view start = text.substr(pos);
        if (start.empty() || (!final && kPythonTag.substr(0, start.size()) == start)) return st;  // nothing to tell yet
        if (start[0] != '{') {
            st.content = std::string(text);  // plain text: calls would have come first
            st.plain = true;
            return st;
        }
        while (true) {
            st.tail = pos;
            CallScan c = scan_call_object(text, pos, {"parameters", "arguments"});
            if (c.status == Scan::Invalid) {
                st.malformed = true;
                return st;
            }
            st.calls.push_back(std::move(c.call));
            if (c.status == Scan::Incomplete) {
                if (final) st.malformed = true;
                return st;
            }
            pos = skip_ws(text, c.end);
            if (pos == text.size()) return st;
            if (text[pos] != ';') {
                st.malformed = true;
                return st;
            }
            pos = skip_ws(text, pos + 1);
            if (pos == text.size()) return st;  // a dangling ';' ends nothing
        }
    }
};

}  // namespace

const ToolCallParser& llama3_json_parser() {
    static const Llama3JsonParser p;
    return p;
}

}  // namespace radiance::frontend::tools
