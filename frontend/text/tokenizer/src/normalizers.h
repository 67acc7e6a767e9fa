// normalizers.h: the "normalizer" stage of tokenizer.json (NFC, Prepend, Replace, ...).
#pragma once
#include <memory>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace radiance::text {

class Normalizer {
public:
    virtual ~Normalizer() = default;
    virtual void normalize(std::string& s) const = 0;
};

// Builds the normalizer described by a tokenizer.json "normalizer" object (null -> nullptr).
std::unique_ptr<Normalizer> parse_normalizer(const nlohmann::json& j);

}  // namespace radiance::text
