// pre_tokenizers.cpp: the pre-tokenizer components, following the `tokenizers` library's
// NormalizedString::split rules (behaviours, empty pieces dropped).
#include "pre_tokenizers.h"

#include <algorithm>

#include "byte_level.h"
#include "json_util.h"
#include "regex.h"
#include "unicode.h"

namespace radiance::text {
namespace {

using json_util::json;

enum class Behavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

Behavior parse_behavior(const std::string& s) {
    if (s == "Removed") return Behavior::Removed;
    if (s == "Isolated") return Behavior::Isolated;
    if (s == "MergedWithPrevious") return Behavior::MergedWithPrevious;
    if (s == "MergedWithNext") return Behavior::MergedWithNext;
    if (s == "Contiguous") return Behavior::Contiguous;
    throw TokenizerError("unknown split behavior \"" + s + "\"");
}

struct Cut {
    size_t start, end;
    bool is_match;
};

// Turns match positions into cuts that cover the whole text, as Pattern::find_matches does.
void matches_to_cuts(const std::vector<Match>& matches, size_t length, bool invert, std::vector<Cut>& cuts) {
    cuts.clear();
    if (length == 0) {
        cuts.push_back({0, 0, invert});
        return;
    }
    size_t prev = 0;
    for (const Match& m : matches) {
        if (prev != m.start) cuts.push_back({prev, m.start, invert});
        cuts.push_back({m.start, m.end, !invert});
        prev = m.end;
    }
    if (prev != length) cuts.push_back({prev, length, invert});
}

// Every character for which pred holds is a match of its own.
template <class Pred>
void char_cuts(std::string_view s, Pred pred, std::vector<Cut>& cuts) {
    cuts.clear();
    if (s.empty()) {
        cuts.push_back({0, 0, false});
        return;
    }
    size_t last = 0;
    for (size_t i = 0; i < s.size();) {
        size_t at = i;
        if (pred(unicode::next_code_point(s, i))) {
            if (last < at) cuts.push_back({last, at, false});
            cuts.push_back({at, i, true});
            last = i;
        }
    }
    if (last < s.size()) cuts.push_back({last, s.size(), false});
}

// Applies a split behaviour; the result is the list of kept [start, end) ranges.
void apply_behavior(const std::vector<Cut>& cuts, Behavior behavior, std::vector<Cut>& kept) {
    kept.clear();
    switch (behavior) {
    case Behavior::Isolated:
        for (const Cut& c : cuts) kept.push_back({c.start, c.end, false});
        break;
    case Behavior::Removed:
        for (const Cut& c : cuts)
            if (!c.is_match) kept.push_back(c);
        break;
    case Behavior::Contiguous: {
        bool previous = false;
        for (const Cut& c : cuts) {
            if (c.is_match == previous && !kept.empty())
                kept.back().end = c.end;
            else
                kept.push_back({c.start, c.end, false});
            previous = c.is_match;
        }
        break;
    }
    case Behavior::MergedWithPrevious: {
        bool previous = false;
        for (const Cut& c : cuts) {
            if (c.is_match && !previous && !kept.empty())
                kept.back().end = c.end;
            else
                kept.push_back({c.start, c.end, false});
            previous = c.is_match;
        }
        break;
    }
    case Behavior::MergedWithNext: {
        bool previous = false;
        for (size_t k = cuts.size(); k-- > 0;) {
            const Cut& c = cuts[k];
            if (c.is_match && !previous && !kept.empty())
                kept.back().start = c.start;
            else
                kept.push_back({c.start, c.end, false});
            previous = c.is_match;
        }
        std::reverse(kept.begin(), kept.end());
        break;
    }
    }
}

// Replaces piece `p` (inside `out`) by its non-empty kept sub-ranges.
void emit_kept(const PieceList::Piece& p, const std::vector<Cut>& kept, std::vector<PieceList::Piece>& out) {
    for (const Cut& c : kept)
        if (c.end > c.start) out.push_back({p.offset + c.start, c.end - c.start, p.at_input_start && c.start == 0});
}

class Split final : public PreTokenizer {
public:
    Split(const json_util::Pattern& pattern, Behavior behavior, bool invert)
        : regex_(pattern.text, pattern.literal), behavior_(behavior), invert_(invert) {}
    void pre_tokenize(PieceList& list) const override {
        std::vector<PieceList::Piece> out;
        out.reserve(list.pieces.size() * 4);
        std::vector<Match> matches;
        std::vector<Cut> cuts, kept;
        for (const auto& p : list.pieces) {
            matches.clear();
            regex_.find_all(list.view(p), matches);
            matches_to_cuts(matches, p.length, invert_, cuts);
            apply_behavior(cuts, behavior_, kept);
            emit_kept(p, kept, out);
        }
        list.pieces = std::move(out);
    }

private:
    Regex regex_;
    Behavior behavior_;
    bool invert_;
};

class Digits final : public PreTokenizer {
public:
    explicit Digits(bool individual) : individual_(individual) {}
    void pre_tokenize(PieceList& list) const override {
        std::vector<PieceList::Piece> out;
        std::vector<Cut> cuts, kept;
        for (const auto& p : list.pieces) {
            char_cuts(list.view(p), unicode::is_numeric, cuts);
            apply_behavior(cuts, individual_ ? Behavior::Isolated : Behavior::Contiguous, kept);
            emit_kept(p, kept, out);
        }
        list.pieces = std::move(out);
    }

private:
    bool individual_;
};

// Splits on whitespace and drops it.
class WhitespaceSplit final : public PreTokenizer {
public:
    void pre_tokenize(PieceList& list) const override {
        std::vector<PieceList::Piece> out;
        std::vector<Cut> cuts, kept;
        for (const auto& p : list.pieces) {
            char_cuts(list.view(p), unicode::is_whitespace, cuts);
            apply_behavior(cuts, Behavior::Removed, kept);
            emit_kept(p, kept, out);
        }
        list.pieces = std::move(out);
    }
};

// Keeps runs of word characters and runs of other non-space characters (\w+|[^\w\s]+ with
// the Rust regex crate's \w, which the library uses here).
class Whitespace final : public PreTokenizer {
public:
    Whitespace() : regex_("[" + std::string(kRustWordClass) + "]+|[^" + std::string(kRustWordClass) + "\\s]+", false) {}
    void pre_tokenize(PieceList& list) const override {
        std::vector<PieceList::Piece> out;
        std::vector<Match> matches;
        std::vector<Cut> cuts, kept;
        for (const auto& p : list.pieces) {
            matches.clear();
            regex_.find_all(list.view(p), matches);
            matches_to_cuts(matches, p.length, true, cuts);
            apply_behavior(cuts, Behavior::Removed, kept);
            emit_kept(p, kept, out);
        }
        list.pieces = std::move(out);
    }

private:
    Regex regex_;
};

class ByteLevel final : public PreTokenizer {
public:
    ByteLevel(bool add_prefix_space, bool use_regex)
        : add_prefix_space_(add_prefix_space), gpt2_(use_regex ? std::make_unique<Regex>(kGpt2Pattern, false) : nullptr) {}

