// convert.cpp: checkpoint tensors -> declared weights through the plugin's name map.
#include "radiance/convert/convert.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "radiance/container/container.h"
#include "radiance/convert/bpe_files.h"
#include "radiance/convert/hf_config.h"
#include "radiance/convert/st_pooling.h"
#include "radiance/convert/random_weights.h"
#include "radiance/convert/safetensors.h"
#include "radiance/engine/builder.h"
#include "radiance/engine/model_meta.h"
#include "radiance/util/error.h"

namespace radiance::convert {
namespace {

namespace fs = std::filesystem;

std::string shape_str(const std::vector<int64_t>& s) {
    std::string out = "[";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
}

std::optional<std::string> read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
}

bool is_float(int dt) { return dt == RAD_F32 || dt == RAD_BF16 || dt == RAD_F16; }

// The dtype a checkpoint of this config stores (torch_dtype, or dtype in newer configs): what
// random weights are drawn in. bf16 when the config names none.
int config_dtype(const nlohmann::json& cfg) {
    for (const char* key : {"torch_dtype", "dtype"})
        if (cfg.contains(key) && cfg[key].is_string()) {
            const std::string d = cfg[key].get<std::string>();
            if (d == "float32") return RAD_F32;
            if (d == "float16") return RAD_F16;
            if (d == "bfloat16") return RAD_BF16;
        }
    return RAD_BF16;
}

// One weight's bytes as the name map builds them from checkpoint tensors.
struct Built {
    std::vector<int64_t> shape;
    int dtype = 0;
    std::vector<uint8_t> owned;     // CONCAT / TRANSPOSE results
    const uint8_t* data = nullptr;  // or a view into the checkpoint
    uint64_t bytes = 0;
    std::vector<std::string> used;
};

// A target's map entries in declaration order: a plugin may give alternatives (a checkpoint that
// fuses what another stores per part), the first that builds wins.
std::vector<const engine::NameMapEntry*> entries_for(const std::vector<engine::NameMapEntry>& map, const std::string& target) {
    std::vector<const engine::NameMapEntry*> out;
    for (auto& e : map)
        if (e.target == target) out.push_back(&e);
    return out;
}

// A tensor of more dimensions than declared whose leading ones flatten into the declared first
// (transformers 5's fused experts, [E, 2F, d] for a declared [E * 2F, d]): row-major, so the
// bytes are already the declared layout.
void flatten_leading(std::vector<int64_t>& shape, const std::vector<int64_t>& want) {
    if (want.empty() || shape.size() <= want.size()) return;
    const size_t extra = shape.size() - want.size();
    int64_t lead = 1;
    for (size_t i = 0; i <= extra; ++i) lead *= shape[i];
    std::vector<int64_t> flat{lead};
    flat.insert(flat.end(), shape.begin() + static_cast<std::ptrdiff_t>(extra) + 1, shape.end());
    if (flat == want) shape = flat;
}

// Builds a weight from its map entry; returns false (with `why`) when its sources are absent.
bool build(const Checkpoint& ck, const engine::NameMapEntry& e, Built* out, std::string* why) {
    switch (e.kind) {
    case RAD_MAP_COPY: {
        for (auto& s : e.sources)
            if (const StTensor* t = ck.find(s)) {
                out->shape = t->shape;
                out->dtype = t->dtype;
                out->data = t->data;
                out->bytes = t->bytes;
                out->used = {s};
                return true;
            }
        *why = "none of the tensors {" +
               [&] {
                   std::string l;
                   for (auto& s : e.sources) l += (l.empty() ? "" : ", ") + s;
                   return l;
               }() +
               "} is in " + ck.files();
        return false;
    }
    case RAD_MAP_CONCAT: {
        std::vector<const StTensor*> parts;
        for (auto& s : e.sources) {
            const StTensor* t = ck.find(s);
            if (!t) {
                *why = "tensor '" + s + "' is missing from " + ck.files();
                return false;
            }
            if (!parts.empty()) {
                if (t->dtype != parts[0]->dtype)
                    throw Error("tensor '" + s + "' in " + t->file + " is " + rad_dtype_name(t->dtype) + " but '" + parts[0]->name +
                                "' is " + rad_dtype_name(parts[0]->dtype) + "; they stack into '" + e.target + "'");
                std::vector<int64_t> a(t->shape.begin() + 1, t->shape.end()), b(parts[0]->shape.begin() + 1, parts[0]->shape.end());
                if (a != b || t->shape.empty())
                    throw Error("tensor '" + s + "' in " + t->file + " has shape " + shape_str(t->shape) + ", which does not stack with '" +
                                parts[0]->name + "' " + shape_str(parts[0]->shape) + " into '" + e.target + "'");
            }
            parts.push_back(t);
        }
        out->shape = parts[0]->shape;
        out->shape[0] = 0;
        out->dtype = parts[0]->dtype;
        for (auto* t : parts) {
            out->shape[0] += t->shape[0];
            out->owned.insert(out->owned.end(), t->data, t->data + t->bytes);
            out->used.push_back(t->name);
        }
        out->data = out->owned.data();
        out->bytes = out->owned.size();
        return true;
    }
    case RAD_MAP_TRANSPOSE: {
        const StTensor* t = e.sources.empty() ? nullptr : ck.find(e.sources[0]);
        if (!t) {
            *why = "tensor '" + (e.sources.empty() ? std::string("?") : e.sources[0]) + "' is missing from " + ck.files();
            return false;
        }
        if (t->shape.size() != 2) throw Error("tensor '" + t->name + "' in " + t->file + " is not 2-D and cannot be transposed");
        const int64_t r = t->shape[0], c = t->shape[1];
        const size_t es = static_cast<size_t>(rad_dtype_bits(t->dtype) / 8);
        out->owned.resize(t->bytes);
        for (int64_t i = 0; i < r; ++i)
            for (int64_t j = 0; j < c; ++j) std::memcpy(&out->owned[(j * r + i) * es], t->data + (i * c + j) * es, es);
        out->shape = {c, r};
        out->dtype = t->dtype;
        out->data = out->owned.data();
        out->bytes = out->owned.size();
        out->used = {t->name};
        return true;
    }
    }
    throw Error("name map entry '" + e.target + "' has an unknown kind " + std::to_string(e.kind));
}

}  // namespace

