// calib_tap.cpp: X^T X of each projection's input rows, summed in f64, and the folder it is
// written to (calib_tap.h, radiance/engine/gram_files.h).
#include "calib_tap.h"

#include <radiance/rad_decode.h>

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "radiance/util/error.h"
#include "radiance/util/log.h"

namespace radiance::engine {

namespace fs = std::filesystem;

namespace {

// Writes `bytes` to path.partial and renames it into place; nothing is left at `path` on failure.
void write_atomically(const std::string& path, const std::string& what, const std::function<void(std::ofstream&)>& body) {
    const std::string tmp = path + ".partial";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) throw Error("calibration tap: cannot write " + what + " " + tmp);
        body(out);
        out.flush();
        if (!out) {
            out.close();
            std::error_code ec;
            fs::remove(tmp, ec);
            throw Error("calibration tap: writing " + what + " " + tmp + " failed (disk full?)");
        }
    }
    std::error_code ec;
    fs::rename(tmp, path, ec);
    if (ec) {
        fs::remove(tmp, ec);
        throw Error("calibration tap: cannot rename " + tmp + " to " + path + ": " + ec.message());
    }
}

// The threads accumulate() spreads its rows of g over: RADIANCE_THREADS where set (1-1024, as
// libcpu reads it), else the CPUs this process may run on. The tap runs between ops, while the
// kernels' own threads wait.
int tap_threads() {
    if (const char* e = std::getenv("RADIANCE_THREADS")) {
        char* end = nullptr;
        const long v = std::strtol(e, &end, 10);
        if (end != e && !*end && v >= 1 && v <= 1024) return static_cast<int>(v);
    }
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

constexpr int64_t kTile = 16;  // rows of x summed before g is touched

// g holds the upper triangle packed by rows (K (K + 1) / 2 doubles, half a full matrix: about
// 1.6 GB instead of 3.3 GB for an 8B's down projection's input); row i's entries j >= i, indexed
// by j.
inline double* packed_row(double* g, int64_t K, int64_t i) { return g + (i * K - i * (i - 1) / 2) - i; }
inline const double* packed_row(const double* g, int64_t K, int64_t i) { return g + (i * K - i * (i - 1) / 2) - i; }

// g's rows [i0, i1) += the products of one tile (kTile rows of K at tt) for j >= i: four rows of g
// at a time, so each tile value loaded serves four sums (one row at a time the loop was bound by
// its loads: 0.74 G multiply-adds/s on the 2-core VM). Each entry's sum still runs over the tile's
// rows in order, then adds to g once.
__attribute__((target_clones("avx512f", "avx2", "default"))) void tile_rows(double* g, const double* tt, int64_t K, int64_t i0,
                                                                            int64_t i1) {
    auto one = [&](int64_t i, int64_t j0, int64_t j1) {
        double xi[kTile];
        for (int64_t r = 0; r < kTile; ++r) xi[r] = tt[r * K + i];
        for (int64_t j = j0; j < j1; ++j) {
            double s = 0;
            for (int64_t r = 0; r < kTile; ++r) s += xi[r] * tt[r * K + j];
            packed_row(g, K, i)[j] += s;
        }
    };
    int64_t i = i0;
    for (; i + 4 <= i1; i += 4) {
        for (int64_t c = 0; c < 4; ++c) one(i + c, i + c, i + 4);  // the triangle's corner
        double x0[kTile], x1[kTile], x2[kTile], x3[kTile];
        for (int64_t r = 0; r < kTile; ++r) {
            x0[r] = tt[r * K + i];
            x1[r] = tt[r * K + i + 1];
            x2[r] = tt[r * K + i + 2];
            x3[r] = tt[r * K + i + 3];
        }
        double *g0 = packed_row(g, K, i), *g1 = packed_row(g, K, i + 1), *g2 = packed_row(g, K, i + 2), *g3 = packed_row(g, K, i + 3);
        for (int64_t j = i + 4; j < K; ++j) {
            double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            for (int64_t r = 0; r < kTile; ++r) {
                const double v = tt[r * K + j];
                s0 += x0[r] * v;
                s1 += x1[r] * v;
                s2 += x2[r] * v;
                s3 += x3[r] * v;
            }
            g0[j] += s0;
            g1[j] += s1;
            g2[j] += s2;
            g3[j] += s3;
        }
    }
    for (; i < i1; ++i) one(i, i, K);
}

// The file of a K x K matrix whose row i row(i, out) writes into out.
void write_gram_rows(const std::string& path, int64_t K, int64_t tokens, const std::function<void(int64_t, double*)>& row) {
    write_atomically(path, "the Gram matrix", [&](std::ofstream& out) {
        const uint64_t head[2] = {static_cast<uint64_t>(K), static_cast<uint64_t>(tokens)};
        out.write(kGramMagic, sizeof kGramMagic);
        out.write(reinterpret_cast<const char*>(head), sizeof head);
        std::vector<double> r(static_cast<size_t>(K));
        for (int64_t i = 0; i < K; ++i) {
            row(i, r.data());
            out.write(reinterpret_cast<const char*>(r.data()), static_cast<std::streamsize>(r.size() * sizeof(double)));
        }
    });
}

}  // namespace

void write_gram_file(const std::string& path, int64_t K, int64_t tokens, const std::vector<double>& gram) {
    if (K <= 0 || gram.size() != static_cast<size_t>(K * K)) throw Error("calibration tap: a Gram matrix for " + path + " is not K x K");
    write_gram_rows(path, K, tokens, [&](int64_t i, double* out) { std::copy_n(gram.data() + i * K, K, out); });
}

