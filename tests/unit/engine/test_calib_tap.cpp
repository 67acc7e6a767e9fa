// The calibration tap's sums (shared/engine/calib_tap.cpp) against X^T X formed here: every
// weight's file holds the sum over all its recorded rows (several steps, a bf16 input among
// them), symmetric; two weights read from one view share one file and count the rows once; and
// the sums are the same bits on one thread as on all of them.
//
// Mutations (made in calib_tap.cpp, watched fail, undone): a thread's chunk stopping one row of
// g short (rows(c * kChunk, ... - 1)) fails "the sums"; the last tile's rows left out (tiles =
// M / kTile) overruns the widened rows (a crash); the shared view summed twice fails "the sums"
// (95 rows counted for 58); the packed triangle's row start off by one row where it is summed
// (i (i + 1) / 2 for i (i - 1) / 2) fails "the sums".
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <radiance/rad_decode.h>
#include <unistd.h>

#include "calib_tap.h"

namespace fs = std::filesystem;
using radiance::engine::CalibTap;

namespace {

struct Rows {
    std::vector<uint8_t> bytes;
    RadTensor t{};
    Rows(int64_t M, int64_t K, int dtype, uint32_t seed) {
        std::mt19937 rng(seed);
        std::normal_distribution<float> g;
        bytes.resize(static_cast<size_t>(M * K * (dtype == RAD_F32 ? 4 : 2)));
        for (int64_t i = 0; i < M * K; ++i) rad_store_f32(dtype, bytes.data(), i, g(rng));
        t.data = bytes.data();
        t.dtype = dtype;
        t.rank = 2;
        t.shape[0] = M;
        t.shape[1] = K;
    }
    double at(int64_t m, int64_t k) const { return rad_load_f32(t.dtype, bytes.data(), m * t.shape[1] + k); }
};

struct Written {
    std::map<std::string, std::string> index;
    int64_t K = 0, tokens = 0;
};

std::vector<double> read_gram(const fs::path& file, int64_t* K, int64_t* tokens) {
    std::ifstream in(file, std::ios::binary);
    char magic[8];
    uint64_t head[2];
    in.read(magic, 8);
    in.read(reinterpret_cast<char*>(head), sizeof head);
    *K = static_cast<int64_t>(head[0]);
    *tokens = static_cast<int64_t>(head[1]);
    std::vector<double> g(static_cast<size_t>(*K * *K));
    in.read(reinterpret_cast<char*>(g.data()), static_cast<std::streamsize>(g.size() * sizeof(double)));
    REQUIRE(in);
    return g;
}

std::map<std::string, std::string> read_index(const fs::path& dir) {
    std::map<std::string, std::string> m;
    std::ifstream in(dir / "index.txt");
    for (std::string n, f; in >> n >> f;) m[n] = f;
    return m;
}

// The tap over: weight "a" on x1 (f32) then on x2 (bf16) in a later step, "b" on x1 right after
// "a" (the same view: one file), "c" on x3 alone.
fs::path run_tap(const std::string& tag, const Rows& x1, const Rows& x2, const Rows& x3) {
    const fs::path dir = fs::temp_directory_path() / ("rad_calib_tap_" + tag + "_" + std::to_string(getpid()));
    fs::remove_all(dir);
    CalibTap tap(dir.string(), 1 << 30);
    tap.record("a", x1.t);
    tap.record("b", x1.t);
    tap.other_op();
    tap.record("c", x3.t);
    tap.end_step(1);
    tap.record("a", x2.t);
    tap.end_step(1);
    tap.finish();
    return dir;
}

}  // namespace

TEST_CASE("the calibration tap: the sums, one file for a shared view, the same bits on any thread count", "[calib]") {
    const int64_t K = 300;
    const Rows x1(37, K, RAD_F32, 1), x2(21, K, RAD_BF16, 2), x3(40, K, RAD_F32, 3);
    setenv("RADIANCE_THREADS", "1", 1);
    const fs::path one = run_tap("one", x1, x2, x3);
    unsetenv("RADIANCE_THREADS");
    const fs::path all = run_tap("all", x1, x2, x3);
    const auto index = read_index(all);
    REQUIRE(index.size() == 3);
    CHECK(index.at("a") == index.at("b"));  // one file
    CHECK(index.at("a") != index.at("c"));
    CHECK(read_index(one) == index);

    SECTION("the sums") {
        for (const char* w : {"a", "c"}) {
            CAPTURE(w);
            int64_t k = 0, tokens = 0;
            const std::vector<double> g = read_gram(all / index.at(w), &k, &tokens);
            REQUIRE(k == K);
            const std::vector<const Rows*> xs = std::string(w) == "a" ? std::vector<const Rows*>{&x1, &x2} : std::vector<const Rows*>{&x3};
            int64_t rows = 0;
            for (const Rows* x : xs) rows += x->t.shape[0];
            CHECK(tokens == rows);
            double worst = 0;
            for (int64_t i = 0; i < K; ++i)
                for (int64_t j = 0; j < K; ++j) {
                    double s = 0;
                    for (const Rows* x : xs)
                        for (int64_t m = 0; m < x->t.shape[0]; ++m) s += x->at(m, i) * x->at(m, j);
                    worst = std::max(worst, std::fabs(g[static_cast<size_t>(i * K + j)] - s) / (std::fabs(s) + 1.0));
                    CHECK(g[static_cast<size_t>(i * K + j)] == g[static_cast<size_t>(j * K + i)]);
                }
            INFO("largest relative difference " << worst);
            CHECK(worst < 1e-12);
        }
    }
    SECTION("one thread and all of them give the same bytes") {
        for (const auto& [w, f] : index) {
            CAPTURE(w);
            int64_t k1 = 0, k2 = 0, t1 = 0, t2 = 0;
            CHECK(read_gram(one / f, &k1, &t1) == read_gram(all / f, &k2, &t2));
        }
    }
    fs::remove_all(one);
    fs::remove_all(all);
}
