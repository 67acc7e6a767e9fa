// tool_call_parser.h: reading a model family's tool-call markup out of generated text (vLLM's
// tool parsers are the reference for what each family emits). One parser per family, each in its
// own file; the registry (parser_registry.cpp) names them and picks one from the chat template.
//
// A parser reads the whole output so far every time it is asked (outputs are short next to what
// a model costs), so the streamed and the complete answers come from the same code:
// parse(text, final=false) says what is surely content and how far each call has got,
// parse(text, final=true) the answer itself.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace radiance::frontend::tools {

// A call as far as the text shows it.
struct CallProgress {
    std::string name;       // empty until the whole name was read
    std::string arguments;  // the arguments' JSON text as written (so far, until complete)
    // The arguments text so far will only grow (an object or array being written): a stream
    // may show it. A string or number is held until it is complete.
    bool streamable = false;
    bool complete = false;
};

struct ParseState {
    // Text that is surely content: before the markup, and any non-blank text between or after
    // calls. While not final, trailing whitespace and what may be the start of markup are
    // held back, so the content of a longer text always extends this one. Content that is blank
    // as a whole counts as none once there are calls (read_tool_calls, ToolCallStream).
    std::string content;
    std::vector<CallProgress> calls;
    // The markup broke (not JSON, no name, text where markup must be): the output is plain text.
    bool malformed = false;
    // Where the call being read (or the broken markup) starts: a stream that already showed
    // calls shows the text from here as content when the markup breaks.
    size_t tail = 0;
    // The output is text whatever follows (families whose calls must come first).
    bool plain = false;
};

// How a family writes calls, for the grammar that makes a model write them (tool_grammar.h).
struct CallMarkup {
    std::string begin, end, separator;  // around each call, between calls
    std::string arguments_key;          // "arguments" or "parameters"
    bool json_array = false;            // the calls are one JSON array (no begin/end)
};

class ToolCallParser {
public:
    virtual ~ToolCallParser() = default;
    virtual std::string_view name() const = 0;
    virtual ParseState parse(std::string_view text, bool final) const = 0;
    // The markup is a special token that detokenizing would drop (Mistral's [TOOL_CALLS]): the
    // request keeps special tokens in its text, as vLLM does.
    virtual bool needs_special_tokens() const { return false; }
    // Markup may start anywhere after text (hermes, mistral): text before it that a stream showed
    // reads the same whatever follows, so a stream reads only what comes after it (each delta
    // costs the length of the undecided text, not of the whole output).
    virtual bool markup_anywhere() const { return false; }
    // A new call id: "call_" and 24 hex digits; Mistral's templates insist on 9 letters/digits.
    virtual std::string new_call_id() const;
    // The markup the grammar makes a constrained model write, and the parser that reads it back
    // (Mistral's [TOOL_CALLS] is a special token no grammar can produce: its constrained calls
    // are the bare JSON array that follows it, read by the json parser).
    virtual CallMarkup markup() const = 0;
    virtual const ToolCallParser& constrained_parser() const { return *this; }
};

// The parsers by name: hermes, llama3_json, mistral, json. Null for an unknown name.
const ToolCallParser* find_tool_parser(std::string_view name);
std::vector<std::string> tool_parser_names();  // for messages and --help
// The parser a chat template's text calls for: <tool_call> (Qwen2.5, Qwen3, Hermes) is hermes,
// [TOOL_CALLS] mistral, <|python_tag|> or Llama's "parameters" wording llama3_json; anything
// else json (the calls as a JSON array, what vLLM constrains a model without markup to).
const ToolCallParser& detect_tool_parser(std::string_view chat_template);

}  // namespace radiance::frontend::tools
