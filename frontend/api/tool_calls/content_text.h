// content_text.h: the content around tool-call markup, shared by the parsers whose calls sit
// inside text (hermes, mistral): the text before the first call as it is, later text only where
// it is not blank (the newlines between calls are not an answer), and, while a stream is still
// being written, trailing whitespace held back so the content only ever grows. (Content that is
// blank as a whole is the caller's to drop: tool_call_stream.cpp, which may read a text in parts.)
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "json_scan.h"

namespace radiance::frontend::tools {

// segments[0] is the text before the first call, each later one the text after a call; the last
// one is still being written unless `final` (the caller has already cut what may be markup).
inline std::string content_of(const std::vector<std::string_view>& segments, bool final) {
    std::string content;
    for (size_t i = 0; i < segments.size(); ++i) {
        std::string_view s = segments[i];
        if (!final && i + 1 == segments.size())
            while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
        if (i > 0 && is_blank(s)) continue;
        content += s;
    }
    return content;
}

}  // namespace radiance::frontend::tools
