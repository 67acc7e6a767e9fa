#include "tool_call_stream.h"

#include "json_scan.h"

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
    if (!is_blank(st.content)) out.content = std::move(st.content);
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
    // The text before base_ is content already shown, with no markup in it or reaching past it.
    const std::string_view window = std::string_view(text_).substr(base_);
    ParseState st = parser_.parse(window, final);
    if (final && constrained_ && (st.malformed || st.calls.empty())) {
        ParseState cut = complete_calls(parser_, window);
        if (!cut.calls.empty()) st = std::move(cut);
    }
    st.tail += base_;
    // Plain text, broken markup, or a finished output without calls: text from where nothing is
    // shown yet (while no call is shown, the content shown is the text's own beginning).
    if ((st.plain && shown_.empty()) || st.malformed || (final && st.calls.empty() && shown_.empty())) {
        raw_ = true;
        return raw(shown_.empty() ? content_.size() : st.tail);
    }
    // Blank content is none once calls come (and held until they may not).
    if (base_ == 0 && (!final || !st.calls.empty()) && is_blank(st.content)) st.content.clear();
    ToolDelta d;
    const size_t have = content_.size() - base_;  // shown beyond the window's start
    if (st.content.size() > have && st.content.compare(0, have, content_, base_, have) == 0) {
        d.content = st.content.substr(have);
        content_ += d.content;
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
    // Shown text with no call in sight is settled: the next reading starts after it.
    if (parser_.markup_anywhere() && st.calls.empty() && shown_.empty() && (base_ > 0 || !is_blank(content_))) base_ = content_.size();
    return d;
}

}  // namespace radiance::frontend::tools
