// The loader's law: search-path shadowing and every refusal, with the message checked.
#include <catch2/catch.hpp>

#include "radiance/core/registry.h"
#include "test_homes.h"

using namespace radiance::core;
using Catch::Matchers::Contains;

namespace {
Registry load(std::vector<std::string> homes, std::optional<std::vector<std::string>> kernels = std::nullopt) {
    LoadOptions o;
    o.homes = std::move(homes);
    o.kernels = std::move(kernels);
    return Registry::load(o);
}
const PluginRecord* record_for(const Registry& r, const std::string& filename, const std::string& home) {
    for (auto& rec : r.records())
        if (rec.file.filename == filename && rec.file.home == home) return &rec;
    return nullptr;
}
}  // namespace

TEST_CASE("an earlier home shadows a same-named file in a later one", "[loader]") {
    TestHome first, second;
    first.add("kernels/libtk_b.so", "libshared.so");
    second.add("kernels/libtk_a.so", "libshared.so");
    Registry r = load({first.str(), second.str()});
    REQUIRE(r.kernel_libraries().size() == 1);
    CHECK(r.kernel_libraries()[0].plugin->name == "testb");
    const PluginRecord* shadowed = record_for(r, "libshared.so", second.str());
    REQUIRE(shadowed);
    CHECK(shadowed->status == PluginRecord::Status::Shadowed);
    CHECK_THAT(shadowed->why, Contains(first.str()));

    Registry swapped = load({second.str(), first.str()});
    REQUIRE(swapped.kernel_libraries().size() == 1);
    CHECK(swapped.kernel_libraries()[0].plugin->name == "testa");
}

TEST_CASE("an ABI version mismatch is refused with both numbers", "[loader]") {
    TestHome h;
    h.add("kernels/libtk_abi.so").add("kernels/libtk_a.so");
    Registry r = load({h.str()});
    REQUIRE(r.refusals().size() == 1);
    CHECK_THAT(r.refusals()[0], Contains("libtk_abi.so") && Contains("ABI version " + std::to_string(RAD_ABI_VERSION + 1)) &&
                                    Contains("engine's " + std::to_string(RAD_ABI_VERSION)));
    CHECK(r.kernel_libraries().size() == 1);
}

TEST_CASE("a layout fingerprint mismatch is refused with both values", "[loader]") {
    TestHome h;
    h.add("kernels/libtk_layout.so");
    Registry r = load({h.str()});
    REQUIRE(r.refusals().size() == 1);
    char engine[32];
    std::snprintf(engine, sizeof engine, "0x%016llx", static_cast<unsigned long long>(RAD_ABI_LAYOUT_FINGERPRINT));
    char plugin[32];
    std::snprintf(plugin, sizeof plugin, "0x%016llx", static_cast<unsigned long long>(RAD_ABI_LAYOUT_FINGERPRINT ^ 0x5a5a));
    CHECK_THAT(r.refusals()[0], Contains("libtk_layout.so") && Contains("fingerprint") && Contains(engine) && Contains(plugin));
    CHECK(r.kernel_libraries().empty());
}

TEST_CASE("two plugins with one name: the second is refused, both files named", "[loader]") {
    TestHome h;
    h.add("kernels/libtk_a.so").add("kernels/libtk_dupname.so");
    Registry r = load({h.str()});
    REQUIRE(r.refusals().size() == 1);
    CHECK_THAT(r.refusals()[0], Contains("'testa'") && Contains("libtk_a.so") && Contains("libtk_dupname.so"));
    REQUIRE(r.kernel_libraries().size() == 1);
    CHECK(r.kernel_libraries()[0].plugin->path.find("libtk_a.so") != std::string::npos);
}

