// rad-info: what is in a RAD2 container, and what plugins the engine would load.
//
//   rad-info FILE [--meta] [--vocab] [--recipe] [-v] [--verify]
//   rad-info --plugins [--kernels LIST] [--radiance-home HOMES]
#include <cstdio>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "radiance/container/container.h"
#include "radiance/core/registry.h"
#include "radiance/util/args.h"
#include "radiance/util/error.h"
#include "radiance/util/log.h"
#include "radiance/util/strings.h"

using namespace radiance;

namespace {

int usage() {
    std::cerr << "usage: rad-info FILE.rad [--meta] [--vocab] [--recipe] [-v] [--verify]\n"
                 "       rad-info --plugins [--kernels LIST] [--radiance-home HOMES]\n";
    return 2;
}

std::string shape_str(const std::vector<int64_t>& s) {
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
}

std::string encoding_str(const RadEncoding& e) {
    std::string out = e.scheme;
    if (e.transform[0]) out += " transform=" + std::string(e.transform);
    out += " {";
    for (int p = 0; p < e.n_planes; ++p) {
        const RadPlaneDesc& d = e.planes[p];
        out += (p ? ", " : "") + std::string(d.role) + ":" + rad_dtype_name(d.dtype);
        if (d.kind == RAD_PLANE_TABLE)
            out += " table[" + std::to_string(d.rows) + "x" + std::to_string(d.cols) + "]";
        else if (d.block_r != 1 || d.block_c != 1)
            out += " per[" + std::to_string(d.block_r) + "x" + std::to_string(d.block_c) + "]";
    }
    return out + "}";
}

void print_sections(const container::Reader& r) {
    std::printf("%s: RAD2 container, %llu bytes, %zu tensors, %zu metadata keys\n", r.path().c_str(),
                static_cast<unsigned long long>(r.file_bytes()), r.tensors().size(), r.meta().size());
    std::printf("%-18s %14s %14s %10s\n", "section", "offset", "bytes", "crc32c");
    for (auto& s : r.sections())
        std::printf("%-18s %14llu %14llu %10s\n", container::section_name(s.kind), static_cast<unsigned long long>(s.offset),
                    static_cast<unsigned long long>(s.size),
                    (s.flags & container::kSectionNoCrc) ? "per-plane"
                                                         : ("0x" +
                                                            [&] {
                                                                char b[16];
                                                                std::snprintf(b, sizeof b, "%08x", s.crc);
                                                                return std::string(b);
                                                            }())
                                                               .c_str());
}

void print_vocab(const container::Reader& r) {
    auto tok = r.blob(container::Section::Tokenizer);
    if (!tok) throw Error(r.path() + ": no TOKENIZER section");
    auto j = nlohmann::json::parse(*tok, nullptr, false);
    if (j.is_discarded()) throw Error(r.path() + ": section TOKENIZER is not valid JSON");
    std::map<int64_t, std::string> by_id;
    if (j.contains("model") && j["model"].contains("vocab") && j["model"]["vocab"].is_object())
        for (auto& [k, v] : j["model"]["vocab"].items())
            if (v.is_number_integer()) by_id[v.get<int64_t>()] = k;
    if (j.contains("added_tokens") && j["added_tokens"].is_array())
        for (auto& t : j["added_tokens"])
            if (t.contains("id") && t.contains("content") && t["id"].is_number_integer() && t["content"].is_string())
                by_id[t["id"].get<int64_t>()] = t["content"].get<std::string>();
    for (auto& [id, s] : by_id) std::printf("%lld\t%s\n", static_cast<long long>(id), nlohmann::json(s).dump().c_str());
}

const char* status_name(core::PluginRecord::Status s) {
    switch (s) {
    case core::PluginRecord::Status::Loaded: return "loaded";
    case core::PluginRecord::Status::Refused: return "REFUSED";
    case core::PluginRecord::Status::Declined: return "declined";
    case core::PluginRecord::Status::Shadowed: return "shadowed";
    case core::PluginRecord::Status::NotSelected: return "not selected";
    }
    return "?";
}

int list_plugins(const std::string& homes_arg, const std::string& kernels_arg) {
    const core::LoadOptions opts = core::load_options(homes_arg, kernels_arg);
    log::set_level(log::Level::error);
    core::Registry reg = core::Registry::load(opts);
    std::printf("search path: %s\n", str::join(opts.homes, ":").c_str());
    if (!reg.kernel_libraries().empty()) {
        std::printf("kernel hierarchy:");
        for (auto& k : reg.kernel_libraries()) std::printf(" %s%s", k.plugin->name.c_str(), k.reference ? "(reference)" : "");
        std::printf("\n");
    }
    for (auto& rec : reg.records()) {
        std::printf("%-13s %-12s %-20s %-8s %s\n", rec.kind.c_str(), status_name(rec.status), rec.name.empty() ? "-" : rec.name.c_str(),
                    rec.version.empty() ? "-" : rec.version.c_str(), rec.file.path.c_str());
        if (!rec.declarations.empty())
            std::printf("%14s declares %s%s\n", "", rec.declarations.c_str(), rec.reference ? "; reference library" : "");
        if (!rec.build_target.empty()) std::printf("%14s built for %s\n", "", rec.build_target.c_str());
        if (!rec.why.empty()) std::printf("%14s why: %s\n", "", rec.why.c_str());
    }
    for (auto& w : reg.warnings()) std::printf("warning: %s\n", w.c_str());
    if (reg.records().empty()) std::printf("no plugins found\n");
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    std::string file, homes, kernels;
    bool meta = false, vocab = false, recipe = false, verbose = false, verify = false, plugins = false;
    try {
        util::Args args(argc, argv);
        while (args.next()) {
            if (args.is("--meta"))
                meta = true;
            else if (args.is("--vocab"))
                vocab = true;
            else if (args.is("--recipe"))
                recipe = true;
            else if (args.is("-v", "--verbose"))
                verbose = true;
            else if (args.is("--verify"))
                verify = true;
            else if (args.is("--plugins"))
                plugins = true;
            else if (args.is("--kernels"))
                kernels = args.value();
            else if (args.is("--radiance-home"))
                homes = args.value();
            else if (args.is("-h", "--help"))
                return usage(), 0;
            else if (!args.positional()) {
                std::cerr << "rad-info: unknown option " << args.current() << "\n";
                return usage();
            } else if (file.empty())
                file = args.current();
            else
                return usage();
        }
    } catch (const util::ArgsError& e) {
        std::cerr << "rad-info: " << e.what() << "\n";
        return 2;
    }
    try {
        if (plugins) return list_plugins(homes, kernels);
        if (file.empty()) return usage();
        auto r = container::Reader::open(file);
        bool any = false;
        if (meta) {
            any = true;
            for (auto& [k, v] : r->meta()) std::printf("%s = %s\n", k.c_str(), v.to_string().c_str());
        }
        if (vocab) {
            any = true;
            print_vocab(*r);
        }
        if (recipe) {
            any = true;
            auto t = r->blob(container::Section::Recipe);
            std::printf("%s\n", t ? t->c_str() : "(no recipe recorded)");
        }
        if (verbose) {
            any = true;
            print_sections(*r);
            for (auto& t : r->tensors())
                std::printf("%-48s %-6s %-22s %s\n", t.name.c_str(), rad_dtype_name(t.dtype), shape_str(t.shape).c_str(),
                            encoding_str(r->encodings()[t.encoding]).c_str());
        }
        if (verify) {
            any = true;
            r->verify_planes();
            std::printf("%s: all %zu tensors' planes match their checksums\n", file.c_str(), r->tensors().size());
        }
        if (!any) print_sections(*r);
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "rad-info: " << e.what() << "\n";
        return 1;
    }
}