void convert(const core::Registry& reg, const ConvertOptions& opts, std::ostream& log) {
    const fs::path src(opts.src);
    auto cfg_text = read_file(src / "config.json");
    if (!cfg_text) throw Error(opts.src + ": no config.json (expected a Hugging Face model folder)");
    auto cfg = nlohmann::json::parse(*cfg_text, nullptr, false);
    if (cfg.is_discarded() || !cfg.is_object()) throw Error((src / "config.json").string() + ": not valid JSON");
    std::string name = fs::absolute(src).lexically_normal().filename().string();
    if (name.empty()) name = fs::absolute(src).lexically_normal().parent_path().filename().string();
    auto meta = metadata_from_config(cfg, name);
    if (!opts.arch.empty()) meta[engine::meta_key::arch] = container::MetaValue::of_str(opts.arch);
    read_st_pooling(src, meta);  // a sentence-transformers folder's pooling and normalisation
    const std::string arch_id = meta[engine::meta_key::arch].s;
    const core::ArchPlugin& arch = reg.arch(arch_id, "");

    // Tokenizer ids travel as metadata too, for the front end.
    auto tok_cfg_text = read_file(src / "tokenizer_config.json");
    std::map<std::string, std::string> text_meta;
    for (auto& [k, v] : meta) text_meta[k] = v.to_string();
    engine::ModelMeta model_meta(text_meta);

    const Checkpoint ck = opts.random_weights ? Checkpoint{} : Checkpoint::open_folder(opts.src);
    const int random_dtype = config_dtype(cfg);
    const double init_std = cfg.contains("initializer_range") && cfg["initializer_range"].is_number()
                                ? cfg["initializer_range"].get<double>()
                                : 0.02;  // transformers' default
    engine::DeclareOptions d;
    d.ctx.max_tok = 256;
    d.ctx.max_seqs = 16;
    d.ctx.max_ctx = static_cast<int32_t>(std::max<int64_t>(model_meta.get()->n_ctx_train, 256));
    d.ctx.kv_dtype = RAD_F32;
    d.ctx.act_dtype = RAD_F32;
    d.ctx.world_size = 1;
    d.select = opts.select;
    d.encoding = [&](const std::string& stored, const std::vector<engine::NameMapEntry>& map) -> std::optional<RadEncoding> {
        if (opts.random_weights) return rad_encoding_plain(random_dtype);
        std::vector<std::string> names;
        for (const engine::NameMapEntry* e : entries_for(map, stored)) names.insert(names.end(), e->sources.begin(), e->sources.end());
        if (names.empty()) names.push_back(stored);
        for (auto& s : names)
            if (const StTensor* t = ck.find(s)) return rad_encoding_plain(t->dtype);
        return std::nullopt;
    };
    engine::Declaration decl = engine::declare(arch, reg, model_meta, d);
    log << "architecture " << arch.plugin->name << " (" << arch_id << ", \"\"): " << decl.weights.size() << " weights, " << decl.ops.size()
        << " ops\n";

    if (opts.plan_only) {
        std::vector<std::string> errors;
        for (size_t i = 0; i < decl.ops.size(); ++i)
            if (!decl.ops[i].res.ok() && !decl.ops[i].queried)
                errors.push_back("op " + std::to_string(i) + " '" + decl.ops[i].geom.op + "': " + decl.ops[i].res.error);
        if (!errors.empty()) {
            std::string msg = "the plan does not boot:";
            for (auto& e : errors) msg += "\n  " + e;
            throw Error(msg);
        }
    }

    std::unique_ptr<container::Writer> w;
    if (!opts.plan_only) {
        if (opts.out.empty()) throw Error("no output file (-o OUT.rad)");
        w = std::make_unique<container::Writer>(opts.out + ".partial");
        for (auto& [k, v] : meta) w->set_meta(k, v);
    }
    std::set<std::string> used;
    std::vector<std::string> errors;
    for (const engine::WeightDecl& wd : decl.weights) {
        if (!wd.source.empty()) {  // a view of another stored weight (a tied head)
            if (!decl.weight(wd.source)) errors.push_back("weight '" + wd.name + "' views '" + wd.source + "', which is not declared");
            continue;
        }
        engine::NameMapEntry self{wd.name, RAD_MAP_COPY, {wd.name}};
        std::vector<const engine::NameMapEntry*> entries = entries_for(decl.name_map, wd.name);
        if (entries.empty()) entries.push_back(&self);
        Built b;
        std::string why;
        std::vector<int64_t> want(wd.d.shape, wd.d.shape + wd.d.rank);
        if (opts.random_weights) {
            if (wd.d.optional) continue;
            b.shape = want;
            b.dtype = wd.d.dtype == RAD_DT_NONE || wd.d.dtype == RAD_F32 ? random_dtype : wd.d.dtype;
            b.owned = random_weight(wd.name, want, b.dtype, init_std, opts.random_seed);
            b.data = b.owned.data();
            b.bytes = b.owned.size();
            b.used = {"(random)"};
        } else {
            bool built = false;
            for (const engine::NameMapEntry* e : entries) {
                std::string why_e;
                if ((built = build(ck, *e, &b, &why_e))) break;
                why = why_e;  // the last alternative's reason: plugins list the usual layout last
            }
            if (!built) {
                if (!wd.d.optional) errors.push_back("weight '" + wd.name + "': " + why);
                continue;
            }
        }
        flatten_leading(b.shape, want);
        if (b.shape != want) {
            errors.push_back("weight '" + wd.name + "' from {" +
                             [&] {
                                 std::string l;
                                 for (auto& s : b.used) l += (l.empty() ? "" : ", ") + s + " in " + ck.find(s)->file;
                                 return l;
                             }() +
                             "} has shape " + shape_str(b.shape) + ", the architecture declares " + shape_str(want));
            continue;
        }
        if (!is_float(b.dtype) || (wd.d.dtype != RAD_DT_NONE && wd.d.dtype != b.dtype && wd.d.dtype != RAD_F32)) {
            errors.push_back("weight '" + wd.name + "' is stored as " + rad_dtype_name(b.dtype) + " in " + ck.find(b.used[0])->file +
                             (wd.d.dtype != RAD_DT_NONE ? std::string(", declared ") + rad_dtype_name(wd.d.dtype) : std::string()));
            continue;
        }
        for (auto& u : b.used) used.insert(u);
        if (opts.verbose)
            log << "  " << wd.name << " " << rad_dtype_name(b.dtype) << " " << shape_str(b.shape) << " <- " << [&] {
                std::string l;
                for (auto& s : b.used) l += (l.empty() ? "" : " + ") + s;
                return l;
            }() << "\n";
        if (w) {
            uint32_t enc = w->add_encoding(rad_encoding_plain(b.dtype));
            w->add_tensor(wd.name, enc, b.shape, b.dtype, {std::span<const uint8_t>(b.data, b.bytes)});
        }
    }
    if (!errors.empty()) {
        std::string msg = "cannot convert " + opts.src + ":";
        for (auto& e : errors) msg += "\n  " + e;
        if (w) fs::remove(opts.out + ".partial");
        throw Error(msg);
    }
    std::vector<std::string> unused;
    for (auto& [n, t] : ck.tensors())
        if (!used.count(n)) unused.push_back(n);
    if (!unused.empty()) {
        log << "warning: " << unused.size() << " checkpoint tensors are not used by the architecture:";
        for (size_t i = 0; i < unused.size() && i < 8; ++i) log << " " << unused[i];
        log << (unused.size() > 8 ? " ..." : "") << "\n";
    }
    if (!w) {
        log << "plan-only: every op resolves and every weight is present with its declared shape\n";
        return;
    }
    if (auto t = read_file(src / "tokenizer.json")) {
        w->set_blob(container::Section::Tokenizer, *t);
    } else if (auto v = read_file(src / "vocab.json"), m = read_file(src / "merges.txt"); v && m) {
        w->set_blob(container::Section::Tokenizer, tokenizer_json_from_bpe_files(*v, *m, opts.src));
        log << "note: the tokenizer from " << opts.src << "'s vocab.json and merges.txt (byte-level BPE, as GPT-2's)\n";
    } else {
        log << "note: no tokenizer.json (nor vocab.json + merges.txt) in " << opts.src << "; the container carries no tokenizer\n";
    }
    if (tok_cfg_text) {
        w->set_blob(container::Section::TokenizerConfig, *tok_cfg_text);
        auto tc = nlohmann::json::parse(*tok_cfg_text, nullptr, false);
        if (!tc.is_discarded() && tc.contains("chat_template") && tc["chat_template"].is_string())
            w->set_blob(container::Section::ChatTemplate, tc["chat_template"].get<std::string>());
    }
    if (auto t = read_file(src / "chat_template.jinja")) w->set_blob(container::Section::ChatTemplate, *t);
    w->set_blob(container::Section::Recipe,
                "rad-convert " + opts.src + "\narchitecture " + arch_id + " quant \"\"\n" +
                    (opts.random_weights ? "weights: random (seed " + std::to_string(opts.random_seed) + ", std " +
                                               std::to_string(init_std) + "), plain " + rad_dtype_name(random_dtype) + "\n"
                                         : std::string("weights: plain, as stored in the checkpoint\n")));
    w->finish();
    fs::rename(opts.out + ".partial", opts.out);
    log << "wrote " << opts.out << "\n";
}

}  // namespace radiance::convert
