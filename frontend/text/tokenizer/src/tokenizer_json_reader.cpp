// tokenizer_json_reader.cpp: a SAX handler that forwards every event to nlohmann's tree
// builder, except those inside model.vocab and model.merges, which it collects itself.
#include "tokenizer_json_reader.h"

#include "radiance/text/tokenizer.h"

namespace radiance::text {
namespace {

using nlohmann::json;

class Reader {
public:
    using number_integer_t = json::number_integer_t;
    using number_unsigned_t = json::number_unsigned_t;
    using number_float_t = json::number_float_t;
    using string_t = json::string_t;
    using binary_t = json::binary_t;

    explicit Reader(TokenizerJson& out) : out_(out), tree_(out.document) {}

    bool null() { return capturing() ? fail("a null") : tree_.null(); }
    bool boolean(bool v) { return capturing() ? fail("a boolean") : tree_.boolean(v); }
    bool number_integer(number_integer_t v) {
        if (mode_ == Mode::Vocab) return add_vocab(v);
        return capturing() ? fail("a number") : tree_.number_integer(v);
    }
    bool number_unsigned(number_unsigned_t v) {
        if (mode_ == Mode::Vocab) return add_vocab(static_cast<number_integer_t>(v));
        return capturing() ? fail("a number") : tree_.number_unsigned(v);
    }
    bool number_float(number_float_t v, const string_t& s) { return capturing() ? fail("a number") : tree_.number_float(v, s); }
    bool binary(binary_t& v) { return capturing() ? fail("binary data") : tree_.binary(v); }

    bool string(string_t& s) {
        switch (mode_) {
        case Mode::None: return tree_.string(s);
        case Mode::Merges: out_.merges.push_back(split_merge_line(s)); return true;
        case Mode::MergePair: pair_.push_back(std::move(s)); return true;
        case Mode::Vocab: return fail("a string");
        }
        return false;
    }

    bool start_object(std::size_t n) {
        if (capturing()) return fail("an object");
        if (at("model", "vocab")) {
            mode_ = Mode::Vocab;
            out_.has_vocab = true;
            return true;
        }
        keys_.emplace_back();
        return tree_.start_object(n);
    }
    bool key(string_t& k) {
        if (mode_ == Mode::Vocab) {
            vocab_key_ = std::move(k);
            return true;
        }
        if (capturing()) return fail("an object");
        keys_.back() = k;
        return tree_.key(k);
    }
    bool end_object() {
        if (mode_ == Mode::Vocab) {
            mode_ = Mode::None;
            return tree_.null();  // model.vocab stays in the tree as null
        }
        keys_.pop_back();
        return tree_.end_object();
    }

    bool start_array(std::size_t n) {
        if (mode_ == Mode::Merges) {
            mode_ = Mode::MergePair;
            pair_.clear();
            return true;
        }
        if (capturing()) return fail("an array");
        if (at("model", "merges")) {
            mode_ = Mode::Merges;
            out_.has_merges = true;
            return true;
        }
        keys_.emplace_back();
        return tree_.start_array(n);
    }
    bool end_array() {
        if (mode_ == Mode::MergePair) {
            if (pair_.size() != 2) return fail("a merge that is not two tokens");
            out_.merges.emplace_back(std::move(pair_[0]), std::move(pair_[1]));
            mode_ = Mode::Merges;
            return true;
        }
        if (mode_ == Mode::Merges) {
            mode_ = Mode::None;
            return tree_.null();
        }
        keys_.pop_back();
        return tree_.end_array();
    }

    bool parse_error(std::size_t position, const std::string& token, const nlohmann::detail::exception& e) {
        throw TokenizerError("tokenizer.json is not valid JSON at byte " + std::to_string(position) + " near '" + token + "': " + e.what());
    }

private:
    enum class Mode { None, Vocab, Merges, MergePair };

    bool capturing() const { return mode_ != Mode::None; }
    // The value about to start is root[a][b].
    bool at(const char* a, const char* b) const { return keys_.size() == 2 && keys_[0] == a && keys_[1] == b; }
    bool add_vocab(number_integer_t id) {
        if (id < 0 || id > INT32_MAX) return fail("an id out of range");
        out_.vocab.emplace_back(std::move(vocab_key_), static_cast<int32_t>(id));
        return true;
    }
    bool fail(const char* what) const {
        throw TokenizerError(std::string("tokenizer.json: unexpected ") + what + " in model." +
                             (mode_ == Mode::Vocab ? "vocab" : "merges"));
    }

    TokenizerJson& out_;
    nlohmann::detail::json_sax_dom_parser<json> tree_;
    std::vector<std::string> keys_;  // per open object/array: its current key ("" for arrays)
    Mode mode_ = Mode::None;
    std::string vocab_key_;
    std::vector<std::string> pair_;
};

}  // namespace

std::pair<std::string, std::string> split_merge_line(const std::string& line) {
    size_t space = line.find(' ');
    if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos)
        throw TokenizerError("bad merge \"" + line + "\" (want two tokens separated by one space)");
    return {line.substr(0, space), line.substr(space + 1)};
}

TokenizerJson read_tokenizer_json(std::string_view text) {
    TokenizerJson out;
    Reader reader(out);
    json::sax_parse(text.begin(), text.end(), &reader);
    return out;
}

}  // namespace radiance::text
