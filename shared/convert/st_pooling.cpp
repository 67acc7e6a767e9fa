#include "radiance/convert/st_pooling.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "radiance/util/error.h"

namespace radiance::convert {

namespace {

nlohmann::json read_json(const std::filesystem::path& p) {
    std::ifstream f(p);
    if (!f) return nlohmann::json();
    std::stringstream ss;
    ss << f.rdbuf();
    auto j = nlohmann::json::parse(ss.str(), nullptr, false);
    if (j.is_discarded()) throw Error(p.string() + ": not valid JSON");
    return j;
}

}  // namespace

void read_st_pooling(const std::filesystem::path& folder, std::map<std::string, container::MetaValue>& meta) {
    const nlohmann::json modules = read_json(folder / "modules.json");
    std::string pooling_dir = "1_Pooling";
    bool normalize = false, found = modules.is_array();
    if (modules.is_array())
        for (const auto& m : modules) {
            const std::string type = m.value("type", "");
            if (type.find("Pooling") != std::string::npos) pooling_dir = m.value("path", pooling_dir);
            if (type.find("Normalize") != std::string::npos) normalize = true;
        }
    const nlohmann::json pool = read_json(folder / pooling_dir / "config.json");
    if (!pool.is_object()) {
        if (found) meta["embedding.normalize"] = container::MetaValue::of_str(normalize ? "true" : "false");
        return;
    }
    auto on = [&](const char* k) { return pool.contains(k) && pool[k].is_boolean() && pool[k].get<bool>(); };
    // sentence-transformers concatenates every mode it is given: one vector of two poolings is
    // not what either pooling serves
    int modes = 0;
    for (auto& [k, v] : pool.items()) modes += k.rfind("pooling_mode_", 0) == 0 && v.is_boolean() && v.get<bool>();
    if (modes > 1)
        throw Error((folder / pooling_dir / "config.json").string() +
                    ": several pooling modes at once (sentence-transformers concatenates them) are not served");
    std::string mode;
    if (on("pooling_mode_lasttoken"))
        mode = "last";
    else if (on("pooling_mode_mean_tokens"))
        mode = "mean";
    else
        for (const char* k :
             {"pooling_mode_cls_token", "pooling_mode_max_tokens", "pooling_mode_mean_sqrt_len_tokens", "pooling_mode_weightedmean_tokens"})
            if (on(k))
                throw Error((folder / pooling_dir / "config.json").string() + ": " + k +
                            " is not served (last-token and mean pooling only)");
    if (!mode.empty()) meta["embedding.pooling"] = container::MetaValue::of_str(mode);
    meta["embedding.normalize"] = container::MetaValue::of_str(normalize ? "true" : "false");
}

}  // namespace radiance::convert
