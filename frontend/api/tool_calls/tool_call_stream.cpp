#include "tool_call_stream.h"

namespace radiance::frontend::tools {

namespace {

// A constrained output cut short: its complete calls, as the text so far reads them.
ParseState complete_calls(const ToolCallParser& parser, std::string_view text) {
    ParseState st = parser.parse(text, false);
    while (!st.calls.empty() && !st.calls.back().complete) st.calls.pop_back();
    if (st.malformed) st.calls.clear();
    return st;
}

}  // namespace

ToolOutput read_tool_calls(const ToolCallParser& parser, std::string_view text, const NewCallId& new_id, bool constrained) {
    ParseState st = parser.parse(text, true);
    if (constrained && (st.malformed || st.calls.empty())) st = complete_calls(parser, text);
    ToolOutput out;
    if (st.malformed || st.calls.empty()) {
        out.content = std::string(text);
        return out;
    }
    out.content = std::move(st.content);
    for (auto& c : st.calls) out.calls.push_back({new_id(), std::move(c.name), std::move(c.arguments)});
    return out;
}

ToolDelta ToolCallStream::push(std::string_view text) {
    text_ += text;
    return step(false);
}

ToolDelta ToolCallStream::finish() { return step(true); }

ToolDelta ToolCallStream::raw(size_t from) {
    ToolDelta d;
    if (from < text_.size()) d.content = text_.substr(from);
    content_ += d.content;
    raw_sent_ = text_.size();
    return d;
}

ToolDelta ToolCallStream::step(bool final) {
    if (raw_) return raw(raw_sent_);
    ParseState st = parser_.parse(text_, final);
    if (final && constrained_ && (st.malformed || st.calls.empty())) {
        ParseState cut = complete_calls(parser_, text_);
        if (!cut.calls.empty()) st = std::move(cut);
    }
    // Broken markup, or a finished output without calls: text from where nothing is shown yet
    // (the content shown is then the text's own beginning).
    if (st.malformed || (final && st.calls.empty() && shown_.empty())) {
        raw_ = true;
        return raw(shown_.empty() ? content_.size() : st.tail);
    }
    ToolDelta d;
    if (st.content.size() > content_.size() && st.content.compare(0, content_.size(), content_) == 0) {
        d.content = st.content.substr(content_.size());
        content_ = st.content;
    }
    for (size_t i = 0; i < st.calls.size(); ++i) {
        const CallProgress& c = st.calls[i];
        CallDelta cd;
        cd.index = i;
        if (i == shown_.size()) {
            if (c.name.empty()) break;  // calls are shown in order, each from its name
            shown_.emplace_back();
            cd.id = new_id_();
            cd.name = c.name;
        }
        std::string& sent = shown_[i].arguments;
        if ((c.complete || c.streamable) && c.arguments.size() > sent.size() && c.arguments.compare(0, sent.size(), sent) == 0) {
            cd.arguments = c.arguments.substr(sent.size());
            sent = c.arguments;
        }
        if (!cd.id.empty() || !cd.arguments.empty()) d.calls.push_back(std::move(cd));
    }
    return d;
}

}  // namespace radiance::frontend::tools