    void pre_tokenize(PieceList& list) const override {
        PieceList out;
        out.text.reserve(list.text.size() + list.text.size() / 2);
        out.pieces.reserve(list.pieces.size() * 2);
        std::string prefixed;
        std::vector<Match> matches;
        std::vector<Cut> cuts, kept;
        for (const auto& p : list.pieces) {
            std::string_view s = list.view(p);
            if (add_prefix_space_ && s.front() != ' ') {
                prefixed.clear();
                prefixed.push_back(' ');
                prefixed.append(s.data(), s.size());
                s = prefixed;
            }
            kept.clear();
            if (gpt2_) {
                matches.clear();
                gpt2_->find_all(s, matches);
                matches_to_cuts(matches, s.size(), false, cuts);
                apply_behavior(cuts, Behavior::Isolated, kept);
            } else {
                kept.push_back({0, s.size(), false});
            }
            for (const Cut& c : kept) {
                if (c.end == c.start) continue;
                size_t begin = out.text.size();
                byte_level::append_encoded(out.text, s.substr(c.start, c.end - c.start));
                out.pieces.push_back({begin, out.text.size() - begin, p.at_input_start && c.start == 0});
            }
        }
        list = std::move(out);
    }

private:
    bool add_prefix_space_;
    std::unique_ptr<Regex> gpt2_;
};

enum class PrependScheme { Always, First, Never };

PrependScheme parse_prepend_scheme(const json& j) {
    // Old files only have add_prefix_space; the library then defaults to "always".
    std::string scheme = json_util::get_string(j, "prepend_scheme", "always");
    if (j.contains("add_prefix_space") && j["add_prefix_space"].is_boolean() && !j["add_prefix_space"].get<bool>()) scheme = "never";
    if (scheme == "always") return PrependScheme::Always;
    if (scheme == "first") return PrependScheme::First;
    if (scheme == "never") return PrependScheme::Never;
    throw TokenizerError("unknown Metaspace prepend_scheme \"" + scheme + "\"");
}

// SentencePiece style: spaces become the replacement character ("▁"), which may be
// prepended, and words may be cut before every replacement character.
class Metaspace final : public PreTokenizer {
public:
    Metaspace(std::string replacement, PrependScheme scheme, bool split)
        : replacement_(std::move(replacement)), scheme_(scheme), split_(split) {}

