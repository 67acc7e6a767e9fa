// post_processors.cpp: post-processors as the `tokenizers` library applies them to ids.
#include "post_processors.h"

#include <algorithm>
#include <map>
#include <string>

#include "json_util.h"

namespace radiance::text {
namespace {

using json_util::json;

void concatenate(std::vector<std::vector<int32_t>>& encodings) {
    for (size_t i = 1; i < encodings.size(); ++i) encodings[0].insert(encodings[0].end(), encodings[i].begin(), encodings[i].end());
    encodings.resize(std::min<size_t>(encodings.size(), 1));
}

// Offsets trimming only: ids are left alone.
class ByteLevelProcessor final : public PostProcessor {
public:
    void process(std::vector<std::vector<int32_t>>&, bool) const override {}
};

class TemplateProcessing final : public PostProcessor {
public:
    struct Piece {
        bool is_sequence;
        int sequence;              // 0 for A, 1 for B
        std::vector<int32_t> ids;  // for special tokens
    };
    TemplateProcessing(std::vector<Piece> single, std::vector<Piece> pair) : single_(std::move(single)), pair_(std::move(pair)) {}

    void process(std::vector<std::vector<int32_t>>& encodings, bool add_special_tokens) const override {
        const std::vector<Piece>& tmpl = encodings.size() == 2 ? pair_ : single_;
        std::vector<int32_t> out;
        for (const Piece& p : tmpl) {
            if (p.is_sequence) {
                if (static_cast<size_t>(p.sequence) < encodings.size())
                    out.insert(out.end(), encodings[p.sequence].begin(), encodings[p.sequence].end());
            } else if (add_special_tokens) {
                out.insert(out.end(), p.ids.begin(), p.ids.end());
            }
        }
        encodings.assign(1, std::move(out));
    }

private:
    std::vector<Piece> single_, pair_;
};

// cls A sep [B sep] (Bert) and cls A sep [sep B sep] (Roberta).
class ClsSepProcessing final : public PostProcessor {
public:
    ClsSepProcessing(int32_t cls, int32_t sep, bool double_sep) : cls_(cls), sep_(sep), double_sep_(double_sep) {}
    void process(std::vector<std::vector<int32_t>>& encodings, bool add_special_tokens) const override {
        if (!add_special_tokens) {
            concatenate(encodings);
            return;
        }
        std::vector<int32_t> out{cls_};
        out.insert(out.end(), encodings[0].begin(), encodings[0].end());
        out.push_back(sep_);
        if (encodings.size() == 2) {
            if (double_sep_) out.push_back(sep_);
            out.insert(out.end(), encodings[1].begin(), encodings[1].end());
            out.push_back(sep_);
        }
        encodings.assign(1, std::move(out));
    }

private:
    int32_t cls_, sep_;
    bool double_sep_;
};

class Sequence final : public PostProcessor {
public:
    explicit Sequence(std::vector<std::unique_ptr<PostProcessor>> items) : items_(std::move(items)) {}
    void process(std::vector<std::vector<int32_t>>& encodings, bool add_special_tokens) const override {
        for (const auto& p : items_) p->process(encodings, add_special_tokens);
    }

private:
    std::vector<std::unique_ptr<PostProcessor>> items_;
};

std::vector<TemplateProcessing::Piece> parse_template(const json& pieces, const json& specials) {
    std::vector<TemplateProcessing::Piece> out;
    for (const auto& p : pieces) {
        if (auto it = p.find("Sequence"); it != p.end()) {
            std::string id = json_util::require(*it, "id", "template Sequence").get<std::string>();
            out.push_back({true, id == "B" ? 1 : 0, {}});
        } else if (auto st = p.find("SpecialToken"); st != p.end()) {
            std::string name = json_util::require(*st, "id", "template SpecialToken").get<std::string>();
            auto sp = specials.find(name);
            if (sp == specials.end()) throw TokenizerError("template uses undefined special token \"" + name + "\"");
            const json& ids = json_util::require(*sp, "ids", "template special token");
            if (!ids.is_array()) throw TokenizerError("template special token \"" + name + "\": \"ids\" is " + json_util::quote(ids) + ", not a list");
            std::vector<int32_t> v;
            for (const json& id : ids) v.push_back(json_util::get_id(id, "a template special token's id"));
            out.push_back({false, 0, std::move(v)});
        } else {
            throw TokenizerError("unknown template piece " + p.dump());
        }
    }
    return out;
}

int32_t pair_id(const json& j, const char* key, const char* what) {
    const json& p = json_util::require(j, key, what);  // ["[SEP]", 102]
    return json_util::get_id(p.at(1), what);
}

}  // namespace

std::unique_ptr<PostProcessor> parse_post_processor(const nlohmann::json& j) {
    if (j.is_null()) return nullptr;
    std::string type = json_util::type_of(j, "post_processor");
    if (type == "ByteLevel") return std::make_unique<ByteLevelProcessor>();
    if (type == "TemplateProcessing") {
        static const json kEmpty = json::object();
        const json& specials = j.contains("special_tokens") ? j["special_tokens"] : kEmpty;
        return std::make_unique<TemplateProcessing>(parse_template(json_util::require(j, "single", "TemplateProcessing"), specials),
                                                    parse_template(json_util::require(j, "pair", "TemplateProcessing"), specials));
    }
    if (type == "BertProcessing")
        return std::make_unique<ClsSepProcessing>(pair_id(j, "cls", "BertProcessing"), pair_id(j, "sep", "BertProcessing"), false);
    if (type == "RobertaProcessing")
        return std::make_unique<ClsSepProcessing>(pair_id(j, "cls", "RobertaProcessing"), pair_id(j, "sep", "RobertaProcessing"), true);
    if (type == "Sequence") {
        std::vector<std::unique_ptr<PostProcessor>> items;
        for (const auto& p : json_util::require(j, "processors", "Sequence post-processor"))
            if (auto q = parse_post_processor(p)) items.push_back(std::move(q));
        return std::make_unique<Sequence>(std::move(items));
    }
    throw TokenizerError("unsupported post_processor type \"" + type + "\"");
}

std::unique_ptr<PostProcessor> make_bos_eos_template(int32_t bos_id, int32_t eos_id) {
    using Piece = TemplateProcessing::Piece;
    auto sequence = [&](int which) {
        std::vector<Piece> v;
        if (bos_id >= 0) v.push_back({false, 0, {bos_id}});
        v.push_back({true, which, {}});
        if (eos_id >= 0) v.push_back({false, 0, {eos_id}});
        return v;
    };
    std::vector<Piece> single = sequence(0), pair = sequence(0), second = sequence(1);
    pair.insert(pair.end(), second.begin(), second.end());
    return std::make_unique<TemplateProcessing>(std::move(single), std::move(pair));
}

}  // namespace radiance::text
