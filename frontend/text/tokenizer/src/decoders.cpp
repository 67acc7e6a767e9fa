// decoders.cpp: decoder components with the `tokenizers` library's per-token semantics.
#include "decoders.h"

#include "byte_level.h"
#include "json_util.h"
#include "regex.h"
#include "unicode.h"

namespace radiance::text {
namespace {

using json_util::json;

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

class ByteLevelDecoder final : public Decoder {
public:
    void decode_chain(std::vector<std::string>& tokens, bool) const override {
        std::string bytes;
        for (const std::string& t : tokens) {
            // A token with any character outside the byte alphabet (an added token such as
            // "<|im_start|>" written in plain text) contributes its own UTF-8 bytes.
            size_t start = bytes.size();
            bool mapped = true;
            for (size_t i = 0; i < t.size();) {
                int b = byte_level::byte_for_char(unicode::next_code_point(t, i));
                if (b < 0) {
                    mapped = false;
                    break;
                }
                bytes.push_back(static_cast<char>(b));
            }
            if (!mapped) {
                bytes.resize(start);
                bytes.append(t);
            }
        }
        std::string text;
        text.reserve(bytes.size());
        unicode::append_lossy(text, bytes);
        tokens.assign(1, std::move(text));
    }
};

// Runs of <0xNN> tokens become the UTF-8 they spell, or one U+FFFD per byte when invalid.
class ByteFallbackDecoder final : public Decoder {
public:
    void decode_chain(std::vector<std::string>& tokens, bool) const override {
        std::vector<std::string> out;
        std::string run;
        size_t run_bytes = 0;
        auto flush = [&]() {
            if (run_bytes == 0) return;
            if (unicode::is_valid_utf8(run)) {
                out.push_back(run);
            } else {
                for (size_t k = 0; k < run_bytes; ++k) out.emplace_back("\xEF\xBF\xBD");
            }
            run.clear();
            run_bytes = 0;
        };
        for (std::string& t : tokens) {
            int b = byte_fallback_value(t);
            if (b >= 0) {
                run.push_back(static_cast<char>(b));
                ++run_bytes;
            } else {
                flush();
                out.push_back(std::move(t));
            }
        }
        flush();
        tokens = std::move(out);
    }
};

class FuseDecoder final : public Decoder {
public:
    void decode_chain(std::vector<std::string>& tokens, bool) const override {
        std::string all;
        for (const std::string& t : tokens) all += t;
        tokens.assign(1, std::move(all));
    }
};

// Removes up to `start` leading and `stop` trailing copies of one character, per token.
class StripDecoder final : public Decoder {
public:
    StripDecoder(std::string content, size_t start, size_t stop) : content_(std::move(content)), start_(start), stop_(stop) {}
    void decode_chain(std::vector<std::string>& tokens, bool continuation) const override {
        for (std::string& t : tokens) {
            size_t begin = 0, end = t.size();
            size_t start = continuation ? 0 : start_;
            for (size_t k = 0; k < start && t.compare(begin, content_.size(), content_) == 0 && begin < end; ++k) begin += content_.size();
            for (size_t k = 0;
                 k < stop_ && end >= begin + content_.size() && t.compare(end - content_.size(), content_.size(), content_) == 0; ++k)
                end -= content_.size();
            t = t.substr(begin, end - begin);
        }
    }

private:
    std::string content_;
    size_t start_, stop_;
};

class ReplaceDecoder final : public Decoder {
public:
    ReplaceDecoder(const json_util::Pattern& p, std::string content) : content_(std::move(content)) {
        if (p.literal)
            literal_ = p.text;
        else
            regex_ = std::make_unique<Regex>(p.text, false);
    }
    void decode_chain(std::vector<std::string>& tokens, bool) const override {
        for (std::string& t : tokens) {
            std::string out;
            if (regex_) {
                std::vector<Match> matches;
                regex_->find_all(t, matches);
                size_t prev = 0;
                for (const Match& m : matches) {
                    out.append(t, prev, m.start - prev).append(content_);
                    prev = m.end;
                }
                out.append(t, prev, std::string::npos);
            } else {
                if (literal_.empty()) continue;
                size_t prev = 0;
                for (size_t pos = t.find(literal_); pos != std::string::npos; pos = t.find(literal_, prev)) {
                    out.append(t, prev, pos - prev).append(content_);
                    prev = pos + literal_.size();
                }
                out.append(t, prev, std::string::npos);
            }
            t = std::move(out);
        }
    }

private:
    std::string literal_;
    std::unique_ptr<Regex> regex_;
    std::string content_;
};

// Replacement characters become spaces; in the first token they are dropped (unless the
// pre-tokenizer never prepends one).
class MetaspaceDecoder final : public Decoder {
public:
    MetaspaceDecoder(std::string replacement, bool drop_in_first) : replacement_(std::move(replacement)), drop_in_first_(drop_in_first) {}
    void decode_chain(std::vector<std::string>& tokens, bool continuation) const override {
        for (size_t i = 0; i < tokens.size(); ++i) {
            std::string& t = tokens[i];
            bool drop = i == 0 && drop_in_first_ && !continuation;
            std::string out;
            size_t prev = 0;
            for (size_t pos = t.find(replacement_); pos != std::string::npos; pos = t.find(replacement_, prev)) {
                out.append(t, prev, pos - prev);
                if (!drop) out.push_back(' ');
                prev = pos + replacement_.size();
            }
            out.append(t, prev, std::string::npos);
            t = std::move(out);
        }
    }

private:
    std::string replacement_;
    bool drop_in_first_;
};

class SequenceDecoder final : public Decoder {
public:
    explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> items) : items_(std::move(items)) {}
    void decode_chain(std::vector<std::string>& tokens, bool continuation) const override {
        for (const auto& d : items_) d->decode_chain(tokens, continuation);
    }

private:
    std::vector<std::unique_ptr<Decoder>> items_;
};

std::unique_ptr<Decoder> parse(const json& j, DecoderTraits& traits, bool& joined) {
    std::string type = json_util::type_of(j, "decoder");
    if (type == "ByteLevel") {
        joined = true;
        traits.byte_level = true;
        return std::make_unique<ByteLevelDecoder>();
    }
    if (type == "ByteFallback") {
        traits.byte_fallback = true;
        return std::make_unique<ByteFallbackDecoder>();
    }
    if (type == "Fuse") {
        joined = true;
        return std::make_unique<FuseDecoder>();
    }
    if (type == "Strip") {
        constexpr int64_t kMost = int64_t{1} << 30;  // characters stripped from one end
        const auto stop = static_cast<size_t>(json_util::get_int(json_util::require(j, "stop", "Strip decoder"), "Strip decoder's \"stop\"", 0, kMost));
        if (stop > 0) traits.strips_end = true;
        const auto start =
            static_cast<size_t>(json_util::get_int(json_util::require(j, "start", "Strip decoder"), "Strip decoder's \"start\"", 0, kMost));
        return std::make_unique<StripDecoder>(json_util::get_char(j, "content", "Strip decoder"), start, stop);
    }
    if (type == "Replace") {
        json_util::Pattern p = json_util::get_pattern(j, "Replace decoder");
        size_t i = 0;
        bool one_char = p.literal && !p.text.empty() && (unicode::next_code_point(p.text, i), i == p.text.size());
        if (joined && !one_char) traits.stream_safe = false;
        return std::make_unique<ReplaceDecoder>(p, json_util::require(j, "content", "Replace").get<std::string>());
    }
    if (type == "Metaspace") {
        std::string scheme = json_util::get_string(j, "prepend_scheme", "always");
        if (j.contains("add_prefix_space") && j["add_prefix_space"].is_boolean() && !j["add_prefix_space"].get<bool>()) scheme = "never";
        return std::make_unique<MetaspaceDecoder>(json_util::get_char(j, "replacement", "Metaspace decoder"), scheme != "never");
    }
    if (type == "Sequence") {
        std::vector<std::unique_ptr<Decoder>> items;
        for (const auto& d : json_util::require(j, "decoders", "Sequence decoder"))
            if (!d.is_null()) items.push_back(parse(d, traits, joined));
        return std::make_unique<SequenceDecoder>(std::move(items));
    }
    throw TokenizerError("unsupported decoder type \"" + type + "\"");
}

}  // namespace

int byte_fallback_value(const std::string& t) {
    if (t.size() != 6 || t[0] != '<' || t[1] != '0' || t[2] != 'x' || t[5] != '>') return -1;
    int hi = hex_value(t[3]), lo = hex_value(t[4]);
    return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

std::unique_ptr<Decoder> parse_decoder(const nlohmann::json& j, DecoderTraits& traits) {
    if (j.is_null()) return nullptr;
    bool joined = false;
    return parse(j, traits, joined);
}

std::string run_decoder(const Decoder* decoder, std::vector<std::string> tokens, bool continuation) {
    std::string out;
    if (!decoder) {
        for (size_t i = 0; i < tokens.size(); ++i) {
            if (i > 0 || continuation) out.push_back(' ');
            out += tokens[i];
        }
        return out;
    }
    decoder->decode_chain(tokens, continuation);
    for (const std::string& t : tokens) out += t;
    return out;
}

}  // namespace radiance::text
