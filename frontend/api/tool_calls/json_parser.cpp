// json: calls as bare JSON, for templates without tool markup. vLLM constrains a model asked for
// `required` (or a named function) to a JSON array [{"name": ..., "arguments": {...}}, ...] and
// reads that back; so does this server (for Mistral too, whose [TOOL_CALLS] token no grammar
// can produce), and with tool_choice auto an answer that is exactly such an array, or one such
// object, is read as calls. Anything else is text.
#include "json_scan.h"
#include "tool_parsers.h"

namespace radiance::frontend::tools {

namespace {

class JsonParser : public ToolCallParser {
public:
    std::string_view name() const override { return "json"; }
    CallMarkup markup() const override { return {"", "", "", "arguments", true}; }

    ParseState parse(std::string_view text, bool final) const override {
        ParseState st;
        size_t pos = skip_ws(text, 0);
        if (pos == text.size()) return st;
        if (text[pos] != '[' && text[pos] != '{') {
            st.content = std::string(text);
            st.plain = true;
            return st;
        }
        st.tail = pos;
        const bool array = text[pos] == '[';
        size_t i = array ? skip_ws(text, pos + 1) : pos;
        while (true) {
            CallScan c = scan_call_object(text, i, {"arguments", "parameters"});
            if (c.status == Scan::Invalid) return broken(st);
            st.calls.push_back(std::move(c.call));
            if (c.status == Scan::Incomplete) return final ? broken(st) : st;
            i = skip_ws(text, c.end);
            if (!array) return i == text.size() ? st : broken(st);
            if (i == text.size()) return final ? broken(st) : st;
            if (text[i] == ']') return skip_ws(text, i + 1) == text.size() ? st : broken(st);
            if (text[i] != ',') return broken(st);
            i = skip_ws(text, i + 1);
        }
    }

private:
    static ParseState& broken(ParseState& st) {
        st.malformed = true;
        return st;
    }
};

}  // namespace

const ToolCallParser& json_parser() {
    static const JsonParser p;
    return p;
}

}  // namespace radiance::frontend::tools
