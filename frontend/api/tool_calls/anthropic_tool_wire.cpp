#include "anthropic_tool_wire.h"

namespace radiance::frontend::tools {

namespace {

// A call's arguments as the tool_use input (the parser made sure they are JSON).
ordered_json input_of(const std::string& arguments) {
    ordered_json v = ordered_json::parse(arguments, nullptr, false);
    return v.is_discarded() ? ordered_json::object() : v;
}

}  // namespace

ordered_json anthropic_content(const ToolOutput& out) {
    ordered_json blocks = ordered_json::array();
    if (!out.content.empty() || out.calls.empty()) blocks.push_back({{"type", "text"}, {"text", out.content}});
    for (const auto& c : out.calls)
        blocks.push_back({{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", input_of(c.arguments)}});
    return blocks;
}

void AnthropicBlocks::open(ordered_json block) {
    close();
    ++index_;
    open_ = true;
    write_("content_block_start", {{"type", "content_block_start"}, {"index", index_}, {"content_block", std::move(block)}});
}

void AnthropicBlocks::close() {
    if (!open_) return;
    write_("content_block_stop", {{"type", "content_block_stop"}, {"index", index_}});
    open_ = text_open_ = false;
}

void AnthropicBlocks::open_text() {
    if (text_open_) return;
    open({{"type", "text"}, {"text", ""}});
    text_open_ = true;
}

void AnthropicBlocks::add(const ToolDelta& d) {
    if (!d.content.empty()) {
        open_text();
        write_("content_block_delta",
               {{"type", "content_block_delta"}, {"index", index_}, {"delta", {{"type", "text_delta"}, {"text", d.content}}}});
    }
    for (const auto& c : d.calls) {
        if (!c.id.empty()) open({{"type", "tool_use"}, {"id", c.id}, {"name", c.name}, {"input", ordered_json::object()}});
        if (!c.arguments.empty())
            write_("content_block_delta", {{"type", "content_block_delta"},
                                           {"index", index_},
                                           {"delta", {{"type", "input_json_delta"}, {"partial_json", c.arguments}}}});
    }
}

void AnthropicBlocks::finish() {
    if (index_ < 0) open_text();
    close();
}

}  // namespace radiance::frontend::tools
