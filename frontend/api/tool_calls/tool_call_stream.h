// tool_call_stream.h: a parser's readings turned into what the wire shows: the calls of a
// finished output (read_tool_calls), or, while it streams, deltas of content and of calls (an
// id and a name first, then argument fragments) that add up to the same answer.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tool_call_parser.h"

namespace radiance::frontend::tools {

struct ToolCall {
    std::string id, name;
    std::string arguments;  // JSON text
};

struct ToolOutput {
    std::string content;  // "" with calls and no other text
    std::vector<ToolCall> calls;
};

using NewCallId = std::function<std::string()>;

// The answer for a complete output: its calls, or, when it has none or its markup is broken, the
// whole text as content. `constrained`: a grammar wrote the markup (tool_choice required or
// named), so only max_tokens can have broken it, cutting the last call short: the complete
// calls before it are kept.
ToolOutput read_tool_calls(const ToolCallParser& parser, std::string_view text, const NewCallId& new_id, bool constrained = false);

struct CallDelta {
    size_t index = 0;
    std::string id, name;   // on the call's first delta only
    std::string arguments;  // the next fragment ("" when none yet)
};

struct ToolDelta {
    std::string content;
    std::vector<CallDelta> calls;
    bool empty() const { return content.empty() && calls.empty(); }
};

// Follows one output as it grows. Content is shown as soon as it cannot be markup; a call once
// its name is read, its arguments as they are written. If the markup breaks, the text from where
// it broke is shown as content (the whole text when no call was shown yet, which is what
// read_tool_calls answers; after a shown call a stream cannot take it back).
class ToolCallStream {
public:
    ToolCallStream(const ToolCallParser& parser, NewCallId new_id, bool constrained = false)
        : parser_(parser), new_id_(std::move(new_id)), constrained_(constrained) {}
    ToolDelta push(std::string_view text);  // the output grew by `text`
    ToolDelta finish();                     // the output is complete
    size_t calls_shown() const { return shown_.size(); }

private:
    ToolDelta step(bool final);
    ToolDelta raw(size_t from);

    struct Shown {
        std::string arguments;  // sent so far
    };
    const ToolCallParser& parser_;
    NewCallId new_id_;
    bool constrained_;  // as read_tool_calls': a cut last call is dropped, not shown as text
    std::string text_;
    size_t base_ = 0;      // text_ before it is shown content that no markup touches: not read again
    std::string content_;  // shown so far
    std::vector<Shown> shown_;
    bool raw_ = false;     // the markup broke: the rest is text
    size_t raw_sent_ = 0;  // of text_, in raw mode
};

}  // namespace radiance::frontend::tools