void write_gram_index(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& entries) {
    write_atomically((fs::path(dir) / "index.txt").string(), "the index", [&](std::ofstream& out) {
        for (auto& [name, file] : entries) out << name << " " << file << "\n";
    });
}

CalibTap::CalibTap(std::string dir, int64_t limit) : dir_(std::move(dir)), limit_(limit) {
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec || !fs::is_directory(dir_)) throw Error("RADIANCE_CALIB_DIR " + dir_ + ": cannot create the folder (" + ec.message() + ")");
    if (limit_ <= 0) throw Error("RADIANCE_CALIB_TOKENS must be a positive number of tokens");
    fs::remove(fs::path(dir_) / "index.txt", ec);  // an earlier run's index: until this run's is written, the folder holds none
}

void CalibTap::record(const std::string& weight, const RadTensor& x) {
    if (done_) return;
    const int64_t K = x.rank > 0 ? x.shape[x.rank - 1] : 0, rows = x.rank > 0 ? x.shape[0] : 0;
    const View v{x.data, rows, K, x.row_pitch};
    auto it = acc_of_.find(weight);
    if (it == acc_of_.end()) {  // first seen: share the accumulator of the op just before on the same rows
        size_t a = accs_.size();
        if (last_valid_ && last_ == v)
            a = last_acc_;
        else {
            accs_.push_back(Acc{K, 0, std::vector<double>(static_cast<size_t>(K * (K + 1) / 2), 0.0)});
        }
        it = acc_of_.emplace(weight, a).first;
    }
    Acc& acc = accs_[it->second];
    if (acc.K != K)
        throw Error("calibration tap: weight '" + weight + "' was read with rows of " + std::to_string(K) + " values after " +
                    std::to_string(acc.K));
    if (!(last_valid_ && last_ == v && last_acc_ == it->second)) accumulate(acc, x);  // shared rows are summed once
    last_ = v;
    last_acc_ = it->second;
    last_valid_ = true;
}


// g[i][j] += sum_m x[m][i] x[m][j] for j >= i, in tiles of rows so each row of g is read once a
// tile (the sum over the tile's rows is written out in order, so the loop over j vectorises
// without reassociating anything). Rows of g are independent: threads take chunks of them (an
// atomic counter balances the triangle's unequal rows), each walking every tile in order, so each
// entry gets the same sums in the same order on any thread count. Single-threaded this was the
// calibration's cost at an 8B's scale (K^2 M / 2 multiply-adds a distinct input and step: about
// 2.7e14 for 65,536 tokens).
void CalibTap::accumulate(Acc& a, const RadTensor& x) {
    constexpr int64_t kChunk = 16;  // rows of g a task
    const int64_t K = a.K, M = x.shape[0], tiles = (M + kTile - 1) / kTile;
    const uint64_t pitch = x.row_pitch ? static_cast<uint64_t>(x.row_pitch) : rad_row_bytes(x.dtype, static_cast<uint64_t>(K));
    std::vector<double> t(static_cast<size_t>(tiles * kTile * K), 0.0);  // x widened, the last tile's missing rows 0
    for (int64_t m = 0; m < M; ++m) {
        const auto* row = static_cast<const uint8_t*>(x.data) + static_cast<uint64_t>(m) * pitch;
        for (int64_t k = 0; k < K; ++k) t[static_cast<size_t>(m * K + k)] = rad_load_f32(x.dtype, row, k);
    }
    auto rows = [&](int64_t i0, int64_t i1) {
        for (int64_t tile = 0; tile < tiles; ++tile) tile_rows(a.g.data(), t.data() + tile * kTile * K, K, i0, i1);
    };
    const int64_t chunks = (K + kChunk - 1) / kChunk;
    // threads only where the work dwarfs starting them (about a million multiply-adds a thread)
    const int64_t work = K * K / 2 * tiles * kTile;
    const int64_t threads = std::min<int64_t>({tap_threads(), chunks, std::max<int64_t>(1, work >> 20)});
    std::atomic<int64_t> next{0};
    auto run = [&] {
        for (int64_t c; (c = next.fetch_add(1)) < chunks;) rows(c * kChunk, std::min(K, (c + 1) * kChunk));
    };
    std::vector<std::thread> pool;
    for (int64_t i = 1; i < threads; ++i) pool.emplace_back(run);
    run();
    for (auto& th : pool) th.join();
    a.rows += M;
}

void CalibTap::end_step(int64_t tokens) {
    if (done_) return;
    tokens_ += tokens;
    if (tokens_ >= limit_) finish();
}

void CalibTap::finish() {
    if (done_) return;
    done_ = true;
    std::vector<std::string> files(accs_.size());
    for (size_t a = 0; a < accs_.size(); ++a) {
        Acc& acc = accs_[a];
        files[a] = "gram_" + std::to_string(a) + ".bin";
        const int64_t K = acc.K;
        const double* g = acc.g.data();
        write_gram_rows((fs::path(dir_) / files[a]).string(), K, acc.rows, [&](int64_t i, double* out) {  // the triangle mirrored
            for (int64_t j = 0; j < i; ++j) out[j] = packed_row(g, K, j)[i];
            for (int64_t j = i; j < K; ++j) out[j] = packed_row(g, K, i)[j];
        });
        acc.g = {};
    }
    std::vector<std::pair<std::string, std::string>> index;
    for (auto& [w, a] : acc_of_) index.emplace_back(w, files[a]);
    write_gram_index(dir_, index);
    log::info("calibration tap: ", index.size(), " weights' input Gram matrices over ", tokens_, " tokens written to ", dir_);
}

}  // namespace radiance::engine