TEST_CASE("two quantisers with one name are refused, both plugins named", "[loader]") {
    TestHome h;
    h.add("quantizers/libtq_a.so").add("quantizers/libtq_b.so");
    Registry r = load({h.str()});
    REQUIRE(r.refusals().size() == 1);
    CHECK_THAT(r.refusals()[0], Contains("'rtn'") && Contains("quanta") && Contains("quantb"));
    CHECK(r.quantizer("rtn") != nullptr);
}

TEST_CASE("a later library declaring an op schema differently is refused", "[loader]") {
    TestHome h;
    h.add("kernels/libtk_a.so").add("kernels/libtk_conflict.so");
    Registry r = load({h.str()}, std::vector<std::string>{"testa", "conflict"});
    REQUIRE(r.refusals().size() == 1);
    CHECK_THAT(r.refusals()[0], Contains("'conflict'") && Contains("'t_gemm'") && Contains("'testa'") && Contains("declared it first") &&
                                    Contains("'K' is int vs f64"));
    // In the other order the conflicting library fixes the schema and testa is refused.
    Registry other = load({h.str()}, std::vector<std::string>{"conflict", "testa"});
    REQUIRE(other.refusals().size() == 1);
    CHECK_THAT(other.refusals()[0], Contains("'testa'") && Contains("'conflict'"));
}

TEST_CASE("rad_plugin_open may decline the machine", "[loader]") {
    TestHome h;
    h.add("kernels/libtk_decline.so").add("kernels/libtk_b.so");
    Registry r = load({h.str()});
    CHECK(r.refusals().empty());
    REQUIRE(r.kernel_libraries().size() == 1);
    const PluginRecord* rec = record_for(r, "libtk_decline.so", h.str());
    REQUIRE(rec);
    CHECK(rec->status == PluginRecord::Status::Declined);
}

TEST_CASE("a --kernels list orders the hierarchy, warns about unmatched entries, leaves out unnamed", "[loader]") {
    TestHome h;
    h.add("kernels/libtk_a.so").add("kernels/libtk_b.so").add("kernels/libtk_ref.so");
    Registry all = load({h.str()});
    REQUIRE(all.kernel_libraries().size() == 3);
    CHECK(all.kernel_libraries()[0].plugin->name == "testa");
    CHECK(all.kernel_libraries()[2].plugin->name == "testref");  // references last
    CHECK(all.kernel_libraries()[2].reference);

    // Entries may name the plugin, the file stem, the file name or the path.
    Registry r = load({h.str()}, std::vector<std::string>{"libtk_b", "nosuchlib", "testa"});
    REQUIRE(r.kernel_libraries().size() == 2);
    CHECK(r.kernel_libraries()[0].plugin->name == "testb");
    CHECK(r.kernel_libraries()[1].plugin->name == "testa");
    REQUIRE(r.warnings().size() == 1);
    CHECK_THAT(r.warnings()[0], Contains("'nosuchlib'"));
    const PluginRecord* ref = record_for(r, "libtk_ref.so", h.str());
    REQUIRE(ref);
    CHECK(ref->status == PluginRecord::Status::NotSelected);

    Registry by_file = load({h.str()}, std::vector<std::string>{"libtk_ref.so", "tk_a"});
    REQUIRE(by_file.kernel_libraries().size() == 2);
    CHECK(by_file.kernel_libraries()[0].plugin->name == "testa");  // a reference ranks below the rest
}

TEST_CASE("architectures are chosen by the exact (id, quant) pair", "[loader]") {
    TestHome h;
    h.add("architectures/libta_llama.so");
    Registry r = load({h.str()});
    CHECK(r.arch("testllama", "").plugin->name == "testllama");
    CHECK_THROWS_WITH(r.arch("testllama", "fp8"),
                      Contains("no architecture plugin serves (testllama, \"fp8\")") && Contains("(testllama, \"\")"));
}

TEST_CASE("a missing or empty home is not an error", "[loader]") {
    Registry r = load({"/nonexistent/radiance/home"});
    CHECK(r.kernel_libraries().empty());
    CHECK(r.refusals().empty());
}
