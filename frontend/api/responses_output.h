// responses_output.h: a Responses answer's output items built from the generated text as it grows:
// a message for text, a function_call per call the tool parser reads out of it, each opened when
// the text shows it and closed when the next opens or the output ends. The stream sends the
// events of that building as they happen; the whole answer builds the same items from the whole
// text without events, so both give the same output.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "json_io.h"
#include "tool_calls/tool_call_stream.h"

namespace radiance::frontend {

class ResponseOutput {
public:
    // An event's type and its fields past type and sequence_number (null: no events).
    using Emit = std::function<void(const char* type, ordered_json fields)>;

    // parser null: the output is text. constrained: a grammar writes the calls (tool_choice
    // required or named; tool_call_stream.h says what that changes).
    ResponseOutput(const tools::ToolCallParser* parser, bool constrained, Emit emit = nullptr);

    void begin();                     // opens the message now when the output can only be text
    void push(const std::string& s);  // the output grew by s
    // The output is complete: the open item closes with `status` ("completed", or "incomplete"
    // for the item a cut ends); an output with no item gets an empty message.
    void finish(const char* status);
    const ordered_json& items() const { return items_; }

private:
    void emit(const char* type, ordered_json fields) const;
    ordered_json at(size_t index) const;
    void open_message();
    void text(const std::string& s);
    void show_text(const std::string& s);
    void show(const tools::ToolDelta& td);
    void close_open(const char* status);

    static constexpr size_t kNone = SIZE_MAX;
    const tools::ToolCallParser* parser_;
    Emit emit_;
    std::optional<tools::ToolCallStream> calls_;
    ordered_json items_ = ordered_json::array();
    size_t open_ = kNone;
    std::string text_;                // of the open message
    std::string pending_;             // whitespace ending the text, with a parser (text() says why)
    std::vector<size_t> call_items_;  // a call's item index, by the parser's call index
};

}  // namespace radiance::frontend
