#include "responses_output.h"

#include "wire_output.h"

namespace radiance::frontend {

namespace {

ordered_json text_part(const std::string& text) {
    return {{"type", "output_text"}, {"text", text}, {"annotations", ordered_json::array()}};
}

}  // namespace

ResponseOutput::ResponseOutput(const tools::ToolCallParser* parser, bool constrained, Emit emit) : parser_(parser), emit_(std::move(emit)) {
    if (parser_)
        calls_.emplace(
            *parser_, [p = parser_] { return p->new_call_id(); }, constrained);
}

void ResponseOutput::begin() {
    if (!parser_ && open_ == kNone) open_message();
}

void ResponseOutput::push(const std::string& s) {
    if (calls_) return show(calls_->push(s));
    text(s);
}

void ResponseOutput::finish(const char* status) {
    if (calls_) show(calls_->finish());
    // Whitespace ending a message is its own; after a call it is dropped (text() says why).
    if (!pending_.empty() && (open_ == kNone ? items_.empty() : items_[open_]["type"] == "message")) show_text(pending_);
    pending_.clear();
    if (items_.empty()) open_message();  // an empty answer is still a message
    close_open(status);
}

void ResponseOutput::emit(const char* type, ordered_json fields) const {
    if (emit_) emit_(type, std::move(fields));
}

ordered_json ResponseOutput::at(size_t index) const { return {{"item_id", items_[index]["id"]}, {"output_index", index}}; }

void ResponseOutput::open_message() {
    close_open("completed");
    items_.push_back({{"id", new_request_id("msg_")},
                      {"type", "message"},
                      {"status", "in_progress"},
                      {"role", "assistant"},
                      {"content", ordered_json::array()}});
    open_ = items_.size() - 1;
    text_.clear();
    emit("response.output_item.added", {{"output_index", open_}, {"item", items_[open_]}});
    ordered_json f = at(open_);
    f["content_index"] = 0;
    f["part"] = text_part("");
    emit("response.content_part.added", std::move(f));
}

void ResponseOutput::text(const std::string& s) {
    if (s.empty()) return;
    if (!parser_) return show_text(s);
    // With a parser, whitespace ending the text so far waits for what follows: text shows it,
    // a call drops it. The parser hands over the blank text between prose and a call before the
    // call or after it depending on how the output was cut into deltas; dropping it either way
    // gives a stream and a whole answer the same items.
    pending_ += s;
    const size_t end = pending_.find_last_not_of(" \t\r\n");
    if (end == std::string::npos) return;
    std::string shown = pending_.substr(0, end + 1);
    pending_.erase(0, end + 1);
    // Text after a call starts a message of its own, without the line break that ended the call.
    if (open_ != kNone && items_[open_]["type"] != "message") shown.erase(0, shown.find_first_not_of(" \t\r\n"));
    show_text(shown);
}

void ResponseOutput::show_text(const std::string& s) {
    if (open_ == kNone || items_[open_]["type"] != "message") open_message();
    text_ += s;
    ordered_json f = at(open_);
    f["content_index"] = 0;
    f["delta"] = s;
    f["logprobs"] = ordered_json::array();
    emit("response.output_text.delta", std::move(f));
}

void ResponseOutput::show(const tools::ToolDelta& td) {
    text(td.content);
    for (const auto& c : td.calls) {
        if (!c.id.empty()) {
            pending_.clear();
            close_open("completed");
            items_.push_back({{"id", new_request_id("fc_")},
                              {"type", "function_call"},
                              {"status", "in_progress"},
                              {"arguments", ""},
                              {"call_id", c.id},
                              {"name", c.name}});
            open_ = items_.size() - 1;
            call_items_.push_back(open_);
            emit("response.output_item.added", {{"output_index", open_}, {"item", items_[open_]}});
        }
        if (c.arguments.empty() || c.index >= call_items_.size()) continue;
        const size_t item = call_items_[c.index];
        items_[item]["arguments"].get_ref<std::string&>() += c.arguments;
        ordered_json f = at(item);
        f["delta"] = c.arguments;
        emit("response.function_call_arguments.delta", std::move(f));
    }
}

void ResponseOutput::close_open(const char* status) {
    if (open_ == kNone) return;
    ordered_json& item = items_[open_];
    ordered_json f = at(open_);
    if (item["type"] == "message") {
        f["content_index"] = 0;
        f["text"] = text_;
        f["logprobs"] = ordered_json::array();
        emit("response.output_text.done", f);
        f.erase("text");
        f.erase("logprobs");
        f["part"] = text_part(text_);
        emit("response.content_part.done", std::move(f));
        item["content"] = ordered_json::array({text_part(text_)});
    } else {
        f["name"] = item["name"];
        f["arguments"] = item["arguments"];
        emit("response.function_call_arguments.done", std::move(f));
    }
    item["status"] = status;
    emit("response.output_item.done", {{"output_index", open_}, {"item", item}});
    open_ = kNone;
}

}  // namespace radiance::frontend
