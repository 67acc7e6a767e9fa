// responses_items.h: the Responses API's conversation items and the chat messages the chat
// template reads. Input is a string (one user message) or an array of items: messages
// ({"role", "content"} with or without "type": "message"; content a string or input_text /
// output_text parts), function_call ({"call_id", "name", "arguments"}) and function_call_output
// ({"call_id", "output"}). Output items (message, function_call) are input items too, which is
// how a stored response continues a conversation.
#pragma once
#include <string>

#include "json_io.h"

namespace radiance::frontend {

// `input` as an array of checked items (a string becomes one user message item). 400s name the
// place: "input[2].content[0].type".
ordered_json responses_input_items(const ordered_json& input);

// Items (checked by responses_input_items) as chat messages, after a system message of
// `instructions` when it is not empty. A function_call joins the assistant message before it (a
// turn's text and its calls, or parallel calls, are one chat message); a function_call_output
// becomes a tool message.
ordered_json responses_chat_messages(const std::string& instructions, const ordered_json& items);

}  // namespace radiance::frontend
