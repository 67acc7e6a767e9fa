// hermes: Qwen2.5, Qwen3, Hermes and others whose template asks for
//   <tool_call>
//   {"name": <function-name>, "arguments": <args-json-object>}
//   </tool_call>
// one block per call, after any text. As vLLM's hermes parser, a last block whose JSON is
// complete but whose </tool_call> never came (the model stopped there) still counts.
#include "json_scan.h"
#include "content_text.h"
#include "tool_parsers.h"

namespace radiance::frontend::tools {

namespace {

constexpr std::string_view kBegin = "<tool_call>";
constexpr std::string_view kEnd = "</tool_call>";

class HermesParser : public ToolCallParser {
public:
    std::string_view name() const override { return "hermes"; }
    bool markup_anywhere() const override { return true; }
    CallMarkup markup() const override { return {"<tool_call>\n", "\n</tool_call>", "\n", "arguments", false}; }

    ParseState parse(std::string_view text, bool final) const override {
        ParseState st;
        std::vector<std::string_view> segments;
        size_t pos = 0;
        while (true) {
            const size_t p = text.find(kBegin, pos);
            if (p == std::string_view::npos) {
                std::string_view rest = text.substr(pos);
                if (!final) rest.remove_suffix(partial_marker_suffix(rest, kBegin));
                segments.push_back(rest);
                break;
            }
            segments.push_back(text.substr(pos, p - pos));
            st.tail = p;
            const size_t q = skip_ws(text, p + kBegin.size());
            CallScan c = scan_call_object(text, q, {"arguments"});
            if (c.status == Scan::Invalid) {
                st.malformed = true;
                break;
            }
            st.calls.push_back(std::move(c.call));
            if (c.status == Scan::Incomplete) {
                if (final) st.malformed = true;
                break;
            }
            const size_t r = skip_ws(text, c.end);
            if (text.substr(r, kEnd.size()) == kEnd) {
                pos = r + kEnd.size();
                st.tail = pos;
                continue;
            }
            // Nothing more, or the start of </tool_call>: complete as vLLM reads it once the text
            // is final, still being written otherwise.
            if (r == text.size() || kEnd.substr(0, text.size() - r) == text.substr(r)) {
                if (final) st.tail = text.size();
                break;
            }
            st.malformed = true;
            break;
        }
        if (!st.malformed) st.content = content_of(segments, final);
        return st;
    }
};

}  // namespace

const ToolCallParser& hermes_parser() {
    static const HermesParser p;
    return p;
}

}  // namespace radiance::frontend::tools