    void pre_tokenize(PieceList& list) const override {
        PieceList out;
        out.text.reserve(list.text.size() * 2);
        for (const auto& p : list.pieces) {
            std::string_view s = list.view(p);
            size_t begin = out.text.size();
            bool starts_with_replacement = s.front() == ' ' || s.substr(0, replacement_.size()) == replacement_;
            bool prepend =
                !starts_with_replacement && (scheme_ == PrependScheme::Always || (scheme_ == PrependScheme::First && p.at_input_start));
            if (prepend) out.text.append(replacement_);
            for (char c : s) {
                if (c == ' ')
                    out.text.append(replacement_);
                else
                    out.text.push_back(c);
            }
            size_t end = out.text.size();
            if (!split_) {
                out.pieces.push_back({begin, end - begin, p.at_input_start});
                continue;
            }
            // MergedWithNext on every replacement character: each word starts with it.
            size_t word = begin;
            for (size_t at = out.text.find(replacement_, begin); at != std::string::npos && at < end;
                 at = out.text.find(replacement_, at + replacement_.size())) {
                if (at > word) out.pieces.push_back({word, at - word, p.at_input_start && word == begin});
                word = at;
            }
            if (end > word) out.pieces.push_back({word, end - word, p.at_input_start && word == begin});
        }
        list = std::move(out);
    }

private:
    std::string replacement_;
    PrependScheme scheme_;
    bool split_;
};

class Sequence final : public PreTokenizer {
public:
    explicit Sequence(std::vector<std::unique_ptr<PreTokenizer>> items) : items_(std::move(items)) {}
    void pre_tokenize(PieceList& list) const override {
        for (const auto& p : items_) p->pre_tokenize(list);
    }

private:
    std::vector<std::unique_ptr<PreTokenizer>> items_;
};

}  // namespace

std::unique_ptr<PreTokenizer> parse_pre_tokenizer(const nlohmann::json& j) {
    if (j.is_null()) return nullptr;
    std::string type = json_util::type_of(j, "pre_tokenizer");
    if (type == "Split")
        return std::make_unique<Split>(json_util::get_pattern(j, "Split pre-tokenizer"),
                                       parse_behavior(json_util::require(j, "behavior", "Split").get<std::string>()),
                                       json_util::get_bool(j, "invert", false));
    if (type == "ByteLevel")
        return std::make_unique<ByteLevel>(json_util::get_bool(j, "add_prefix_space", true), json_util::get_bool(j, "use_regex", true));
    if (type == "Metaspace")
        return std::make_unique<Metaspace>(json_util::get_char(j, "replacement", "Metaspace"), parse_prepend_scheme(j),
                                           json_util::get_bool(j, "split", true));
    if (type == "Digits") return std::make_unique<Digits>(json_util::get_bool(j, "individual_digits", false));
    if (type == "WhitespaceSplit") return std::make_unique<WhitespaceSplit>();
    if (type == "Whitespace") return std::make_unique<Whitespace>();
    if (type == "Sequence") {
        std::vector<std::unique_ptr<PreTokenizer>> items;
        for (const auto& p : json_util::require(j, "pretokenizers", "Sequence pre-tokenizer"))
            if (auto q = parse_pre_tokenizer(p)) items.push_back(std::move(q));
        return std::make_unique<Sequence>(std::move(items));
    }
    throw TokenizerError("unsupported pre_tokenizer type \"" + type + "\"");
}

}  // namespace radiance::text
