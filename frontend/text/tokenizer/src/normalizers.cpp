// normalizers.cpp: the normalizer components and how tokenizer.json describes them.
// Offsets are not tracked: the server needs ids, not alignments.
#include "normalizers.h"

#include <vector>

#include "byte_level.h"
#include "json_util.h"
#include "regex.h"
#include "unicode.h"

namespace radiance::text {
namespace {

using json_util::json;

class UnicodeNormalizer final : public Normalizer {
public:
    explicit UnicodeNormalizer(unicode::Form form) : form_(form) {}
    void normalize(std::string& s) const override { s = unicode::normalize(s, form_); }

private:
    unicode::Form form_;
};

class Lowercase final : public Normalizer {
public:
    void normalize(std::string& s) const override { s = unicode::lowercase(s); }
};

class StripAccents final : public Normalizer {
public:
    void normalize(std::string& s) const override { s = unicode::strip_combining_marks(s); }
};

class Strip final : public Normalizer {
public:
    Strip(bool left, bool right) : left_(left), right_(right) {}
    void normalize(std::string& s) const override {
        size_t begin = 0, end = s.size();
        if (left_) {
            while (begin < end) {
                size_t i = begin;
                if (!unicode::is_whitespace(unicode::next_code_point(s, i))) break;
                begin = i;
            }
        }
        if (right_) {
            while (end > begin) {
                size_t start = end - 1;
                while (start > begin && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
                size_t i = start;
                if (!unicode::is_whitespace(unicode::next_code_point(s, i))) break;
                end = start;
            }
        }
        s = s.substr(begin, end - begin);
    }

private:
    bool left_, right_;
};

// Prepends a string (SentencePiece's dummy prefix "▁") to every non-empty piece, including
// each piece between added tokens.
class Prepend final : public Normalizer {
public:
    explicit Prepend(std::string prefix) : prefix_(std::move(prefix)) {}
    void normalize(std::string& s) const override {
        if (!s.empty()) s.insert(0, prefix_);
    }

private:
    std::string prefix_;
};

class Replace final : public Normalizer {
public:
    Replace(const json_util::Pattern& p, std::string content) : literal_(p.literal ? p.text : std::string()), content_(std::move(content)) {
        if (!p.literal) regex_ = std::make_unique<Regex>(p.text, false);
    }
    void normalize(std::string& s) const override {
        std::string out;
        if (regex_) {
            std::vector<Match> matches;
            regex_->find_all(s, matches);
            if (matches.empty()) return;
            size_t prev = 0;
            for (const Match& m : matches) {
                out.append(s, prev, m.start - prev).append(content_);
                prev = m.end;
            }
            out.append(s, prev, std::string::npos);
        } else {
            if (literal_.empty()) return;
            size_t pos = s.find(literal_);
            if (pos == std::string::npos) return;
            out.reserve(s.size() + s.size() / 4);
            size_t prev = 0;
            for (; pos != std::string::npos; pos = s.find(literal_, prev)) {
                out.append(s, prev, pos - prev).append(content_);
                prev = pos + literal_.size();
            }
            out.append(s, prev, std::string::npos);
        }
        s = std::move(out);
    }

private:
    std::string literal_;
    std::unique_ptr<Regex> regex_;
    std::string content_;
};

// Maps every byte to its GPT-2 byte-level character.
class ByteLevelNormalizer final : public Normalizer {
public:
    void normalize(std::string& s) const override { s = byte_level::encode(s); }
};

class Sequence final : public Normalizer {
public:
    explicit Sequence(std::vector<std::unique_ptr<Normalizer>> items) : items_(std::move(items)) {}
    void normalize(std::string& s) const override {
        for (const auto& n : items_) n->normalize(s);
    }

private:
    std::vector<std::unique_ptr<Normalizer>> items_;
};

}  // namespace

std::unique_ptr<Normalizer> parse_normalizer(const nlohmann::json& j) {
    if (j.is_null()) return nullptr;
    std::string type = json_util::type_of(j, "normalizer");
    if (type == "NFC") return std::make_unique<UnicodeNormalizer>(unicode::Form::NFC);
    if (type == "NFD") return std::make_unique<UnicodeNormalizer>(unicode::Form::NFD);
    if (type == "NFKC") return std::make_unique<UnicodeNormalizer>(unicode::Form::NFKC);
    if (type == "NFKD") return std::make_unique<UnicodeNormalizer>(unicode::Form::NFKD);
    if (type == "Lowercase") return std::make_unique<Lowercase>();
    if (type == "StripAccents") return std::make_unique<StripAccents>();
    if (type == "Strip")
        return std::make_unique<Strip>(json_util::get_bool(j, "strip_left", true), json_util::get_bool(j, "strip_right", true));
    if (type == "Prepend") return std::make_unique<Prepend>(json_util::require(j, "prepend", "Prepend").get<std::string>());
    if (type == "Replace")
        return std::make_unique<Replace>(json_util::get_pattern(j, "Replace normalizer"),
                                         json_util::require(j, "content", "Replace").get<std::string>());
    if (type == "ByteLevel") return std::make_unique<ByteLevelNormalizer>();
    if (type == "Sequence") {
        std::vector<std::unique_ptr<Normalizer>> items;
        for (const auto& n : json_util::require(j, "normalizers", "Sequence normalizer"))
            if (auto p = parse_normalizer(n)) items.push_back(std::move(p));
        return std::make_unique<Sequence>(std::move(items));
    }
    throw TokenizerError("unsupported normalizer type \"" + type + "\"");
}

}  // namespace radiance::text
