// anthropic_tool_wire.h: tool calls as Anthropic's Messages API shows them: content blocks
// [{"type": "text"}, {"type": "tool_use", "id", "name", "input": {...}}], and, streamed,
// content_block_start (a tool_use block with an empty input), input_json_delta events carrying
// the arguments' text, and content_block_stop, one block after another.
#pragma once
#include <functional>
#include <string>
#include <string_view>

#include "json_io.h"
#include "tool_call_stream.h"

namespace radiance::frontend::tools {

// The message's content: the text as a text block (when there is text, or nothing else), then a
// tool_use block per call.
ordered_json anthropic_content(const ToolOutput& out);

// Turns a ToolCallStream's deltas into block events: text goes to an open text block (opened
// when needed), a call's first delta closes the open block and opens its tool_use block.
class AnthropicBlocks {
public:
    using Write = std::function<void(std::string_view event, const ordered_json& data)>;
    explicit AnthropicBlocks(Write write) : write_(std::move(write)) {}
    void add(const ToolDelta& d);
    void open_text();  // a text block, unless one is open
    // Closes the open block; a message with no block at all gets an empty text block.
    void finish();

private:
    void open(ordered_json block);
    void close();
    Write write_;
    int index_ = -1;  // the last block opened
    bool open_ = false;
    bool text_open_ = false;  // the open block is a text block
};

}  // namespace radiance::frontend::tools
