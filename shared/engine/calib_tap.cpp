// calib_tap.cpp: X^T X of each projection's input rows, summed in f64, and the folder it is
// written to (calib_tap.h, radiance/engine/gram_files.h).
#include "calib_tap.h"

#include <radiance/rad_decode.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

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

}  // namespace

void write_gram_file(const std::string& path, int64_t K, int64_t tokens, const std::vector<double>& gram) {
    if (K <= 0 || gram.size() != static_cast<size_t>(K * K)) throw Error("calibration tap: a Gram matrix for " + path + " is not K x K");
    write_atomically(path, "the Gram matrix", [&](std::ofstream& out) {
        const uint64_t head[2] = {static_cast<uint64_t>(K), static_cast<uint64_t>(tokens)};
        out.write(kGramMagic, sizeof kGramMagic);
        out.write(reinterpret_cast<const char*>(head), sizeof head);
        out.write(reinterpret_cast<const char*>(gram.data()), static_cast<std::streamsize>(gram.size() * sizeof(double)));
    });
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
            accs_.push_back(Acc{K, 0, std::vector<double>(static_cast<size_t>(K * K), 0.0)});
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
// without reassociating anything).
void CalibTap::accumulate(Acc& a, const RadTensor& x) {
    constexpr int64_t kTile = 16;
    const int64_t K = a.K, M = x.shape[0];
    const uint64_t pitch = x.row_pitch ? static_cast<uint64_t>(x.row_pitch) : rad_row_bytes(x.dtype, static_cast<uint64_t>(K));
    std::vector<double> t(static_cast<size_t>(kTile * K));
    for (int64_t m0 = 0; m0 < M; m0 += kTile) {
        const int64_t mt = std::min(kTile, M - m0);
        for (int64_t r = 0; r < mt; ++r) {
            const auto* row = static_cast<const uint8_t*>(x.data) + static_cast<uint64_t>(m0 + r) * pitch;
            for (int64_t k = 0; k < K; ++k) t[static_cast<size_t>(r * K + k)] = rad_load_f32(x.dtype, row, k);
        }
        for (int64_t r = mt; r < kTile; ++r) std::fill(t.begin() + r * K, t.begin() + (r + 1) * K, 0.0);
        for (int64_t i = 0; i < K; ++i) {
            double* gi = a.g.data() + i * K;
            double xi[kTile];
            for (int64_t r = 0; r < kTile; ++r) xi[r] = t[static_cast<size_t>(r * K + i)];
            for (int64_t j = i; j < K; ++j) {
                double s = 0;
                for (int64_t r = 0; r < kTile; ++r) s += xi[r] * t[static_cast<size_t>(r * K + j)];
                gi[j] += s;
            }
        }
        a.rows += mt;
    }
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
        for (int64_t i = 0; i < acc.K; ++i)  // mirror the upper triangle
            for (int64_t j = 0; j < i; ++j) acc.g[static_cast<size_t>(i * acc.K + j)] = acc.g[static_cast<size_t>(j * acc.K + i)];
        files[a] = "gram_" + std::to_string(a) + ".bin";
        write_gram_file((fs::path(dir_) / files[a]).string(), acc.K, acc.rows, acc.g);
        acc.g = {};
    }
    std::vector<std::pair<std::string, std::string>> index;
    for (auto& [w, a] : acc_of_) index.emplace_back(w, files[a]);
    write_gram_index(dir_, index);
    log::info("calibration tap: ", index.size(), " weights' input Gram matrices over ", tokens_, " tokens written to ", dir_);
}

}  // namespace radiance::engine
