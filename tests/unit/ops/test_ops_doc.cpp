// ops_doc: docs/OPS.md and the schemas the loaded kernel libraries register must agree exactly,
// both ways: every documented op is registered with the documented parameters and operands, and
// every registered conventional op is documented.
#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <sstream>

#include "radiance/core/registry.h"

using namespace radiance::core;

namespace {

struct DocOp {
    std::string name;
    std::vector<std::string> params, operands;  // normalised "name:type[?|(derived)]"
};

std::vector<std::string> split_items(const std::string& line) {
    std::vector<std::string> out;
    std::regex item("`([^`]+)`:([a-z0-9]+)(\\?|\\(derived\\))?");
    for (auto it = std::sregex_iterator(line.begin(), line.end(), item); it != std::sregex_iterator(); ++it)
        out.push_back((*it)[1].str() + ":" + (*it)[2].str() + (*it)[3].str());
    return out;
}

std::vector<DocOp> parse_doc(const std::string& path) {
    std::ifstream in(path);
    REQUIRE(in.good());
    std::vector<DocOp> ops;
    std::string line;
    std::regex head("^### `([a-z0-9_]+)`");
    while (std::getline(in, line)) {
        std::smatch m;
        if (std::regex_search(line, m, head))
            ops.push_back({m[1].str(), {}, {}});
        else if (!ops.empty() && line.rfind("- params:", 0) == 0)
            ops.back().params = split_items(line);
        else if (!ops.empty() && line.rfind("- operands:", 0) == 0)
            ops.back().operands = split_items(line);
    }
    return ops;
}

std::string type_name(int t) { return t == RAD_P_INT ? "int" : t == RAD_P_F64 ? "f64" : "str"; }
std::string role_name(int r) {
    switch (r) {
    case RAD_OPD_IN: return "in";
    case RAD_OPD_OUT: return "out";
    case RAD_OPD_INOUT: return "inout";
    case RAD_OPD_WEIGHT: return "weight";
    case RAD_OPD_WTAB: return "wtab";
    }
    return "?";
}

DocOp from_schema(const RadOpSchema& s) {
    DocOp d{s.name, {}, {}};
    for (int i = 0; i < s.n_params; ++i) {
        const RadParamSpec& p = s.params[i];
        d.params.push_back(std::string(p.name) + ":" + type_name(p.type) +
                           (p.need == RAD_OPTIONAL  ? "?"
                            : p.need == RAD_DERIVED ? "(derived)"
                                                    : ""));
    }
    for (int i = 0; i < s.n_operands; ++i)
        d.operands.push_back(std::string(s.operands[i].name) + ":" + role_name(s.operands[i].role) + (s.operands[i].optional ? "?" : ""));
    return d;
}

}  // namespace

TEST_CASE("ops_doc: docs/OPS.md matches the registered op schemas", "[ops_doc]") {
    auto doc = parse_doc(OPS_DOC);
    REQUIRE(doc.size() >= 10);
    LoadOptions o;
    o.homes = {RAD_BUILD_HOME_DIR};
    Registry reg = Registry::load(o);
    REQUIRE(reg.refusals().empty());
    REQUIRE_FALSE(reg.kernel_libraries().empty());
    for (auto& d : doc) {
        INFO("op " << d.name);
        const RadOpSchema* s = reg.schema(d.name);
        REQUIRE(s != nullptr);
        DocOp r = from_schema(*s);
        CHECK(r.params == d.params);
        CHECK(r.operands == d.operands);
    }
    for (auto& lib : reg.kernel_libraries())
        for (auto* s : lib.schemas) {
            INFO("registered op " << s->name << " of " << lib.plugin->name);
            bool documented = false;
            for (auto& d : doc) documented = documented || d.name == s->name;
            CHECK(documented);
        }
}
