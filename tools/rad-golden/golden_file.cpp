#include "golden_file.h"

#include <cstring>

#include "radiance/convert/safetensors.h"
#include "radiance/util/error.h"

namespace radiance::golden {
namespace {

template <typename T>
std::vector<T> as_vec(const convert::StTensor& t) {
    std::vector<T> v(t.bytes / sizeof(T));
    std::memcpy(v.data(), t.data, v.size() * sizeof(T));
    return v;
}

}  // namespace

std::vector<Prompt> load_golden(const std::string& path) {
    auto f = convert::SafetensorsFile::open(path);
    std::vector<Prompt> out;
    for (int i = 0;; ++i) {
        std::string p = "prompt" + std::to_string(i);
        auto ids = f->tensors().find(p + ".ids");
        if (ids == f->tensors().end()) break;
        auto lg = f->tensors().find(p + ".logits");
        auto gr = f->tensors().find(p + ".greedy");
        if (lg == f->tensors().end() || gr == f->tensors().end()) throw Error(path + ": " + p + " lacks logits or greedy");
        Prompt pr;
        pr.name = p;
        pr.ids = as_vec<int32_t>(ids->second);
        pr.greedy = as_vec<int32_t>(gr->second);
        pr.logits = as_vec<float>(lg->second);
        out.push_back(std::move(pr));
    }
    if (out.empty()) throw Error(path + ": no promptN.ids tensors");
    return out;
}

void load_decode(const std::string& path, std::vector<Prompt>& prompts, int64_t vocab) {
    auto f = convert::SafetensorsFile::open(path);
    for (auto& p : prompts) {
        auto fed = f->tensors().find(p.name + ".decode_tokens");
        auto lg = f->tensors().find(p.name + ".decode_logits");
        if (fed == f->tensors().end() || lg == f->tensors().end())
            throw Error(path + ": " + p.name + " lacks decode_tokens or decode_logits");
        p.fed = as_vec<int32_t>(fed->second);
        p.decode_logits = as_vec<float>(lg->second);
        if (p.fed != p.greedy)
            throw Error(path + ": " + p.name + ".decode_tokens is not the fixture's greedy continuation (references of another fixture?)");
        if (p.decode_logits.size() != p.fed.size() * static_cast<size_t>(vocab))
            throw Error(path + ": " + p.name + ".decode_logits is not [" + std::to_string(p.fed.size()) + ", " + std::to_string(vocab) +
                        "]");
    }
}

}  // namespace radiance::golden
