// Kernel selection: bands from LE/GE/EQ, priority within a library, absolute hierarchy across
// libraries, device facts, derived parameters, and the reference gate.
#include <catch2/catch.hpp>

#include "radiance/core/selection.h"
#include "test_homes.h"

using namespace radiance::core;
using Catch::Matchers::Contains;

namespace {
Geometry gemm(int64_t lo, int64_t hi, int64_t K = 4096, std::string dtype = "bf16") {
    Geometry g;
    g.op = "t_gemm";
    g.params["N"] = ParamValue::of_int(4096);
    g.params["K"] = ParamValue::of_int(K);
    g.params["dtype"] = ParamValue::of_str(dtype);
    g.ranged = "M";
    g.lo = lo;
    g.hi = hi;
    return g;
}
std::string winner(const Band& b) { return b.winner ? b.winner->info->name : "none"; }
Registry load(const TestHome& h, std::optional<std::vector<std::string>> kernels = std::nullopt) {
    LoadOptions o;
    o.homes = {h.str()};
    o.kernels = std::move(kernels);
    return Registry::load(o);
}
}  // namespace

TEST_CASE("bands come from LE/GE bounds and each takes its own row", "[selection]") {
    TestHome h;
    h.add("kernels/libtk_a.so");
    Registry r = load(h);
    Resolution res = resolve(r, gemm(1, 8192, /*K=*/4000), {});  // K % 128 != 0: k128 stays out
    REQUIRE(res.bands.size() == 3);
    CHECK((res.bands[0].lo == 1 && res.bands[0].hi == 64 && winner(res.bands[0]) == "small"));
    CHECK((res.bands[1].lo == 65 && res.bands[1].hi == 4096 && winner(res.bands[1]) == "big"));
    CHECK((res.bands[2].lo == 4097 && res.bands[2].hi == 8192 && winner(res.bands[2]) == "any"));
    CHECK(res.ok());
    // The explanation names why the others lost.
    std::string text = explain(res);
    CHECK_THAT(text, Contains("band M in [65, 4096]: winner testa:big"));
    CHECK_THAT(text, Contains("testa:small lost: constraint M <= 64 fails for M in [65, 4096]"));
    CHECK_THAT(text, Contains("testa:device lost: runs on a device"));
    CHECK_THAT(text, Contains("testa:p2p_only lost: constraint device.p2p == 1: fact device.p2p was not measured"));
}

TEST_CASE("priority breaks ties within a library, and DIV holds on fixed parameters", "[selection]") {
    TestHome h;
    h.add("kernels/libtk_a.so");
    Registry r = load(h);
    Resolution res = resolve(r, gemm(1, 64, /*K=*/4096), {});
    REQUIRE(res.bands.size() == 2);
    CHECK((res.bands[0].hi == 16 && winner(res.bands[0]) == "k128"));  // priority 50 beats small's 10
    CHECK(res.bands[0].derived.at("split") == 4);                      // the winner fixes the derived split
    CHECK(winner(res.bands[1]) == "small");
    Resolution odd = resolve(r, gemm(1, 64, /*K=*/4000), {});
    REQUIRE(odd.bands.size() == 1);
    CHECK(winner(odd.bands[0]) == "small");
    CHECK_THAT(explain(odd), Contains("K % 128 == 0 fails: K is 4000"));
}

TEST_CASE("string constraints and device facts", "[selection]") {
    TestHome h;
    h.add("kernels/libtk_a.so");
    Registry r = load(h);
    Resolution f32 = resolve(r, gemm(100, 200, 4000, "f32"), {});
    REQUIRE(f32.bands.size() == 1);
    CHECK(winner(f32.bands[0]) == "any");  // big serves only bf16
    SelectOptions p2p;
    p2p.facts["device.p2p"] = 1;
    Resolution with = resolve(r, gemm(100, 200, 4000), p2p);
    CHECK(winner(with.bands[0]) == "p2p_only");
    SelectOptions dev;
    dev.domains = {RAD_DOMAIN_HOST, RAD_DOMAIN_DEVICE};
    CHECK(winner(resolve(r, gemm(100, 200), dev).bands[0]) == "device");
}

TEST_CASE("between libraries the hierarchy is absolute", "[selection]") {
    TestHome h;
    h.add("kernels/libtk_a.so").add("kernels/libtk_b.so");
    Registry b_first = load(h, std::vector<std::string>{"testb", "testa"});
    Resolution res = resolve(b_first, gemm(1, 8192), {});
    REQUIRE(res.bands.size() == 1);  // testb's catch-all supplies every band despite testa's rows
    CHECK(winner(res.bands[0]) == "all");
    CHECK_THAT(explain(res), Contains("library 'testb' comes first in the kernel hierarchy"));
    Registry a_first = load(h, std::vector<std::string>{"testa", "testb"});
    CHECK(resolve(a_first, gemm(1, 8192), {}).bands.size() == 4);  // k128, small, big, any
}

TEST_CASE("reference rows serve only when accepted", "[selection]") {
    TestHome h;
    h.add("kernels/libtk_ref.so");
    Registry r = load(h);
    Resolution refused = resolve(r, gemm(1, 512), {});
    CHECK_FALSE(refused.ok());
    CHECK_THAT(refused.error, Contains("reference row testref:all") && Contains("--debug-accept-reference-kernels"));
    SelectOptions accept;
    accept.accept_reference = true;
    CHECK(resolve(r, gemm(1, 512), accept).ok());
}

TEST_CASE("a geometry that does not speak the schema is an error naming the parameter", "[selection]") {
    TestHome h;
    h.add("kernels/libtk_a.so");
    Registry r = load(h);
    Geometry g = gemm(1, 10);
    g.params.erase("K");
    CHECK_THAT(resolve(r, g, {}).error, Contains("needs parameter 'K'"));
    Geometry u = gemm(1, 10);
    u.params["bogus"] = ParamValue::of_int(1);
    CHECK_THAT(resolve(r, u, {}).error, Contains("no parameter 'bogus'"));
    Geometry none = gemm(1, 10);
    none.op = "nosuchop";
    CHECK_THAT(resolve(r, none, {}).error, Contains("declared by no loaded kernel library"));
    // Rows that match nothing in a band: an error naming the band.
    Geometry big = gemm(1, 10, 4096, "i8");
    big.lo = 5000;
    big.hi = 6000;
    Resolution res = resolve(r, big, {});
    CHECK(res.ok());  // 'any' serves everything
}
