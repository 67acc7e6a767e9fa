// longrope's frequencies and its per-row choice (docs/OPS.md, rope) against this file's own
// arithmetic of transformers' _compute_longrope_parameters: inv_freq = 1 / (factor_j *
// theta^(2j / rot)) in f32, and the long factors for a row whose sequence's last row in the step
// reaches orig_ctx. The golden fixtures phi3_* check the whole model against transformers.
// Mutations seen failing: each row's own position deciding though cu_seqlens is given (the
// sequence case, 2 checks); the long set built from the short factors, and every frequency
// divided by the first factor in double (the frequencies case).
#include <radiance/kernels/rad_rope_freqs.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace {

struct Args {
    std::vector<RadParam> p;
    RadArgs a{};
    Args(const char* scaling, const char* short_f, const char* long_f, int64_t orig) {
        p = {{"theta", RAD_P_F64, 0, 0, 10000.0, nullptr},
             {"scaling", RAD_P_STR, 0, 0, 0.0, scaling},
             {"short_factor", RAD_P_STR, 0, 0, 0.0, short_f},
             {"long_factor", RAD_P_STR, 0, 0, 0.0, long_f},
             {"attn_factor", RAD_P_F64, 0, 0, 1.25, nullptr}};
        if (orig > 0) p.push_back({"orig_ctx", RAD_P_INT, 0, orig, 0.0, nullptr});
        a.p = p.data();
        a.n_p = static_cast<int32_t>(p.size());
    }
};

}  // namespace

TEST_CASE("longrope frequencies are 1 / (factor * theta^e) in f32, short and long") {
    Args args("longrope", "1.0,1.1,1.3", "2.0,4.5,9.25", 64);
    RadRopeFreqs f;
    REQUIRE(rad_rope_freqs(&args.a, 6, &f));
    const float sf[3] = {1.0f, 1.1f, 1.3f}, lf[3] = {2.0f, 4.5f, 9.25f};
    for (int j = 0; j < 3; ++j) {
        const float e = static_cast<float>(2 * j) / 6.0f;
        const float base = static_cast<float>(std::pow(10000.0, static_cast<double>(e)));
        CHECK(f.inv[j] == 1.0f / (sf[j] * base));
        CHECK(f.inv_long[j] == 1.0f / (lf[j] * base));
    }
    CHECK(f.long_from == 64);
    CHECK(f.attn == 1.25f);
}

TEST_CASE("longrope refuses factor lists of the wrong length, bad numbers and a missing orig_ctx") {
    RadRopeFreqs f;
    Args too_few("longrope", "1.0,1.1", "2.0,4.5,9.25", 64);
    CHECK_FALSE(rad_rope_freqs(&too_few.a, 6, &f));
    Args junk("longrope", "1.0,x,1.3", "2.0,4.5,9.25", 64);
    CHECK_FALSE(rad_rope_freqs(&junk.a, 6, &f));
    Args negative("longrope", "1.0,-1.1,1.3", "2.0,4.5,9.25", 64);
    CHECK_FALSE(rad_rope_freqs(&negative.a, 6, &f));
    Args no_orig("longrope", "1.0,1.1,1.3", "2.0,4.5,9.25", 0);
    CHECK_FALSE(rad_rope_freqs(&no_orig.a, 6, &f));
}

TEST_CASE("other scalings leave no long set") {
    Args args("none", nullptr, nullptr, 0);
    RadRopeFreqs f;
    REQUIRE(rad_rope_freqs(&args.a, 6, &f));
    CHECK(f.long_from == -1);
    CHECK(f.inv_long.empty());
    const int32_t pos[1] = {1 << 20};
    CHECK_FALSE(rad_rope_row_is_long(f.long_from, pos, nullptr, 0, 0));
}

TEST_CASE("a row takes the long factors when its sequence's last row in the step reaches orig_ctx") {
    // three sequences: [60, 61] stays short, [62, 63, 64] reaches 64 at its last row, [100] is long
    const int32_t pos[6] = {60, 61, 62, 63, 64, 100};
    const int32_t cu[4] = {0, 2, 5, 6};
    const bool want[6] = {false, false, true, true, true, true};
    for (int64_t i = 0; i < 6; ++i) CHECK(rad_rope_row_is_long(64, pos, cu, 3, i) == want[i]);
    // without cu_seqlens each row's own position decides
    const bool own[6] = {false, false, false, false, true, true};
    for (int64_t i = 0; i < 6; ++i) CHECK(rad_rope_row_is_long(64, pos, nullptr, 0, i) == own[i]);
}
